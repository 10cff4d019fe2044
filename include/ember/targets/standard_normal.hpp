#pragma once
/// \file
/// Target `standard_normal`: x ~ N(0, I₁₀₀), U(x) = ½|x|². Reference exact: E xᵢ = 0, E xᵢ² = 1.

#include <ember/core/vec.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/targets/reference.hpp>

namespace ember::targets {

template <class T = float>
struct standard_normal {
  static constexpr int dim = 100;
  /// U(x) = ½|x|² (isotropic gaussian, σ = 1).
  auto energy() const { return gaussian<T, dim, covariance::isotropic>(vec<T, dim>{}, T(1)); }
  /// The sampled coordinates are the reported ones.
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    m.second.fill(1.0);
    m.method = "exact";
    return m;
  }
};

}  // namespace ember::targets
