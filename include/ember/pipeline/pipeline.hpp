#pragma once
/// \file
/// `pipeline<Kernel, Warmup, Stages...>`: a transition kernel followed by stages, built with `|`:
/// `mala(U) | warmup(1000) | burn_in(500) | thin(10) | record() | track(moments)`.
/// The pipeline is a type: which stages it has is known at compile time, and their run-time
/// numbers (warm-up, burn-in, thinning) fold into one `schedule`. A run (run/run.hpp) advances it in
/// fused chunks (pipeline/fused_loop.hpp). A warm-up that adapts a metric rebinds the kernel to
/// one with a diagonal or dense metric here, so the pipeline's kernel type is the tuned one;
/// `step_size(per_chain)` wraps it in `per_chain_step_size` (each chain carries its own ε).

#include <ember/core/concepts.hpp>
#include <ember/detail/kernel_diagnosis.hpp>
#include <ember/core/metric.hpp>
#include <ember/kernel/per_chain_step_size.hpp>
#include <ember/pipeline/stages.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ember {

/// The run-time shape of a run: `warmup` transitions that tune the kernel, `burn_in`
/// discarded transitions, then transitions of which every `thin`-th is kept. Transition t (from
/// 0) is kept when t ≥ warmup + burn_in and (t − warmup − burn_in + 1) is a multiple of thin.
struct schedule {
  std::int64_t warmup = 0;
  std::int64_t burn_in = 0;
  std::int64_t thin = 1;
  /// The first transition of the kept phase.
  constexpr std::int64_t keep_from() const { return warmup + burn_in; }
  /// Kept draws among the first `t` transitions.
  constexpr std::int64_t kept_before(std::int64_t t) const { return t > keep_from() ? (t - keep_from()) / thin : 0; }
};

/// No warm-up stage.
struct no_warmup {
  std::int64_t n = 0;
  template <class A>
  static constexpr bool has = false;
};

namespace detail {
template <class T>
struct is_track : std::false_type {};
template <class... S>
struct is_track<track_stage<S...>> : std::true_type {};
template <class T>
struct is_warmup : std::false_type {};
template <class... A>
struct is_warmup<warmup_stage<A...>> : std::true_type {};
// The statistics of a pipeline's track stage (none without one).
template <class... Stages>
struct tracked_of {
  using type = statistics<>;
};
template <class S0, class... Rest>
struct tracked_of<S0, Rest...> : tracked_of<Rest...> {};
template <class... S, class... Rest>
struct tracked_of<track_stage<S...>, Rest...> {
  using type = statistics<S...>;
};
template <class Stat, class Pack>
struct statistics_have : std::false_type {};
template <class Stat, class... S>
struct statistics_have<Stat, statistics<S...>> : std::bool_constant<(std::is_same_v<Stat, S> || ...)> {};
}  // namespace detail

template <class Kernel, class Warmup, class... Stages>
struct pipeline {
  using kernel_type = Kernel;
  using warmup_type = Warmup;
  using energy_type = typename Kernel::energy_type;
  using value_type = typename energy_type::value_type;
  static constexpr int dim = energy_type::dim;

  /// The statistics of its `track(...)` stage, in order (pipeline/track.hpp).
  using tracked_type = typename detail::tracked_of<Stages...>::type;

  /// `record()`: the one stage with storage of its own (the draws, in host memory).
  static constexpr bool records = (std::is_same_v<Stages, record_stage> || ...);
  /// Doubles a backend sums over chains at each kept step: the live count, then every tracked
  /// statistic's sums in track order (0: nothing is tracked).
  static constexpr int track_stride = tracked_type::count > 0 ? 1 + tracked_type::template sums<dim>() : 0;
  static_assert(tracked_type::template sums_positive<dim>(), "ember::track: a statistic's sums(dim) must be at least 1");
  /// Whether statistic `Stat` (e.g. `acceptance_t`) is tracked.
  template <class Stat>
  static constexpr bool tracks = detail::statistics_have<Stat, tracked_type>::value;

  Kernel kernel;
  Warmup warmup;
  std::int64_t burn_in = 0;
  std::int64_t thin = 1;
  tracked_type tracked{};

  constexpr ember::schedule make_schedule() const { return {warmup.n, burn_in, thin}; }
};

