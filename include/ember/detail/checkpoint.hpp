#pragma once
// The byte stream of a checkpoint (run::save / run::load): plain values appended in order,
// read back with a cursor that refuses to read past the end, and an FNV-1a checksum of
// everything before it at the end.

#include <ember/io/detail/durable_file.hpp>

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

// A cursor over a checkpoint's bytes: every read is checked against what is left (`need`, no
// overflow: `pos` never passes the end), and an array's length is checked against the bytes
// left before anything is allocated for it.
struct byte_reader {
  std::string const& bytes;
  std::string path;
  std::size_t pos = 0;
  void need(std::size_t n) const {
    if (pos > bytes.size() || n > bytes.size() - pos)
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
  /// A count of items (chains) that the rest of the file holds at least `bytes_each` bytes for:
  /// refused unless positive and within what is left, so that nothing allocated for it before
  /// the items are read can exceed the file's own size.
  std::int64_t get_count(std::size_t bytes_each) {
    auto const n = get<std::int64_t>();
    if (n <= 0) throw std::runtime_error("ember::run::load: " + path + " is corrupt (a count of " + std::to_string(n) + ")");
    if (std::uint64_t(n) > (bytes.size() - pos) / (bytes_each ? bytes_each : 1))
      throw std::runtime_error("ember::run::load: " + path + " is truncated or corrupt (it counts " + std::to_string(n) +
                               " items of at least " + std::to_string(bytes_each) + " bytes in its last " +
                               std::to_string(bytes.size() - pos) + ")");
    return n;
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
    need(0);
    if (n > (bytes.size() - pos) / sizeof(V))
      throw std::runtime_error("ember::run::load: " + path + " is truncated or corrupt (an array of " + std::to_string(n) +
                               " entries of " + std::to_string(sizeof(V)) + " bytes would pass its end)");
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

// Writes `bytes` plus their checksum durably (io/detail/durable_file.hpp: a temporary, checked,
// fsynced and renamed over `path`), so a crash or a full disk while saving never leaves a
// half-written checkpoint under the real name nor loses the one that was there.
inline void write_file_atomically(std::string const& path, std::string bytes) {
  std::uint64_t const h = fnv1a(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<char const*>(&h), sizeof h);
  durable_file f(path, "ember::run::save");
  f.write(bytes);
  f.commit();
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
