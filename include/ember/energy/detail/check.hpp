#pragma once
// Host-side parameter checks shared by the energies' constructors.

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace ember::detail {

// A number as %g prints it: 1e-12, not 0.000000.
inline std::string number_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Throws std::invalid_argument("<who>: <what> must be positive and finite, got <v>").
template <class T>
void require_positive(T v, char const* who, char const* what) {
  if (!(v > T(0)) || !std::isfinite(double(v)))
    throw std::invalid_argument(std::string(who) + ": " + what +
                                " must be positive and finite, got " + number_g(double(v)));
}

template <class T>
void require_finite(T v, char const* who, char const* what) {
  if (!std::isfinite(double(v)))
    throw std::invalid_argument(std::string(who) + ": " + what + " must be finite, got " +
                                number_g(double(v)));
}

}  // namespace ember::detail
