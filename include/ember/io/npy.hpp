#pragma once
/// \file
/// The `.npy` format (NumPy's NEP 1, version 1.0): `write_npy` and `read_npy` for arrays of
/// float, double, 8/16/32/64-bit signed and unsigned integers and bool, of any shape (a scalar
/// has shape {}), in C order, little-endian.
///
/// A file is the magic "\x93NUMPY", the version bytes 1 0, a 2-byte little-endian header length
/// H, then H bytes of a Python dict literal, `{'descr': '<f4', 'fortran_order': False, 'shape':
/// (2, 3), }`, padded with spaces and ended by a newline so that 10 + H is a multiple of 64 (the
/// data start aligned), then the elements, row-major. `npy_header` builds those first 10 + H
/// bytes, so the data can follow from anywhere (a stream, a zip entry).

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember {

static_assert(std::endian::native == std::endian::little, "ember's .npy writer assumes a little-endian host");

/// NumPy's type string for T: '<f4', '<f8', '<i4', '|u1', '|b1', ...
template <class T>
std::string npy_descr() {
  if constexpr (std::is_same_v<T, bool>)
    return "|b1";
  else if constexpr (std::is_floating_point_v<T>)
    return std::string("<f") + std::to_string(sizeof(T));
  else if constexpr (std::is_integral_v<T>)
    return std::string(sizeof(T) == 1 ? "|" : "<") + (std::is_signed_v<T> ? "i" : "u") + std::to_string(sizeof(T));
  else
    static_assert(sizeof(T) == 0, "ember::npy_descr: float, double, an integer type or bool");
}

/// The magic, version, length and dict of a .npy file: 10 + H bytes, a multiple of 64.
inline std::string npy_header(std::string const& descr, std::span<std::size_t const> shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  std::size_t total = 10 + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  if (dict.size() > 65535) throw std::invalid_argument("ember::npy_header: shape too long for a version 1.0 header");
  std::string h = "\x93NUMPY";
  h += char(1);
  h += char(0);
  h += char(dict.size() & 0xff);
  h += char(dict.size() >> 8);
  return h + dict;
}

/// The whole .npy file of `data` (C order, `shape`'s product elements) as bytes.
template <class T>
std::string npy_bytes(T const* data, std::span<std::size_t const> shape) {
  std::size_t n = 1;
  for (auto s : shape) n *= s;
  std::string out = npy_header(npy_descr<T>(), shape);
  out.append(reinterpret_cast<char const*>(data), n * sizeof(T));
  return out;
}

/// Writes `data` with `shape` to the .npy file `path`; throws std::runtime_error if it cannot.
template <class T>
void write_npy(std::string const& path, T const* data, std::span<std::size_t const> shape) {
  std::ofstream f(path, std::ios::binary);
  std::string const bytes = npy_bytes(data, shape);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  if (!f) throw std::runtime_error("ember::write_npy: cannot write " + path);
}

/// An array read back: its type string, shape and raw little-endian bytes.
struct npy_array {
  std::string descr;
  std::vector<std::size_t> shape;
  std::vector<char> bytes;

  std::size_t size() const {
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  /// The elements as T; throws if T's type string is not `descr`.
  template <class T>
  std::vector<T> as() const {
    if (npy_descr<T>() != descr) throw std::runtime_error("ember::npy_array::as: the array holds " + descr + ", not " + npy_descr<T>());
    std::vector<T> v(size());
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = bytes[i] != 0;
    } else {
      std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    }
    return v;
  }
};

/// Parses a whole .npy file held in memory (version 1.0 to 3.0, C order only).
inline npy_array parse_npy(char const* p, std::size_t n) {
  auto fail = [](std::string const& why) { throw std::runtime_error("ember::parse_npy: " + why); };
  if (n < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) fail("not a .npy file");
  std::size_t hl, start;
  if (p[6] == 1) {
    hl = std::size_t((unsigned char)p[8]) | std::size_t((unsigned char)p[9]) << 8;
    start = 10;
  } else {
    if (n < 12) fail("truncated header");
    hl = 0;
    for (int i = 0; i < 4; ++i) hl |= std::size_t((unsigned char)p[8 + i]) << (8 * i);
    start = 12;
  }
  if (start + hl > n) fail("truncated header");
  std::string dict(p + start, hl);
  npy_array a;
  auto value_after = [&](std::string const& key) {
    auto k = dict.find("'" + key + "'");
    if (k == std::string::npos) fail("no " + key + " in the header");
    auto colon = dict.find(':', k);
    auto v = dict.find_first_not_of(' ', colon + 1);
    return v;
  };
  auto d = value_after("descr");
  auto q = dict.find('\'', d + 1);
  a.descr = dict.substr(d + 1, q - d - 1);
  if (dict.compare(value_after("fortran_order"), 5, "False") != 0) fail("Fortran order is not supported");
  auto s = value_after("shape");
  auto close = dict.find(')', s);
  std::string dims = dict.substr(s + 1, close - s - 1);
  for (std::size_t i = 0; i < dims.size();) {
    auto j = dims.find_first_of("0123456789", i);
    if (j == std::string::npos) break;
    auto e = dims.find_first_not_of("0123456789", j);
    a.shape.push_back(std::stoull(dims.substr(j, e - j)));
    i = e == std::string::npos ? dims.size() : e;
  }
  std::size_t item = std::stoull(a.descr.substr(2));
  std::size_t bytes = a.size() * item;
  if (start + hl + bytes > n) fail("truncated data");
  a.bytes.assign(p + start + hl, p + start + hl + bytes);
  return a;
}

/// Reads the .npy file `path`.
inline npy_array read_npy(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("ember::read_npy: cannot open " + path);
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_npy(all.data(), all.size());
}

}  // namespace ember
