#pragma once
// Host-memory checks shared by sample() and the backends: a request larger than the machine's
// physical memory is refused before any work, with the byte count in the message.

#include <unistd.h>

#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace ember::detail {

// 12345678 → "12,345,678"; any size, no integer conversion (values can exceed 2⁶⁴).
inline std::string with_commas(long double v) {
  char digits[64];
  int n = std::snprintf(digits, sizeof digits, "%.0Lf", v);
  if (n < 0 || n >= int(sizeof digits)) return digits;
  std::string s;  // appended digit by digit (GCC 12 warns falsely on string::insert, -Wrestrict)
  s.reserve(std::size_t(n + n / 3));
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

inline long double physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return (pages > 0 && size > 0) ? (long double)pages * size : std::numeric_limits<long double>::max();
}

// Throws std::length_error("<who>: this run needs N bytes of host memory (<what>), more than the M
// bytes this machine has; <advice>") when bytes exceed physical memory.
inline void require_host_memory(long double bytes, char const* who, std::string const& what,
                                char const* advice) {
  long double avail = physical_memory_bytes();
  if (bytes > avail)
    throw std::length_error(std::string(who) + ": this run needs " + with_commas(bytes) + " bytes of host memory (" +
                            what + "), more than the " + with_commas(avail) + " bytes this machine has; " + advice);
}

}  // namespace ember::detail
