#pragma once
/// \file
/// The stages a kernel is piped into: `warmup(n, adapters...)` (the adapters are adapt/'s), `burn_in(n)`, `thin(k)`,
/// `record()` and `track(statistics...)` (pipeline/track.hpp). Stages are small values;
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

// --- warm-up ---

/// The parameters a warm-up adapts, as flags: `tunable::step_size | tunable::metric`.
enum class tunable : unsigned { nothing = 0, step_size = 1, metric = 2, trajectory_length = 4 };
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
/// step size and diagonal metric (adapt/warmup.hpp).
template <class... Adapters>
struct warmup_stage {
  /// Every parameter some adapter tunes.
  static constexpr tunable tuned = (tunable::nothing | ... | detail::tunes_of<Adapters>());
  static_assert(detail::bits(tuned) == (0 + ... + detail::bits(detail::tunes_of<Adapters>())),
                "ember::warmup: two adapters tune the same parameter (the step size, the metric or the trajectory "
                "length); keep one of them");
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
/// `warmup(n, step_size(), dense_mass(), ...)`; `warmup(n)` is adapt/warmup.hpp's.
template <class A, class... As>
warmup_stage<A, As...> warmup(std::int64_t n, A a, As... as) {
  return {detail::checked_count("ember::warmup", "n", n, 0), {a, as...}};
}

}  // namespace ember
