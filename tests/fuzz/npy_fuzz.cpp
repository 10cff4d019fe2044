// Fuzzes ember::parse_npy (and npy_array::as on what it accepts): seeds from ember::npy_bytes
// of every type, several shapes, and the same images as format 2.0 and 3.0.
#include "fuzz.hpp"
#include "read_back.hpp"

#include <ember/io/npy.hpp>

#include <array>
#include <cstdint>

namespace {

// The image `v1` (format 1.0) as format `major`.0: a 4-byte header length.
std::string as_version(std::string const& v1, int major) {
  std::size_t const hl = std::size_t((unsigned char)v1[8]) | std::size_t((unsigned char)v1[9]) << 8;
  std::string out = v1.substr(0, 6);
  out += char(major);
  out += char(0);
  for (int i = 0; i < 4; ++i) out += char((hl >> (8 * i)) & 0xff);
  return out + v1.substr(10);
}

std::vector<std::string> npy_seeds() {
  std::vector<std::string> s;
  std::array<double, 6> d{1, -2.5, 3, 1e300, -0.0, 6};
  std::array<float, 6> f{1, 2, 3, 4, 5, 6};
  std::array<std::int64_t, 4> i8{-1, 0, 1, 1ll << 62};
  std::array<std::int32_t, 3> i4{7, -8, 9};
  std::array<std::uint16_t, 2> u2{1, 65535};
  std::array<std::uint8_t, 3> u1{0, 1, 255};
  bool b[2] = {true, false};
  s.push_back(ember::npy_bytes(d.data(), std::array<std::size_t, 2>{2, 3}));
  s.push_back(ember::npy_bytes(f.data(), std::array<std::size_t, 3>{1, 2, 3}));
  s.push_back(ember::npy_bytes(i8.data(), std::array<std::size_t, 1>{4}));
  s.push_back(ember::npy_bytes(i4.data(), std::array<std::size_t, 1>{3}));
  s.push_back(ember::npy_bytes(u2.data(), std::array<std::size_t, 2>{2, 1}));
  s.push_back(ember::npy_bytes(u1.data(), std::array<std::size_t, 1>{3}));
  s.push_back(ember::npy_bytes(b, std::array<std::size_t, 1>{2}));
  s.push_back(ember::npy_bytes(d.data(), std::span<std::size_t const>{}));          // a scalar
  s.push_back(ember::npy_bytes(d.data(), std::array<std::size_t, 2>{0, 5}));       // empty
  s.push_back(as_version(s[0], 2));
  s.push_back(as_version(s[2], 3));
  return s;
}

ember_fuzz::reader make_reader() {
  ember_fuzz::reader r;
  r.name = "npy";
  r.seeds = npy_seeds();
  r.tokens = {"'descr'", "'shape'", "'fortran_order'", "True", "False", "(", ")", ",", ", ", "-", "-1", "0",
              "18446744073709551615", "18446744073709551616", "4294967296", "9223372036854775808", "L", "'<f8'",
              "'>f8'", "'|b1'", "'<f0'", "'=i4'", "'<c16'", "[", "]", "{", "}", ":", "'", "\"", "\n", " ", "\x93NUMPY"};
  r.target = [](std::string const& b) {
    auto a = ember::parse_npy(b.data(), b.size());
    ember_fuzz::read_back(a);
    return true;
  };
  return r;
}

}  // namespace

EMBER_FUZZ_MAIN(make_reader)
