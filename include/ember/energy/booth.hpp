#pragma once
/// \file
/// `booth`: U(x, y) = (x + 2y − 7)² + (2x + y − 5)², as TorchEBM's BoothEnergy: a quadratic bowl
/// with its minimum 0 at (1, 3); e^{−U} is a Gaussian with precision [[10, 8], [8, 10]].
/// Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T>
struct booth {
  using value_type = T;
  static constexpr int dim = 2;

  template <class S>
  EMBER_HD S value(vec<S, 2> const& x) const {
    S u = x[0] + S(T(2)) * x[1] - S(T(7)), v = S(T(2)) * x[0] + x[1] - S(T(5));
    return u * u + v * v;
  }

  /// ∂U/∂x = 2u + 4v, ∂U/∂y = 4u + 2v, with u = x + 2y − 7, v = 2x + y − 5.
  template <class S>
  EMBER_HD S value_and_grad(vec<S, 2> const& x, vec<S, 2>& g) const {
    S u = x[0] + S(T(2)) * x[1] - S(T(7)), v = S(T(2)) * x[0] + x[1] - S(T(5));
    g[0] = S(T(2)) * u + S(T(4)) * v;
    g[1] = S(T(4)) * u + S(T(2)) * v;
    return u * u + v * v;
  }
};

}  // namespace ember
