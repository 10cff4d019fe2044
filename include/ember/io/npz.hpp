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
#include <ember/io/npy.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
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
  /// Creates `path`; `force_zip64` uses zip64 records even for small entries (for tests).
  explicit npz_writer(std::string path, bool force_zip64 = false)
      : path_(std::move(path)), out_(path_, std::ios::binary | std::ios::trunc), zip64_(force_zip64) {
    if (!out_) throw std::runtime_error("ember::npz_writer: cannot create " + path_);
  }
  npz_writer(npz_writer const&) = delete;
  npz_writer& operator=(npz_writer const&) = delete;
  ~npz_writer() {
    try {
      close();
    } catch (...) {
    }
  }

  /// Adds array `name` (stored as `name`.npy) of `shape`, whose elements in C order come from
  /// `fill(T* buffer, std::size_t first, std::size_t count)`, called on consecutive ranges.
  template <class T, class Fill>
  void add_streamed(std::string const& name, std::span<std::size_t const> shape, Fill&& fill) {
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    std::string const header = npy_header(npy_descr<T>(), shape);
    entry e{name + ".npy", 0, std::uint64_t(header.size()) + std::uint64_t(n) * sizeof(T), std::uint64_t(out_.tellp()), false};
    e.zip64 = zip64_ || e.size >= 0xffffffffu || e.offset >= 0xffffffffu;
    write_local_header(e);
    std::uint32_t crc = detail::crc32_update(0, header.data(), header.size());
    out_.write(header.data(), std::streamsize(header.size()));
    std::size_t const chunk = std::max<std::size_t>(1, (std::size_t(1) << 22) / sizeof(T));
    std::unique_ptr<T[]> buf(new T[std::min(chunk, std::max<std::size_t>(n, 1))]);  // T may be bool
    for (std::size_t first = 0; first < n; first += chunk) {
      std::size_t const count = std::min(chunk, n - first);
      fill(buf.get(), first, count);
      crc = detail::crc32_update(crc, buf.get(), count * sizeof(T));
      out_.write(reinterpret_cast<char const*>(buf.get()), std::streamsize(count * sizeof(T)));
    }
    e.crc = crc;
    auto const end = out_.tellp();
    out_.seekp(std::streamoff(e.offset + 14));  // the CRC field of the local header
    put32(e.crc);
    out_.seekp(end);
    if (!out_) throw std::runtime_error("ember::npz_writer: write failed on " + path_);
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
    std::uint64_t const cd_start = std::uint64_t(out_.tellp());
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
      out_.write(e.name.data(), std::streamsize(e.name.size()));
      if (e.zip64) {
        put16(1);
        put16(24);
        put64(e.size);
        put64(e.size);
        put64(e.offset);
      }
    }
    std::uint64_t const cd_end = std::uint64_t(out_.tellp()), cd_size = cd_end - cd_start;
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
    out_.close();
    if (!out_) throw std::runtime_error("ember::npz_writer: write failed on " + path_);
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
    out_.write(e.name.data(), std::streamsize(e.name.size()));
    if (e.zip64) {
      put16(1);
      put16(16);
      put64(e.size);
      put64(e.size);
    }
  }

  std::string path_;
  std::ofstream out_;
  bool zip64_ = false, closed_ = false;
  std::vector<entry> entries_;
};

/// Reads every array of a .npz archive written without compression (by `npz_writer` or
/// `numpy.savez`), keyed by name without ".npy"; throws on a bad CRC or a compressed entry.
inline std::map<std::string, npy_array> read_npz(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("ember::read_npz: cannot open " + path);
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto fail = [&](std::string const& why) { throw std::runtime_error("ember::read_npz: " + path + ": " + why); };
  auto get = [&](std::size_t at, int bytes) {
    if (at + std::size_t(bytes) > all.size()) fail("truncated");
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t((unsigned char)all[at + std::size_t(i)]) << (8 * i);
    return v;
  };
  std::map<std::string, npy_array> out;
  std::size_t at = 0;
  while (at + 4 <= all.size() && get(at, 4) == 0x04034b50) {
    auto const method = get(at + 8, 2), flags = get(at + 6, 2);
    auto const crc = std::uint32_t(get(at + 14, 4));
    std::uint64_t size = get(at + 18, 4);
    auto const name_len = get(at + 26, 2), extra_len = get(at + 28, 2);
    std::string name(all.data() + at + 30, name_len);
    std::size_t const extra = at + 30 + name_len;
    if (size == 0xffffffffu) {
      for (std::size_t x = extra; x + 4 <= extra + extra_len;) {
        auto id = get(x, 2), len = get(x + 2, 2);
        if (id == 1) size = get(x + 4, 8);
        x += 4 + len;
      }
    }
    if (method != 0) fail(name + " is compressed; only stored entries are read");
    if (flags & 8) fail(name + " has a data descriptor; not supported");
    std::size_t const data = extra + extra_len;
    if (data + size > all.size()) fail(name + " is truncated");
    if (detail::crc32_update(0, all.data() + data, size) != crc) fail("CRC-32 mismatch in " + name);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    out[name] = parse_npy(all.data() + data, size);
    at = data + size;
  }
  return out;
}

}  // namespace ember
