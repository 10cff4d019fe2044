#pragma once
/// \file
/// `himmelblau`: U(x, y) = (x² + y − a)² + (x + y² − b)², a = 11, b = 7 by default as in
/// TorchEBM's HimmelblauEnergy: four minima of value 0, at (3, 2), (−2.805, 3.131),
/// (−3.779, −3.283) and (3.584, −1.848). Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T>
struct himmelblau {
  using value_type = T;
  static constexpr int dim = 2;

  T a = T(11);
  T b = T(7);

  template <class S>
  EMBER_HD S value(vec<S, 2> const& x) const {
    S u = x[0] * x[0] + x[1] - S(a), v = x[0] + x[1] * x[1] - S(b);
    return u * u + v * v;
  }

  /// ∂U/∂x = 4xu + 2v, ∂U/∂y = 2u + 4yv, with u = x² + y − a, v = x + y² − b.
  template <class S>
  EMBER_HD S value_and_grad(vec<S, 2> const& x, vec<S, 2>& g) const {
    S u = x[0] * x[0] + x[1] - S(a), v = x[0] + x[1] * x[1] - S(b);
    g[0] = S(T(4)) * x[0] * u + S(T(2)) * v;
    g[1] = S(T(2)) * u + S(T(4)) * x[1] * v;
    return u * u + v * v;
  }
};

}  // namespace ember
