#pragma once
/// \file
/// Priors on regression coefficients β ∈ ℝ^D, independent across coordinates, as energies
/// (negative log densities without their constants):
///  - `normal_prior{s}`:       U(β) = Σⱼ βⱼ² / (2s²),                       ∂ⱼU = βⱼ / s²;
///  - `student_t_prior{ν, s}`: U(β) = (ν+1)/2 Σⱼ log(1 + βⱼ² / (ν s²)),     ∂ⱼU = (ν+1) βⱼ / (ν s² + βⱼ²).
/// The structs are the user's specification (in double); `prior_terms<T, P>` is what an energy
/// stores: the constants in its precision, so the hot loop never divides by a constant.

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/detail/check.hpp>

namespace ember {

/// βⱼ ~ N(0, scale²) independently.
struct normal_prior {
  double scale;
};

/// βⱼ ~ Student-t(ν, 0, scale) independently (ν = 1: Cauchy). Heavier tails than the normal.
struct student_t_prior {
  double nu;
  double scale;
};

template <class T, class P>
struct prior_terms;

/// The normal prior's energy in precision T: stores 1/s².
template <class T>
struct prior_terms<T, normal_prior> {
  T inv_var;

  explicit prior_terms(normal_prior p) {
    inv_var = detail::inverse_square<T>(p.scale, "ember::normal_prior", "scale");
  }
  template <class S, int D>
  EMBER_HD EMBER_INLINE S value(vec<S, D> const& b) const {
    S q = S(0);
    for (int j = 0; j < D; ++j) q = q + b[j] * b[j];
    return S(T(0.5) * inv_var) * q;
  }
  /// Writes ∂U/∂β into g (overwriting it) and returns U.
  template <class S, int D>
  EMBER_HD EMBER_INLINE S value_and_grad(vec<S, D> const& b, vec<S, D>& g) const {
    S q = S(0);
    for (int j = 0; j < D; ++j) {
      g[j] = S(inv_var) * b[j];
      q = q + b[j] * g[j];
    }
    return S(T(0.5)) * q;
  }
};

/// The Student-t prior's energy in precision T: stores 1/(ν s²), ν s², (ν + 1) and (ν + 1)/2.
template <class T>
struct prior_terms<T, student_t_prior> {
  T inv_nus2, nus2, nu1, half_nu1;

  explicit prior_terms(student_t_prior p) {
    detail::require_positive(p.nu, "ember::student_t_prior", "nu");
    detail::inverse_square<T>(p.scale, "ember::student_t_prior", "scale");
    double v = p.nu * p.scale * p.scale;
    inv_nus2 = T(1 / v);
    nus2 = T(v);
    nu1 = T(p.nu + 1);
    half_nu1 = T(0.5 * (p.nu + 1));
  }
  template <class S, int D>
  EMBER_HD EMBER_INLINE S value(vec<S, D> const& b) const {
    S q = S(0);
    for (int j = 0; j < D; ++j) q = q + log1p(S(inv_nus2) * b[j] * b[j]);
    return S(half_nu1) * q;
  }
  template <class S, int D>
  EMBER_HD EMBER_INLINE S value_and_grad(vec<S, D> const& b, vec<S, D>& g) const {
    S q = S(0);
    for (int j = 0; j < D; ++j) {
      S b2 = b[j] * b[j];
      q = q + log1p(S(inv_nus2) * b2);
      g[j] = S(nu1) * b[j] / (S(nus2) + b2);
    }
    return S(half_nu1) * q;
  }
};

}  // namespace ember
