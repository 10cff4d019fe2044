#pragma once
/// \file
/// Target `neal_funnel_noncentred`: Neal's funnel (see neal_funnel.hpp) sampled in
/// non-centred coordinates z ~ N(0, I₁₀), U(z) = ½|z|², reported as v = 3z₀ and
/// xᵢ = e^{v/2} zᵢ. Reference (for the reported v, xᵢ) exact: E v = 0, E v² = 9, E xᵢ = 0,
/// E xᵢ² = e^{9/2}. Note xᵢ² is heavy-tailed (Var xᵢ² = 3e¹⁸ − e⁹): sample means of xᵢ² converge
/// slowly and their sample variances are unreliable; tests check E log|xᵢ| in addition.

#include <ember/core/vec.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/reference.hpp>

#include <cmath>

namespace ember::targets {

template <class T = float>
struct neal_funnel_noncentred {
  static constexpr int dim = 10;
  auto energy() const { return gaussian<T, dim, covariance::isotropic>(vec<T, dim>{}, T(1)); }
  /// (v, x₁…x₉) = (3z₀, e^{3z₀/2} z₁, …).
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& z) const {
    vec<double, dim> r;
    r[0] = 3 * double(z[0]);
    for (int i = 1; i < dim; ++i) r[i] = std::exp(r[0] / 2) * double(z[i]);
    return r;
  }
  reference_moments<dim> reference() const { return neal_funnel<T>{}.reference(); }
};

}  // namespace ember::targets
