#pragma once
/// \file
/// Target `eight_schools` (Rubin 1981; Gelman et al., BDA3 §5.5), non-centred, d = 10. Data:
/// effects y = (28, 8, −3, 7, −1, 1, 18, 12) with standard errors σ = (15, 10, 16, 11, 9, 11, 10, 18).
/// Model: yⱼ ~ N(θⱼ, σⱼ²), θⱼ = μ + τ θ̃ⱼ, θ̃ⱼ ~ N(0, 1), μ ~ N(0, 5²), τ ~ half-Cauchy(0, 5).
/// Sampled coordinates (μ, s = log τ, θ̃₁…θ̃₈), with the log-Jacobian s of τ = eˢ:
///
///     U = μ²/50 + log(1 + e^{2s}/25) − s + Σⱼ θ̃ⱼ²/2 + Σⱼ (μ + eˢθ̃ⱼ − yⱼ)²/(2σⱼ²),
///     with rⱼ = (μ + τθ̃ⱼ − yⱼ)/σⱼ²:  ∂μ = μ/25 + Σ rⱼ,
///     ∂s = (2τ²/25)/(1 + τ²/25) − 1 + τ Σ rⱼθ̃ⱼ,  ∂θ̃ⱼ = θ̃ⱼ + τ rⱼ.
///
/// Reported parameters (μ, τ, θ₁…θ₈). Reference by quadrature over (μ, log τ) with θ integrated
/// analytically (scripts/reference/eight_schools.py; grid error below 3e-8): exact for testing.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/targets/reference.hpp>

#include <cmath>

namespace ember::targets {

/// The non-centred eight-schools energy (see the file comment). Models `DifferentiableEnergy`.
template <class T>
struct eight_schools_energy {
  using value_type = T;
  static constexpr int dim = 10;
  T y[8] = {T(28), T(8), T(-3), T(7), T(-1), T(1), T(18), T(12)};
  T inv_var[8] = {T(1.0 / 225), T(1.0 / 100), T(1.0 / 256), T(1.0 / 121),
                  T(1.0 / 81),  T(1.0 / 121), T(1.0 / 100), T(1.0 / 324)};

  template <class S>
  EMBER_HD S value(vec<S, dim> const& x) const {
    vec<S, dim> g;
    return value_and_grad(x, g);
  }
  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& x, vec<S, dim>& g) const {
    S mu = x[0], s = x[1], tau = exp(s), t2 = tau * tau * S(T(1.0 / 25));
    S u = mu * mu * S(T(1.0 / 50)) + log1p(t2) - s;
    S gmu = mu * S(T(1.0 / 25)), gs = S(T(2)) * t2 / (S(T(1)) + t2) - S(T(1));
    for (int j = 0; j < 8; ++j) {
      S th = x[2 + j];
      S d = mu + tau * th - S(y[j]);
      S r = S(inv_var[j]) * d;
      u = u + S(T(0.5)) * (th * th + r * d);
      gmu = gmu + r;
      gs = gs + tau * r * th;
      g[2 + j] = th + tau * r;
    }
    g[0] = gmu;
    g[1] = gs;
    return u;
  }
};

template <class T = float>
struct eight_schools {
  static constexpr int dim = 10;
  eight_schools_energy<T> energy() const { return {}; }
  /// (μ, log τ, θ̃) → (μ, τ, θ = μ + τθ̃).
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    double tau = std::exp(double(x[1]));
    r[0] = double(x[0]);
    r[1] = tau;
    for (int j = 0; j < 8; ++j) r[2 + j] = double(x[0]) + tau * double(x[2 + j]);
    return r;
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    m.mean = {4.396820676, 3.59770609, 6.211884472, 4.940178473, 3.927004286,
              4.757098314, 3.615476846, 4.042612539, 6.29672441, 4.854253359};
    m.second = {30.33919513, 23.31162087, 69.87057249, 46.25415099, 43.11648331,
                45.48122916, 34.76353922, 39.64134976, 65.43328847, 51.5563546};
    m.method = "quadrature over (mu, log tau), scripts/reference/eight_schools.py";
    return m;
  }
};

}  // namespace ember::targets
