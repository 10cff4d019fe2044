#pragma once
/// \file
/// A *team*: the threads that advance one chain together. On the host a team is one thread (one
/// chain, or one SIMD batch of chains). On a GPU, `backend::cuda` can give a chain a team of 2–32
/// threads of one warp (`threads_per_chain`): every member holds the whole chain state and does
/// the same arithmetic, so branches agree and the draws are the chain's; only an energy's sum over
/// data rows is dealt out among the members (the regressions, a model's `add_rows`) and added
/// back with `team_sum`, whose result is the same number, bit for bit, in every member. An energy
/// that does not split its work is still right in a team, only redundant.
///
/// How a device function knows its team: ember's kernels launch teams as blocks of (team size,
/// chains per block / 2, 2) threads, and a z extent of exactly 2 with at most 32 threads in x is
/// read as that shape; any other block (ember's one-thread-per-chain launches are 1-D) is teams of
/// one thread. A kernel of your own that calls an energy is safe with any block whose z extent is
/// not 2.

#include <ember/core/config.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

/// This thread's place in its team: `rank` in [0, size).
struct team {
  int rank = 0;
  int size = 1;
};

/// The calling thread's team (see the file comment); {0, 1} on the host.
EMBER_HD EMBER_INLINE team this_team() {
#if defined(__CUDA_ARCH__)
  if (blockDim.z == 2 && blockDim.x <= 32) return {int(threadIdx.x), int(blockDim.x)};
#endif
  return {};
}

/// The team an energy evaluated in scalar type S splits its work over: `this_team()` for float
/// and double, one thread for anything else (dual numbers, whose sums a shuffle cannot add: a
/// custom energy that calls a regression on duals gets the whole sum in every member).
template <class S>
EMBER_HD EMBER_INLINE team team_for() {
  if constexpr (std::is_floating_point_v<S>)
    return this_team();
  else
    return {};
}

/// The sum of `v` over the team, in every member. A butterfly: at each of log₂ size stages two
/// members add the same two numbers, rounded as written (`__fadd_rn`/`__dadd_rn`: never fused with
/// a product of the caller's), so every member ends with the same bits, and the order of the
/// additions depends on the team size only. S is float or double (`team_for`).
template <class S>
EMBER_HD EMBER_INLINE S team_sum(team const& t, S v) {
#if defined(__CUDA_ARCH__)
  if (t.size > 1) {
    if constexpr (std::is_floating_point_v<S>) {
      unsigned const lane = unsigned(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
      unsigned const mask =
          t.size == 32 ? 0xffffffffu : ((1u << unsigned(t.size)) - 1u) << (lane & ~unsigned(t.size - 1));
      for (int o = t.size >> 1; o > 0; o >>= 1) {
        S const other = __shfl_xor_sync(mask, v, o);
        if constexpr (std::is_same_v<S, float>)
          v = __fadd_rn(v, other);
        else
          v = __dadd_rn(v, other);
      }
    } else {
      __trap();  // a part of a sum that no shuffle can add: never silently a partial result
    }
  }
#else
  (void)t;
#endif
  return v;
}

namespace detail {
/// The automatic team size of `backend::cuda{.threads_per_chain = 0}` for `chains` chains whose
/// energy deals `blocks` blocks of rows out among a team (`team_blocks`,
/// energy/for_each_view.hpp; 0 if none): the largest power of two ≤ 32 that leaves each member at
/// least two blocks, halved while the run would need more than 2¹⁷ threads (an H100 holds about
/// 2.7·10⁵ resident). A function of the run alone, never of the device, so a run's draws are the
/// same on every GPU; but it depends on the number of chains, so fix `threads_per_chain` where a
/// chain's draws must not change with the chains beside it.
inline int auto_team_size(std::int64_t chains, std::int64_t blocks) {
  int w = 1;
  while (w < 32 && blocks / (2 * w) >= 2) w *= 2;
  while (w > 1 && chains * w > (std::int64_t(1) << 17)) w /= 2;
  return w;
}
}  // namespace detail

}  // namespace ember
