#pragma once
/// \file
/// A *team*: the workers that evaluate one chain's energy together, each a *part* of a data term's
/// rows. Every member holds the whole chain state and does the same arithmetic, so branches agree
/// and the draws are the chain's; only an energy's sum over data rows is dealt out among the
/// members (the regressions, a model's `add_rows`) and added back. An energy that does not split
/// its work is still right in a team, only redundant.
///
/// On a GPU, `backend::cuda` can give a chain a team of 2–32 threads of one warp
/// (`threads_per_chain`), added back with `team_sum`, whose result is the same number, bit for
/// bit, in every member. How a device function knows its team: ember's kernels launch teams as
/// blocks of (team size, chains per block / 2, 2) threads, and a z extent of exactly 2 with at
/// most 32 threads in x is read as that shape; any other block (ember's one-thread-per-chain
/// launches are 1-D) is teams of one thread. A kernel of your own that calls an energy is safe
/// with any block whose z extent is not 2.
///
/// On the host, a CPU backend whose run has few chains (`backend::cpu::split_rows`) asks the energies it
/// evaluates to split their rows (`host_row_split`): a row-dealing energy then evaluates itself
/// as `host_row_parts(rows)` parts, on the backend's idle threads where it has some, and adds
/// the parts' values and gradients in part order (`split_rows`). The parts depend on the data
/// only, never on the threads, so the draws are the same on any number of threads.

#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/vec.hpp>

#include <cstdint>
#include <type_traits>

#if !defined(__CUDA_ARCH__)
#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>
#endif

