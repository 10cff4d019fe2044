#pragma once
/// \file
/// The warm-up adapter protocol. `warmup(n, a, b, ...)` takes adapter values; a run folds them
/// over the kernel's parameters, as BlackJAX's init / update / final: each adapter keeps a state
/// of its own, reads what a warm-up transition did, and says which parameters (step size, metric,
/// trajectory length, approach) the next transition uses. adapt/warmup.hpp is the fold; the
/// built-in adapters are one header each (step_size.hpp, per_chain_step_size.hpp, mass.hpp,
/// chees.hpp, mams_length.hpp, approach.hpp), written on this protocol alone, as a user's own is
/// (examples/11_custom_adapter.hpp).
///
/// An adapter `A` has
///
///     auto init(Kernel const& k, warmup_setup const& s) const -> State
///         its state before the first warm-up transition, from the pipeline's kernel (its
///         parameters as the user set them). State is plain data (trivially copyable): a
///         checkpoint saves its bytes.
///     void set(State const& s, kernel_params<Kernel>& p) const
///         writes the parameters its state gives now: what the next transition uses.
///     void update(State& s, warmup_step<Kernel, Reduce> const& step) const
///         folds in warm-up transition step.t: step.kernel is the kernel it ran, step.sum(f, out)
///         sums a per-chain functor over the chains (on the backend, where the arrays live).
///
/// and may have
///
///     static constexpr tunable tunes                    the parameters it writes (required to
///                                                        write any: checked when a run starts);
///                                                        two adapters may not write the same one
///     static constexpr bool harmonic_acceptance = true  the step size's target is for the harmonic
///                                                        mean of acceptance over chains (ChEES)
///     static constexpr ember::observe observes          what the transition leaves for it in
///                                                        step.view: its acceptance probability
///                                                        (observe::acceptance) or ChEES's
///                                                        trajectory ends (observe::trajectory)
///     template <class K, class W> static consteval bool fits()
///                                                        whether it can tune kernel K in warm-up
///                                                        W (W::tuned: what all of W's adapters
///                                                        tune); a static_assert says why not
///     template <class K> auto rebind(K const&) const    the kernel it tunes, at pipeline time
///                                                        (diagonal_mass(): K with a diagonal metric)
///     void settle(State&, warmup_step const&) const     after every adapter's update of the same
///                                                        transition: step.params and step.next
///                                                        are the parameters and kernel with all
///                                                        of them, step.metric_changed says
///                                                        whether the metric is a new one
///     void final(State const&, kernel_params&) const    the parameters kept after warm-up
///                                                        (default: set)
///     void notes(State const&, Kernel const&, adapter_notes&) const
///                                                        what a result reports: the target
///                                                        acceptance, warnings (the kernel: the
///                                                        one the run uses now)
///     char const* refuses(State const& loaded) const    why a checkpoint's state cannot go on
///                                                        with this adapter (nullptr: it can)
///
/// and, for an adapter that keeps something per chain (step_size(per_chain)), `using chain_state
/// = ...` (plain data), `chain_state init_chain(State const&) const`, `void update_chains(State&,
/// std::span<chain_state>, Arrays&, warmup_step const&) const` (the run's `chain_arrays`, in host
/// memory, after settle) and `void final(State const&, std::span<chain_state const>, kernel_params&) const`.

#include <ember/adapt/mass_windows.hpp>
#include <ember/core/config.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/stages.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// Pointers into a run's per-chain arrays (host or device memory), as the reductions read them.
/// Chain c's slot i is `slots[i·stride + c]`; the first D slots are the position.
template <class T>
struct chain_view {
  T const* slots = nullptr;
  std::uint8_t const* frozen = nullptr;
  T const* accept_prob = nullptr;                                  // per chain, last transition
  T const* start = nullptr, *end = nullptr, *velocity = nullptr;  // D × stride each (ChEES)
  std::int64_t stride = 0;
};

/// What an adapter's `init` knows besides the kernel.
struct warmup_setup {
  std::int64_t length = 0;  ///< warm-up transitions
  std::int64_t chains = 0;
  tunable tuned = tunable::nothing;  ///< what the whole warm-up tunes (every adapter's `tunes`)
  bool harmonic = false;  ///< an adapter asks the step size to aim at the harmonic mean over chains (ChEES)
};

namespace detail {
template <class K>
struct metric_of {
  using type = void;
};
template <class K>
  requires requires(K const& k) { k.metric; }
struct metric_of<K> {
  using type = std::remove_cvref_t<decltype(std::declval<K const&>().metric)>;
};
}  // namespace detail

