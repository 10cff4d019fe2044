#pragma once
/// \file
/// `rastrigin`: U(x) = a D + Σᵢ (xᵢ² − a cos 2πxᵢ), a bowl covered in a regular grid of local
/// minima. Default a = 10 as in TorchEBM. Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T, int D>
struct rastrigin {
  using value_type = T;
  static constexpr int dim = D;

  T a = T(10);

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S s = S(a * T(D));
    for (int i = 0; i < D; ++i) s = s + x[i] * x[i] - S(a) * cos(S(two_pi<T>) * x[i]);
    return s;
  }

  /// ∂U/∂xᵢ = 2xᵢ + 2πa sin 2πxᵢ.
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S s = S(a * T(D));
    for (int i = 0; i < D; ++i) {
      S t = S(two_pi<T>) * x[i];
      s = s + x[i] * x[i] - S(a) * cos(t);
      g[i] = S(T(2)) * x[i] + S(two_pi<T> * a) * sin(t);
    }
    return s;
  }
};

}  // namespace ember
