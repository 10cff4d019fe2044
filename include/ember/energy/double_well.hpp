#pragma once
/// \file
/// `double_well`: U(x) = h Σᵢ (xᵢ² − b²)², minima at xᵢ = ±b separated by a barrier of height h
/// per coordinate. Defaults h = 2, b = 1 as in TorchEBM. Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T, int D>
struct double_well {
  using value_type = T;
  static constexpr int dim = D;

  T barrier_height = T(2);
  T b = T(1);

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S s = S(0);
    for (int i = 0; i < D; ++i) {
      S w = x[i] * x[i] - S(b * b);
      s = s + w * w;
    }
    return S(barrier_height) * s;
  }

  /// ∂U/∂xᵢ = 4h xᵢ (xᵢ² − b²).
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S s = S(0);
    for (int i = 0; i < D; ++i) {
      S w = x[i] * x[i] - S(b * b);
      s = s + w * w;
      g[i] = S(T(4) * barrier_height) * x[i] * w;
    }
    return S(barrier_height) * s;
  }
};

}  // namespace ember
