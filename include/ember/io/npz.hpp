#pragma once
/// \file
/// The `.npz` format: a zip archive of `.npy` files, one per named array, as `numpy.load` and
/// `numpy.savez` read and write it. `npz_writer` writes the entries *stored* (zip method 0, no
/// compression), each with the CRC-32 of its bytes (detail/crc32.hpp), streaming the data so
/// that an array never needs a second copy in memory. Entries or archives past 4 GiB use the
/// zip64 extensions (APPNOTE 4.5.3), which Python's zipfile reads. `read_npz` reads such an
/// archive back (stored entries only) and checks every CRC.
///
/// Zip layout, all integers little-endian: per entry a local header (signature 0x04034b50,
/// version, flags, method, DOS time and date, CRC-32, sizes, name and extra lengths, the name,
/// the extra field), then the data; then a central directory with one record per entry
/// (0x02014b50, the same fields plus the local header's offset); then, for zip64, the zip64
/// end record (0x06064b50) and its locator (0x07064b50); then the end record (0x06054b50). The
/// time stamp is fixed at 1980-01-01 00:00, so equal arrays give byte-identical files.

#include <ember/io/detail/crc32.hpp>
#include <ember/io/detail/durable_file.hpp>
#include <ember/io/npy.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

/// Writes a .npz archive entry by entry; `close()` (or the destructor) writes the directory.
class npz_writer {
 public:
  /// Starts the archive `path` (written to a temporary until `close()`, see
  /// io/detail/durable_file.hpp); `force_zip64` uses zip64 records even for small entries (for tests).
  explicit npz_writer(std::string path, bool force_zip64 = false)
      : out_(std::move(path), "ember::npz_writer"), zip64_(force_zip64) {}
  npz_writer(npz_writer const&) = delete;
  npz_writer& operator=(npz_writer const&) = delete;
  /// Closes the archive unless an exception is on its way out (then `path` keeps what it held);
  /// call `close()` to see a failure.
  ~npz_writer() {
    if (std::uncaught_exceptions() > uncaught_at_start_) return;
    try {
      close();
    } catch (...) {
    }
  }

