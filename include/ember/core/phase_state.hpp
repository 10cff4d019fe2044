#pragma once
/// \file
/// `phase_state<S, D>`: a chain's state in phase space, for kernels that carry a momentum from
/// one transition to the next (underdamped Langevin). It follows the state protocol of
/// core/chain_state.hpp with 3D + 1 slots.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/rng.hpp>
#include <ember/core/vec.hpp>

#include <cstdint>

namespace ember {

/// Position x, energy U(x), gradient ∇U(x) (the `chain_state` it extends) and momentum p.
/// Slots: x₀…x_{D−1}, U, ∇U₀…∇U_{D−1}, p₀…p_{D−1}. Deriving from `chain_state` lets code that
/// reads a state's position and energy (the fused loop's sinks, integrators) take it unchanged.
template <class S, int D>
struct phase_state : chain_state<S, D> {
  vec<S, D> p;

  static constexpr int slots = 3 * D + 1;
  EMBER_HD EMBER_INLINE S& slot(int i) { return i < 2 * D + 1 ? chain_state<S, D>::slot(i) : p[i - 2 * D - 1]; }
  EMBER_HD EMBER_INLINE S const& slot(int i) const {
    return i < 2 * D + 1 ? chain_state<S, D>::slot(i) : p[i - 2 * D - 1];
  }
};

/// The phase state at position `x` with momentum `p`: one `value_and_grad`.
template <class E, class S, int D>
EMBER_HD EMBER_INLINE phase_state<S, D> make_phase_state(E const& U, vec<S, D> const& x, vec<S, D> const& p) {
  phase_state<S, D> s;
  s.x = x;
  s.energy = U.value_and_grad(s.x, s.grad);
  s.p = p;
  return s;
}

/// The purpose of a phase-space kernel's initial momentum draw, p₀ = √m ξ at step 0: the last
/// user purpose, clear of the default start (purpose::init) and of the transition's own draws
/// (user + j for the j-th O operator, fewer than 15).
inline constexpr purpose initial_momentum = purpose(std::uint32_t(purpose::user) + 15);

/// The state at x with p ~ N(0, m I) drawn from `rng` (purpose `initial_momentum`): a chain
/// started at x ~ π is then at the stationary law π(x) N(p; 0, m) from its first transition.
/// The `init(x, rng)` of every phase-space kernel.
template <class E, class S, int D>
EMBER_HD EMBER_INLINE phase_state<S, D> draw_phase_state(E const& U, vec<S, D> const& x, element_t<S> sqrt_mass,
                                                         chain_rng<S> const& rng) {
  vec<S, D> p = rng.template normal<D>(initial_momentum);
  for (int i = 0; i < D; ++i) p[i] = S(sqrt_mass) * p[i];
  return make_phase_state(U, x, p);
}

/// |p|² / 2m, the kinetic energy of momentum p under scalar mass m, given ½m⁻¹.
template <class S, int D>
EMBER_HD EMBER_INLINE S kinetic_energy(vec<S, D> const& p, element_t<S> half_inv_mass) {
  S k = S(0);
  for (int i = 0; i < D; ++i) k = k + p[i] * p[i];
  return S(half_inv_mass) * k;
}

}  // namespace ember
