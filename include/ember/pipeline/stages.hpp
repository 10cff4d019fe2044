#pragma once
/// \file
/// The stages a kernel is piped into: `warmup(n, adapters...)` (the adapters are adapt/'s), `burn_in(n)`, `thin(k)`,
/// `record()`, `record_stats()` and `track(statistics...)` (pipeline/track.hpp). Stages are small values;
/// `operator|` collects them into a `pipeline` type (pipeline/pipeline.hpp), which a run
/// (run/run.hpp) advances in fused chunks.

#include <ember/pipeline/track.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace ember {

/// Discard the first n transitions after warm-up (no draws kept, nothing tracked).
struct burn_in_stage {
  std::int64_t n;
};
/// Keep one transition in k: the k-th, 2k-th, … after burn-in.
struct thin_stage {
  std::int64_t k;
};
/// Keep the draws of every chain at every kept step in host memory (`result::samples()`).
struct record_stage {};
/// Keep, beside (or without) the draws, what each kept transition reported
/// (`result::sample_stats()`, ArviZ's sample_stats group).
struct record_stats_stage {};

/// The per-draw statistics `record_stats()` keeps, in their column order, named as ArviZ names
/// them (`draw_stat_name`). The first five come from every kernel; `energy` from a kernel that
/// declares `reports_hamiltonian`, `tree_depth` from one that declares `reports_tree_depth`.
enum class draw_stat : int {
  lp,               ///< −U(x) at the kept draw (the log density up to its constant)
  acceptance_rate,  ///< the transition's acceptance statistic (step_info::accept_prob; NUTS: its mean over the tree)
  diverging,        ///< 1 where the transition diverged, else 0
  n_steps,          ///< gradient evaluations the transition made
  truncated,        ///< 1 where a cap cut its trajectory short (NUTS: reached the maximum tree depth)
  energy,           ///< the Hamiltonian U + ½|v|² after the momentum was drawn (for E-BFMI)
  tree_depth,       ///< doublings of the NUTS tree
};
/// `s`'s name in ArviZ's sample_stats (`truncated` is `reached_max_treedepth` for a NUTS kernel,
/// whose cap is its tree depth).
inline char const* draw_stat_name(draw_stat s, bool tree = false) {
  switch (s) {
    case draw_stat::lp: return "lp";
    case draw_stat::acceptance_rate: return "acceptance_rate";
    case draw_stat::diverging: return "diverging";
    case draw_stat::n_steps: return "n_steps";
    case draw_stat::truncated: return tree ? "reached_max_treedepth" : "truncated";
    case draw_stat::energy: return "energy";
    case draw_stat::tree_depth: return "tree_depth";
  }
  return "?";
}
/// How `s` is stored where a file or an array has types (ArviZ's): a flag as bool, a count as a
/// 64-bit integer, the rest as the run's floating type.
enum class draw_stat_kind { flag, count, real };
constexpr draw_stat_kind kind_of(draw_stat s) {
  return s == draw_stat::diverging || s == draw_stat::truncated    ? draw_stat_kind::flag
         : s == draw_stat::n_steps || s == draw_stat::tree_depth ? draw_stat_kind::count
                                                                  : draw_stat_kind::real;
}

// --- warm-up ---

/// The parameters a warm-up adapts, as flags: `tunable::step_size | tunable::metric`. `approach`:
/// whether a kernel that has an approach form takes it (adapt/approach.hpp).
enum class tunable : unsigned { nothing = 0, step_size = 1, metric = 2, trajectory_length = 4, approach = 8 };
constexpr tunable operator|(tunable a, tunable b) { return tunable(unsigned(a) | unsigned(b)); }
constexpr bool any(tunable a, tunable b) { return (unsigned(a) & unsigned(b)) != 0; }

namespace detail {
template <class A>
consteval tunable tunes_of() {
  if constexpr (requires { A::tunes; })
    return A::tunes;
  else
    return tunable::nothing;
}
consteval int bits(tunable t) { return __builtin_popcount(unsigned(t)); }
// Whether adapter A can tune kernel K in warm-up W (its own static_assert says why not).
template <class A, class K, class W>
consteval bool adapter_fits() {
  if constexpr (requires { A::template fits<K, W>(); })
    return A::template fits<K, W>();
  else
    return true;
}
// The kernel adapter A tunes (K itself unless it rebinds it, e.g. to a diagonal metric).
template <class A, class K>
auto adapter_rebind(A const& a, K const& k) {
  if constexpr (requires { a.rebind(k); })
    return a.rebind(k);
  else
    return k;
}
}  // namespace detail

/// `warmup(n, adapters...)`: n transitions before burn-in during which the adapters tune the
/// kernel's parameters (adapt/adapter.hpp says what an adapter is; adapt/warmup.hpp folds them);
/// afterwards it is frozen, so kept draws come from one fixed Markov kernel. `warmup(n)` alone:
/// step size and metric, diagonal or dense (`auto_mass()`, adapt/warmup.hpp).
template <class... Adapters>
struct warmup_stage {
  /// Every parameter some adapter tunes.
  static constexpr tunable tuned = (tunable::nothing | ... | detail::tunes_of<Adapters>());
  static_assert(detail::bits(tuned) == (0 + ... + detail::bits(detail::tunes_of<Adapters>())),
                "ember::warmup: two adapters tune the same parameter (the step size, the metric, the trajectory "
                "length or the approach); keep one of them");
  std::int64_t n;
  std::tuple<Adapters...> adapters;
};

namespace detail {
/// A run makes fewer than 2³² − 1 transitions (a step index is 32 bits): no stage can count more.
inline constexpr std::int64_t max_transitions = (std::int64_t(1) << 32) - 2;
inline std::int64_t checked_count(char const* who, char const* what, std::int64_t n, std::int64_t least) {
  if (n < least || n > max_transitions)
    throw std::invalid_argument(std::string(who) + ": " + what + " must be from " + std::to_string(least) +
                                " to 4,294,967,294 (a run makes fewer than 2^32 - 1 transitions), got " + std::to_string(n));
  return n;
}
}  // namespace detail

/// `burn_in(n)`, 0 ≤ n < 2³² − 1.
inline burn_in_stage burn_in(std::int64_t n) { return {detail::checked_count("ember::burn_in", "n", n, 0)}; }
/// `thin(k)`, 1 ≤ k < 2³² − 1.
inline thin_stage thin(std::int64_t k) { return {detail::checked_count("ember::thin", "k", k, 1)}; }
/// `record()`.
inline constexpr record_stage record() { return {}; }
/// `record_stats()`.
inline constexpr record_stats_stage record_stats() { return {}; }
/// `warmup(n, step_size(), dense_mass(), ...)`; `warmup(n)` is adapt/warmup.hpp's.
template <class A, class... As>
warmup_stage<A, As...> warmup(std::int64_t n, A a, As... as) {
  return {detail::checked_count("ember::warmup", "n", n, 0), {a, as...}};
}

}  // namespace ember
