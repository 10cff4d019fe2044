#pragma once
/// \file
/// `harmonic`: U(x) = ½ k |x|², the harmonic oscillator's potential (default k = 1, as in
/// TorchEBM). Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T, int D>
struct harmonic {
  using value_type = T;
  static constexpr int dim = D;

  T k = T(1);

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S s = S(0);
    for (int i = 0; i < D; ++i) s = s + x[i] * x[i];
    return S(T(0.5) * k) * s;
  }

  /// ∇U = k x.
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S s = S(0);
    for (int i = 0; i < D; ++i) {
      g[i] = S(k) * x[i];
      s = s + x[i] * g[i];
    }
    return S(T(0.5)) * s;
  }
};

}  // namespace ember
