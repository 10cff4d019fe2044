#pragma once
/// \file
/// `nuts`: the No-U-Turn Sampler (Hoffman & Gelman 2014) in its multinomial form with the
/// generalised U-turn criterion (Betancourt 2017), as Stan, NumPyro and BlackJAX run it.
///
/// A transition draws a whitened momentum v ~ N(0, I) and doubles a trajectory of velocity-Verlet
/// steps (h = ±ε, the direction of each doubling drawn at random) until its ends turn back
/// towards each other, a sub-trajectory does, a step diverges, or the tree reaches
/// `max_tree_depth` doublings (2^depth − 1 gradients; such a transition is *truncated*: a run
/// counts it, and a summary warns). The next state is drawn from the trajectory's points with
/// weights e^{−H}: within each new half uniformly by progressive sampling, and between the old
/// tree and the new half with the bias towards the new half that Stan and NumPyro use.
///
/// Termination, in whitened momentum (M⁻¹ = L Lᵀ, v = Lᵀp, so p♯ = M⁻¹p = L v and
/// ρ·p♯ = (Σv)·v): a (sub)trajectory has turned when (Σv)·v⁻ ≤ 0 or (Σv)·v⁺ ≤ 0 at its two
/// ends. It is checked on the whole tree after each doubling and, while a half is built leaf by
/// leaf, on each of its complete sub-trees that ends at the new leaf, from checkpoints of the
/// first leaf's velocity and the running Σv (the iterative scheme of NumPyro and BlackJAX,
/// O(depth) memory a chain instead of a recursion).
///
/// **Lanes in lock-step, or each at its own pace.** `step` builds a whole tree for every lane of a
/// SIMD batch together, leaf by leaf: the doubling structure is the same for every lane, only the
/// directions differ, so one leaf is one velocity-Verlet step of the whole batch, and a lane whose
/// tree has ended idles (masked) until the batch's deepest tree ends (*lock-step*; on a GPU each
/// thread is one chain and stops on its own). The same transition also exists as a per-lane state
/// machine: a `tree` holds each lane's doubling, leaf, ends, half and checkpoints; `begin` starts
/// lanes, `grow` advances every active lane by one leaf at its own indices, `info` reports. With
/// `.own_pace` a sampling chunk runs pipeline/fused_lanes.hpp on it, where a lane whose tree
/// ended starts its next transition at once, and a lane whose chain has made the chunk's
/// transitions takes up another chain. The two are the same arithmetic chain by chain and give
/// the same bits (tests/kernel/nuts_test.cpp); `bench/nuts_lockstep.cpp` measures both.
///
/// What a transition reports (`step_info`): `accepted` 1 where the chain moved (the drawn point
/// is not the start), `accept_prob` the mean over the tree's new points of min(1, e^{−ΔH})
/// (what dual averaging drives to 0.8, Stan's target), `divergent` where a step's energy error
/// exceeded `divergence_threshold` (or was not finite; that half is discarded, as in Stan),
/// `gradients` the leaves built, `truncated` where the tree reached its maximum depth.
///
/// Random numbers per transition t of a chain: the momentum (purpose `proposal`), the direction
/// and the merge draw of doubling j (purpose `tree`, Philox block j) and the progressive draw of
/// leaf i (purpose `leaf`, block i); a chain's transition is therefore the same in a batch of any
/// width and on a GPU thread.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/lanes.hpp>
#include <ember/core/metric.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/palindromic.hpp>
#include <ember/kernel/detail/validate.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace ember {

