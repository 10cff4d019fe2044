// Fuzzes ember::dataset<float>::from_npy: seeds from ember::npy_bytes (f4, f8, i4, i8; 1-D and
// 2-D), the same with Fortran order, and as format 2.0 and 3.0.
#include "fuzz.hpp"

#include <ember/data/dataset.hpp>
#include <ember/io/npy.hpp>

#include <array>
#include <cstdint>

namespace {

std::string as_version(std::string const& v1, int major) {
  std::size_t const hl = std::size_t((unsigned char)v1[8]) | std::size_t((unsigned char)v1[9]) << 8;
  std::string out = v1.substr(0, 6);
  out += char(major);
  out += char(0);
  for (int i = 0; i < 4; ++i) out += char((hl >> (8 * i)) & 0xff);
  return out + v1.substr(10);
}
std::string fortran(std::string s) {
  auto at = s.find("'fortran_order': False");
  s.replace(at, 22, "'fortran_order': True ");
  return s;
}

std::vector<std::string> seeds() {
  std::array<double, 6> d{1, -2.5, 3, 4, 5, 6};
  std::array<float, 4> f{1, 2, 3, 4};
  std::array<std::int64_t, 4> i8{-1, 0, 1, 1ll << 40};
  std::array<std::int32_t, 6> i4{7, -8, 9, 10, 11, 12};
  std::vector<std::string> s{ember::npy_bytes(d.data(), std::array<std::size_t, 2>{2, 3}),
                             ember::npy_bytes(f.data(), std::array<std::size_t, 1>{4}),
                             ember::npy_bytes(i8.data(), std::array<std::size_t, 2>{4, 1}),
                             ember::npy_bytes(i4.data(), std::array<std::size_t, 2>{3, 2})};
  s.push_back(fortran(s[0]));
  s.push_back(fortran(s[3]));
  s.push_back(as_version(s[0], 2));
  s.push_back(as_version(s[1], 3));
  return s;
}

ember_fuzz::reader make_reader() {
  ember_fuzz::reader r;
  r.name = "dataset_npy";
  r.seeds = seeds();
  r.tokens = {"'descr'", "'shape'", "'fortran_order'", "True", "False", "(", ")", ",", "-", "-1", "0",
              "18446744073709551615", "4294967296", "2147483648", "9223372036854775808", "'<f4'", "'<f8'",
              "'<i4'", "'<i8'", "'<i2'", "'>f8'", "'<f0'", "\x93NUMPY", "}", "{", "\n", " "};
  std::string const path = r.scratch = ember_fuzz::scratch_path("dataset_npy");
  r.target = [path](std::string const& b) {
    ember_fuzz::write_file(path, b);
    auto d = ember::dataset<float>::from_npy(path);
    if (d.values().size() != std::size_t(d.rows()) * std::size_t(d.cols())) throw std::logic_error("fuzz: a dataset of the wrong size");
    return true;
  };
  return r;
}

}  // namespace

EMBER_FUZZ_MAIN(make_reader)
