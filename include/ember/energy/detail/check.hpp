#pragma once
// Host-side parameter checks shared by the energies' constructors.

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ember::detail {

// A number as %g prints it: 1e-12, not 0.000000.
inline std::string number_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A parameter's name in a message: a string, or a callable that makes one (so a loop over many
// entries builds "sigma[3][7]" only for the entry that fails).
template <class What>
std::string name_of(What const& what) {
  if constexpr (std::is_invocable_v<What const&>)
    return what();
  else
    return std::string(what);
}

// Throws std::invalid_argument("<who>: <what> must be positive and finite, got <v>").
template <class T, class What>
void require_positive(T v, char const* who, What const& what) {
  if (!(v > T(0)) || !std::isfinite(double(v)))
    throw std::invalid_argument(std::string(who) + ": " + name_of(what) +
                                " must be positive and finite, got " + number_g(double(v)));
}

template <class T, class What>
void require_finite(T v, char const* who, What const& what) {
  if (!std::isfinite(double(v)))
    throw std::invalid_argument(std::string(who) + ": " + name_of(what) + " must be finite, got " +
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
template <class T, class What>
T inverse_square(double v, char const* who, What const& name) {
  require_positive(v, who, name);
  double const inv = 1 / (v * v);
  double const big = double(std::numeric_limits<T>::max()), small = double(std::numeric_limits<T>::min());
  if (!(inv <= big && inv >= small)) {
    std::string const what = name_of(name);
    throw std::invalid_argument(std::string(who) + ": " + what + " = " + number_g(v) + " gives 1/" + what +
                                "^2 = " + number_g(inv) + ", which " + (inv > big ? "overflows" : "underflows") +
                                " " + (sizeof(T) == 4 ? "float" : "double") + " (" + what + " must lie between " +
                                number_g(1 / std::sqrt(big)) + " and " + number_g(1 / std::sqrt(small)) +
                                "); rescale the coordinates");
  }
  return T(inv);
}

}  // namespace ember::detail