struct nuts_options {
  std::optional<double> step_size = std::nullopt;  ///< ε > 0; leave it out when a warm-up adapts it
  int max_tree_depth = 10;             ///< doublings of a trajectory, at most 2^depth − 1 gradients (Stan's 10)
  double mass = 1;                     ///< scalar mass m > 0 (a warm-up adapts a diagonal or dense metric)
  double divergence_threshold = 1000;  ///< an energy error above this marks a divergent transition
  /// On a SIMD batch after warm-up, `true`: each lane starts its next transition as soon as its
  /// tree has ended instead of waiting for the batch's deepest tree, and takes up the next chain
  /// of a pool once its chain has made the chunk's transitions (pipeline/fused_lanes.hpp);
  /// `false`: lock-step. The draws are the same bits either way (tracked sums equal to rounding).
  /// It pays where a gradient costs much more than a leaf's bookkeeping (breast_cancer_logistic,
  /// 569 rows: 1.7× faster) and loses where a gradient costs a few dozen operations (each lane's
  /// start draws a momentum for the whole batch, and the sub-tree checks span every lane's
  /// checkpoints; bench/results/2026-11-30-nuts-pool.md).
  /// Left out, a run that tracks no statistics measures: its first sampling chunk of at least 64
  /// transitions starts with up to 64 in each loop, timed, and the rest runs the way that made
  /// more gradients a second.
  std::optional<bool> own_pace = std::nullopt;
};

namespace detail {
/// NUTS's checkpoints for leaf n (from 0) of a half being built: the sub-trees that end at leaf n
/// start at the leaves whose velocity and running Σv are stored at indices [lo, hi] (NumPyro's
/// `_leaf_idx_to_ckpt_idxs`): hi = the set bits of n above bit 0, lo = hi − (trailing ones of n) + 1.
EMBER_HD EMBER_INLINE void nuts_checkpoints(unsigned n, int& lo, int& hi) {
#if defined(__CUDA_ARCH__)
  int const bits = __popc(n >> 1), ones = __ffs(~n) - 1;
#else
  // (One instruction each; as bit loops they were a tenth of a lane-at-its-own-pace leaf.)
  int const bits = std::popcount(n >> 1), ones = std::countr_one(n);
#endif
  hi = bits;
  lo = bits - ones + 1;
}

/// NUTS's tree depth: 1 to `limit` doublings.
inline void require_tree_depth(int depth, int limit) {
  if (depth < 1 || depth > limit)
    throw std::invalid_argument("ember::nuts: max_tree_depth must be in [1, " + std::to_string(limit) + "], got " +
                                std::to_string(depth));
}

/// log(e^a + e^b), −∞ when both are.
template <class S>
EMBER_HD EMBER_INLINE S log_add_exp(S const& a, S const& b) {
  using T = element_t<S>;
  S const m = max(a, b);
  S const d = min(a, b) - m;  // ≤ 0; NaN only when both are −∞
  return select(m == S(-T(INFINITY)), m, m + log(S(T(1)) + exp(d)));  // INFINITY: a constant in device code too
}

template <class S, int D>
EMBER_HD EMBER_INLINE S dot(vec<S, D> const& a, vec<S, D> const& b) {
  S r = S(0);
  for (int i = 0; i < D; ++i) r = fmadd(a[i], b[i], r);
  return r;
}
}  // namespace detail

template <class E, class Integrator = velocity_verlet, class Metric = scalar_metric<typename E::value_type>>
struct nuts_kernel {
  using energy_type = E;
  using integrator_type = Integrator;
  using metric_type = Metric;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  /// The target of step-size adaptation for the tree's mean acceptance statistic (Stan's 0.8).
  static constexpr double target_acceptance = 0.8;
  /// `accepted` counts transitions that moved; the acceptance statistic above is a warm-up's
  /// matter, not a rate a result compares with its target.
  static constexpr bool accepted_means_moved = true;
  static constexpr bool reports_hamiltonian = true;  ///< step_info::hamiltonian and tree_depth (record_stats())
  static constexpr bool reports_tree_depth = true;
  /// The deepest tree a kernel supports: checkpoints are arrays of this size in registers or on
  /// the stack (2·(depth − 1) velocities a chain).
  static constexpr int depth_limit = 14;

