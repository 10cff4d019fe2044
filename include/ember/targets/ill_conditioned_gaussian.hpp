#pragma once
/// \file
/// Target `ill_conditioned_gaussian`: x ~ N(0, diag(σ²)) in d = 100 with variances log-spaced
/// from 0.1 to 10, σᵢ² = 10^{−1 + 2i/99} (condition number 100). Reference exact: E xᵢ = 0,
/// E xᵢ² = σᵢ².

#include <ember/core/vec.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/targets/reference.hpp>

#include <cmath>

namespace ember::targets {

template <class T = float>
struct ill_conditioned_gaussian {
  static constexpr int dim = 100;
  /// σᵢ² = 10^{−1 + 2i/99}.
  static double variance(int i) { return std::pow(10.0, -1.0 + 2.0 * i / (dim - 1)); }
  /// U(x) = Σ xᵢ² / (2σᵢ²) (diagonal gaussian).
  auto energy() const {
    vec<T, dim> sd;
    for (int i = 0; i < dim; ++i) sd[i] = T(std::sqrt(variance(i)));
    return gaussian<T, dim, covariance::diagonal>(vec<T, dim>{}, sd);
  }
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    for (int i = 0; i < dim; ++i) m.second[std::size_t(i)] = variance(i);
    m.method = "exact";
    return m;
  }
};

}  // namespace ember::targets
