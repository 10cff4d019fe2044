#pragma once
/// \file
/// The fused loop of a SIMD batch whose chains' transitions take different numbers of gradient
/// evaluations (NUTS): every lane runs its own transitions. `fused_chunk` (fused_loop.hpp) runs a
/// batch's transition t for every lane at once, so with trees of different depths the batch takes
/// as many leapfrog steps as its deepest tree while the other lanes idle (*lock-step*; 16-100 %
/// of the lanes' steps useful on the benchmark matrix, bench/results/2026-11-28-nuts-lanes.md).
/// Here a kernel that grows its transition a leaf at a time (`begin`, `grow`, `info`;
/// kernel/nuts.hpp) advances every lane by one leaf per step of the batch, and a lane whose
/// transition ended starts its next one at once; the batch waits only at the end of the chunk,
/// for its last tree.
///
/// Each lane's transition t is computed exactly as `fused_chunk` computes it (the same leaves
/// from the same state and the lane's own random numbers at step t), and what follows a
/// transition (a state that is not finite frozen, counts, kept draws, tracked sums) is done
/// lane by lane, as the batch loop does it for all lanes: the draws and counts are the
/// lock-step loop's bits, in any chunking and whatever chains share the batch
/// (tests/kernel/nuts_test.cpp). Tracked sums are the same terms added in other groups of lanes
/// (lanes reach a kept step at different times), so they equal the lock-step ones to rounding.
/// A backend calls it for chunks that observe nothing (sampling, and warm-ups whose adapters
/// observe nothing), through `fused_chunk`, when the kernel says `own_pace`.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/lanes.hpp>
#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>
#include <ember/pipeline/chunk.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

/// Whether `Kernel` grows its transitions lane by lane on batches of `S` (`tree<S>`, `begin`,
/// `grow`, `info`) over a plain `chain_state` (a kernel wrapped with more per-chain state, such
/// as a per-chain step size, runs the batch loop).
template <class Kernel, class S>
concept grows_lanes = requires(Kernel const& k, typename Kernel::template tree<S>& w, chain_state<S, Kernel::dim> const& s,
                               lane_rng<S> const& rng, mask_t<S> const& m) {
  k.begin(w, s, k.momentum(rng), S(), m);
  { k.grow(w, rng, m) } -> std::same_as<mask_t<S>>;
  k.info(w);
  requires std::is_same_v<decltype(k.init(vec<S, Kernel::dim>{})), chain_state<S, Kernel::dim>>;
};

template <class S, class Kernel, class Sink>
EMBER_HOT void fused_chunk_lanes(Kernel const& kernel, chunk const& chunk_ref, std::uint32_t chain, Sink& sink) {
  chunk const ch = chunk_ref;
  constexpr int W = lanes_of<S>;
  using M = mask_t<S>;
  using T = element_t<S>;
  chain_state<S, Kernel::dim> s;
  M frozen;
  S window;
  sink.load(chain, s, frozen, window);
  chunk_counts<S> counts;
  if (ch.begin >= ch.end) {
    sink.store(chain, s, frozen, window, counts);
    return;
  }
  // Each lane's transition (below 2³², run/run.hpp), kept-step index and countdown to its next
  // kept step (fused_chunk's, per lane).
  std::uint32_t step[W];
  std::int64_t k[W], until_keep[W];
  for (int i = 0; i < W; ++i) {
    step[i] = std::uint32_t(ch.begin);
    k[i] = ch.begin > ch.keep_from ? (ch.begin - ch.keep_from) / ch.thin : 0;
    until_keep[i] = ch.begin > ch.keep_from ? ch.thin - (ch.begin - ch.keep_from) % ch.thin : ch.thin;
  }
  lane_rng<S> rng = make_lane_rng(make_chain_rng<S>(ch.key, chain, step[0]));
  typename Kernel::template tree<S> w;
  kernel.begin(w, s, kernel.momentum(rng), S(T(kernel.step_size)), M(true));
  M active(true);
  while (any(active)) {
    Kernel const& kern = detail::opaque(kernel);
    M const done = kern.grow(w, rng, active);
    if (!any(done)) continue;
    // The lanes whose transition ended, as fused_chunk ends a batch's.
    step_info<S> info = kern.info(w);
    M const bad = done && !state_is_finite<Kernel>(w.draw);
    M const newly = bad && !frozen;
    M const keep_prev = bad || frozen;
    blend_state(done && !keep_prev, w.draw, s);
    S const accepted = select(keep_prev, S(T(0)), info.accepted);
    // What a kept draw records, as the batch loop masks it for lanes already frozen.
    info.accepted = accepted;
    mask_frozen_report(info, frozen);
    counts.gradients = counts.gradients + select(done && !frozen, info.gradients, S(T(0)));
    bool ended[W], newly_bad[W], counted[W], kept[W], keep_now[W];
    mask_lanes<S>(done, ended);
    mask_lanes<S>(newly, newly_bad);
    for (int i = 0; i < W; ++i) {
      std::int64_t const t = step[i];
      if (newly_bad[i]) sink.diverged(chain, one_lane<S>(i), t);
      counted[i] = ended[i] && t >= ch.count_from;
      kept[i] = ended[i] && t >= ch.keep_from;
      keep_now[i] = kept[i] && --until_keep[i] == 0;
    }
    M const count = mask_from_lanes<S>(counted) && !frozen;
    counts.divergent = counts.divergent + select(count && info.divergent, S(T(1)), S(T(0)));
    counts.truncated = counts.truncated + select(count && info.truncated, S(T(1)), S(T(0)));
    frozen = frozen || bad;
    M const keep_phase = mask_from_lanes<S>(kept);
    counts.accepted = counts.accepted + select(keep_phase, accepted, S(T(0)));
    window = window + select(keep_phase, accepted, S(T(0)));
    // Kept draws, the lanes at one kept index at a time (all of them, while they are in step).
    for (int i = 0; i < W; ++i) {
      if (!keep_now[i]) continue;
      bool same[W] = {};
      for (int l = i; l < W; ++l)
        if (keep_now[l] && k[l] == k[i]) same[l] = true, keep_now[l] = false;
      sink.keep(k[i], chain, s, info, window, !frozen, mask_from_lanes<S>(same));
      for (int l = i; l < W; ++l)
        if (same[l]) ++k[l], until_keep[l] = ch.thin;
      window = select(mask_from_lanes<S>(same), S(T(0)), window);
    }
    // Their next transitions.
    bool again[W];
    for (int i = 0; i < W; ++i) {
      if (ended[i]) ++step[i];
      again[i] = ended[i] && std::int64_t(step[i]) < ch.end;
    }
    M const next = mask_from_lanes<S>(again);
    active = (active && !done) || next;
    if (any(next)) {
      rng.step = words_from_lanes<S>(step);
      kern.begin(w, s, kern.momentum(rng), S(T(kern.step_size)), next);
    }
  }
  sink.store(chain, s, frozen, window, counts);
}

}  // namespace ember
