#pragma once
/// \file
/// The `.npy` format (NumPy's NEP 1; written as version 1.0, read in versions 1.0 to 3.0):
/// `write_npy` and `read_npy` for arrays of
/// float, double, 8/16/32/64-bit signed and unsigned integers and bool, of any shape (a scalar
/// has shape {}), in C order, little-endian.
///
/// A file is the magic "\x93NUMPY", the version bytes 1 0, a 2-byte little-endian header length
/// H, then H bytes of a Python dict literal, `{'descr': '<f4', 'fortran_order': False, 'shape':
/// (2, 3), }`, padded with spaces and ended by a newline so that 10 + H is a multiple of 64 (the
/// data start aligned), then the elements, row-major. `npy_header` builds those first 10 + H
/// bytes, so the data can follow from anywhere (a stream, a zip entry).

#include <ember/io/detail/durable_file.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
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

/// Writes `data` with `shape` to the .npy file `path` durably (io/detail/durable_file.hpp: a
/// temporary, checked, fsynced, renamed); throws std::runtime_error, leaving `path` as it was, if
/// it cannot.
template <class T>
void write_npy(std::string const& path, T const* data, std::span<std::size_t const> shape) {
  detail::durable_file f(path, "ember::write_npy");
  f.write(npy_header(npy_descr<T>(), shape));
  std::size_t n = 1;
  for (auto s : shape) n *= s;
  f.write(data, n * sizeof(T));
  f.commit();
}

/// An array read back: its type string, shape and raw little-endian bytes.
struct npy_array {
  std::string descr;
  std::vector<std::size_t> shape;
  std::vector<char> bytes;

  /// The number of elements, the product of `shape`; throws std::runtime_error if it overflows.
  std::size_t size() const {
    std::size_t n = 1;
    for (auto s : shape) {
      if (s == 0) return 0;
      if (n > std::numeric_limits<std::size_t>::max() / s)
        throw std::runtime_error("ember::npy_array::size: the product of the shape overflows");
      n *= s;
    }
    return n;
  }
  /// The elements as T; throws std::runtime_error if T's type string is not `descr` or `bytes`
  /// does not hold exactly `size()` elements.
  template <class T>
  std::vector<T> as() const {
    if (npy_descr<T>() != descr) throw std::runtime_error("ember::npy_array::as: the array holds " + descr + ", not " + npy_descr<T>());
    std::size_t const n = size();
    if (n > bytes.size() / sizeof(T) || bytes.size() != n * sizeof(T))
      throw std::runtime_error("ember::npy_array::as: the array holds " + std::to_string(bytes.size()) + " bytes, not the " +
                               std::to_string(n) + " elements of " + std::to_string(sizeof(T)) + " bytes its shape says");
    std::vector<T> v(n);
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = bytes[i] != 0;
    } else if (n) {
      std::memcpy(v.data(), bytes.data(), n * sizeof(T));
    }
    return v;
  }
};

namespace detail {

/// `s` for a message: printable ASCII kept, any other byte shown as '?', at most `max` characters
/// (a name or type string from a file may hold anything).
inline std::string printable(std::string_view s, std::size_t max = 40) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) out += (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (s.size() > max) out += "...";
  return out;
}

/// What a .npy preamble and header say, checked (`parse_npy_header`).
struct npy_layout {
  std::string descr;            ///< the type string, canonical: "<f8", "|u1", "|b1", ...
  std::size_t item = 0;         ///< bytes per element
  bool fortran_order = false;
  std::vector<std::size_t> shape;
  std::size_t count = 0;        ///< elements: the product of `shape`
  std::size_t data_offset = 0;  ///< where the elements start: the preamble and header's length
  std::size_t data_bytes = 0;   ///< count · item
};

