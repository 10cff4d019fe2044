#pragma once
/// \file
/// `styblinski_tang`: U(x) = ½ Σᵢ (xᵢ⁴ − 16xᵢ² + 5xᵢ), as TorchEBM's StyblinskiTangEnergy:
/// 2^D local minima, the global one at xᵢ ≈ −2.9035 (U ≈ −39.166 D). Models
/// `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T, int D>
struct styblinski_tang {
  using value_type = T;
  static constexpr int dim = D;

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S s = S(0);
    for (int i = 0; i < D; ++i) {
      S x2 = x[i] * x[i];
      s = s + x2 * x2 - S(T(16)) * x2 + S(T(5)) * x[i];
    }
    return S(T(0.5)) * s;
  }

  /// ∂U/∂xᵢ = 2xᵢ³ − 16xᵢ + 2.5.
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S s = S(0);
    for (int i = 0; i < D; ++i) {
      S x2 = x[i] * x[i];
      s = s + x2 * x2 - S(T(16)) * x2 + S(T(5)) * x[i];
      g[i] = S(T(2)) * x2 * x[i] - S(T(16)) * x[i] + S(T(2.5));
    }
    return S(T(0.5)) * s;
  }
};

}  // namespace ember
