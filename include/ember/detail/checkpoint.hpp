#pragma once
// The byte stream of a checkpoint (run::save / run::load): plain values appended in order,
// read back with a cursor that refuses to read past the end, and an FNV-1a checksum of
// everything before it at the end.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember::detail {

struct byte_writer {
  std::string bytes;
  template <class V>
  void put(V const& v) {
    static_assert(std::is_trivially_copyable_v<V>);
    bytes.append(reinterpret_cast<char const*>(&v), sizeof v);
  }
  /// Any contiguous array of trivially copyable values (std::vector, detail::host_buffer).
  template <class Array>
  void put_vector(Array const& v) {
    using V = typename Array::value_type;
    static_assert(std::is_trivially_copyable_v<V>);
    put(std::uint64_t(v.size()));
    bytes.append(reinterpret_cast<char const*>(v.data()), v.size() * sizeof(V));
  }
};

struct byte_reader {
  std::string const& bytes;
  std::string path;
  std::size_t pos = 0;
  void need(std::size_t n) const {
    if (n > bytes.size() - pos)
      throw std::runtime_error("ember::run::load: " + path + " is truncated (it ends after " +
                               std::to_string(bytes.size()) + " bytes)");
  }
  template <class V>
  V get() {
    static_assert(std::is_trivially_copyable_v<V>);
    need(sizeof(V));
    V v;
    std::memcpy(&v, bytes.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  template <class V>
  void get_bytes(V& v) {
    need(sizeof v);
    std::memcpy(&v, bytes.data() + pos, sizeof v);
    pos += sizeof v;
  }
  /// An array written by put_vector, as an `Array` of V (std::vector<V> unless named).
  template <class V, class Array = std::vector<V>>
  Array get_vector(std::uint64_t expected = ~std::uint64_t(0)) {
    auto n = get<std::uint64_t>();
    if (expected != ~std::uint64_t(0) && n != expected)
      throw std::runtime_error("ember::run::load: " + path + " is corrupt (an array has " + std::to_string(n) +
                               " entries where " + std::to_string(expected) + " are expected)");
    if (n > (bytes.size() - pos) / sizeof(V)) need(std::size_t(-1) / 2);
    Array v(n);
    if (n) std::memcpy(static_cast<void*>(v.data()), bytes.data() + pos, n * sizeof(V));
    pos += n * sizeof(V);
    return v;
  }
};

/// FNV-1a over n bytes, continuing from h: the checkpoint's checksum, its pipeline fingerprint,
/// and the hash of `.init` states in a run's stream key.
inline std::uint64_t fnv1a(void const* data, std::size_t n, std::uint64_t h = 0xCBF29CE484222325ull) {
  auto const* p = static_cast<unsigned char const*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h;
}

// Writes `bytes` plus their checksum to path.tmp, then renames it over `path`, so a crash while
// saving never leaves a half-written checkpoint under the real name.
inline void write_file_atomically(std::string const& path, std::string bytes) {
  std::uint64_t const h = fnv1a(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<char const*>(&h), sizeof h);
  std::string const tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("ember::run::save: cannot open " + tmp + " for writing");
    f.write(bytes.data(), std::streamsize(bytes.size()));
    if (!f) throw std::runtime_error("ember::run::save: writing " + tmp + " failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("ember::run::save: cannot rename " + tmp + " to " + path);
}

// The file's bytes without the checksum, after checking it.
inline std::string read_checked_file(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("ember::run::load: cannot open " + path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8 + sizeof(std::uint64_t) || bytes.compare(0, 8, "EMBERRUN") != 0)
    throw std::runtime_error("ember::run::load: " + path + " is not an ember checkpoint");
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
  bytes.resize(bytes.size() - sizeof stored);
  if (fnv1a(bytes.data(), bytes.size()) != stored)
    throw std::runtime_error("ember::run::load: " + path + " is corrupt or truncated (its checksum does not match)");
  return bytes;
}

}  // namespace ember::detail
