#pragma once
/// \file
/// The fused loop of a SIMD batch whose chains' transitions take different numbers of gradient
/// evaluations (NUTS): every lane runs its own transitions, and its own chains. `fused_chunk`
/// (fused_loop.hpp) runs a batch's transition t for every lane at once, so with trees of
/// different depths the batch takes as many leapfrog steps as its deepest tree while the other
/// lanes idle (*lock-step*; 16-100 % of the lanes' steps useful on the benchmark matrix,
/// bench/results/2026-11-28-nuts-lanes.md). Here a kernel that grows its transition a leaf at a
/// time (`begin`, `grow`, `info`; kernel/nuts.hpp) advances every lane by one leaf per step of the
/// batch, and a lane whose transition ended starts its next one at once. A lane whose chain has
/// made the chunk's transitions hands it back and takes up the next chain from `next_chain()`
/// (a chain's index, or −1 when none is left), so the batch waits only for the last chain of the
/// pool, not for the slowest of its first W (a few chains of the centred funnel spend the run in
/// its neck at depth 8-10: 37 % of the lane-steps useful on 16 lanes with a chain per lane, 69 %
/// with one pool of 128 chains for 2 threads; bench/results/2026-11-30-nuts-pool.md).
///
/// Each chain's transition t is computed exactly as `fused_chunk` computes it (the same leaves
/// from the same state and the chain's own random numbers at step t: `lane_rng` carries each
/// lane's chain and step), and what follows a transition (a state that is not finite frozen,
/// counts, kept draws, tracked sums) is done chain by chain: the sink is called with one chain at
/// a time (`S`'s element type, as for a GPU thread's chain), so the draws and counts are the
/// lock-step loop's bits, in any chunking, on any number of threads, whichever lane and thread
/// ran the chain (tests/kernel/nuts_test.cpp). Tracked sums are the same terms added in other
/// groups (chains reach a kept step at different times), so they equal the lock-step ones to
/// rounding. A backend calls it for chunks that observe nothing (sampling, and warm-ups whose
/// adapters observe nothing) when the kernel says `own_pace` (backend/cpu.hpp); the padding of
/// the chain arrays (a last partial batch's ghost lanes) is not advanced.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/lanes.hpp>
#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>
#include <ember/pipeline/chunk.hpp>

#include <algorithm>
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