/// The parameters adapters write, applied to a kernel in one fixed order (metric, step size,
/// trajectory length, approach), whatever the order of the adapters: a parameter left unset keeps
/// the kernel's. `trajectory_steps` bounds the trajectory length to [lo·ε, hi·ε] once ε is set
/// (ChEES's final length, adapt/chees.hpp). `approach`: whether the kernel moves by its approach
/// form (adjusted_mclmc's HMC trajectories, adapt/approach.hpp).
template <class Kernel>
struct kernel_params {
  using metric_type = typename detail::metric_of<Kernel>::type;
  std::optional<double> step_size;
  std::optional<std::conditional_t<std::is_void_v<metric_type>, char, metric_type>> metric;
  std::optional<double> trajectory_length;
  std::optional<std::pair<double, double>> trajectory_steps;
  std::optional<bool> approach;

  /// `k` with these parameters.
  Kernel applied_to(Kernel const& k) const {
    Kernel const a = [&]() -> Kernel {
      if constexpr (requires { { k.with_metric(*metric) } -> std::same_as<Kernel>; })
        if (metric) return k.with_metric(*metric);
      return k;
    }();
    Kernel const b = [&]() -> Kernel {
      if constexpr (requires { { a.with_step_size(1.0) } -> std::same_as<Kernel>; })
        if (step_size) return a.with_step_size(*step_size);
      return a;
    }();
    Kernel const c = [&]() -> Kernel {
      if constexpr (requires { { b.with_trajectory_length(1.0) } -> std::same_as<Kernel>; }) {
        if (!trajectory_length) return b;
        double T = *trajectory_length;
        if (trajectory_steps) {
          double const eps = step_size ? *step_size : double(k.step_size);
          T = T < trajectory_steps->first * eps ? trajectory_steps->first * eps
                                                : T > trajectory_steps->second * eps ? trajectory_steps->second * eps : T;
        }
        return b.with_trajectory_length(T);
      }
      return b;
    }();
    if constexpr (requires { { c.with_approach(true) } -> std::same_as<Kernel>; })
      if (approach) return c.with_approach(*approach);
    return c;
  }
};

/// What an adapter's `update` (and `settle`) reads about warm-up transition `t`.
template <class Kernel, class Reduce>
struct warmup_step {
  using value_type = typename Kernel::value_type;
  std::int64_t t = 0;       ///< the warm-up transition just made, 0-based
  std::int64_t length = 0;  ///< warm-up transitions in all
  std::int64_t chains = 0;
  bool last = false;                 ///< t is the last warm-up transition
  mass_windows const& windows;       ///< Stan's metric windows over the warm-up (adapt/mass_windows.hpp)
  Kernel const& kernel;              ///< the kernel transition t ran
  chain_view<value_type> view;       ///< the chains' arrays as transition t left them
  Reduce const& reduce;
  /// settle only: the parameters after every adapter's update of transition t (in double), the
  /// kernel with them, and whether its metric differs from `kernel`'s.
  kernel_params<Kernel> const* params = nullptr;
  Kernel const* next = nullptr;
  bool metric_changed = false;

  /// Σ over chains of f(c, out) into out[0 … F::size − 1] (zeroed first), in a fixed order.
  template <class F>
  void sum(F const& f, double* out) const {
    static_assert(std::is_trivially_copyable_v<F>,
                  "ember::warmup_step::sum: the per-chain functor must be trivially copyable (a GPU gets a copy of it)");
    reduce(f, out);
  }
};

/// What a result reports of a warm-up: filled by adapters' `notes`.
struct adapter_notes {
  bool finished = false;         ///< the warm-up is over (the kernel is the tuned one)
  double target_acceptance = 0;  ///< 0: the kernel's own
  bool harmonic = false;         ///< the target is for the harmonic mean over chains (ChEES)
  std::vector<std::string> warnings;
};

namespace detail {

template <class A>
consteval observe observes_of() {
  if constexpr (requires { A::observes; })
    return A::observes;
  else
    return observe::nothing;
}
template <class A>
consteval bool harmonic_of() {
  if constexpr (requires { A::harmonic_acceptance; })
    return A::harmonic_acceptance;
  else
    return false;
}
template <class A>
concept per_chain_adapter = requires { typename A::chain_state; };

}  // namespace detail
}  // namespace ember
