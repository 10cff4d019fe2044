#pragma once
// Shared checks for energies: value_and_grad against central differences of value, and
// value_and_grad's value against value(x).
//
// Tolerance. The central difference (U(x+h eᵢ) − U(x−h eᵢ)) / 2h differs from ∂ᵢU by a
// truncation error h²/6 · |∂ᵢ³U| and a rounding error of about ε·A/h, where ε is the machine
// epsilon and A bounds the magnitude of the terms U is summed from (|U| plus what cancels in it).
// h = ε^{1/3}·(1 + |xᵢ|) balances the two. Each check allows 4× the sum of both bounds, with M3 (a
// bound on |∂ᵢ³U| near the test points) and A given per energy, with their derivation.
#include <ember/core/vec.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace ember_test {

struct fd_scales {
  double m3;         // bound on the third derivative along a coordinate near the test points
  double magnitude;  // bound on the magnitude of the terms of U (cancellation included)
};

// Deterministic test points, uniform in [lo, hi]^D (splitmix64).
template <class T, int D>
ember::vec<T, D> test_point(std::uint64_t n, double lo, double hi) {
  ember::vec<T, D> x;
  std::uint64_t s = 0x5EEDull + 977 * n;
  for (int i = 0; i < D; ++i) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = T(lo + (hi - lo) * double(z >> 11) * 0x1p-53);
  }
  return x;
}

// Checks value_and_grad(x, g) at x: g against central differences of value(), and the returned
// value against value(x) (equal up to a few roundings of A: the two may sum in different orders).
template <class E>
void check_gradient(E const& U, ember::vec<typename E::value_type, E::dim> const& x, fd_scales sc) {
  using T = typename E::value_type;
  constexpr int D = E::dim;
  double const eps = std::numeric_limits<T>::epsilon();
  ember::vec<T, D> g;
  T u = U.value_and_grad(x, g);
  T v = U.value(x);
  double A = sc.magnitude + std::abs(double(v));
  INFO("U(x) = " << double(v));
  REQUIRE(std::isfinite(double(u)));
  CHECK(std::abs(double(u) - double(v)) <= 8 * D * eps * A);
  for (int i = 0; i < D; ++i) {
    double h = std::cbrt(eps) * (1 + std::abs(double(x[i])));
    ember::vec<T, D> xp = x, xm = x;
    xp[i] = T(double(x[i]) + h);
    xm[i] = T(double(x[i]) - h);
    double hh = double(xp[i]) - double(xm[i]);  // the step actually taken, after rounding to T
    double fd = (double(U.value(xp)) - double(U.value(xm))) / hh;
    double tol = 4 * (h * h / 6 * sc.m3 + 2 * eps * A / hh);
    INFO("coordinate " << i << ": x = " << double(x[i]) << ", analytic " << double(g[i]) << ", central difference "
                       << fd << ", tolerance " << tol);
    CHECK(std::abs(double(g[i]) - fd) <= tol);
  }
}

// check_gradient at `n` deterministic points of [lo, hi]^D.
template <class E>
void check_gradient_on_box(E const& U, int n, double lo, double hi, fd_scales sc) {
  for (int k = 0; k < n; ++k) check_gradient(U, test_point<typename E::value_type, E::dim>(std::uint64_t(k), lo, hi), sc);
}

}  // namespace ember_test