/// The length of the preamble and header of a .npy image of `n` bytes, from its first
/// `avail` ≥ min(n, 12) bytes at `p`: checks the magic, the version (1.0, 2.0 or 3.0) and that
/// the header fits in the image; throws E("who: why") otherwise.
template <class E = std::runtime_error>
std::size_t npy_header_end(char const* p, std::size_t avail, std::size_t n, std::string const& who) {
  if (n < 10 || avail < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) throw E(who + ": not a .npy file (no NumPy magic)");
  int const major = (unsigned char)p[6], minor = (unsigned char)p[7];
  if (major < 1 || major > 3 || minor != 0)
    throw E(who + ": unknown .npy format version " + std::to_string(major) + "." + std::to_string(minor) + " (1.0, 2.0 and 3.0 exist)");
  std::size_t const start = major == 1 ? 10 : 12;
  if (n < start || avail < start) throw E(who + ": the file ends inside its .npy preamble");
  std::size_t hl = 0;
  for (std::size_t i = 8; i < start; ++i) hl |= std::size_t((unsigned char)p[i]) << (8 * (i - 8));
  if (hl > n - start)
    throw E(who + ": the .npy header declares " + std::to_string(hl) + " bytes but only " + std::to_string(n - start) + " follow");
  return start + hl;
}

/// Parses the header dict of a .npy image whose preamble and header, `end` bytes long
/// (`npy_header_end`), are at `p`. The dict must have exactly the keys 'descr' (a known type
/// string: b1, i1, u1, i2, u2, i4, u4, i8, u8, f4, f8, little-endian '<' or native '=', or '|' for
/// one byte), 'fortran_order' (True or False) and 'shape' (a tuple of non-negative integers), as
/// a Python literal; the element and byte counts are computed with checked arithmetic. Throws
/// E("who: why") otherwise. The caller compares `data_bytes` with what follows the header.
template <class E = std::runtime_error>
npy_layout parse_npy_header(char const* p, std::size_t end, std::string const& who) {
  std::string_view const d(p + ((unsigned char)p[6] == 1 ? 10 : 12), end - ((unsigned char)p[6] == 1 ? 10 : 12));
  auto fail = [&](std::string const& why) { throw E(who + ": the .npy header " + why); };
  std::size_t i = 0;
  auto skip = [&] {
    while (i < d.size() && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) ++i;
  };
  auto expect = [&](char c, char const* what) {
    skip();
    if (i >= d.size() || d[i] != c) fail(std::string("is not a Python dict literal (") + what + " expected)");
    ++i;
  };
  auto quoted = [&](char const* what) {
    skip();
    if (i >= d.size() || (d[i] != '\'' && d[i] != '"')) fail(std::string("is not a Python dict literal (") + what + " expected)");
    char const q = d[i++];
    auto const close = d.find(q, i);
    if (close == std::string_view::npos) fail("has an unterminated string");
    std::string_view s = d.substr(i, close - i);
    i = close + 1;
    return s;
  };
  npy_layout L;
  L.data_offset = end;
  bool have_descr = false, have_order = false, have_shape = false;
  expect('{', "'{'");
  for (;;) {
    skip();
    if (i < d.size() && d[i] == '}') {
      ++i;
      break;
    }
    std::string_view const key = quoted("a quoted key");
    expect(':', "':'");
    skip();
    if (key == "descr") {
      if (have_descr) fail("has 'descr' twice");
      have_descr = true;
      if (i < d.size() && d[i] == '[') fail("describes a structured type, which is not supported");
      std::string_view const t = quoted("a quoted type string for 'descr'");
      static constexpr char const* known[] = {"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"};
      bool ok = false;
      if (t.size() == 3)
        for (auto k : known) ok |= t.substr(1) == k;
      if (!ok)
        fail("has type string '" + printable(t) + "'; ember reads b1, i1, u1, i2, u2, i4, u4, i8, u8, f4 and f8");
      L.item = std::size_t(t[2] - '0');
      if (t[0] == '>' && L.item > 1) fail("has type string '" + std::string(t) + "': big-endian data is not supported");
      if (!(t[0] == '<' || t[0] == '=' || (t[0] == '|' && L.item == 1)))
        fail("has type string '" + printable(t) + "' with a byte order that is not '<', '=' or, for one byte, '|'");
      L.descr = std::string(L.item == 1 ? "|" : "<") + std::string(t.substr(1));
    } else if (key == "fortran_order") {
      if (have_order) fail("has 'fortran_order' twice");
      have_order = true;
      if (d.substr(i, 4) == "True") {
        L.fortran_order = true;
        i += 4;
      } else if (d.substr(i, 5) == "False") {
        i += 5;
      } else {
        fail("has a 'fortran_order' that is not True or False");
      }
    } else if (key == "shape") {
      if (have_shape) fail("has 'shape' twice");
      have_shape = true;
      expect('(', "'(' opening the shape tuple");
      bool comma = true;  // a dimension may follow
      for (;;) {
        skip();
        if (i < d.size() && d[i] == ')') {
          ++i;
          break;
        }
        if (!comma) fail("has a shape that is not a tuple of integers");
        if (i < d.size() && d[i] == '-') fail("has a negative dimension in its shape");
        if (i >= d.size() || d[i] < '0' || d[i] > '9') fail("has a shape that is not a tuple of integers");
        std::size_t v = 0;
        for (; i < d.size() && d[i] >= '0' && d[i] <= '9'; ++i) {
          std::size_t const digit = std::size_t(d[i] - '0');
          if (v > (std::numeric_limits<std::size_t>::max() - digit) / 10) fail("has a dimension too large for this machine");
          v = v * 10 + digit;
        }
        if (i < d.size() && d[i] == 'L') ++i;  // Python 2's long suffix, in old files
        if (L.shape.size() == 64) fail("has more than 64 dimensions");
        L.shape.push_back(v);
        skip();
        comma = i < d.size() && d[i] == ',';
        if (comma) ++i;
      }
      if (L.shape.size() == 1 && !comma) fail("has a shape '(n)' that is not a tuple (a one-element tuple is '(n,)')");
    } else {
      fail("has an unexpected key '" + printable(key) + "'");
    }
    skip();
    if (i < d.size() && d[i] == ',') {
      ++i;
    } else {
      skip();
      if (i >= d.size() || d[i] != '}') fail("is not a Python dict literal (',' or '}' expected)");
    }
  }
  skip();
  if (i != d.size()) fail("has bytes after its dict");
  if (!have_descr || !have_order || !have_shape) fail("lacks one of 'descr', 'fortran_order' and 'shape'");
  L.count = 1;
  for (auto s : L.shape) {
    if (s == 0) {
      L.count = 0;
      break;
    }
    if (L.count > std::numeric_limits<std::size_t>::max() / s) fail("has a shape whose element count overflows");
    L.count *= s;
  }
  if (L.count > std::numeric_limits<std::size_t>::max() / L.item) fail("has a shape whose byte count overflows");
  L.data_bytes = L.count * L.item;
  return L;
}

