#pragma once
/// \file
/// The Metropolis–Hastings accept step, shared by every adjusted kernel. Branch-free: each
/// component is chosen with `select`, so a SIMD batch of chains accepts lane by lane.

#include <ember/core/chain_state.hpp>
#include <ember/core/math.hpp>

namespace ember {

/// Accepts `proposal` into `s` where log u < log_ratio (u uniform on (0, 1]), i.e. with
/// probability min(1, e^{log_ratio}). A NaN log ratio (a proposal of non-finite energy) compares
/// false and is rejected. Returns the `step_info` of the transition: accepted (1 or 0), the
/// acceptance probability min(1, e^{log_ratio}) (0 for NaN), and `divergent` as given.
template <class S, class State>
EMBER_HD EMBER_INLINE step_info<S> metropolis_hastings(State& s, State const& proposal, S log_ratio, S u,
                                                       mask_t<S> divergent) {
  auto accept = log(u) < log_ratio;
  s = select_state(accept, proposal, s);
  // Only step-size adaptation reads the probability; elsewhere the exp is dead code and vanishes.
  S prob = select(log_ratio >= S(0), S(1), select(log_ratio < S(0), exp(log_ratio), S(0)));
  return {select(accept, S(1), S(0)), divergent, prob};
}

}  // namespace ember