  E energy;
  Metric metric;
  value_type step_size;
  int max_tree_depth = 10;
  value_type divergence_threshold = 1000;
  bool own_pace = false;     ///< nuts_options::own_pace
  bool measure_pace = true;  ///< nuts_options::own_pace left out: a run chooses own_pace by measuring both

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    return transition(s, rng, S(step_size));
  }
  /// The same transition with step size `eps` per lane (each chain its own; per_chain_step_size.hpp).
  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng, S const& eps) const {
    return transition(s, rng, eps);
  }

  /// The most gradients one transition evaluates.
  int max_gradients() const { return Integrator::gradients_per_step * ((1 << max_tree_depth) - 1); }

  nuts_kernel with_step_size(double eps) const {
    nuts_kernel k = *this;
    k.step_size = value_type(eps);
    return k;
  }
  template <class M>
  nuts_kernel<E, Integrator, M> with_metric(M const& m) const {
    return {energy, m, step_size, max_tree_depth, divergence_threshold, own_pace, measure_pace};
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::nuts");
    detail::require_tree_depth(max_tree_depth, depth_limit);
    metric.validate("ember::nuts");
    detail::require_divergence_threshold(double(divergence_threshold), "ember::nuts");
  }

  /// One tree per lane, grown a leaf at a time (`begin`, then `grow` until the lane is done):
  /// what a lane's transition keeps between two leaves. `draw` is the point drawn so far, the
  /// transition's result once the lane is done.
  template <class S>
  struct tree {
    static constexpr int W = lanes_of<S>;
    chain_state<S, dim> draw, left, right, q, half;
    vec<S, dim> v_left, v_right, v, rho, half_rho;
    vec<S, dim> ck_v[depth_limit - 1], ck_rho[depth_limit - 1];
    S eps, h0, log_w, half_log_w, merge_u, accept_sum, leaves, depth;
    mask_t<S> going, diverged, moved, forward;
    int doubling[W], leaf[W];  // each lane's doubling j and leaf n of the half it is growing
  };

  /// Starts a transition from `s` in the lanes of `m`, with step size `eps` and the momentum
  /// `v0` (purpose `proposal` of each lane's step: `momentum(rng)`). A tree's checkpoints are
  /// written before a lane reads them; lanes outside `m` and idle lanes compute on theirs, masked.
  template <class S>
  EMBER_HD EMBER_INLINE void begin(tree<S>& w, chain_state<S, dim> const& s, vec<S, dim> const& v0, S const& eps,
                                   mask_t<S> const& m) const {
    using T = value_type;
    S const h0 = s.energy + S(T(0.5)) * detail::dot(v0, v0);
    if (all(m)) {  // every lane (a tree's first start: nothing of `w` is read)
      w.draw = w.left = w.right = w.q = w.half = s;
      w.v_left = w.v_right = w.rho = w.v = v0;
      for (int i = 0; i < dim; ++i) w.half_rho[i] = S(T(0));
      w.eps = eps;
      w.half_log_w = w.merge_u = S(T(0));
      w.forward = mask_t<S>(true);
      w.h0 = h0;
      w.log_w = w.accept_sum = w.leaves = w.depth = S(T(0));
      w.going = mask_t<S>(true);
      w.diverged = w.moved = mask_t<S>(false);
      for (int i = 0; i < lanes_of<S>; ++i) w.doubling[i] = w.leaf[i] = 0;
      return;
    }
    blend_state(m, s, w.draw);
    blend_state(m, s, w.left);
    blend_state(m, s, w.right);
    blend_state(m, s, w.q);
    for (int i = 0; i < dim; ++i) {
      w.v_left[i] = select(m, v0[i], w.v_left[i]);
      w.v_right[i] = select(m, v0[i], w.v_right[i]);
      w.rho[i] = select(m, v0[i], w.rho[i]);
      w.v[i] = select(m, v0[i], w.v[i]);
    }
    w.eps = select(m, eps, w.eps);
    w.h0 = select(m, h0, w.h0);
    w.log_w = select(m, S(T(0)), w.log_w);
    w.accept_sum = select(m, S(T(0)), w.accept_sum);
    w.leaves = select(m, S(T(0)), w.leaves);
    w.depth = select(m, S(T(0)), w.depth);
    w.going = w.going || m;
    w.diverged = w.diverged && !m;
    w.moved = w.moved && !m;
    bool in[lanes_of<S>];
    mask_lanes<S>(m, in);
    for (int i = 0; i < lanes_of<S>; ++i)
      if (in[i]) w.doubling[i] = w.leaf[i] = 0;
  }

  /// A transition's momentum: D normals of purpose `proposal`, each lane at its own step.
  template <class Rng>
  EMBER_HD EMBER_INLINE auto momentum(Rng const& rng) const {
    return rng.template normal<dim>(purpose::proposal);
  }

  /// One leaf of every lane in `active` (each at its own doubling and leaf): a velocity-Verlet step
  /// from the end of the half the lane is growing (a new half, in a random direction, when its
  /// previous one ended), its weight and U-turns, and where a half ends its merge into the tree.
  /// Returns the lanes whose transition ended at this leaf.
  ///
  /// On the host one out-of-line copy per scalar type (a leaf's work dwarfs the call; inlined
  /// into the fused loops, a NUTS configuration took twice ChEES's compile time).
  template <class S>
  EMBER_HD EMBER_HOT_CALLEE mask_t<S> grow(tree<S>& w, lane_rng<S> const& rng, mask_t<S> const& active) const {
    using T = value_type;
    using M = mask_t<S>;
    constexpr int W = lanes_of<S>;
    constexpr int D = dim;
    S const inf = S(T(INFINITY));  // not numeric_limits: a host function to nvcc
    // The lanes' integer state: which lanes start a half, the Philox blocks of their draws, and
    // for each checkpoint the lanes (bit i: lane i) that store their leaf there and that check a
    // sub-tree from it (built lane by lane here: per checkpoint, a pass over the lanes was a
    // fifth of a leaf on the funnel).
    bool act[W], starting[W], size_end[W];
    std::uint32_t tree_block[W], leaf_block[W];
    std::uint64_t store_at[depth_limit - 1] = {}, check_at[depth_limit - 1] = {};
    int last_store = -1, last_check = -1;
    mask_lanes<S>(active, act);
    for (int i = 0; i < W; ++i) {
      int const j = w.doubling[i], n = w.leaf[i];
      starting[i] = act[i] && n == 0;
      tree_block[i] = std::uint32_t(j);
      leaf_block[i] = std::uint32_t((1 << j) - 1 + n);
      size_end[i] = n + 1 == (1 << j);
      if (!act[i]) continue;
      int lo, hi;
      detail::nuts_checkpoints(unsigned(n), lo, hi);
      std::uint64_t const bit = std::uint64_t(1) << i;
      if ((n & 1) == 0) store_at[hi] |= bit, last_store = hi > last_store ? hi : last_store;
      for (int c = lo; c <= hi; ++c) check_at[c] |= bit;
      if (lo <= hi) last_check = hi > last_check ? hi : last_check;
    }
    // A new half grows from the end in its direction; `q` and `v` are its last leaf.
    M const start = mask_from_lanes<S>(starting);
    if (any(start)) {
      auto const u = rng.template uniform_at<2>(purpose::tree, words_from_lanes<S>(tree_block));
      M const fwd = u[0] <= S(T(0.5));
      w.forward = (start && fwd) || (!start && w.forward);
      w.merge_u = select(start, u[1], w.merge_u);
      blend_state(start && w.forward, w.right, w.q);
      blend_state(start && !w.forward, w.left, w.q);
      for (int i = 0; i < D; ++i) {
        w.v[i] = select(start, select(w.forward, w.v_right[i], w.v_left[i]), w.v[i]);
        w.half_rho[i] = select(start, S(T(0)), w.half_rho[i]);
      }
      blend_state(start, w.q, w.half);
      w.half_log_w = select(start, -inf, w.half_log_w);
    }
    Integrator::steps(energy, w.q, w.v, select(w.forward, w.eps, -w.eps), metric, 1);
    S dh = w.q.energy + S(T(0.5)) * detail::dot(w.v, w.v) - w.h0;
    dh = select(dh == dh, dh, inf);  // NaN: an infinite error
    M const divergent = !(dh <= S(divergence_threshold));
    w.accept_sum = w.accept_sum + select(active, exp(min(S(T(0)), -dh)), S(T(0)));
    w.leaves = w.leaves + select(active, S(T(1)), S(T(0)));
    // Progressive multinomial sampling within the half: the new leaf replaces the drawn point
    // with probability w_leaf / w_half (so the first leaf always does).
    S const lw = -dh;
    S const new_log_w = detail::log_add_exp(w.half_log_w, lw);
    S const pick = rng.template uniform_at<1>(purpose::leaf, words_from_lanes<S>(leaf_block))[0];
    blend_state(active && pick <= exp(lw - new_log_w), w.q, w.half);
    w.half_log_w = select(active, new_log_w, w.half_log_w);
    for (int i = 0; i < D; ++i) w.half_rho[i] = select(active, w.half_rho[i] + w.v[i], w.half_rho[i]);
    // Checkpoints (at even leaves) and the U-turns of the complete sub-trees ending at this leaf,
    // each lane at its own indices.
    for (int c = 0; c <= last_store; ++c) {
      if (store_at[c] == 0) continue;
      M const m = mask_from_bits<S>(store_at[c]);
      for (int i = 0; i < D; ++i) {
        w.ck_v[c][i] = select(m, w.v[i], w.ck_v[c][i]);
        w.ck_rho[c][i] = select(m, w.half_rho[i], w.ck_rho[c][i]);
      }
    }
    M turned = M(false);
    for (int c = last_check; c >= 0; --c) {
      if (check_at[c] == 0) continue;
      M const m = mask_from_bits<S>(check_at[c]);
      S a = S(T(0)), b = S(T(0));
      for (int i = 0; i < D; ++i) {
        S const r = w.half_rho[i] - w.ck_rho[c][i] + w.ck_v[c][i];
        a = fmadd(r, w.ck_v[c][i], a);
        b = fmadd(r, w.v[i], b);
      }
      turned = turned || (m && !(a > S(T(0)) && b > S(T(0))));
    }
    M const stop = active && (divergent || turned);
    w.diverged = w.diverged || (active && divergent);
    for (int i = 0; i < W; ++i) w.leaf[i] += act[i] ? 1 : 0;
    M const ends = stop || (active && mask_from_lanes<S>(size_end));
    if (!any(ends)) return M(false);
    // A half that ended: merged if it finished (its point replaces the tree's with probability
    // min(1, w_half / w_tree)), discarded, with the transition, if it turned or diverged.
    M const ok = ends && !stop;
    w.depth = w.depth + select(ok, S(T(1)), S(T(0)));
    M const take = ok && w.merge_u <= exp(w.half_log_w - w.log_w);
    blend_state(take, w.half, w.draw);
    w.moved = w.moved || take;
    w.log_w = select(ok, detail::log_add_exp(w.log_w, w.half_log_w), w.log_w);
    M const to_right = ends && w.forward, to_left = ends && !w.forward;
    blend_state(to_right, w.q, w.right);
    blend_state(to_left, w.q, w.left);
    for (int i = 0; i < D; ++i) {
      w.v_right[i] = select(to_right, w.v[i], w.v_right[i]);
      w.v_left[i] = select(to_left, w.v[i], w.v_left[i]);
      w.rho[i] = select(ends, w.rho[i] + w.half_rho[i], w.rho[i]);
    }
    M const tree_turned = !(detail::dot(w.rho, w.v_left) > S(T(0)) && detail::dot(w.rho, w.v_right) > S(T(0)));
    w.going = (ends && ok && !tree_turned) || (!ends && w.going);
    bool end[W], deepest[W];
    mask_lanes<S>(ends, end);
    for (int i = 0; i < W; ++i) {
      if (end[i]) ++w.doubling[i], w.leaf[i] = 0;
      deepest[i] = w.doubling[i] >= max_tree_depth;
    }
    return ends && (!w.going || mask_from_lanes<S>(deepest));
  }

  /// What lane's transition did, read once it is done (`grow` returned it).
  template <class S>
  EMBER_HD EMBER_INLINE step_info<S> info(tree<S> const& w) const {
    using T = value_type;
    step_info<S> r{select(w.moved, S(T(1)), S(T(0))), w.diverged, w.accept_sum / max(w.leaves, S(T(1)))};
    r.gradients = w.leaves * S(T(Integrator::gradients_per_step));
    r.truncated = w.going;
    r.hamiltonian = w.h0;
    r.tree_depth = w.depth;
    return r;
  }

 private:
  // Lock-step: every lane's tree from its start to its end, one doubling and leaf for all lanes
  // (scalar indices, the tree's state in registers where it fits); a lane whose tree ended idles
  // (masked) until the batch's deepest tree has. The same arithmetic, lane by lane, as `grow`
  // (tests/kernel/nuts_test.cpp compares the two bit for bit); kept apart because on targets
  // whose gradient costs a few dozen operations the per-lane bookkeeping and a tree in memory
  // made lock-step through `grow` 1.3-1.55× slower (bench/results/2026-11-28-nuts-lanes.md).
  template <class S>
  EMBER_HD step_info<S> transition(chain_state<S, dim>& s, chain_rng<S> const& rng, S const& eps) const {
    using T = value_type;
    using M = mask_t<S>;
    constexpr int D = dim;
    S const inf = S(T(INFINITY));  // not numeric_limits: a host function to nvcc
    auto const v0 = rng.template normal<D>(purpose::proposal);
    S const h0 = s.energy + S(T(0.5)) * detail::dot(v0, v0);

    // The tree: its two ends (state and velocity), Σv over its points, log Σ e^{−(H − H₀)} (the
    // start counts e⁰), and the point drawn so far, kept in `s`.
    chain_state<S, D> left = s, right = s;
    vec<S, D> v_left = v0, v_right = v0, rho = v0;
    S log_w = S(T(0));
    S accept_sum = S(T(0)), leaves = S(T(0));
    M going = M(true), diverged = M(false), moved = M(false);
    S depth = S(T(0));  // the doublings merged into the tree (Stan's tree depth)
    vec<S, D> ck_v[depth_limit - 1], ck_rho[depth_limit - 1];

    for (int j = 0; j < max_tree_depth && any(going); ++j) {
      auto const u = rng.template uniform_from<2>(purpose::tree, std::uint32_t(j));
      M const forward = u[0] <= S(T(0.5));
      // The new half grows from the end in its direction; `q` and `v` are its last leaf.
      chain_state<S, D> q = select_state(forward, right, left);
      vec<S, D> v;
      for (int i = 0; i < D; ++i) v[i] = select(forward, v_right[i], v_left[i]);
      S const h = select(forward, eps, -eps);
      // The half: its drawn point, log weight and Σv. Lanes whose half stops (turns or diverges)
      // stop the whole transition and their half is discarded, so only `going` lanes that finish
      // it read these; the others need no masking.
      chain_state<S, D> half = q;
      S half_log_w = -inf;
      vec<S, D> half_rho;
      for (int i = 0; i < D; ++i) half_rho[i] = S(T(0));
      M half_going = going, half_stopped = M(false);
      unsigned const size = 1u << j;
      for (unsigned n = 0; n < size && any(half_going); ++n) {
        Integrator::steps(energy, q, v, h, metric, 1);
        S dh = q.energy + S(T(0.5)) * detail::dot(v, v) - h0;
        dh = select(dh == dh, dh, inf);  // NaN: an infinite error
        M const divergent = !(dh <= S(divergence_threshold));
        accept_sum = accept_sum + select(half_going, exp(min(S(T(0)), -dh)), S(T(0)));
        leaves = leaves + select(half_going, S(T(1)), S(T(0)));
        // Progressive multinomial sampling within the half: the new leaf replaces the drawn
        // point with probability w_leaf / w_half (so the first leaf always does).
        S const lw = -dh;
        S const new_log_w = detail::log_add_exp(half_log_w, lw);
        S const pick = rng.template uniform_from<1>(purpose::leaf, size - 1 + n)[0];
        half = select_state(pick <= exp(lw - new_log_w), q, half);
        half_log_w = new_log_w;
        for (int i = 0; i < D; ++i) half_rho[i] = half_rho[i] + v[i];
        // U-turns of the complete sub-trees ending at this leaf.
        int lo, hi;
        detail::nuts_checkpoints(n, lo, hi);
        if ((n & 1u) == 0) {
          ck_v[hi] = v;
          ck_rho[hi] = half_rho;
        }
        M turned = M(false);
        for (int c = hi; c >= lo; --c) {
          S a = S(T(0)), b = S(T(0));
          for (int i = 0; i < D; ++i) {
            S const r = half_rho[i] - ck_rho[c][i] + ck_v[c][i];
            a = fmadd(r, ck_v[c][i], a);
            b = fmadd(r, v[i], b);
          }
          turned = turned || !(a > S(T(0)) && b > S(T(0)));
        }
        M const stop = half_going && (divergent || turned);
        diverged = diverged || (half_going && divergent);
        half_stopped = half_stopped || stop;
        half_going = half_going && !stop;
      }
      // Merge a finished half: its point replaces the tree's with probability min(1, w_half / w_tree).
      M const ok = going && !half_stopped;
      depth = depth + select(ok, S(T(1)), S(T(0)));
      M const take = ok && u[1] <= exp(half_log_w - log_w);
      s = select_state(take, half, s);
      moved = moved || take;
      log_w = select(ok, detail::log_add_exp(log_w, half_log_w), log_w);
      // The tree's new end (lanes that stopped read their ends no more).
      right = select_state(forward, q, right);
      left = select_state(forward, left, q);
      for (int i = 0; i < D; ++i) {
        v_right[i] = select(forward, v[i], v_right[i]);
        v_left[i] = select(forward, v_left[i], v[i]);
        rho[i] = rho[i] + half_rho[i];
      }
      M const turned = !(detail::dot(rho, v_left) > S(T(0)) && detail::dot(rho, v_right) > S(T(0)));
      going = ok && !turned;
    }
    step_info<S> info{select(moved, S(T(1)), S(T(0))), diverged, accept_sum / max(leaves, S(T(1)))};
    info.gradients = leaves * S(T(Integrator::gradients_per_step));
    info.truncated = going;
    info.hamiltonian = h0;
    info.tree_depth = depth;
    return info;
  }
};

