#pragma once
/// \file
/// The fused per-chain loop: the one place a pipeline becomes code. A backend calls
/// `fused_loop<S>` once per chain (`S` = `float`/`double`, one thread per chain on a GPU) or once
/// per SIMD batch of chains (`S` = a batch). Everything between init and the last step happens in
/// registers; the only memory traffic is the `sink` the backend passes, at kept steps.
///
/// A sink provides:
///   keep(k, chain, state, window_acceptance, active)  at each kept step k;
///   diverged(chain, newly, t)                          when lanes go non-finite at transition t;
///   finish(chain, state, frozen, divergent_transitions, accepted)  once at the end.
/// `chain` is the index of the first lane; lanes are consecutive chains.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>
#include <ember/pipeline/pipeline.hpp>

#include <cstdint>

namespace ember {

/// The default start state of a chain: x₀ ~ N(0, I), drawn from the chain's own stream
/// (step 0, purpose `init`).
template <class S, int D>
EMBER_HD EMBER_INLINE vec<S, D> default_start(std::uint64_t seed, std::uint32_t chain) {
  return make_chain_rng<S>(seed, chain, 0).template normal<D>(purpose::init);
}

/// Mask of lanes whose energy and position are all finite. Adding 0·xᵢ turns any non-finite
/// coordinate into a NaN energy (0·∞ is NaN), so one test covers all D + 1 values.
template <class S, int D>
EMBER_HD EMBER_INLINE mask_t<S> state_is_finite(chain_state<S, D> const& s) {
  S e = s.energy;
  for (int i = 0; i < D; ++i) e = e + S(0) * s.x[i];
  return is_finite(e);
}

template <class S, class Kernel, class Sink>
EMBER_HD void fused_loop(Kernel const& kernel, schedule const& sch, std::uint64_t seed,
                         std::uint32_t chain, vec<S, Kernel::dim> const& x0, Sink& sink) {
  using T = element_t<S>;
  // A kernel whose state has random parts (the momentum of underdamped Langevin) may provide
  // init(x, rng) and gets the stream of step 0; purpose::init there is the default start's, so
  // such a kernel draws with a purpose of its own.
  auto s = [&] {
    if constexpr (requires { kernel.init(x0, make_chain_rng<S>(seed, chain, 0)); })
      return kernel.init(x0, make_chain_rng<S>(seed, chain, 0));
    else
      return kernel.init(x0);
  }();
  mask_t<S> frozen = !state_is_finite(s);
  if (any(frozen)) sink.diverged(chain, frozen, std::int64_t(-1));
  S divergent_transitions = S(0), accepted_total = S(0), window = S(0);

  // One transition with divergence handling: a lane whose new state is not finite keeps its last
  // finite state and is frozen for the rest of the run. The previous state is a register copy;
  // the selects only run when some lane went bad (rare), so the common path costs the copy and
  // one finiteness test per step. (Recomputing the previous gradient on the rare path instead of
  // copying doubled the CUDA kernel's registers, 80 → 160, for 1.5 % fewer CPU instructions.)
  auto advance = [&](std::int64_t t) {
    auto prev = s;  // the kernel's own state type (any slots), not just chain_state
    auto info = kernel.step(s, make_chain_rng<S>(seed, chain, std::uint32_t(t)));
    mask_t<S> bad = !state_is_finite(s);
    if (any(bad || frozen)) {
      mask_t<S> newly = bad && !frozen;
      mask_t<S> keep_prev = bad || frozen;
      s = select_state(keep_prev, prev, s);
      info.accepted = select(keep_prev, S(0), info.accepted);
      info.divergent = info.divergent && !frozen;
      if (any(newly)) sink.diverged(chain, newly, t);
      frozen = frozen || bad;
    }
    divergent_transitions = divergent_transitions + select(info.divergent, S(1), S(0));
    return info.accepted;
  };

  // One loop and one call of advance for burn-in and kept steps alike, so every transition is
  // the same machine code and a chain's path does not depend on where burn-in ends.
  std::int64_t k = 0, until_keep = sch.thin;
  T inv_thin = T(1) / T(sch.thin);
  for (std::int64_t t = 0; t < sch.burn_in + sch.steps; ++t) {
    S a = advance(t);
    if (t < sch.burn_in) continue;
    accepted_total = accepted_total + a;
    window = window + a;
    if (--until_keep == 0) {
      sink.keep(k, chain, s, window * S(inv_thin), !frozen);
      ++k;
      until_keep = sch.thin;
      window = S(0);
    }
  }
  sink.finish(chain, s, frozen, divergent_transitions, accepted_total);
}

}  // namespace ember
