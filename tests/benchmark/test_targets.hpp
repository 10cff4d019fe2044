// Small targets for the benchmark-matrix tests: a 2-D standard normal (a target family in the
// protocol of ember/targets/), and one whose energy has a value but no gradient.
#pragma once

#include <ember/energy/gaussian.hpp>
#include <ember/targets/reference.hpp>

namespace ember_test {

template <class T>
struct normal2 {
  static constexpr int dim = 2;
  auto energy() const { return ember::gaussian<T, dim, ember::covariance::isotropic>(ember::vec<T, dim>{}, T(1)); }
  template <class S>
  ember::vec<double, dim> reported(ember::vec<S, dim> const& x) const {
    return {double(x[0]), double(x[1])};
  }
  ember::targets::reference_moments<dim> reference() const {
    ember::targets::reference_moments<dim> m;
    m.second = {1.0, 1.0};
    return m;
  }
};

struct value_only_energy {
  using value_type = double;
  static constexpr int dim = 2;
  template <class S>
  S value(ember::vec<S, dim> const& x) const {
    return S(0.5) * (x[0] * x[0] + x[1] * x[1]);
  }
};

template <class T>
struct value_only : normal2<T> {
  value_only_energy energy() const { return {}; }
};

}  // namespace ember_test
