#pragma once
/// \file
/// Splitting integrators for Hamiltonian dynamics H(x, v) = U(x) + ½|v|² in whitened momentum
/// v = Lᵀp (M⁻¹ = L Lᵀ, core/metric.hpp), written as data: a palindromic list of coefficients
/// b₁, a₁, b₂, a₂, …, b₂, a₁, b₁. A `b` coefficient is a momentum kick v ← v − b ε Lᵀ∇U(x); an `a`
/// coefficient is a position drift x ← x + a ε L v, followed by one gradient evaluation.
/// Palindromic lists give symmetric, symplectic, time-reversible integrators, which is what HMC's
/// acceptance test needs.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/metric.hpp>

#include <type_traits>
#include <utility>

namespace ember {

/// An integrator given by a palindromic coefficient list `c` (b, a, b, …, a, b).
/// `steps(U, s, v, ε, metric, L)` runs L integrator steps in place: `s` holds position, energy
/// and gradient (kept current, so a trajectory of L velocity-Verlet steps costs L gradients), `v`
/// the whitened momentum. `gradients_per_step` is the number of drifts.
template <class Coefficients>
struct palindromic {
  static constexpr int size = int(sizeof(Coefficients::value) / sizeof(double));
  static_assert(size % 2 == 1, "a palindromic integrator has an odd number of coefficients");
  static constexpr int gradients_per_step = size / 2;
  // Coefficient J as a constexpr scalar: device code may use those (not a host array's elements).
  template <std::size_t J>
  static constexpr double coefficient = Coefficients::value[J];

  /// `eps` is one step size for every lane (`element_t<S>`) or one per lane (`S`: per-chain step
  /// sizes, kernel/per_chain_step_size.hpp).
  template <class E, class S, int D, class Metric, class H>
    requires(!std::is_arithmetic_v<Metric> && (std::is_same_v<H, element_t<S>> || std::is_same_v<H, S>))
  EMBER_HD EMBER_INLINE static void steps(E const& U, chain_state<S, D>& s, vec<S, D>& v, H eps, Metric const& metric,
                                          int L) {
    using T = element_t<S>;
    for (int l = 0; l < L; ++l)
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (substep<J>(U, s, v, T(coefficient<J>) * eps, metric), ...);
      }(std::make_index_sequence<size>{});
  }

  /// The same in plain momentum p with a scalar inverse mass m⁻¹ (kick p −= bε∇U, drift
  /// x += aε m⁻¹ p), the form of the textbooks and of `splitting`'s own `steps`.
  template <class E, class S, int D>
  EMBER_HD EMBER_INLINE static void steps(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> eps,
                                          element_t<S> inv_mass, int L) {
    using T = element_t<S>;
    for (int l = 0; l < L; ++l)
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (plain_substep<J>(U, s, p, T(coefficient<J>) * eps, inv_mass), ...);
      }(std::make_index_sequence<size>{});
  }

 private:
  template <std::size_t J, class E, class S, int D>
  EMBER_HD EMBER_INLINE static void plain_substep(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> h,
                                                  element_t<S> inv_mass) {
    if constexpr (J % 2 == 0) {
      for (int i = 0; i < D; ++i) p[i] = fmadd(S(-h), s.grad[i], p[i]);
    } else {
      for (int i = 0; i < D; ++i) s.x[i] = fmadd(S(h * inv_mass), p[i], s.x[i]);
      s.energy = U.value_and_grad(s.x, s.grad);
    }
  }
  template <std::size_t J, class E, class S, int D, class Metric, class H>
  EMBER_HD EMBER_INLINE static void substep(E const& U, chain_state<S, D>& s, vec<S, D>& v, H h, Metric const& metric) {
    // A scalar metric folds into the coefficient: the same arithmetic as plain leapfrog. Kicks and
    // drifts go through fmadd, so `splitting` gives the same bits under every compiler.
    constexpr bool scalar = std::is_same_v<Metric, scalar_metric<element_t<S>>>;
    if constexpr (J % 2 == 0) {
      if constexpr (scalar) {
        for (int i = 0; i < D; ++i) v[i] = fmadd(S(-(h * metric.scale)), s.grad[i], v[i]);
      } else {
        auto g = metric.apply_transpose(s.grad);
        for (int i = 0; i < D; ++i) v[i] = v[i] - S(h) * g[i];
      }
    } else {
      if constexpr (scalar) {
        for (int i = 0; i < D; ++i) s.x[i] = fmadd(S(h * metric.scale), v[i], s.x[i]);
      } else {
        auto w = metric.apply(v);
        for (int i = 0; i < D; ++i) s.x[i] = s.x[i] + S(h) * w[i];
      }
      s.energy = U.value_and_grad(s.x, s.grad);
    }
  }
};

namespace coefficients {
struct velocity_verlet {
  static constexpr double value[] = {0.5, 1.0, 0.5};
};
// McLachlan (1995), the two-stage minimum-error splitting; b₁ from Blanes, Casas & Sanz-Serna (2014).
struct mclachlan {
  static constexpr double b1 = 0.1931833275037836;
  static constexpr double value[] = {b1, 0.5, 1.0 - 2.0 * b1, 0.5, b1};
};
// Yoshida (1990) fourth-order triple jump: w₁ = 1/(2 − 2^{1/3}), w₀ = 1 − 2w₁.
struct yoshida {
  static constexpr double w1 = 1.3512071919596578;
  static constexpr double w0 = 1.0 - 2.0 * w1;
  static constexpr double value[] = {w1 / 2, w1, (w0 + w1) / 2, w0, (w0 + w1) / 2, w1, w1 / 2};
};
}  // namespace coefficients

/// Whether an integrator is a `palindromic` one (per-chain step sizes need one).
template <class I>
inline constexpr bool is_palindromic = false;
template <class C>
inline constexpr bool is_palindromic<palindromic<C>> = true;

/// Velocity Verlet (leapfrog): kick ½, drift 1, kick ½. Second order, one gradient per step.
using velocity_verlet = palindromic<coefficients::velocity_verlet>;
/// McLachlan's two-stage integrator: second order, two gradients per step, smaller error constant.
using mclachlan = palindromic<coefficients::mclachlan>;
/// Yoshida's fourth-order integrator: three gradients per step.
using yoshida = palindromic<coefficients::yoshida>;

}  // namespace ember
