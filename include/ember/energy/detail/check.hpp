#pragma once
// Host-side parameter checks shared by the energies' constructors.

#include <cmath>
#include <stdexcept>
#include <string>

namespace ember::detail {

// Throws std::invalid_argument("<who>: <what> must be positive and finite, got <v>").
template <class T>
void require_positive(T v, char const* who, char const* what) {
  if (!(v > T(0)) || !std::isfinite(double(v)))
    throw std::invalid_argument(std::string(who) + ": " + what +
                                " must be positive and finite, got " + std::to_string(double(v)));
}

template <class T>
void require_finite(T v, char const* who, char const* what) {
  if (!std::isfinite(double(v)))
    throw std::invalid_argument(std::string(who) + ": " + what + " must be finite, got " +
                                std::to_string(double(v)));
}

}  // namespace ember::detail
