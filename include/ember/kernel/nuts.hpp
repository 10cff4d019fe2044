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
/// **Chains in lock-step.** All chains of a SIMD batch build their trees leaf by leaf together:
/// the doubling structure is the same for every chain, only the directions differ, so one leaf
/// is one velocity-Verlet step of the whole batch, and a chain that has stopped idles (masked)
/// until the batch's longest tree ends. On a GPU each thread is one chain and stops on its own.
/// `bench/nuts_lockstep.cpp` measures the lanes' useful fraction.
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
#include <ember/core/metric.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/palindromic.hpp>
#include <ember/kernel/detail/validate.hpp>

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
};

namespace detail {
/// NUTS's checkpoints for leaf n (from 0) of a half being built: the sub-trees that end at leaf n
/// start at the leaves whose velocity and running Σv are stored at indices [lo, hi] (NumPyro's
/// `_leaf_idx_to_ckpt_idxs`): hi = the set bits of n above bit 0, lo = hi − (trailing ones of n) + 1.
EMBER_HD EMBER_INLINE void nuts_checkpoints(unsigned n, int& lo, int& hi) {
  int bits = 0;
  for (unsigned m = n >> 1; m != 0; m >>= 1) bits += int(m & 1u);
  int ones = 0;
  for (unsigned m = n; (m & 1u) != 0; m >>= 1) ++ones;
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
  return select(m == S(-std::numeric_limits<T>::infinity()), m, m + log(S(T(1)) + exp(d)));
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
  /// The deepest tree a kernel supports: checkpoints are arrays of this size in registers or on
  /// the stack (2·(depth − 1) velocities a chain).
  static constexpr int depth_limit = 14;

  E energy;
  Metric metric;
  value_type step_size;
  int max_tree_depth = 10;
  value_type divergence_threshold = 1000;

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
    return {energy, m, step_size, max_tree_depth, divergence_threshold};
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::nuts");
    detail::require_tree_depth(max_tree_depth, depth_limit);
    metric.validate("ember::nuts");
    detail::require_divergence_threshold(double(divergence_threshold), "ember::nuts");
  }

 private:
  template <class S>
  EMBER_HD step_info<S> transition(chain_state<S, dim>& s, chain_rng<S> const& rng, S const& eps) const {
    using T = value_type;
    using M = mask_t<S>;
    constexpr int D = dim;
    S const inf = S(std::numeric_limits<T>::infinity());
    auto const v0 = rng.template normal<D>(purpose::proposal);
    S const h0 = s.energy + S(T(0.5)) * detail::dot(v0, v0);

    // The tree: its two ends (state and velocity), Σv over its points, log Σ e^{−(H − H₀)} (the
    // start counts e⁰), and the point drawn so far, kept in `s`.
    chain_state<S, D> left = s, right = s;
    vec<S, D> v_left = v0, v_right = v0, rho = v0;
    S log_w = S(T(0));
    S accept_sum = S(T(0)), leaves = S(T(0));
    M going = M(true), diverged = M(false), moved = M(false);
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
                                 T(o.divergence_threshold)};
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
/// `nuts(U) | warmup(1000)` (Stan's windows: step size towards 0.8, a diagonal metric);
/// `nuts(U, {.step_size = ε, .max_tree_depth = 12})`; `nuts_with<mclachlan>(U)` integrates with
/// another palindromic integrator.
inline constexpr nuts_fn<> nuts{};
template <class Integrator>
inline constexpr nuts_fn<Integrator> nuts_with{};

}  // namespace ember
