#pragma once
/// \file
/// Target `banana`: the twisted Gaussian of Haario, Saksman and Tamminen (1999) in d = 2:
/// x₁ ~ N(0, 100) and x₂ + b(x₁² − 100) ~ N(0, 1), b = 0.03 by default. With r = x₂ + b(x₁² − 100),
///
///     U(x) = x₁²/200 + r²/2,   ∂U/∂x₁ = x₁/100 + 2b x₁ r,   ∂U/∂x₂ = r.
///
/// Reference exact: E x₁ = 0, E x₁² = 100, E x₂ = −b(E x₁² − 100) = 0,
/// E x₂² = 1 + b² Var(x₁²) = 1 + 2·10⁴ b².

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/targets/reference.hpp>

namespace ember::targets {

/// The banana energy with twist b. Models `DifferentiableEnergy`.
template <class T>
struct banana_energy {
  using value_type = T;
  static constexpr int dim = 2;
  T b = T(0.03);

  template <class S>
  EMBER_HD S value(vec<S, 2> const& x) const {
    S r = x[1] + S(b) * (x[0] * x[0] - S(T(100)));
    return x[0] * x[0] * S(T(0.005)) + S(T(0.5)) * r * r;
  }
  template <class S>
  EMBER_HD S value_and_grad(vec<S, 2> const& x, vec<S, 2>& g) const {
    S r = x[1] + S(b) * (x[0] * x[0] - S(T(100)));
    g[0] = x[0] * S(T(0.01)) + S(T(2) * b) * x[0] * r;
    g[1] = r;
    return x[0] * x[0] * S(T(0.005)) + S(T(0.5)) * r * r;
  }
};

template <class T = float>
struct banana {
  static constexpr int dim = 2;
  double b = 0.03;
  banana_energy<T> energy() const { return {T(b)}; }
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    return {{double(x[0]), double(x[1])}};
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    m.second = {100, 1 + 2e4 * b * b};
    m.method = "exact";
    return m;
  }
};

}  // namespace ember::targets