namespace ember {

/// This thread's place in its team: `rank` in [0, size).
struct team {
  int rank = 0;
  int size = 1;
};

namespace detail {
#if !defined(__CUDA_ARCH__)
/// The part of a split energy this host thread evaluates ({0, 1}: the whole energy).
inline thread_local team host_part{};
/// What the CPU backend running on this thread asks of the energies it evaluates: whether a
/// data term's rows are split into parts, and on how many threads those parts may run.
struct row_split_request {
  bool split = false;
  int threads = 1;
  /// Runs one(ctx, p) for p in [0, parts) on up to `threads` threads, or null (one after another):
  /// the backend's thread team (backend/cpu.hpp), so this header needs no threading library.
  void (*run)(int parts, int threads, void* ctx, void (*one)(void*, int)) = nullptr;
};
inline thread_local row_split_request host_row_split{};
/// Calls of `add_rows` (ad/model.hpp) on this thread since a split energy's part began: a model
/// whose parts dealt no rows is evaluated whole afterwards (`model_energy`).
inline thread_local std::int64_t host_rows_dealt = 0;
#endif
/// Whether an energy evaluated in S can split its rows: plain float and double and SIMD batches
/// of them, not dual numbers (a custom energy calling a regression on duals gets the whole sum).
template <class S>
inline constexpr bool splits_rows = std::is_floating_point_v<element_t<S>> && !is_dual<S>;
}  // namespace detail

/// The calling thread's team (see the file comment): on a GPU read from the block's shape, on
/// the host the part of a split energy it evaluates ({0, 1} unless a CPU backend split one).
EMBER_HD EMBER_INLINE team this_team() {
#if defined(__CUDA_ARCH__)
  if (blockDim.z == 2 && blockDim.x <= 32) return {int(threadIdx.x), int(blockDim.x)};
  return {};
#else
  return detail::host_part;
#endif
}

/// The team an energy evaluated in scalar type S splits its work over: `this_team()` where S
/// splits its rows (`detail::splits_rows`), one member otherwise.
template <class S>
EMBER_HD EMBER_INLINE team team_for() {
  if constexpr (detail::splits_rows<S>)
    return this_team();
  else
    return {};
}

/// The sum of `v` over a GPU team, in every member (on the host each part returns its own and
/// `split_rows` adds them). A butterfly: at each of log₂ size stages two
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
/// The parts a row-dealing energy of `rows` data rows is split into on the host when a CPU backend
/// asks (`host_row_split`): the largest power of two up to 8 that leaves each part at least 512
/// rows. A function of the data only. Each part repeats the energy's other work (priors, a
/// model's lets, its constraints: about 1 µs for the 60-parameter hier_logit), so parts are not
/// made smaller: hier_logit (2,000 rows) sampled at 4 chains on this machine's two cores took
/// 27-34 µs a gradient step in 2 parts, 32-43 µs in 4 and 48-50 µs whole, and at 16 chains (two
/// batches, both threads busy with AVX2) about what it took whole in 2 parts and about 10 % more in 4
/// (bench/results/2026-11-29-split-rows.md).
inline int host_row_parts(std::int64_t rows) {
  int p = 1;
  while (p < 8 && rows / (2 * p) >= 512) p *= 2;
  return p;
}

#if !defined(__CUDA_ARCH__)
/// Whether an energy evaluated in S on this thread is asked to split its rows: by the backend,
/// S splits, and it is not already a part.
template <class S>
inline bool host_split_requested() {
  if constexpr (splits_rows<S>)
    return host_row_split.split && host_part.size == 1;
  else
    return false;
}

/// Whether a split energy's parts run on a thread team or one after another on the calling thread:
/// measured, since the draws do not depend on it. A team's fork and join cost about 2 µs on an
/// idle machine, but on a loaded one a join waits for a descheduled thread (milliseconds, once per
/// gradient; docs/decisions/2026-11-27-small-chunks-on-one-thread.md). Both ways are timed at first;
/// then the faster runs, and the other is timed again after 8 calls, 16 if it lost again, and so
/// on up to every 1,024 calls, so a machine whose load changes is followed within a second or so.
struct split_schedule {
  double seconds[2] = {-1, -1};  // the last time of each way: [0] one thread, [1] a team
  long calls = 0, next_probe = 2, interval = 8;
  bool best_parallel = true;
  bool parallel_now() {
    if (seconds[1] < 0) return true;
    if (seconds[0] < 0) return false;
    return calls >= next_probe ? !best_parallel : best_parallel;
  }
  void took(bool parallel, double s) {
    bool const probe = seconds[0] >= 0 && seconds[1] >= 0 && parallel != best_parallel;
    seconds[parallel ? 1 : 0] = s;
    ++calls;
    if (seconds[0] < 0 || seconds[1] < 0) return;
    bool const faster = seconds[1] < seconds[0];
    if (probe) {
      if (faster != best_parallel) {
        best_parallel = faster;  // the other way won: keep it, and look back soon
        interval = 8;
      } else if (interval < 1024) {
        interval *= 2;
      }
      next_probe = calls + interval;
    } else if (calls == 2) {
      best_parallel = faster;
      next_probe = calls + interval;
    }
  }
};

/// An energy split into `parts` on the host: `part(gp)` evaluates the energy as part p (with
/// `this_team()` = {p, parts}; gp its own gradient, or null for a value) and returns its value;
/// the parts run on up to `host_row_split.threads` threads (the backend's `run`) or on this
/// one, as `split_schedule` finds faster, and their values and gradients are added in part order, so the result does not
/// depend on the threads. An exception of a part is rethrown here after every part ended (the
/// lowest part's that threw). `dealt_rows`, if given, says whether any part called `add_rows`.
template <class S, int D, class Part>
S split_rows(int parts, vec<S, D>* g, Part const& part, bool* dealt_rows = nullptr) {
  struct alignas(64) part_grad {
    vec<S, D> g;
  };
  if (parts < 1 || parts > 8) throw std::logic_error("ember: an energy split into " + std::to_string(parts) + " parts (1 to 8)");
  thread_local std::vector<part_grad> buffer;  // the calling thread's, reused call after call
  std::vector<part_grad>& grads = buffer;      // (a worker naming `buffer` would get its own)
  if (g && grads.size() < std::size_t(parts)) grads.resize(std::size_t(parts));
  S u[8];
  bool dealt[8] = {};
  std::exception_ptr errors[8];  // each part's own, so the one rethrown does not depend on timing
  auto one = [&](int p) {
    host_part = team{p, parts};
    host_rows_dealt = 0;
    try {
      u[p] = part(g ? &grads[std::size_t(p)].g : nullptr);
    } catch (...) {
      errors[p] = std::current_exception();
    }
    dealt[p] = host_rows_dealt != 0;
    host_part = team{};
  };
  int const threads = host_row_split.threads < parts ? host_row_split.threads : parts;
  if (threads > 1 && host_row_split.run) {
    thread_local split_schedule schedule;  // this call site's, on this thread
    bool const parallel = schedule.parallel_now();
    auto const t0 = std::chrono::steady_clock::now();
    if (parallel) {
      host_row_split.run(parts, threads, &one, [](void* f, int p) { (*static_cast<decltype(one)*>(f))(p); });
    } else {
      for (int p = 0; p < parts; ++p) one(p);
    }
    schedule.took(parallel, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } else {
    for (int p = 0; p < parts; ++p) one(p);
  }
  for (int p = 0; p < parts; ++p)
    if (errors[p]) std::rethrow_exception(errors[p]);  // the first part's that threw
  if (dealt_rows) {
    *dealt_rows = false;
    for (int p = 0; p < parts; ++p) *dealt_rows = *dealt_rows || dealt[p];
  }
  S total = u[0];
  for (int p = 1; p < parts; ++p) total = total + u[p];
  if (g) {
    *g = grads[0].g;
    for (int p = 1; p < parts; ++p)
      for (int i = 0; i < D; ++i) (*g)[i] = (*g)[i] + grads[std::size_t(p)].g[i];
  }
  return total;
}
#endif
}  // namespace detail

}  // namespace ember
