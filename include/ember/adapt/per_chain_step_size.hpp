#pragma once
/// \file
/// `step_size(per_chain)`: each chain its own step size, by its own dual averaging on its own
/// acceptance probability (step_size()'s constants and target defaults), kept per chain after
/// warm-up. A distinct adapter rather than a flag, because it changes the kernel a run executes:
/// `rebind` wraps it in `per_chain_step_size` (kernel/per_chain_step_size.hpp), whose state
/// carries each chain's ε and last α. The kernel's own step size stays ε₀ during warm-up and is
/// the median of the chains' ε̄ after it (what `adapted().step_size` reports). Not with chees():
/// a SIMD batch or a warp integrates its chains in step, so ⌈uT/ε⌉ cannot differ between chains.
/// An adapter (adapt/adapter.hpp) with per-chain state: the dual averagings are updated on the
/// host, between warm-up transitions.

#include <ember/adapt/adapter.hpp>
#include <ember/adapt/dual_averaging.hpp>
#include <ember/adapt/step_size.hpp>
#include <ember/core/chain_state.hpp>
#include <ember/core/rng.hpp>
#include <ember/kernel/per_chain_step_size.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ember {

namespace detail {
// A kernel whose transition takes a step size per lane: `step(s, rng, ε)` (mala, hmc).
template <class K>
concept takes_lane_step_size =
    requires(K const& k, chain_state<typename K::value_type, K::dim>& s, chain_rng<typename K::value_type> const& rng) {
      k.step(s, rng, typename K::value_type(1));
    };
}  // namespace detail

struct per_chain_step_size_adapter {
  double target = 0;

  static constexpr tunable tunes = tunable::step_size;

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool lanes = detail::takes_lane_step_size<K>;
    constexpr bool alone = !any(Warmup::tuned, tunable::trajectory_length);
    static_assert(lanes, "ember::warmup: step_size(per_chain) needs a kernel that takes a step size per chain (mala, hmc)");
    static_assert(alone,
                  "ember::warmup: step_size(per_chain) cannot be combined with chees(): a SIMD batch or a warp "
                  "integrates its chains in step, so the number of integrator steps uT/eps cannot differ between chains");
    return lanes && alone;
  }
  template <class K>
  per_chain_step_size<K> rebind(K const& k) const {
    return {k};
  }

  struct state {
    dual_averaging da;  ///< every chain's starting point
    double eps0 = 1;    ///< the kernel's own step size during warm-up
  };
  using chain_state = dual_averaging;

  template <class K>
  state init(K const& k, warmup_setup const&) const {
    state s;
    double t = detail::checked_target(target);
    s.da.target = t == 0 ? K::target_acceptance : t;
    s.eps0 = detail::first_step_size(k);
    s.da.restart(s.eps0);
    return s;
  }
  chain_state init_chain(state const& s) const { return s.da; }

  template <class K>
  void set(state const& s, kernel_params<K>& p) const {
    p.step_size = s.eps0;
  }
  template <class K, class R>
  void update(state&, warmup_step<K, R> const&) const {}

  /// After warm-up transition t: each live chain's dual averaging takes its own acceptance
  /// probability (its state's α slot) and writes its next ε into its ε slot, or its ε̄ after
  /// the last warm-up transition. Chain by chain, so the result depends on nothing but the chain.
  template <class Arrays, class K, class R>
  void update_chains(state&, std::span<chain_state> chains, Arrays& a, warmup_step<K, R> const& step) const {
    using T = typename K::value_type;
    using S = decltype(step.kernel.init(vec<T, K::dim>{}));
    T* eps = a.slots.data() + std::int64_t(S::step_size_slot) * a.stride;
    T const* alpha = a.slots.data() + std::int64_t(S::accept_prob_slot) * a.stride;
    for (std::size_t c = 0; c < chains.size(); ++c) {
      if (a.frozen[c]) continue;
      auto& d = chains[c];
      d.update(double(alpha[c]));
      if (step.metric_changed) d.restart(d.current());
      eps[c] = T(step.last ? d.final() : d.current());
    }
  }

  /// The kernel's own step size after warm-up: the median of the chains' ε̄ (each chain keeps its own).
  template <class K>
  void final(state const& s, std::span<chain_state const> chains, kernel_params<K>& p) const {
    if (chains.empty()) return set(s, p);
    std::vector<double> e(chains.size());
    for (std::size_t c = 0; c < e.size(); ++c) e[c] = chains[c].final();
    std::nth_element(e.begin(), e.begin() + std::ptrdiff_t(e.size() / 2), e.end());
    p.step_size = e[e.size() / 2];
  }

  template <class K>
  void notes(state const& s, K const&, adapter_notes& n) const { n.target_acceptance = s.da.target; }
};

/// The tag of `step_size(per_chain)`.
struct per_chain_t {};
inline constexpr per_chain_t per_chain{};

/// `step_size(per_chain)`, `step_size(per_chain, {.target = 0.7})`.
inline per_chain_step_size_adapter step_size(per_chain_t, step_size_adapter o = {}) { return {detail::checked_target(o.target)}; }

}  // namespace ember