  /// Adds array `name` (stored as `name`.npy) of `shape`, whose elements in C order come from
  /// `fill(T* buffer, std::size_t first, std::size_t count)`, called on consecutive ranges.
  template <class T, class Fill>
  void add_streamed(std::string const& name, std::span<std::size_t const> shape, Fill&& fill) {
    if (closed_) throw std::logic_error("ember::npz_writer: " + out_.path() + " is closed; no entry can be added");
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    std::string const header = npy_header(npy_descr<T>(), shape);
    entry e{name + ".npy", 0, std::uint64_t(header.size()) + std::uint64_t(n) * sizeof(T), out_.tell(), false};
    e.zip64 = zip64_ || e.size >= 0xffffffffu || e.offset >= 0xffffffffu;
    write_local_header(e);
    std::uint32_t crc = detail::crc32_update(0, header.data(), header.size());
    out_.write(header);
    std::size_t const chunk = std::max<std::size_t>(1, (std::size_t(1) << 22) / sizeof(T));
    std::unique_ptr<T[]> buf(new T[std::min(chunk, std::max<std::size_t>(n, 1))]);  // T may be bool
    for (std::size_t first = 0; first < n; first += chunk) {
      std::size_t const count = std::min(chunk, n - first);
      fill(buf.get(), first, count);
      crc = detail::crc32_update(crc, buf.get(), count * sizeof(T));
      out_.write(buf.get(), count * sizeof(T));
    }
    e.crc = crc;
    unsigned char const le[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16), (unsigned char)(crc >> 24)};
    out_.patch(e.offset + 14, le, 4);  // the CRC field of the local header
    entries_.push_back(e);
  }

  /// Adds array `name` from `shape`'s product of elements at `data`, in C order.
  template <class T>
  void add(std::string const& name, T const* data, std::span<std::size_t const> shape) {
    add_streamed<T>(name, shape, [data](T* buf, std::size_t first, std::size_t count) {
      std::copy(data + first, data + first + count, buf);
    });
  }
  /// Adds a scalar (shape ()).
  template <class T>
  void add_scalar(std::string const& name, T value) {
    add(name, &value, std::span<std::size_t const>{});
  }

  /// Writes the central directory and the end records; further adds are an error.
  void close() {
    if (closed_) return;
    closed_ = true;
    std::uint64_t const cd_start = out_.tell();
    bool any64 = zip64_ || entries_.size() >= 0xffff || cd_start >= 0xffffffffu;
    for (auto const& e : entries_) {
      any64 |= e.zip64;
      put32(0x02014b50);
      put16(e.zip64 ? 45 : 20);  // version made by
      put16(e.zip64 ? 45 : 20);  // version needed
      put16(0);                   // flags
      put16(0);                   // stored
      put16(0);                   // time 00:00
      put16(0x21);                // date 1980-01-01
      put32(e.crc);
      put32(e.zip64 ? 0xffffffffu : std::uint32_t(e.size));
      put32(e.zip64 ? 0xffffffffu : std::uint32_t(e.size));
      put16(std::uint16_t(e.name.size()));
      put16(e.zip64 ? 28 : 0);  // extra: id, size, then sizes and offset
      put16(0);                 // comment
      put16(0);                 // disk
      put16(0);                 // internal attributes
      put32(0);                 // external attributes
      put32(e.zip64 ? 0xffffffffu : std::uint32_t(e.offset));
      out_.write(e.name);
      if (e.zip64) {
        put16(1);
        put16(24);
        put64(e.size);
        put64(e.size);
        put64(e.offset);
      }
    }
    std::uint64_t const cd_end = out_.tell(), cd_size = cd_end - cd_start;
    if (any64) {
      put32(0x06064b50);
      put64(44);
      put16(45);
      put16(45);
      put32(0);
      put32(0);
      put64(entries_.size());
      put64(entries_.size());
      put64(cd_size);
      put64(cd_start);
      put32(0x07064b50);
      put32(0);
      put64(cd_end);
      put32(1);
    }
    put32(0x06054b50);
    put16(0);
    put16(0);
    std::uint16_t const count = entries_.size() >= 0xffff ? 0xffff : std::uint16_t(entries_.size());
    put16(count);
    put16(count);
    put32(cd_size >= 0xffffffffu ? 0xffffffffu : std::uint32_t(cd_size));
    put32(any64 ? 0xffffffffu : std::uint32_t(cd_start));
    put16(0);
    out_.commit();
  }

 private:
  struct entry {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size, offset;
    bool zip64;
  };
  void put16(std::uint16_t v) {
    char b[2] = {char(v & 0xff), char(v >> 8)};
    out_.write(b, 2);
  }
  void put32(std::uint32_t v) {
    put16(std::uint16_t(v & 0xffff));
    put16(std::uint16_t(v >> 16));
  }
  void put64(std::uint64_t v) {
    put32(std::uint32_t(v & 0xffffffffu));
    put32(std::uint32_t(v >> 32));
  }
  void write_local_header(entry const& e) {
    put32(0x04034b50);
    put16(e.zip64 ? 45 : 20);
    put16(0);
    put16(0);
    put16(0);
    put16(0x21);
    put32(0);  // CRC-32, patched once the data are written
    put32(e.zip64 ? 0xffffffffu : std::uint32_t(e.size));
    put32(e.zip64 ? 0xffffffffu : std::uint32_t(e.size));
    put16(std::uint16_t(e.name.size()));
    put16(e.zip64 ? 20 : 0);
    out_.write(e.name);
    if (e.zip64) {
      put16(1);
      put16(16);
      put64(e.size);
      put64(e.size);
    }
  }

  detail::durable_file out_;
  bool zip64_ = false, closed_ = false;
  int uncaught_at_start_ = std::uncaught_exceptions();
  std::vector<entry> entries_;
};

