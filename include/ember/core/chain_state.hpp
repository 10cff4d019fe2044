#pragma once
/// \file
/// `chain_state<S, D>`: what every gradient-based kernel keeps per chain between steps, and the
/// protocol every kernel's state follows so that a run can store it between chunks.
///
/// **The state protocol.** A kernel's `init(x)` returns its state type; the fused loop and the
/// backends need only this of it:
///  - members `x` (`vec<S, D>`, the position: what is recorded and tracked) and `energy` (`S`);
///  - `static constexpr int slots`, the number of `S` values it holds, and `slot(i)` (const and
///    non-const) giving the i-th, in a fixed order whose first `D` slots are `x[0]`…`x[D−1]` (a
///    run's final states are read from them). Between chunks a run stores slot i of chain c
///    at `slots_memory[i·chains + c]` (a SIMD batch or a warp loads consecutive chains at once).
/// A kernel with more per-chain state than position, energy and gradient (the momentum of
/// underdamped Langevin, say) defines its own struct with more slots.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

/// The state of one chain (or of a SIMD batch of chains): position `x`, its energy U(x) and its
/// gradient ∇U(x). Caching the energy and gradient is what lets MALA and HMC spend one gradient
/// per proposal instead of two. Slots: x₀…x_{D−1}, U, ∇U₀…∇U_{D−1}.
template <class S, int D>
struct chain_state {
  vec<S, D> x;
  S energy;
  vec<S, D> grad;

  static constexpr int slots = 2 * D + 1;
  EMBER_HD EMBER_INLINE S& slot(int i) { return i < D ? x[i] : i == D ? energy : grad[i - D - 1]; }
  EMBER_HD EMBER_INLINE S const& slot(int i) const { return i < D ? x[i] : i == D ? energy : grad[i - D - 1]; }
};

/// The state at position `x` under energy `U`: one `value_and_grad`. Every gradient-based
/// kernel's `init`.
template <class E, class S, int D>
EMBER_HD EMBER_INLINE chain_state<S, D> make_state(E const& U, vec<S, D> const& x) {
  chain_state<S, D> s;
  s.x = x;
  s.energy = U.value_and_grad(s.x, s.grad);
  return s;
}

/// Lane by lane, `a` where `m` is set and `b` elsewhere, for any state following the protocol.
template <class M, class State>
EMBER_HD EMBER_INLINE State select_state(M const& m, State const& a, State const& b) {
  State r;
  for (int i = 0; i < State::slots; ++i) r.slot(i) = select(m, a.slot(i), b.slot(i));
  return r;
}
/// The same for `chain_state`, member by member: Metropolis–Hastings selects every transition,
/// and `slot(i)`'s branches are not always folded away in a loop the compiler does not unroll.
template <class M, class S, int D>
EMBER_HD EMBER_INLINE chain_state<S, D> select_state(M const& m, chain_state<S, D> const& a, chain_state<S, D> const& b) {
  chain_state<S, D> r;
  for (int i = 0; i < D; ++i) {
    r.x[i] = select(m, a.x[i], b.x[i]);
    r.grad[i] = select(m, a.grad[i], b.grad[i]);
  }
  r.energy = select(m, a.energy, b.energy);
  return r;
}

/// dst ← a in the lanes of m, in place: no temporary state to copy (a NUTS tree blends its large
/// states at every leaf).
template <class M, class S, int D>
EMBER_HD EMBER_INLINE void blend_state(M const& m, chain_state<S, D> const& a, chain_state<S, D>& dst) {
  for (int i = 0; i < D; ++i) {
    dst.x[i] = select(m, a.x[i], dst.x[i]);
    dst.grad[i] = select(m, a.grad[i], dst.grad[i]);
  }
  dst.energy = select(m, a.energy, dst.energy);
}

/// What one transition reports besides the new state: whether the proposal was accepted
/// (1 or 0 per lane; always 1 for unadjusted kernels; for NUTS, whether the chain moved),
/// whether it diverged (a non-finite proposal energy, or an energy error above the divergence
/// threshold), the acceptance statistic step-size adaptation averages (the Metropolis
/// probability min(1, e^{log ratio}), 0 for a NaN ratio; NUTS: its mean over the tree; an
/// unadjusted kernel's would-be acceptance where its warm-up tunes by one, as mclmc's per-step
/// mean, else 1), the gradient evaluations the transition made (the run counts them:
/// `result::gradients()`; 0 from a kernel that does not say), and whether its trajectory was cut
/// short by a cap (NUTS's maximum tree depth, a ChEES trajectory's `max_integrator_steps`),
/// which a run counts and a summary warns about. Two more, which only `record_stats()` keeps
/// (pipeline/stages.hpp) and only kernels that declare them fill: `hamiltonian`, the total energy
/// U(x) + ½|v|² the transition started from after drawing its momentum (a kernel with
/// `reports_hamiltonian`: HMC, ChEES-HMC, NUTS; what E-BFMI is computed from), and `tree_depth`,
/// the doublings merged into a NUTS tree, Stan's tree depth (`reports_tree_depth`).
template <class S>
struct step_info {
  S accepted;
  mask_t<S> divergent;
  S accept_prob;
  S gradients = S(0);
  mask_t<S> truncated = mask_t<S>(false);
  S hamiltonian = S(0);
  S tree_depth = S(0);
};

/// Where a trajectory ended, before the accept step: position and velocity dx/dt = L v. ChEES
/// adaptation reads it; ordinary transitions pass nothing.
template <class S, int D>
struct trajectory_end {
  vec<S, D> x, velocity;
};

}  // namespace ember
