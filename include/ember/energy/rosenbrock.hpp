#pragma once
/// \file
/// `rosenbrock`: U(x) = Σ_{i<D−1} (a − xᵢ)² + b (xᵢ₊₁ − xᵢ²)², a curved narrow valley with its
/// minimum at (a, a², …). Defaults a = 1, b = 100 as in TorchEBM. Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T, int D>
struct rosenbrock {
  static_assert(D >= 2, "ember::rosenbrock needs at least two dimensions");
  using value_type = T;
  static constexpr int dim = D;

  T a = T(1);
  T b = T(100);

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S s = S(0);
    for (int i = 0; i + 1 < D; ++i) {
      S u = S(a) - x[i];
      S v = x[i + 1] - x[i] * x[i];
      s = s + u * u + S(b) * v * v;
    }
    return s;
  }

  /// ∂U/∂xᵢ = −2(a − xᵢ) − 4b xᵢ (xᵢ₊₁ − xᵢ²) + 2b (xᵢ − xᵢ₋₁²).
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    for (int i = 0; i < D; ++i) g[i] = S(0);
    S s = S(0);
    for (int i = 0; i + 1 < D; ++i) {
      S u = S(a) - x[i];
      S v = x[i + 1] - x[i] * x[i];
      S bv = S(b) * v;
      s = s + u * u + bv * v;
      g[i] = g[i] - S(T(2)) * u - S(T(4)) * x[i] * bv;
      g[i + 1] = g[i + 1] + S(T(2)) * bv;
    }
    return s;
  }
};

}  // namespace ember