/// Reads every array of a .npz archive written without compression (by `npz_writer` or
/// `numpy.savez`), keyed by name without ".npy". The archive is read as zip readers do: from its
/// end record (and zip64 end record), through its central directory, and each entry's local
/// header must agree with its central record; every offset and size is checked against the file
/// before it is used. Throws std::runtime_error, naming the file and the problem, for a file that
/// is not a zip archive, a truncated or inconsistent one, a compressed, encrypted or overlapping
/// entry, two entries of one name, a bad CRC or a bad .npy entry; nothing is returned in part.
inline std::map<std::string, npy_array> read_npz(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("ember::read_npz: cannot open " + path);
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::uint64_t const n = all.size();
  auto bad = [&](std::string const& why) { return std::runtime_error("ember::read_npz: " + path + " " + why); };
  // [at, at + len) lies within [0, end), without overflow.
  auto inside = [](std::uint64_t at, std::uint64_t len, std::uint64_t end) { return at <= end && len <= end - at; };
  // The little-endian integer of `bytes` bytes at `at`.
  auto get = [&](std::uint64_t at, int bytes) {
    if (!inside(at, std::uint64_t(bytes), n)) throw bad("is truncated");
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t((unsigned char)all[std::size_t(at) + std::size_t(i)]) << (8 * i);
    return v;
  };
  bool const starts_like_zip = n >= 4 && get(0, 4) == 0x04034b50;

  // The end-of-central-directory record: 22 bytes and a comment of at most 65,535 that ends the file.
  std::uint64_t eocd = n;
  if (n >= 22)
    for (std::uint64_t at = n - 22 + 1, lowest = n - 22 > 0xffff ? n - 22 - 0xffff : 0; at-- > lowest;)
      if (all[std::size_t(at)] == 'P' && get(at, 4) == 0x06054b50 && get(at + 20, 2) == n - 22 - at) {
        eocd = at;
        break;
      }
  if (eocd == n)
    throw bad(starts_like_zip ? "is truncated or damaged (it has no end-of-central-directory record)"
                              : "is not a zip archive (it has no end-of-central-directory record)");
  std::uint64_t disk = get(eocd + 4, 2), cd_disk = get(eocd + 6, 2), disk_entries = get(eocd + 8, 2),
                entries = get(eocd + 10, 2), cd_size = get(eocd + 12, 4), cd_offset = get(eocd + 16, 4);
  std::uint64_t cd_end = eocd;  // the central directory ends where the end records start
  if (eocd >= 20 && get(eocd - 20, 4) == 0x07064b50) {
    // zip64: a 20-byte locator before the end record points to the zip64 end record, 56 bytes
    // (the record's own size field counts from byte 12) that end at the locator.
    std::uint64_t const loc = eocd - 20, z = get(loc + 8, 8);
    if (get(loc + 4, 4) != 0 || get(loc + 16, 4) != 1) throw bad("spans several disks, which is not supported");
    if (!inside(z, 56, loc) || get(z, 4) != 0x06064b50 || get(z + 4, 8) != loc - z - 12)
      throw bad("has a zip64 locator that does not point to a zip64 end-of-central-directory record before it");
    std::uint64_t const z_disk = get(z + 16, 4), z_cd_disk = get(z + 20, 4), z_disk_entries = get(z + 24, 8),
                        z_entries = get(z + 32, 8), z_cd_size = get(z + 40, 8), z_cd_offset = get(z + 48, 8);
    // Each classic field is the zip64 one or the "see zip64" marker (all bits set).
    auto agree = [](std::uint64_t classic, std::uint64_t wide, std::uint64_t marker) { return classic == marker || classic == wide; };
    if (!agree(disk, z_disk, 0xffff) || !agree(cd_disk, z_cd_disk, 0xffff) || !agree(disk_entries, z_disk_entries, 0xffff) ||
        !agree(entries, z_entries, 0xffff) || !agree(cd_size, z_cd_size, 0xffffffffu) || !agree(cd_offset, z_cd_offset, 0xffffffffu))
      throw bad("has end records that disagree (the zip64 and the classic one)");
    disk = z_disk, cd_disk = z_cd_disk, disk_entries = z_disk_entries, entries = z_entries, cd_size = z_cd_size, cd_offset = z_cd_offset;
    cd_end = z;
  }
  if (disk != 0 || cd_disk != 0 || disk_entries != entries) throw bad("spans several disks, which is not supported");
  if (!inside(cd_offset, cd_size, cd_end) || cd_offset + cd_size != cd_end)
    throw bad("is truncated or damaged (its central directory does not end where its end record starts)");
  if (entries > cd_size / 46) throw bad("is damaged (its end record counts more entries than its central directory can hold)");

  // The central directory: one record per entry, each checked against its local header.
  struct entry {
    std::string name;
    std::uint64_t local, data, size;
    std::uint32_t crc;
  };
  std::vector<entry> list;
  std::uint64_t at = cd_offset;
  for (std::uint64_t k = 0; k < entries; ++k) {
    std::string const record = "central directory record " + std::to_string(k + 1) + " of " + std::to_string(entries);
    if (!inside(at, 46, cd_end) || get(at, 4) != 0x02014b50) throw bad("is damaged (" + record + " is missing)");
    std::uint64_t const flags = get(at + 8, 2), method = get(at + 10, 2), crc = get(at + 16, 4), name_len = get(at + 28, 2),
                        extra_len = get(at + 30, 2), comment_len = get(at + 32, 2);
    std::uint64_t csize = get(at + 20, 4), usize = get(at + 24, 4), disk_start = get(at + 34, 2), local = get(at + 42, 4);
    if (!inside(at + 46, name_len + extra_len + comment_len, cd_end)) throw bad("is damaged (" + record + " runs past the directory)");
    std::string const name(all.data() + at + 46, std::size_t(name_len));
    std::string const shown = "entry '" + detail::printable(name) + "'";
    // The zip64 extra field (id 1) holds, in this order, 8 bytes (4 for the disk) for each field
    // whose classic value (`classic` bytes) is the marker, all bits set.
    auto zip64_fields = [&](std::uint64_t x, std::uint64_t len, std::initializer_list<std::pair<std::uint64_t*, int>> fields,
                            std::string const& where) {
      std::uint64_t const end = x + len;
      bool seen = false;
      while (x < end) {
        if (end - x < 4) throw bad("is damaged (the extra field of " + where + " is malformed)");
        std::uint64_t const id = get(x, 2), size = get(x + 2, 2);
        if (size > end - x - 4) throw bad("is damaged (the extra field of " + where + " is malformed)");
        if (id == 1) {
          if (seen) throw bad("is damaged (" + where + " has two zip64 extra fields)");
          seen = true;
          std::uint64_t y = x + 4;
          for (auto [value, classic] : fields) {
            int const wide = classic == 2 ? 4 : 8;
            if (*value != (classic == 2 ? 0xffffu : 0xffffffffu)) continue;
            if (x + 4 + size - y < std::uint64_t(wide)) throw bad("is damaged (the zip64 extra field of " + where + " is too short)");
            *value = get(y, wide);
            y += std::uint64_t(wide);
          }
        }
        x += 4 + size;
      }
      if (!seen)
        for (auto [value, classic] : fields)
          if (classic == 4 && *value == 0xffffffffu) throw bad("is damaged (" + where + " has a zip64 marker but no zip64 extra field)");
    };
    zip64_fields(at + 46 + name_len, extra_len, {{&usize, 4}, {&csize, 4}, {&local, 4}, {&disk_start, 2}}, shown);
    if (flags & 1) throw bad("has an encrypted " + shown + ", which is not supported");
    if (method != 0) throw bad("has a compressed " + shown + "; only stored entries are read");
    if (flags & 8) throw bad("has " + shown + " with a data descriptor, which is not supported");
    if (csize != usize) throw bad("is damaged (stored " + shown + " has two different sizes)");
    if (disk_start != 0) throw bad("spans several disks, which is not supported");
    // Its local header, before the central directory, must say the same.
    if (!inside(local, 30, cd_offset) || get(local, 4) != 0x04034b50)
      throw bad("is damaged (the local header of " + shown + " is missing)");
    std::uint64_t const l_flags = get(local + 6, 2), l_method = get(local + 8, 2), l_crc = get(local + 14, 4),
                        l_name_len = get(local + 26, 2), l_extra_len = get(local + 28, 2);
    std::uint64_t l_csize = get(local + 18, 4), l_usize = get(local + 22, 4);
    if (!inside(local + 30, l_name_len + l_extra_len, cd_offset))
      throw bad("is damaged (the local header of " + shown + " runs into the central directory)");
    if (l_name_len != name_len || std::memcmp(all.data() + local + 30, name.data(), name.size()) != 0)
      throw bad("is damaged (the local header of " + shown + " names another entry)");
    zip64_fields(local + 30 + l_name_len, l_extra_len, {{&l_usize, 4}, {&l_csize, 4}}, "the local header of " + shown);
    if (l_flags != flags || l_method != method || l_crc != crc || l_csize != csize || l_usize != usize)
      throw bad("is damaged (the local header of " + shown + " disagrees with its central directory record)");
    std::uint64_t const data = local + 30 + l_name_len + l_extra_len;
    if (!inside(data, usize, cd_offset)) throw bad("is truncated or damaged (" + shown + " runs into the central directory)");
    list.push_back({name, local, data, usize, std::uint32_t(crc)});
    at += 46 + name_len + extra_len + comment_len;
  }
  if (at != cd_end) throw bad("is damaged (its central directory is longer than its records)");

  // No two entries share bytes (a small file must not unpack into many copies of one array).
  std::vector<entry const*> by_offset;
  for (auto const& e : list) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](entry const* a, entry const* b) { return a->local < b->local; });
  for (std::size_t k = 1; k < by_offset.size(); ++k)
    if (by_offset[k - 1]->data + by_offset[k - 1]->size > by_offset[k]->local)
      throw bad("is damaged (entries '" + detail::printable(by_offset[k - 1]->name) + "' and '" +
                detail::printable(by_offset[k]->name) + "' overlap)");

  std::map<std::string, npy_array> out;
  for (auto const& e : list) {
    std::string key = e.name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    if (out.count(key)) throw bad("has two entries for the array '" + detail::printable(key) + "'");
    std::string const shown = "entry '" + detail::printable(e.name) + "'";
    if (detail::crc32_update(0, all.data() + e.data, std::size_t(e.size)) != e.crc) throw bad("has a CRC-32 mismatch in " + shown);
    out[key] = detail::parse_npy_image(all.data() + e.data, std::size_t(e.size), "ember::read_npz: " + path + ", " + shown);
  }
  return out;
}

}  // namespace ember
