#pragma once
/// \file
/// The fused per-chain loop: the one place a pipeline becomes code. A run advances in chunks;
/// for each chunk a backend calls `fused_chunk<S>` once per chain (`S` = `float`/`double`, one
/// thread per chain on a GPU) or once per SIMD batch of chains (`S` = a batch). Within a chunk
/// everything happens in registers; the chain's state is loaded from the run's memory at the
/// start of the chunk and stored at its end, so a run split into any number of chunks computes
/// exactly what one chunk would (the loop is the same machine code, and every decision depends
/// on the global transition index only).
///
/// A sink (backend-supplied) provides:
///   load(chain, state, frozen, window)        the chain's stored state, frozen mask, window count;
///   store(chain, state, frozen, window, counts)   at the end of the chunk, with what the chunk
///                                             counted (`chunk_counts`);
///   keep(k, chain, state, info, window, live)  at kept step k (global index) with what the kept
///                                             transition reported (`step_info`) and the accepted
///                                             count since the previous kept step;
///   diverged(chain, newly, t)                 when lanes go non-finite at transition t;
///   observe(chain, accept_prob, frozen)       after each transition, in warm-up chunks only;
///   observe_trajectory(chain, start, end)     likewise, where the trajectory ended (ChEES).
/// `chain` is the index of the first lane; lanes are consecutive chains. A batch whose lanes run
/// chains of their own (fused_lanes.hpp) calls load, store, keep and diverged with one chain
/// (`S`'s element type), as a GPU thread does.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>
#include <ember/pipeline/chunk.hpp>
#include <ember/pipeline/fused_lanes.hpp>
#include <ember/pipeline/pipeline.hpp>

#include <algorithm>
#include <cstdint>

