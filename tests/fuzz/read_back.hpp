#pragma once
// Reads an array that parse_npy or read_npz accepted back as its own type: npy_array::as must
// give size() elements and read no byte past `bytes` (the sanitizers watch).
#include <ember/io/npy.hpp>

#include <cstdint>
#include <stdexcept>

namespace ember_fuzz {

inline void read_back(ember::npy_array const& a) {
  auto check = [&](auto const& v) {
    if (v.size() != a.size()) throw std::logic_error("fuzz: as<T>() gave the wrong number of elements");
  };
  if (a.descr == "<f8") check(a.as<double>());
  else if (a.descr == "<f4") check(a.as<float>());
  else if (a.descr == "<i8") check(a.as<std::int64_t>());
  else if (a.descr == "<u8") check(a.as<std::uint64_t>());
  else if (a.descr == "<i4") check(a.as<std::int32_t>());
  else if (a.descr == "<u4") check(a.as<std::uint32_t>());
  else if (a.descr == "<i2") check(a.as<std::int16_t>());
  else if (a.descr == "<u2") check(a.as<std::uint16_t>());
  else if (a.descr == "|i1") check(a.as<std::int8_t>());
  else if (a.descr == "|u1") check(a.as<std::uint8_t>());
  else if (a.descr == "|b1") check(a.as<bool>());
  else throw std::logic_error("fuzz: the reader accepted type string " + a.descr);
}

}  // namespace ember_fuzz