/// `parse_npy`, with `who` (the function and the file) opening every message.
inline npy_array parse_npy_image(char const* p, std::size_t n, std::string const& who) {
  std::size_t const end = npy_header_end(p, n, n, who);
  npy_layout L = parse_npy_header(p, end, who);
  if (L.fortran_order) throw std::runtime_error(who + ": Fortran order is not supported");
  if (L.data_bytes != n - end)
    throw std::runtime_error(who + ": the header declares " + std::to_string(L.data_bytes) + " bytes of data but " +
                             std::to_string(n - end) + " follow it");
  npy_array a;
  a.descr = std::move(L.descr);
  a.shape = std::move(L.shape);
  a.bytes.assign(p + end, p + n);
  return a;
}

}  // namespace detail

/// Parses a whole .npy file held in memory (version 1.0 to 3.0, C order only; the types of
/// `detail::parse_npy_header`). The data must be exactly as long as the header declares.
/// Throws std::runtime_error, naming the problem, for anything else.
inline npy_array parse_npy(char const* p, std::size_t n) { return detail::parse_npy_image(p, n, "ember::parse_npy"); }

/// Reads the .npy file `path` (as `parse_npy`; the messages name the file).
inline npy_array read_npy(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("ember::read_npy: cannot open " + path);
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return detail::parse_npy_image(all.data(), all.size(), "ember::read_npy: " + path);
}

}  // namespace ember