template <class S, class Kernel, class Next, class Sink>
EMBER_HOT void fused_chunk_lanes(Kernel const& kernel, chunk const& chunk_ref, Next&& next_chain, Sink& sink) {
  chunk const ch = chunk_ref;
  constexpr int W = lanes_of<S>;
  constexpr int D = Kernel::dim;
  using M = mask_t<S>;
  using T = element_t<S>;
  // One chain, as the sink loads, keeps and stores it.
  chain_state<T, D> one;
  bool one_frozen = false;
  T one_window = T(0);
  if (ch.begin >= ch.end) {  // no transition: each chain's state as it was
    for (std::int64_t c = next_chain(); c >= 0; c = next_chain()) {
      sink.load(std::uint32_t(c), one, one_frozen, one_window);
      sink.store(std::uint32_t(c), one, one_frozen, one_window, chunk_counts<T>{});
    }
    return;
  }
  chain_state<S, D> s{};
  M frozen(false);
  S window(T(0));
  chunk_counts<S> counts;
  // Each lane's chain (−1: none left), transition (below 2³², run/run.hpp), kept-step index and
  // countdown to its next kept step (fused_chunk's, per lane).
  std::int64_t chain[W];
  std::uint32_t step[W];
  std::int64_t k[W], until_keep[W];
  // Lane i takes up the next chain at the chunk's first transition: its stored state, counts
  // from zero. False when no chain is left.
  auto const take = [&](int i) {
    std::int64_t const c = next_chain();
    chain[i] = c;
    if (c < 0) return false;
    sink.load(std::uint32_t(c), one, one_frozen, one_window);
    for (int j = 0; j < chain_state<T, D>::slots; ++j) set_lane(s.slot(j), i, one.slot(j));
    set_lane_mask<S>(frozen, i, one_frozen);
    set_lane(window, i, one_window);
    for (S* n : {&counts.divergent, &counts.accepted, &counts.truncated, &counts.gradients}) set_lane(*n, i, T(0));
    step[i] = std::uint32_t(ch.begin);
    k[i] = ch.begin > ch.keep_from ? (ch.begin - ch.keep_from) / ch.thin : 0;
    until_keep[i] = ch.begin > ch.keep_from ? ch.thin - (ch.begin - ch.keep_from) % ch.thin : ch.thin;
    return true;
  };
  auto const lane_state = [&](int i) {
    for (int j = 0; j < chain_state<T, D>::slots; ++j) one.slot(j) = get_lane(s.slot(j), i);
  };
  // Lane i's chain has made the chunk's transitions: its state and counts back to the sink.
  auto const give = [&](int i) {
    lane_state(i);
    chunk_counts<T> n;
    n.divergent = get_lane(counts.divergent, i);
    n.accepted = get_lane(counts.accepted, i);
    n.truncated = get_lane(counts.truncated, i);
    n.gradients = get_lane(counts.gradients, i);
    sink.store(std::uint32_t(chain[i]), one, bool(get_lane(frozen, i)), T(get_lane(window, i)), n);
  };
  // Each lane's streams: its chain's at its step.
  lane_rng<S> rng = make_lane_rng(make_chain_rng<S>(ch.key, 0, 0));
  auto const streams = [&] {
    std::uint32_t c[W];
    for (int i = 0; i < W; ++i) c[i] = chain[i] >= 0 ? std::uint32_t(chain[i]) : 0u;
    rng.chain = words_from_lanes<S>(c);
    rng.step = words_from_lanes<S>(step);
  };

  bool started[W];
  int live = 0;
  for (int i = 0; i < W; ++i) live += (started[i] = take(i));
  if (live == 0) return;
  // Lanes without a chain compute on a copy of the first lane's, masked; nothing of theirs is kept.
  int const first = int(std::find(started, started + W, true) - started);
  for (int i = 0; i < W; ++i) {
    if (started[i]) continue;
    step[i] = step[first];
    for (int j = 0; j < chain_state<T, D>::slots; ++j) set_lane(s.slot(j), i, get_lane(s.slot(j), first));
  }
  streams();
  typename Kernel::template tree<S> w;
  kernel.begin(w, s, kernel.momentum(rng), S(T(kernel.step_size)), M(true));
  M active = mask_from_lanes<S>(started);
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
    bool ended[W], newly_bad[W], counted[W], kept[W];
    mask_lanes<S>(done, ended);
    mask_lanes<S>(newly, newly_bad);
    for (int i = 0; i < W; ++i) {
      std::int64_t const t = step[i];
      if (newly_bad[i]) sink.diverged(std::uint32_t(chain[i]), true, t);
      counted[i] = ended[i] && t >= ch.count_from;
      kept[i] = ended[i] && t >= ch.keep_from;
    }
    M const count = mask_from_lanes<S>(counted) && !frozen;
    counts.divergent = counts.divergent + select(count && info.divergent, S(T(1)), S(T(0)));
    counts.truncated = counts.truncated + select(count && info.truncated, S(T(1)), S(T(0)));
    frozen = frozen || bad;
    M const keep_phase = mask_from_lanes<S>(kept);
    counts.accepted = counts.accepted + select(keep_phase, accepted, S(T(0)));
    window = window + select(keep_phase, accepted, S(T(0)));
    // Kept draws, each to its lane's chain.
    bool keep_now[W];
    for (int i = 0; i < W; ++i) {
      keep_now[i] = kept[i] && --until_keep[i] == 0;
      if (!keep_now[i]) continue;
      lane_state(i);
      step_info<T> lane_info{get_lane(info.accepted, i),  get_lane(info.divergent, i), get_lane(info.accept_prob, i),
                             get_lane(info.gradients, i), get_lane(info.truncated, i), get_lane(info.hamiltonian, i),
                             get_lane(info.tree_depth, i)};
      sink.keep(k[i], std::uint32_t(chain[i]), one, lane_info, T(get_lane(window, i)), !bool(get_lane(frozen, i)));
      ++k[i];
      until_keep[i] = ch.thin;
    }
    window = select(mask_from_lanes<S>(keep_now), S(T(0)), window);
    // Their next transitions; a lane whose chain made the chunk's last takes up the next chain.
    bool again[W];
    for (int i = 0; i < W; ++i) {
      again[i] = false;
      if (!ended[i]) continue;
      if (std::int64_t(++step[i]) < ch.end) {
        again[i] = true;
      } else {
        give(i);
        again[i] = take(i);
      }
    }
    M const next = mask_from_lanes<S>(again);
    active = (active && !done) || next;
    if (any(next)) {
      streams();
      kern.begin(w, s, kern.momentum(rng), S(T(kern.step_size)), next);
    }
  }
}

}  // namespace ember
