#pragma once
/// \file
/// `ackley`: U(x) = −a exp(−b √(|x|²/D)) − exp(Σᵢ cos(c xᵢ)/D) + a + e, a nearly flat outer
/// region with a deep hole at the origin. Defaults a = 20, b = 0.2, c = 2π as in TorchEBM.
/// Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

template <class T, int D>
struct ackley {
  using value_type = T;
  static constexpr int dim = D;

  T a = T(20);
  T b = T(0.2);
  T c = two_pi<T>;

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S sq = S(0), cs = S(0);
    for (int i = 0; i < D; ++i) {
      sq = sq + x[i] * x[i];
      cs = cs + cos(S(c) * x[i]);
    }
    constexpr T inv_d = T(1) / T(D);
    return S(-a) * exp(S(-b) * sqrt(sq * S(inv_d))) - exp(cs * S(inv_d)) + S(a + T(2.718281828459045));
  }

  /// ∂U/∂xᵢ = a b e^{−b r} xᵢ / (D r) + c sin(c xᵢ) e^{Σcos/D} / D with r = √(|x|²/D); the
  /// first term has no limit at r = 0 (x/r is a unit direction there), so the subgradient 0,
  /// the symmetric choice, is used.
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    constexpr T inv_d = T(1) / T(D);
    S sq = S(0), cs = S(0);
    vec<S, D> sn;
    for (int i = 0; i < D; ++i) {
      S t = S(c) * x[i];
      sq = sq + x[i] * x[i];
      cs = cs + cos(t);
      sn[i] = sin(t);
    }
    S r = sqrt(sq * S(inv_d));
    S e1 = exp(S(-b) * r);
    S e2 = exp(cs * S(inv_d));
    auto positive = r > S(0);
    // a b e^{-br} / (D r), guarded so r = 0 gives 0 rather than 0/0.
    S f = select(positive, S(a * b * inv_d) * e1 / select(positive, r, S(1)), S(0));
    S h = S(c * inv_d) * e2;
    for (int i = 0; i < D; ++i) g[i] = f * x[i] + h * sn[i];
    return S(-a) * e1 - e2 + S(a + T(2.718281828459045));
  }
};

}  // namespace ember
