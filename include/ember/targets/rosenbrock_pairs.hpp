#pragma once
/// \file
/// Target `rosenbrock_pairs`: 18 independent copies of the 2-d Rosenbrock density
/// (Goodman and Weare 2010: π(x₁, x₂) ∝ exp(−[100(x₂ − x₁²)² + (1 − x₁)²]/20)), d = 36:
///
///     U(x) = Σₖ a(x₂ₖ − 1)² + b(x₂ₖ₊₁ − x₂ₖ²)²,   a = 1/20, b = 5.
///
/// Each pair factorises: x₁ ~ N(1, 1/(2a)) = N(1, 10) and x₂ | x₁ ~ N(x₁², 1/(2b)) = N(x₁², 0.1), so
/// the reference is exact: E x₁ = 1, E x₁² = 11, E x₂ = 11, E x₂² = 0.1 + E x₁⁴ = 0.1 + 361.
/// The ridge x₂ ≈ x₁² is thin (sd 0.32) and curved across a range of ±10 in x₂: hard for
/// gradient samplers with one step size.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/targets/reference.hpp>

namespace ember::targets {

/// Σ over pairs of a(x₁ − 1)² + b(x₂ − x₁²)²; ∂/∂x₁ = 2a(x₁ − 1) − 4b x₁ (x₂ − x₁²),
/// ∂/∂x₂ = 2b(x₂ − x₁²). Models `DifferentiableEnergy`.
template <class T, int Pairs>
struct rosenbrock_pairs_energy {
  using value_type = T;
  static constexpr int dim = 2 * Pairs;
  T a = T(0.05), b = T(5);

  template <class S>
  EMBER_HD S value(vec<S, dim> const& x) const {
    S s = S(T(0));
    for (int k = 0; k < Pairs; ++k) {
      S u = x[2 * k] - S(T(1)), v = x[2 * k + 1] - x[2 * k] * x[2 * k];
      s = s + S(a) * u * u + S(b) * v * v;
    }
    return s;
  }
  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& x, vec<S, dim>& g) const {
    S s = S(T(0));
    for (int k = 0; k < Pairs; ++k) {
      S u = x[2 * k] - S(T(1)), v = x[2 * k + 1] - x[2 * k] * x[2 * k];
      S bv = S(b) * v;
      s = s + S(a) * u * u + bv * v;
      g[2 * k] = S(T(2) * a) * u - S(T(4)) * x[2 * k] * bv;
      g[2 * k + 1] = S(T(2)) * bv;
    }
    return s;
  }
};

template <class T = float>
struct rosenbrock_pairs {
  static constexpr int pairs = 18;
  static constexpr int dim = 2 * pairs;
  rosenbrock_pairs_energy<T, pairs> energy() const { return {}; }
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    for (int k = 0; k < pairs; ++k) {
      m.mean[std::size_t(2 * k)] = 1;
      m.second[std::size_t(2 * k)] = 11;
      m.mean[std::size_t(2 * k + 1)] = 11;
      m.second[std::size_t(2 * k + 1)] = 361.1;
    }
    m.method = "exact";
    return m;
  }
};

}  // namespace ember::targets
