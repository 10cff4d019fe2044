#pragma once
/// \file
/// What the fused loops (fused_loop.hpp, fused_lanes.hpp) share: a chunk of a run's transitions,
/// what a chunk counts per lane, the finiteness test that freezes a chain, what a warm-up
/// chunk observes, and the per-draw statistics a sink records.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/pipeline/stages.hpp>  // draw_stat

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace ember {

/// A stretch of transitions [begin, end) of a run, with what decides which of them are kept.
struct chunk {
  std::int64_t begin = 0, end = 0;
  std::int64_t keep_from = 0;   ///< first kept-phase transition (warm-up + burn-in)
  std::int64_t count_from = 0;  ///< first transition whose divergences are counted (end of warm-up)
  std::int64_t thin = 1;
  std::uint64_t key = 0;        ///< the Philox key of the run's stream
};

/// The longest chunk: per-chunk counts live in the lane type, and a float counts exactly to 2²⁴.
inline constexpr std::int64_t max_chunk = std::int64_t(1) << 22;

/// What a chunk counted per lane besides the chains' state, added by the sink to the run's
/// per-chain totals. In the lane type, so exact while below 2²⁴ a lane: a chunk is at most
/// 2²² transitions, and at most 2²⁴ / (the kernel's most gradients a transition) (run/run.hpp).
template <class S>
struct chunk_counts {
  S divergent = S(0);  ///< divergent transitions after warm-up
  S accepted = S(0);   ///< accepted transitions in the kept phase
  S truncated = S(0);  ///< transitions after warm-up whose trajectory a cap cut short
  S gradients = S(0);  ///< gradient evaluations the kernel reported, in every phase
};

/// The longest chunk of `kernel`: at most `max_chunk`, and few enough transitions that its
/// gradient count stays below 2²⁴ a lane. A kernel whose transitions may take many gradients
/// says how many at most (`max_gradients()`: HMC, NUTS); any other is taken to take at most 64.
template <class Kernel>
std::int64_t max_chunk_for(Kernel const& kernel) {
  std::int64_t g = 64;
  if constexpr (requires { kernel.max_gradients(); }) g = std::max<std::int64_t>(1, std::int64_t(kernel.max_gradients()));
  return std::min<std::int64_t>(max_chunk, std::max<std::int64_t>(1, (std::int64_t(1) << 24) / g));
}

/// Whether `Kernel`'s energy declares `static constexpr bool finite_value_means_finite_x = true`:
/// its value is not finite wherever a coordinate of x is not (every gaussian: each coordinate
/// enters U through a non-zero coefficient, and ±∞ or NaN there makes U ∞ or NaN).
template <class Kernel>
inline constexpr bool finite_value_means_finite_x =
    requires { requires Kernel::energy_type::finite_value_means_finite_x; };

/// Mask of lanes whose energy and position are all finite. Adding 0·xᵢ turns any non-finite
/// coordinate into a NaN energy (0·∞ is NaN), so one test covers all D + 1 values; for an energy
/// whose value already says so (above), the energy alone (D fewer multiply-adds per transition:
/// 3 % of P1's time, docs/performance.md).
template <class Kernel, class State>
EMBER_HD EMBER_INLINE auto state_is_finite(State const& s) {
  if constexpr (finite_value_means_finite_x<Kernel>) return is_finite(s.energy);
  auto e = s.energy;
  EMBER_UNROLL
  for (int i = 0; i < int(sizeof(s.x) / sizeof(s.x[0])); ++i) e = e + decltype(e)(0) * s.x[i];
  return is_finite(e);
}

/// What a transition of a chain frozen before it (`frozen`) reports, in place: no divergence, no
/// truncation, no gradients, acceptance 0, no Hamiltonian (NaN) and depth 0; the chain made no
/// transition. Both fused loops apply it where a lane was frozen (what a warm-up observes of such a
/// lane changes, but every adapter skips frozen chains), so a kept row of such a chain is lp of the
/// state it is frozen at and these.
template <class S>
EMBER_HD EMBER_INLINE void mask_frozen_report(step_info<S>& info, mask_t<S> const& frozen) {
  using T = element_t<S>;
  info.divergent = info.divergent && !frozen;
  info.truncated = info.truncated && !frozen;
  info.gradients = select(frozen, S(T(0)), info.gradients);
  info.accept_prob = select(frozen, S(T(0)), info.accept_prob);
  info.hamiltonian = select(frozen, S(T(NAN)), info.hamiltonian);  // NAN: a constant device code may use
  info.tree_depth = select(frozen, S(T(0)), info.tree_depth);
}

/// Statistic `St` of a kept transition: from the kept state `s` and what its transition reported.
template <draw_stat St, class S, class State>
EMBER_HD EMBER_INLINE S draw_stat_value(State const& s, step_info<S> const& info) {
  using T = element_t<S>;
  // lp = 0 − U, a subtraction, not a negation: xsimd negates an AVX-512 batch as 0 − x, so a
  // batch and one chain on the host (a lane at its own pace, pipeline/fused_lanes.hpp) give the
  // same bits, a NaN's sign and lp = +0 at U = 0 included.
  if constexpr (St == draw_stat::lp) return S(T(0)) - s.energy;
  else if constexpr (St == draw_stat::acceptance_rate) return info.accept_prob;
  else if constexpr (St == draw_stat::diverging) return select(info.divergent, S(T(1)), S(T(0)));
  else if constexpr (St == draw_stat::n_steps) return info.gradients;
  else if constexpr (St == draw_stat::truncated) return select(info.truncated, S(T(1)), S(T(0)));
  else if constexpr (St == draw_stat::energy) return info.hamiltonian;
  else return info.tree_depth;
}
template <class P, class S, class State, int... J>
EMBER_HD EMBER_INLINE void draw_stat_values(State const& s, step_info<S> const& info, S* out,
                                            std::integer_sequence<int, J...>) {
  ((out[J] = draw_stat_value<P::stat_at(J)>(s, info)), ...);
}
/// The `record_stats()` columns of a kept transition, in the pipeline's column order (`P::stat_at`,
/// the one place that order is written).
template <class P, class S, class State>
EMBER_HD EMBER_INLINE void draw_stat_values(State const& s, step_info<S> const& info, S* out) {
  draw_stat_values<P>(s, info, out, std::make_integer_sequence<int, P::stat_count>{});
}

namespace detail {
/// The same object, through a reference the compiler cannot see through: loads from it are not
/// loop-invariant. Taken once per transition on the host, so that GCC neither hoists the
/// kernel's constants (a precision matrix's 100 broadcasts) out of the step loop, where they
/// cannot stay in registers and come back as a broadcast before each use, nor keeps them apart
/// from their use: a broadcast next to its FMA folds into it as an embedded broadcast
/// (`{1to16}`). A device keeps such constants in registers or its constant cache, so there the
/// reference is the object itself.
template <class T>
EMBER_HD EMBER_INLINE T const& opaque(T const& x) {
#if !defined(__CUDA_ARCH__) && (defined(__GNUC__) || defined(__clang__))
  T const* p = &x;
  asm("" : "+r"(p));
  return *p;
#else
  return x;
#endif
}
}  // namespace detail

/// Whether a warm-up chunk also asks the kernel where its trajectory ended (ChEES).
enum class observe { nothing, acceptance, trajectory };

}  // namespace ember
