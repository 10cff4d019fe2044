#pragma once
/// \file
/// Target `neal_funnel` (centred; Neal 2003, "Slice sampling", §8): d = 10, v ~ N(0, 3²) and
/// xᵢ | v ~ N(0, eᵛ) for i = 1…9. In these coordinates (x₀ = v)
///
///     U(x) = v²/18 + (9/2) v + ½ e^{−v} Σᵢ xᵢ²,
///     ∂U/∂v = v/9 + 9/2 − ½ e^{−v} Σᵢ xᵢ²,   ∂U/∂xᵢ = e^{−v} xᵢ.
///
/// The neck (v ≪ 0) has scales e^{v/2} that no single step size fits, so MALA and HMC with a
/// fixed step are expected to miss it and under-sample v < −3: this target is here to show
/// that, not to be passed (sample `neal_funnel_noncentred` instead). Reference exact:
/// E v = 0, E v² = 9, E xᵢ = 0, E xᵢ² = E eᵛ = e^{9/2}.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/targets/reference.hpp>

#include <cmath>

namespace ember::targets {

/// The centred funnel's energy (see the file comment). Models `DifferentiableEnergy`.
template <class T>
struct funnel_energy {
  using value_type = T;
  static constexpr int dim = 10;

  template <class S>
  EMBER_HD S value(vec<S, dim> const& x) const {
    S q = S(T(0));
    for (int i = 1; i < dim; ++i) q = q + x[i] * x[i];
    return x[0] * x[0] * S(T(1.0 / 18)) + S(T(4.5)) * x[0] + S(T(0.5)) * exp(-x[0]) * q;
  }
  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& x, vec<S, dim>& g) const {
    S e = exp(-x[0]);
    S q = S(T(0));
    for (int i = 1; i < dim; ++i) {
      q = q + x[i] * x[i];
      g[i] = e * x[i];
    }
    S hq = S(T(0.5)) * e * q;
    g[0] = x[0] * S(T(1.0 / 9)) + S(T(4.5)) - hq;
    return x[0] * x[0] * S(T(1.0 / 18)) + S(T(4.5)) * x[0] + hq;
  }
};

template <class T = float>
struct neal_funnel {
  static constexpr int dim = 10;
  funnel_energy<T> energy() const { return {}; }
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  /// E v = 0, E v² = 9, E xᵢ = 0, E xᵢ² = e^{4.5}.
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    m.second.fill(std::exp(4.5));
    m.second[0] = 9;
    m.method = "exact";
    return m;
  }
};

}  // namespace ember::targets
