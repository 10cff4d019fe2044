// Fuzzes ember::read_npz: seeds from ember::npz_writer (classic and zip64, several entries, an
// empty archive) and one laid out as numpy.savez does (zip64 sizes in the local headers only).
// Three mutated inputs in four have their CRC-32s mended, so mutations of the entries' .npy
// headers and of the zip records reach the checks behind the CRC.
#include "fuzz.hpp"
#include "read_back.hpp"

#include <ember/io/npz.hpp>

#include <array>
#include <cstdint>
#include <map>

namespace {

std::uint64_t get(std::string const& b, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes && at + std::size_t(i) < b.size(); ++i) v |= std::uint64_t((unsigned char)b[at + std::size_t(i)]) << (8 * i);
  return v;
}
void put(std::string& b, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes && at + std::size_t(i) < b.size(); ++i) b[at + std::size_t(i)] = char((v >> (8 * i)) & 0xff);
}
void append(std::string& b, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b += char((v >> (8 * i)) & 0xff);
}

// A stored archive laid out as Python's zipfile writes numpy.savez's: local headers with zip64
// sizes (0xffffffff and an extra field), central records and end record classic.
std::string savez_like(std::vector<std::pair<std::string, std::string>> const& entries) {
  std::string b, cd;
  for (auto const& [name, data] : entries) {
    std::uint32_t const crc = ember::detail::crc32_update(0, data.data(), data.size());
    std::size_t const offset = b.size();
    append(b, 0x04034b50, 4), append(b, 45, 2), append(b, 0, 2), append(b, 0, 2), append(b, 0, 2), append(b, 0x21, 2);
    append(b, crc, 4), append(b, 0xffffffffu, 4), append(b, 0xffffffffu, 4), append(b, name.size(), 2), append(b, 20, 2);
    b += name;
    append(b, 1, 2), append(b, 16, 2), append(b, data.size(), 8), append(b, data.size(), 8);
    b += data;
    append(cd, 0x02014b50, 4), append(cd, 45, 2), append(cd, 20, 2), append(cd, 0, 2), append(cd, 0, 2), append(cd, 0, 2);
    append(cd, 0x21, 2), append(cd, crc, 4), append(cd, data.size(), 4), append(cd, data.size(), 4), append(cd, name.size(), 2);
    append(cd, 0, 2), append(cd, 0, 2), append(cd, 0, 2), append(cd, 0, 2), append(cd, 0x01800000, 4), append(cd, offset, 4);
    cd += name;
  }
  std::size_t const cd_offset = b.size();
  b += cd;
  append(b, 0x06054b50, 4), append(b, 0, 2), append(b, 0, 2), append(b, entries.size(), 2), append(b, entries.size(), 2);
  append(b, cd.size(), 4), append(b, cd_offset, 4), append(b, 0, 2);
  return b;
}

std::vector<std::string> npz_seeds() {
  std::vector<std::string> s;
  auto const path = ember_fuzz::scratch_path("npz_seed");
  std::array<double, 6> d{1, 2, 3, 4, 5, 6};
  std::array<std::int32_t, 3> i{-1, 0, 1};
  for (int style = 0; style < 4; ++style) {
    {
      ember::npz_writer z(path, style == 1);
      if (style < 2) {
        z.add("a", d.data(), std::array<std::size_t, 2>{2, 3});
        z.add("b", i.data(), std::array<std::size_t, 1>{3});
        z.add_scalar("c", 2.5f);
      } else if (style == 2) {
        z.add_scalar("only", true);
      }  // style 3: an empty archive
      z.close();
    }
    s.push_back(ember_fuzz::read_file(path));
  }
  std::remove(path.c_str());
  s.push_back(savez_like({{"x.npy", ember::npy_bytes(d.data(), std::array<std::size_t, 1>{6})},
                          {"y.npy", ember::npy_bytes(i.data(), std::array<std::size_t, 1>{3})}}));
  return s;
}

// Mends what a mutation broke behind the CRC: each local header whose data lie in the input gets
// the CRC-32 of those data, and so does every central record that points to that header.
void mend_crcs(std::string& b, std::mt19937_64&) {
  std::map<std::uint64_t, std::uint32_t> crc_at;
  for (auto at = b.find("PK\x03\x04"); at != std::string::npos && at + 30 <= b.size(); at = b.find("PK\x03\x04", at + 1)) {
    std::uint64_t const name_len = get(b, at + 26, 2), extra_len = get(b, at + 28, 2);
    std::uint64_t size = get(b, at + 22, 4);
    std::uint64_t const extra = at + 30 + name_len;
    if (size == 0xffffffffu && extra + 12 <= b.size() && get(b, extra, 2) == 1) size = get(b, extra + 4, 8);
    std::uint64_t const data = extra + extra_len;
    if (data > b.size() || size > b.size() - data) continue;
    std::uint32_t const crc = ember::detail::crc32_update(0, b.data() + data, std::size_t(size));
    put(b, at + 14, crc, 4);
    crc_at[at] = crc;
  }
  for (auto at = b.find("PK\x01\x02"); at != std::string::npos && at + 46 <= b.size(); at = b.find("PK\x01\x02", at + 1)) {
    std::uint64_t offset = get(b, at + 42, 4);
    if (offset == 0xffffffffu) {  // the zip64 extra: the saturated sizes first
      std::uint64_t const extra = at + 46 + get(b, at + 28, 2);
      std::uint64_t field = extra + 4 + 8 * ((get(b, at + 24, 4) == 0xffffffffu) + (get(b, at + 20, 4) == 0xffffffffu));
      offset = get(b, extra, 2) == 1 ? get(b, field, 8) : ~0ull;
    }
    if (auto it = crc_at.find(offset); it != crc_at.end()) put(b, at + 16, it->second, 4);
  }
}

ember_fuzz::reader make_reader() {
  ember_fuzz::reader r;
  r.name = "npz";
  r.seeds = npz_seeds();
  r.tokens = {"PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "PK\x06\x06", "PK\x06\x07", std::string("\x01\x00\x10\x00", 4),
              std::string("\x01\x00\x18\x00", 4), std::string(8, '\xff'), std::string(4, '\xff'), std::string(4, '\0'),
              ".npy", "a.npy", "'shape': (", "-1,", "'<f8'", "True", "\x93NUMPY"};
  r.fix = mend_crcs;
  std::string const path = r.scratch = ember_fuzz::scratch_path("npz");
  r.target = [path](std::string const& b) {
    ember_fuzz::write_file(path, b);
    for (auto const& [name, a] : ember::read_npz(path)) ember_fuzz::read_back(a);
    return true;
  };
  return r;
}

}  // namespace

EMBER_FUZZ_MAIN(make_reader)
