#pragma once
/// \file
/// `chain_state<S, D>`: what every gradient-based kernel keeps per chain between steps.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

/// The state of one chain (or of a SIMD batch of chains): position `x`, its energy U(x) and its
/// gradient ∇U(x). Caching the energy and gradient is what lets MALA and HMC spend one gradient
/// per proposal instead of two.
template <class S, int D>
struct chain_state {
  vec<S, D> x;
  S energy;
  vec<S, D> grad;
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

/// Lane by lane, `a` where `m` is set and `b` elsewhere: position, energy and gradient.
template <class S, int D>
EMBER_HD EMBER_INLINE chain_state<S, D> select_state(mask_t<S> const& m, chain_state<S, D> const& a,
                                                     chain_state<S, D> const& b) {
  chain_state<S, D> r;
  for (int i = 0; i < D; ++i) {
    r.x[i] = select(m, a.x[i], b.x[i]);
    r.grad[i] = select(m, a.grad[i], b.grad[i]);
  }
  r.energy = select(m, a.energy, b.energy);
  return r;
}

/// What one transition reports besides the new state: whether the proposal was accepted
/// (1 or 0 per lane; always 1 for unadjusted kernels) and whether it diverged (a non-finite
/// proposal energy, or an HMC energy error above the divergence threshold).
template <class S>
struct step_info {
  S accepted;
  mask_t<S> divergent;
};

}  // namespace ember