namespace detail {

template <class K>
concept has_metric = requires(K const& k) { k.with_metric(k.metric); };

// A kernel whose transition takes a step size per lane: `step(s, rng, ε)` (mala, hmc).
template <class K>
concept takes_lane_step_size =
    requires(K const& k, chain_state<typename K::value_type, K::dim>& s, chain_rng<typename K::value_type> const& rng) {
      k.step(s, rng, typename K::value_type(1));
    };

// Whether warm-up W can tune Kernel; where not, one static_assert says why (and `append` then
// leaves the warm-up out, so that the sentence is the only error).
template <class Kernel, class W>
constexpr bool warmup_fits() {
  constexpr bool needs_metric = W::template has<diagonal_mass_adapter> || W::template has<dense_mass_adapter>;
  constexpr bool per_chain = W::template has<per_chain_step_size_adapter>;
  constexpr bool needs_acceptance = W::template has<step_size_adapter> || W::template has<chees_adapter> || per_chain;
  constexpr bool metric = !needs_metric || has_metric<Kernel>;
  constexpr bool acceptance = !needs_acceptance || requires { Kernel::target_acceptance; };
  constexpr bool trajectory = !W::template has<chees_adapter> || requires(Kernel const& k) { k.with_trajectory_length(1.0); };
  constexpr bool lanes = !per_chain || takes_lane_step_size<Kernel>;
  static_assert(metric, "ember::warmup: diagonal_mass() and dense_mass() need a kernel with a metric (mala, hmc, the underdamped Langevin kernels)");
  static_assert(acceptance, "ember::warmup: step_size() and chees() need a kernel with a target acceptance (mala, hmc, the underdamped Langevin kernels)");
  static_assert(trajectory, "ember::warmup: chees() adapts HMC's trajectory length and needs an hmc kernel");
  static_assert(lanes, "ember::warmup: step_size(per_chain) needs a kernel that takes a step size per chain (mala, hmc)");
  return metric && acceptance && trajectory && lanes;
}

// The kernel a warm-up tunes: with a diagonal or dense metric if the warm-up adapts one.
template <class Kernel, class W>
auto rebind_for_warmup(Kernel const& k, W const&) {
  using T = typename Kernel::value_type;
  constexpr int D = Kernel::dim;
  constexpr bool per_chain = W::template has<per_chain_step_size_adapter>;
  auto rebound = [&] {
    if constexpr (W::template has<diagonal_mass_adapter>) {
      diagonal_metric<T, D> m;
      for (int i = 0; i < D; ++i) m.scale[i] = T(1);
      return k.with_metric(m);
    } else if constexpr (W::template has<dense_mass_adapter>) {
      return k.with_metric(dense_metric<T, D>::identity());
    } else {
      return k;
    }
  }();
  if constexpr (per_chain)
    return per_chain_step_size<decltype(rebound)>{rebound};
  else
    return rebound;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, char const* what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw std::invalid_argument(std::string("ember: ") + what + " " + std::to_string(a) + " + " + std::to_string(b) +
                                " overflows a 64-bit count");
  return r;
}

template <class P, class Stage>
constexpr auto append(P const& p, Stage const& s) {
  return []<class K, class W, class... Ss>(pipeline<K, W, Ss...> const& q, Stage const& st) {
    if constexpr (is_warmup<Stage>::value) {
      static_assert(std::is_same_v<W, no_warmup>, "ember: a pipeline has at most one warmup stage");
      if constexpr (warmup_fits<K, Stage>()) {
        auto k = rebind_for_warmup(q.kernel, st);
        return pipeline<decltype(k), Stage, Ss...>{k, st, q.burn_in, q.thin, q.tracked};
      } else {
        return q;  // does not compile anyway (warmup_fits's static_assert): nothing more to report
      }
    } else if constexpr (is_track<Stage>::value && (is_track<Ss>::value || ...)) {
      static_assert(!(is_track<Ss>::value || ...),  // (in terms of Ss: a condition of Stage alone fails under nvcc's front end)
                    "ember: a pipeline has at most one track stage: name every statistic in it, track(moments, acceptance)");
      return q;
    } else {
      auto const tracked = [&] {
        if constexpr (is_track<Stage>::value)
          return st.stats;
        else
          return q.tracked;
      }();
      pipeline<K, W, Ss..., Stage> r{q.kernel, q.warmup, q.burn_in, q.thin, tracked};
      if constexpr (std::is_same_v<Stage, burn_in_stage>) r.burn_in = checked_add(r.burn_in, st.n, "burn-in");
      if constexpr (std::is_same_v<Stage, thin_stage>) {
        if (__builtin_mul_overflow(r.thin, st.k, &r.thin))
          throw std::invalid_argument("ember: thinning " + std::to_string(q.thin) + " x " + std::to_string(st.k) +
                                      " overflows a 64-bit count");
      }
      // Stages combined stay within a run's transitions, so warm-up + burn-in cannot wrap.
      if (r.burn_in > max_transitions || r.thin > max_transitions)
        throw std::invalid_argument("ember: burn-in " + std::to_string(r.burn_in) + " or thinning " + std::to_string(r.thin) +
                                    " is more than a run's 4,294,967,294 transitions");
      return r;
    }
  }(p, s);
}
template <class T>
struct is_pipeline : std::false_type {};
template <class K, class W, class... S>
struct is_pipeline<pipeline<K, W, S...>> : std::true_type {};
template <class T>
struct is_stage : std::false_type {};
template <>
struct is_stage<burn_in_stage> : std::true_type {};
template <>
struct is_stage<thin_stage> : std::true_type {};
template <>
struct is_stage<record_stage> : std::true_type {};
template <class... S>
struct is_stage<track_stage<S...>> : std::true_type {};
template <class... A>
struct is_stage<warmup_stage<A...>> : std::true_type {};
// True for a pipeline or a transition kernel; for anything else one static_assert says why.
template <class P>
constexpr bool pipeline_or_kernel() {
  if constexpr (is_pipeline<P>::value)
    return true;
  else
    return kernel_diagnosis<P>();
}
}  // namespace detail

/// A kernel or a pipeline, as `sample` and `start` accept it.
template <class P>
constexpr auto as_pipeline(P const& p) {
  if constexpr (detail::is_pipeline<P>::value)
    return p;
  else
    return pipeline<P, no_warmup>{p, {}};
}

/// `kernel | stage` and `pipeline | stage`. Anything else on the left is told in one sentence
/// why it is not a transition kernel (detail/kernel_diagnosis.hpp).
template <class P, class Stage>
  requires(detail::is_stage<Stage>::value)
constexpr auto operator|(P const& p, Stage const& s) {
  if constexpr (detail::pipeline_or_kernel<P>()) return detail::append(as_pipeline(p), s);
}

}  // namespace ember
