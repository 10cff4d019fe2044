#pragma once
/// \file
/// Isokinetic (microcanonical) splitting integrators: the dynamics of MCLMC and MAMS (Robnik,
/// De Luca, Silverstein & Seljak 2023; Robnik, Cohn-Gordon & Seljak 2025), after the
/// energy-sampling Hamiltonian dynamics of Ver Steeg & Galstyan (2021). The velocity u is a unit
/// vector in whitened coordinates (M⁻¹ = L Lᵀ, core/metric.hpp): a drift moves x ← x + a ε L u, a
/// kick turns u towards −Lᵀ∇U in closed form,
///
///     g = Lᵀ∇U, e = −g/|g|, δ = b ε |g| / (d − 1), ζ = e^{−δ},
///     u ← normalise(e (1 − ζ)(1 + ζ + (u·e)(1 − ζ)) + 2ζ u),
///
/// and adds to the kinetic energy change (d − 1)(δ − log 2 + log(1 + u·e + (1 − u·e) ζ²)), the
/// log-Jacobian of the kick on the sphere. The sum of those changes and of the potential
/// energy's is the energy error a Metropolis test corrects (kernel/adjusted_mclmc.hpp). The
/// coefficient lists are the palindromic ones of integrator/palindromic.hpp (b, a, …, a, b);
/// each drift is followed by one gradient evaluation. Needs d ≥ 2 (on a circle or more).

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/metric.hpp>
#include <ember/integrator/palindromic.hpp>

#include <utility>

namespace ember {

template <class Coefficients>
struct isokinetic {
  static constexpr int size = palindromic<Coefficients>::size;
  static constexpr int gradients_per_step = palindromic<Coefficients>::gradients_per_step;
  template <std::size_t J>
  static constexpr double coefficient = Coefficients::value[J];

  /// n integrator steps of size `eps` in place: `s` holds position, energy and gradient (kept
  /// current), `u` the unit velocity; the kinetic energy change is added to `dk`. The last kick
  /// of a step and the first of the next act at the same position, so they are one kick of their
  /// summed length: a kick is the exact flow of the velocity for a fixed gradient, and two flows
  /// of one gradient compose into one (ΔK adds). n McLachlan steps take 2n + 1 kicks, not 3n.
  template <class E, class S, int D, class Metric>
  EMBER_HD EMBER_INLINE static void steps(E const& U, chain_state<S, D>& s, vec<S, D>& u, element_t<S> eps,
                                          Metric const& metric, int n, S& dk) {
    static_assert(D >= 2, "ember: isokinetic dynamics need at least 2 dimensions (the velocity lives on a sphere)");
    using T = element_t<S>;
    for (int l = 0; l < n; ++l)
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (substep<J>(U, s, u, T(coefficient<J> + (J == 0 && l > 0 ? coefficient<size - 1> : 0.0)) * eps, metric, dk),
         ...);
      }(std::make_index_sequence<size - 1>{});
    if (n > 0) kick(s.grad, u, T(coefficient<size - 1>) * eps, metric, dk);
  }

  /// The velocity kick of length h (b ε): u turned towards −Lᵀ∇U, its kinetic energy change added
  /// to dk. The new velocity is A e + B u, normalised.
  template <class S, int D, class Metric>
  EMBER_HD EMBER_INLINE static void kick(vec<S, D> const& grad, vec<S, D>& u, element_t<S> h, Metric const& metric, S& dk) {
    using T = element_t<S>;
    auto const g = metric.apply_transpose(grad);
    S g2 = S(T(0)), ug = S(T(0));
    for (int i = 0; i < D; ++i) {
      g2 = fmadd(g[i], g[i], g2);
      ug = fmadd(u[i], g[i], ug);
    }
    S const gn = sqrt(g2);
    // e = −g/|g| (0 where the gradient vanishes: then δ = 0, ζ = 1, A = 0 and u is left as it is).
    S const inv = select(gn > S(T(0)), S(T(-1)) / gn, S(T(0)));
    S const ue = ug * inv;
    S const delta = S(T(h / T(D - 1))) * gn;
    S const zeta = exp(-delta), z2 = zeta * zeta, one = S(T(1));
    S const a = (one - zeta) * (one + zeta + ue * (one - zeta)), b = S(T(2)) * zeta;
    // Normalised by its computed norm, not by the closed form |A e + B u|² = (A + B u·e)² +
    // B²(1 − (u·e)²): where u is nearly opposite to e and δ is large, A + B u·e cancels in float,
    // and the closed form's error, carried into |u| and every later kick, gave 100-450 divergent
    // transitions on the banana in 128,000 where the computed norm gives none.
    S const ca = a * inv;
    S n2 = S(T(0));
    for (int i = 0; i < D; ++i) {
      u[i] = fmadd(ca, g[i], b * u[i]);
      n2 = fmadd(u[i], u[i], n2);
    }
    S const rn = one / sqrt(n2);
    for (int i = 0; i < D; ++i) u[i] = u[i] * rn;
    dk = dk + S(T(D - 1)) * (delta - S(T(0.6931471805599453)) + log(one + ue + (one - ue) * z2));
  }

 private:
  template <std::size_t J, class E, class S, int D, class Metric>
  EMBER_HD EMBER_INLINE static void substep(E const& U, chain_state<S, D>& s, vec<S, D>& u, element_t<S> h,
                                            Metric const& metric, S& dk) {
    if constexpr (J % 2 == 0) {
      kick(s.grad, u, h, metric, dk);
    } else {
      auto const w = metric.apply(u);
      for (int i = 0; i < D; ++i) s.x[i] = fmadd(S(h), w[i], s.x[i]);
      s.energy = U.value_and_grad(s.x, s.grad);
    }
  }
};

/// Isokinetic velocity Verlet: kick ½, drift 1, kick ½; one gradient per step.
using isokinetic_velocity_verlet = isokinetic<coefficients::velocity_verlet>;
/// Isokinetic McLachlan (BlackJAX's default for MAMS): two gradients per step, a smaller error constant.
using isokinetic_mclachlan = isokinetic<coefficients::mclachlan>;

}  // namespace ember