template <class Integrator = velocity_verlet>
struct nuts_fn {
  template <class E>
  auto operator()(E const& U, nuts_options o = {}) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::nuts needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    static_assert(is_palindromic<Integrator>, "ember::nuts needs a palindromic integrator (velocity_verlet, mclachlan, yoshida)");
    using T = typename E::value_type;
    if (!(o.mass > 0) || !std::isfinite(o.mass)) throw std::invalid_argument("ember::nuts: the mass must be positive and finite");
    nuts_kernel<E, Integrator> k{U, scalar_metric<T>{T(1.0 / std::sqrt(o.mass))},
                                 T(o.step_size.value_or(std::numeric_limits<double>::quiet_NaN())), o.max_tree_depth,
                                 T(o.divergence_threshold), o.own_pace.value_or(false),
                                 !o.own_pace.has_value()};
    // Without a step size the kernel waits for a warm-up to adapt one; the rest is checked now.
    if (o.step_size) {
      k.validate();
    } else {
      detail::require_tree_depth(o.max_tree_depth, k.depth_limit);
      detail::require_divergence_threshold(o.divergence_threshold, "ember::nuts");
    }
    return k;
  }
};
/// `nuts(U) | warmup(1000)` (Stan's windows: step size towards 0.8, a metric by `auto_mass()`);
/// `nuts(U, {.step_size = ε, .max_tree_depth = 12})`; `nuts_with<mclachlan>(U)` integrates with
/// another palindromic integrator.
inline constexpr nuts_fn<> nuts{};
template <class Integrator>
inline constexpr nuts_fn<Integrator> nuts_with{};

}  // namespace ember
