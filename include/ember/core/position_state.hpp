#pragma once
/// \file
/// `position_state<S, D>`: the state of a gradient-free kernel (random-walk Metropolis, say):
/// position and energy, no gradient. It follows the state protocol of core/chain_state.hpp with
/// D + 1 slots, so a run stores half what a `chain_state` needs, and its `init` calls only the
/// energy's `value`: an energy without `value_and_grad` is enough.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

/// Position x and its energy U(x). Slots: x₀…x_{D−1}, U.
template <class S, int D>
struct position_state {
  vec<S, D> x;
  S energy;

  static constexpr int slots = D + 1;
  EMBER_HD EMBER_INLINE S& slot(int i) { return i < D ? x[i] : energy; }
  EMBER_HD EMBER_INLINE S const& slot(int i) const { return i < D ? x[i] : energy; }
};

/// The state at position `x` under energy `U`: one `value`. A gradient-free kernel's `init`.
template <class E, class S, int D>
EMBER_HD EMBER_INLINE position_state<S, D> make_position_state(E const& U, vec<S, D> const& x) {
  return {x, U.value(x)};
}

/// Lane by lane, `a` where `m` is set and `b` elsewhere, member by member (as for `chain_state`:
/// the accept step selects every transition).
template <class M, class S, int D>
EMBER_HD EMBER_INLINE position_state<S, D> select_state(M const& m, position_state<S, D> const& a,
                                                        position_state<S, D> const& b) {
  position_state<S, D> r;
  for (int i = 0; i < D; ++i) r.x[i] = select(m, a.x[i], b.x[i]);
  r.energy = select(m, a.energy, b.energy);
  return r;
}

}  // namespace ember
