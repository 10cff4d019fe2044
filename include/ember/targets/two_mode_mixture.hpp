#pragma once
/// \file
/// Target `two_mode_mixture`: x ~ 0.3 N(−a u, I) + 0.7 N(a u, I) in d = 50, u = (1, …, 1)/√50,
/// a = 2 (modes 4 standard deviations apart along u, unequal weights). Reference exact:
/// E xᵢ = (0.7 − 0.3) a/√50, E xᵢ² = 1 + a²/50.

#include <ember/core/vec.hpp>
#include <ember/energy/gaussian_mixture.hpp>
#include <ember/targets/reference.hpp>

#include <array>
#include <cmath>

namespace ember::targets {

template <class T = float>
struct two_mode_mixture {
  static constexpr int dim = 50;
  double a = 2;
  auto energy() const {
    T c = T(a / std::sqrt(double(dim)));
    return gaussian_mixture<T, dim, 2>({T(0.3), T(0.7)}, {filled<T, dim>(-c), filled<T, dim>(c)}, {T(1), T(1)});
  }
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    m.mean.fill(0.4 * a / std::sqrt(double(dim)));
    m.second.fill(1 + a * a / dim);
    m.method = "exact";
    return m;
  }
};

}  // namespace ember::targets
