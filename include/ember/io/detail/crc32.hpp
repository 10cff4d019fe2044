#pragma once
// CRC-32 as zip uses it (ISO 3309 / ITU-T V.42: reflected polynomial 0xEDB88320, initial value
// and final xor 0xFFFFFFFF), by slicing-by-8 tables: eight table lookups per 8 input bytes.

#include <array>
#include <cstddef>
#include <cstdint>

namespace ember::detail {

struct crc32_tables {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  crc32_tables() {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    // t[j][i]: the CRC of byte i followed by j zero bytes.
    for (std::uint32_t i = 0; i < 256; ++i)
      for (int j = 1; j < 8; ++j) t[std::size_t(j)][i] = (t[std::size_t(j - 1)][i] >> 8) ^ t[0][t[std::size_t(j - 1)][i] & 0xff];
  }
};

inline crc32_tables const& crc32_table() {
  static crc32_tables const tables;
  return tables;
}

// Continues a CRC: crc32_update(0, a) then crc32_update(that, b) is the CRC of a followed by b.
inline std::uint32_t crc32_update(std::uint32_t crc, void const* data, std::size_t n) {
  auto const& t = crc32_table().t;
  auto const* p = static_cast<unsigned char const*>(data);
  std::uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint32_t lo = c ^ (std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24);
    std::uint32_t hi = std::uint32_t(p[4]) | std::uint32_t(p[5]) << 8 | std::uint32_t(p[6]) << 16 | std::uint32_t(p[7]) << 24;
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
        t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) c = t[0][(c ^ *p) & 0xff] ^ (c >> 8);
  return ~c;
}

}  // namespace ember::detail