namespace ember {

/// The default start state of a chain: x₀ ~ uniform(−2, 2) in each sampled (unconstrained)
/// coordinate, as Stan and NumPyro start, drawn from the chain's own stream (step 0, purpose
/// `init`, Philox blocks from `first_block` on: 0 for the first draw, k⌈D/4⌉ for retry k). It
/// replaced x₀ ~ N(0, I): on the 19 posteriordb posteriors ChEES-HMC from N(0, I) starts was
/// correct on 16 and 16 of 19 (seeds 1, 2), with 1 to 4 of 16 chains of low_dim_gauss_mix in a
/// minor mode; from uniform starts on 19 and 18 (given as .init) and 19 and 16 (these draws)
/// (bench/results/2026-11-27-posteriordb-after-issue-26.md).
template <class S, int D>
EMBER_HD EMBER_INLINE vec<S, D> default_start(std::uint64_t key, std::uint32_t chain, std::uint32_t first_block = 0) {
  vec<S, D> x = make_chain_rng<S>(key, chain, 0).template uniform_from<D>(purpose::init, first_block);
  for (int i = 0; i < D; ++i) x[i] = S(element_t<S>(4)) * x[i] - S(element_t<S>(2));
  return x;
}

template <class S, observe Observe = observe::nothing, class Kernel, class Sink>
EMBER_HD EMBER_HOT void fused_chunk(Kernel const& kernel, chunk const& chunk_ref, std::uint32_t chain, Sink& sink) {
  // A copy: through the reference, every step would reload the key and the bounds (the sink's
  // calls might change them), and Philox's first two rounds, loop-invariant for a known key, would
  // stay in the loop.
  chunk const ch = chunk_ref;
  using State = decltype(kernel.init(vec<S, Kernel::dim>{}));
  State s;
  mask_t<S> frozen;
  S window;
  sink.load(chain, s, frozen, window);
  chunk_counts<S> counts;

  // One loop and the same transition code for every phase, so every transition is the same
  // machine code and a chain's path does not depend on where a phase or a chunk ends. A
  // countdown, not a division, finds kept steps. (The transition is written into the loop, not
  // as a lambda called from it: GCC left such a lambda out of line, which kept the chain's state
  // in memory, passed by reference, instead of in registers.)
  std::int64_t k = ch.begin > ch.keep_from ? (ch.begin - ch.keep_from) / ch.thin : 0;
  std::int64_t until_keep = ch.begin > ch.keep_from ? ch.thin - (ch.begin - ch.keep_from) % ch.thin : ch.thin;
  for (std::int64_t t = ch.begin; t < ch.end; ++t) {
    // One transition with divergence handling: a lane whose new state is not finite keeps its
    // last finite state and is frozen for the rest of the run. The previous state is a register
    // copy; the selects only run when some lane went bad (rare), so the common path costs the
    // copy and one finiteness test per step. (Recomputing the previous gradient on the rare path
    // instead of copying doubled the CUDA kernel's registers, 80 → 160, for 1.5 % fewer CPU
    // instructions.)
    State prev;
    EMBER_UNROLL  // slot by slot: a copy of the whole struct compiles to a call of memcpy on the host
    for (int i = 0; i < State::slots; ++i) prev.slot(i) = s.slot(i);
    auto rng = make_chain_rng<S>(ch.key, chain, std::uint32_t(t));
    Kernel const& kern = detail::opaque(kernel);
    step_info<S> info;
    if constexpr (Observe == observe::trajectory) {
      trajectory_end<S, Kernel::dim> end;
      info = kern.step(s, rng, end);
      sink.observe_trajectory(chain, prev, end);
    } else {
      info = kern.step(s, rng);
    }
    mask_t<S> bad = !state_is_finite<Kernel>(s);
    if (any(bad || frozen)) {
      mask_t<S> newly = bad && !frozen;
      mask_t<S> keep_prev = bad || frozen;
      s = select_state(keep_prev, prev, s);
      info.accepted = select(keep_prev, S(0), info.accepted);
      mask_frozen_report(info, frozen);  // a frozen lane's work is no chain's
      if (any(newly)) sink.diverged(chain, newly, t);
      frozen = frozen || bad;
    }
    if constexpr (Observe != observe::nothing) sink.observe(chain, info.accept_prob, frozen);
    counts.gradients = counts.gradients + info.gradients;
    if (t >= ch.count_from) {
      counts.divergent = counts.divergent + select(info.divergent, S(1), S(0));
      counts.truncated = counts.truncated + select(info.truncated, S(1), S(0));
    }

    if (t < ch.keep_from) continue;
    counts.accepted = counts.accepted + info.accepted;
    window = window + info.accepted;
    if (--until_keep == 0) {
      sink.keep(k, chain, s, info, window, !frozen);
      ++k;
      until_keep = ch.thin;
      window = S(0);
    }
  }
  sink.store(chain, s, frozen, window, counts);
}

/// A chain's first state: `kernel.init` at its start position, frozen if not finite. A kernel
/// whose state has random parts (the momentum of underdamped Langevin) may provide
/// `init(x, rng)` and gets the stream of step 0; purpose::init there is the default start's, so
/// such a kernel draws with a purpose of its own.
template <class S, class Kernel>
EMBER_HD EMBER_INLINE auto init_state(Kernel const& kernel, vec<S, Kernel::dim> const& x0, std::uint64_t key, std::uint32_t chain) {
  if constexpr (requires { kernel.init(x0, make_chain_rng<S>(key, chain, 0)); })
    return kernel.init(x0, make_chain_rng<S>(key, chain, 0));
  else
    return kernel.init(x0);
}
template <class S, class Kernel, class Sink>
EMBER_HD EMBER_HOT void fused_init(Kernel const& kernel, vec<S, Kernel::dim> const& x0, std::uint64_t key, std::uint32_t chain,
                         Sink& sink) {
  auto s = init_state<S>(kernel, x0, key, chain);
  mask_t<S> frozen = !state_is_finite<Kernel>(s);
  if (any(frozen)) sink.diverged(chain, frozen, std::int64_t(-1));
  sink.store(chain, s, frozen, S(0), chunk_counts<S>{});
}

/// Tries of a default start before a chain whose energy or gradient is still not finite there is
/// left frozen (Stan's count).
inline constexpr int default_start_tries = 100;

/// A chain's first state from the default start (`default_start`), drawn again, lane by lane,
/// where U or ∇U is not finite there: try k (k ≥ 1) draws x₀ ~ uniform(−2, 2)^D from Philox
/// blocks after the first draw's, so a chain whose first draw is finite starts exactly where it always did. A
/// chain still not finite after `default_start_tries` is frozen as divergent at its start (−1).
template <class S, class Kernel, class Sink>
EMBER_HD EMBER_HOT void fused_default_init(Kernel const& kernel, std::uint64_t key, std::uint32_t chain, Sink& sink) {
  constexpr int D = Kernel::dim;
  auto s = init_state<S>(kernel, default_start<S, D>(key, chain), key, chain);
  mask_t<S> bad = !state_is_finite<Kernel>(s);
  for (int k = 1; k < default_start_tries && any(bad); ++k) {
    auto const again = init_state<S>(kernel, default_start<S, D>(key, chain, std::uint32_t(k * ((D + 3) / 4))), key, chain);
    s = select_state(bad, again, s);
    bad = !state_is_finite<Kernel>(s);
  }
  if (any(bad)) sink.diverged(chain, bad, std::int64_t(-1));
  sink.store(chain, s, bad, S(0), chunk_counts<S>{});
}

}  // namespace ember
