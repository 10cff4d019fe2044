#pragma once
// Host-side parameter checks shared by the energies' constructors.

#include <cmath>
#include <cstdio>
#include <limits>
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

// Every entry of a vector parameter (a mean) finite: "<who>: <what>[i] must be finite, got nan".
template <class V>
void require_finite_entries(V const& v, char const* who, char const* what) {
  for (int i = 0; i < int(v.size()); ++i)
    if (!std::isfinite(double(v[i])))
      throw std::invalid_argument(std::string(who) + ": " + what + "[" + std::to_string(i) + "] must be finite, got " +
                                  number_g(double(v[i])));
}

// 1/v² in T for a scale v (a σ, a prior scale, a noise sd), computed in double. Throws when v is
// not positive and finite, or when 1/v² overflows T or falls below T's smallest normal number:
// every chain would otherwise start divergent (an infinite or zero energy) without a word.
template <class T>
T inverse_square(double v, char const* who, std::string const& what) {
  require_positive(v, who, what.c_str());
  double const inv = 1 / (v * v);
  double const big = double(std::numeric_limits<T>::max()), small = double(std::numeric_limits<T>::min());
  if (!(inv <= big && inv >= small))
    throw std::invalid_argument(std::string(who) + ": " + what + " = " + number_g(v) + " gives 1/" + what +
                                "^2 = " + number_g(inv) + ", which " + (inv > big ? "overflows" : "underflows") +
                                " " + (sizeof(T) == 4 ? "float" : "double") + " (" + what + " must lie between " +
                                number_g(1 / std::sqrt(big)) + " and " + number_g(1 / std::sqrt(small)) +
                                "); rescale the coordinates");
  return T(inv);
}

}  // namespace ember::detail
