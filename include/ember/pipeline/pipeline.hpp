#pragma once
/// \file
/// `pipeline<Kernel, Warmup, Stages...>`: a transition kernel followed by stages, built with `|`:
/// `mala(U) | warmup(1000) | burn_in(500) | thin(10) | record() | track(moments)`.
/// The pipeline is a type: which stages it has is known at compile time, and their run-time
/// numbers (warm-up, burn-in, thinning) fold into one `schedule`. A run (run/run.hpp) advances it in
/// fused chunks (pipeline/fused_loop.hpp). A warm-up's adapters may rebind the kernel here, so the
/// pipeline's kernel type is the tuned one: diagonal_mass() gives it a diagonal metric,
/// step_size(per_chain) wraps it in `per_chain_step_size` (each chain carries its own ε).

#include <ember/core/concepts.hpp>
#include <ember/core/config.hpp>
#include <ember/detail/kernel_diagnosis.hpp>
#include <ember/pipeline/stages.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
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

  /// `record()` and `record_stats()`: the stages with storage of their own, one recording in host
  /// memory of `recorded_columns` values per kept draw and chain: the draw's D coordinates (with
  /// `record()`), then its `stat_count` statistics (with `record_stats()`, from column `stat_offset`).
  static constexpr bool records = (std::is_same_v<Stages, record_stage> || ...);
  static constexpr bool records_stats = (std::is_same_v<Stages, record_stats_stage> || ...);
  static constexpr bool reports_hamiltonian = requires { requires Kernel::reports_hamiltonian; };
  static constexpr bool reports_tree_depth = requires { requires Kernel::reports_tree_depth; };
  static constexpr int stat_count = records_stats ? 5 + int(reports_hamiltonian) + int(reports_tree_depth) : 0;
  static constexpr int stat_offset = records ? dim : 0;
  static constexpr int recorded_columns = stat_offset + stat_count;
  /// Whether the run keeps anything per draw.
  static constexpr bool recording = recorded_columns > 0;
  /// The statistic of recorded stat column j (0 ≤ j < stat_count).
  EMBER_HD static constexpr draw_stat stat_at(int j) {
    return j < 5 ? draw_stat(j) : (j == 5 && reports_hamiltonian) ? draw_stat::energy : draw_stat::tree_depth;
  }
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

// Whether warm-up W can tune Kernel: every adapter's `fits` (whose static_assert says why not;
// `append` then leaves the warm-up out, so that the sentence is the only error).
template <class Kernel, class W>
constexpr bool warmup_fits() {
  return []<class... A>(warmup_stage<A...> const*) {
    return (adapter_fits<A, Kernel, W>() && ...);
  }(static_cast<W const*>(nullptr));
}

// The kernel a warm-up tunes: each adapter's rebind in turn (a diagonal or dense metric, a step
// size per chain).
template <std::size_t J = 0, class Kernel, class... A>
auto rebind_for_warmup(Kernel const& k, warmup_stage<A...> const& w) {
  if constexpr (J == sizeof...(A))
    return k;
  else
    return rebind_for_warmup<J + 1>(adapter_rebind(std::get<J>(w.adapters), k), w);
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
template <>
struct is_stage<record_stats_stage> : std::true_type {};
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
