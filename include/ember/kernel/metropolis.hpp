#pragma once
/// \file
/// The Metropolis–Hastings accept step, shared by every adjusted kernel. Branch-free: each
/// component is chosen with `select`, so a SIMD batch of chains accepts lane by lane.

#include <ember/core/chain_state.hpp>
#include <ember/core/math.hpp>

namespace ember {

/// Accepts `proposal` into `s` where log u < log_ratio (u uniform on (0, 1]), i.e. with
/// probability min(1, e^{log_ratio}). A NaN log ratio (a proposal of non-finite energy) compares
/// false and is rejected. Returns 1 where accepted and 0 elsewhere.
template <class S, int D>
EMBER_HD EMBER_INLINE S metropolis_hastings(chain_state<S, D>& s, chain_state<S, D> const& proposal,
                                            S log_ratio, S u) {
  auto accept = log(u) < log_ratio;
  s = select_state(accept, proposal, s);
  return select(accept, S(1), S(0));
}

}  // namespace ember
