#pragma once
/// \file
/// The CPU's two backends. `backend::cpu`: chains in blocks over OpenMP threads (one `omp parallel
/// for`, static schedule; docs/design.md, "Things judged differently", says why not Thrust's OMP
/// system); inside a block a SIMD batch of chains (16 floats with AVX-512) runs a whole chunk of
/// the fused loop (pipeline/fused_loop.hpp) before the next batch starts; a last partial batch runs
/// with its extra lanes masked off. NUTS at its own pace instead runs one batch of lanes a thread
/// that take up the run's chains one at a time from a pool (pipeline/fused_lanes.hpp).
/// `backend::scalar`: the same blocks and threads, every chain one at a time (the reference the
/// batches are compared with: the same random numbers, draws equal to rounding, since xsimd's and
/// libm's transcendental functions differ). Each compiles only its own
/// loop. Host code only: a .cu unit includes ember/cuda.cuh, which brings no CPU backend.
/// Per-kept-step diagnostics are summed per block in double and combined in block order, so
/// blocks never share a cache line on the hot path. The sums' last bits depend on the block
/// partition (the grouping of the additions): the automatic partition depends on the chain count
/// only up to 8 threads (64 blocks), so the trace is bitwise the same on 1 to 8 threads; a
/// `.block` of one's own, or more threads, may change its last bits. Draws never depend on either.
/// An exception thrown inside a worker (by a user's energy, say) is caught there and rethrown to
/// the caller after the parallel loop; the run then keeps the state of its last whole chunk.

#include <ember/backend/detail/chain_arrays.hpp>
#include <ember/backend/detail/host_memory.hpp>
#include <ember/backend/detail/lane_check.hpp>
#include <ember/core/config.hpp>
#include <ember/core/simd.hpp>
#include <ember/core/team.hpp>
#include <ember/energy/check_views.hpp>
#include <ember/core/vec.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>

#include <omp.h>

#if defined(__CUDACC__)
#error "ember/backend/cpu.hpp is host code: a .cu unit includes <ember/cuda.cuh> (backend::cuda); run CPU pipelines from a .cpp unit"
#endif
#if !defined(_OPENMP)
#error "ember::backend::cpu needs OpenMP: compile with -fopenmp (CMake: link ember::ember, which does)"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <numeric>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

template <class T>
struct chain_view;

namespace detail {
template <class P, bool Simd>
class cpu_storage;
}  // namespace detail

namespace backend {

/// Whether a chain's energy splits its data rows into parts (core/team.hpp), so that a run of few
/// chains uses every thread: `automatic` splits in runs of fewer than 8 SIMD batches of chains
/// (64 floats with AVX2, 128 with AVX-512), `never` and `always` say so. Only energies that deal
/// out rows split (a model's `add_rows`, the regressions), into parts fixed by their rows
/// (`detail::host_row_parts`), whose sums are added in part order: the draws are the same on any
/// number of threads, and differ from an unsplit run's in the last bits.
enum class row_split { automatic, never, always };

/// The CPU backend: SIMD batches of chains. `threads` (0: OpenMP's default) and `block` (chains
/// per task, 0: automatic) change only speed, never the draws: every chain's stream depends on
/// its index alone. `split_rows`: above.
struct cpu {
  static constexpr char const* name = "cpu";
  int threads = 0;
  std::int64_t block = 0;
  row_split split_rows = row_split::automatic;

  template <class P>
  using storage = ember::detail::cpu_storage<P, true>;
  /// Refuses, before any work, a pipeline whose data views point to device memory, or an energy
  /// that mixes the chains of a batch (backend/detail/lane_check.hpp).
  template <class P>
  void check(P const& pipe) const {
    require_host_views(pipe, "ember::backend::cpu");
    if constexpr (requires { pipe.kernel.energy; }) ember::detail::require_lanes_independent(pipe.kernel.energy, "ember::sample");
  }
};

/// One chain at a time on each thread, over the same blocks and threads as `cpu`: the same random
/// numbers and, to rounding, the same draws (docs/design.md, "What the same draws means"),
/// slower; the reference the SIMD path is tested against, and a path for an energy whose code
/// cannot run on a batch.
struct scalar {
  static constexpr char const* name = "cpu-scalar";
  int threads = 0;
  std::int64_t block = 0;
  row_split split_rows = row_split::automatic;

  template <class P>
  using storage = ember::detail::cpu_storage<P, false>;
  template <class P>
  void check(P const& pipe) const {
    require_host_views(pipe, "ember::backend::scalar");
  }
};

}  // namespace backend

namespace detail {


// The sink of one block of chains for one chunk (or of one thread's lanes, at NUTS's own pace):
// loads each batch's (or chain's) state from `in`, stores it to `out` (a run swaps the two only
// when the whole chunk succeeded), writes kept draws and sums tracked diagnostics of the block.
template <class P>
struct cpu_sink {
  using T = typename P::value_type;
  static constexpr int D = P::dim;

  chain_arrays<T> const* in;
  chain_arrays<T>* out;
  T* samples;          // kept × P::recorded_columns × chains, when recording
  std::int64_t chains;
  double* track;       // this block's slice: the chunk's kept steps × P::track_stride
  std::int64_t k0;     // global index of the chunk's first kept step
  double inv_thin;
  T* obs_accept;       // warm-up observations, or null
  T* obs_start;
  T* obs_end;
  T* obs_velocity;
  int lanes = 1;       // chains of the current batch that exist; the last batch may be partial
  typename P::tracked_type const* stats = nullptr;  // the pipeline's tracked statistics
  // Global index of the arrays' first chain: a chain's stream is its global index c, its place in
  // these arrays c − first (a process of an MPI run holds a range of the chains, ember/mpi.hpp).
  std::uint32_t first = 0;

  std::int64_t stride() const { return in->stride; }

  template <class S>
  static S load_lanes(T const* p) {
    if constexpr (scalar_traits<S>::width == 1)
      return *p;
    else
      return S::load_unaligned(p);
  }
  template <class S>
  static void store_lanes(T* p, S const& v) {
    if constexpr (scalar_traits<S>::width == 1)
      *p = v;
    else
      v.store_unaligned(p);
  }
  template <class S>
  static constexpr int width() {
    return int(scalar_traits<S>::width);
  }
  // Lanes of the current batch that carry real chains (the rest run ghost chains past the end,
  // whose results are dropped from draws and diagnostics).
  template <class S>
  mask_t<S> real() const {
    if constexpr (width<S>() == 1)
      return true;
    else
      return lane_index<S>() < S(T(lanes));
  }
  template <class S>
  static double total(S const& v) {
    if constexpr (width<S>() == 1)
      return double(v);
    else
      return double(xsimd::hadd(v));
  }
  template <class S>
  static void lanes_of(S const& v, T* dst) {
    if constexpr (width<S>() == 1)
      dst[0] = v;
    else
      v.store_unaligned(dst);
  }

  template <class State, class S>
  void load(std::uint32_t c, State& s, mask_t<S>& frozen, S& window) {
    c -= first;
    EMBER_UNROLL
    for (int i = 0; i < State::slots; ++i) s.slot(i) = load_lanes<S>(in->slots.data() + std::int64_t(i) * stride() + c);
    window = load_lanes<S>(in->window.data() + c);
    T f[width<S>()];
    for (int i = 0; i < width<S>(); ++i) {
      f[i] = in->frozen[c + std::uint32_t(i)] ? T(1) : T(0);
      out->diverged_at[c + std::uint32_t(i)] = in->diverged_at[c + std::uint32_t(i)];
    }
    frozen = load_lanes<S>(f) != S(T(0));
  }
  template <class State, class S>
  void store(std::uint32_t c, State const& s, mask_t<S> const& frozen, S const& window, chunk_counts<S> const& n) {
    c -= first;
    EMBER_UNROLL
    for (int i = 0; i < State::slots; ++i) store_lanes(out->slots.data() + std::int64_t(i) * stride() + c, s.slot(i));
    store_lanes(out->window.data() + c, window);
    T f[width<S>()], d[width<S>()], a[width<S>()], tr[width<S>()], g[width<S>()];
    lanes_of(select(frozen, S(T(1)), S(T(0))), f);
    lanes_of(n.divergent, d);
    lanes_of(n.accepted, a);
    lanes_of(n.truncated, tr);
    lanes_of(n.gradients, g);
    for (int i = 0; i < width<S>(); ++i) {
      auto const j = c + std::uint32_t(i);
      out->frozen[j] = f[i] != T(0);
      out->divergent[j] = in->divergent[j] + std::int64_t(d[i]);
      out->accepted[j] = in->accepted[j] + std::int64_t(a[i]);
      out->truncated[j] = in->truncated[j] + std::int64_t(tr[i]);
      out->gradients[j] = in->gradients[j] + std::int64_t(g[i]);
    }
  }
  template <class State, class S>
  void keep(std::int64_t k, std::uint32_t c, State const& s, step_info<S> const& info, S window, mask_t<S> live) {
    c -= first;
    if constexpr (P::recording) {
      constexpr int R = P::recorded_columns;
      T lane[width<S>()];
      auto const put = [&](int column, S const& v) {
        lanes_of(v, lane);
        T* dst = samples + (k * R + column) * chains + c;
        for (int i = 0; i < lanes; ++i) dst[i] = lane[i];
      };
      if constexpr (P::records)
        for (int d = 0; d < D; ++d) put(d, s.x[d]);
      if constexpr (P::records_stats) {
        S v[P::stat_count];
        draw_stat_values<P>(s, info, v);
        for (int j = 0; j < P::stat_count; ++j) put(P::stat_offset + j, v[j]);
      }
    }
    if constexpr (P::track_stride > 0) {
      live = live && real<S>();
      if (!any(live)) return;
      // Each live lane's terms in double, lanes in chain order, then added to the block's sums.
      // What the terms are is the statistics' business (pipeline/track.hpp), not the sink's.
      constexpr int W = width<S>();
      T xs[D][W], energy[W], accepted[W], counted[W];
      for (int d = 0; d < D; ++d) lanes_of(s.x[d], xs[d]);
      lanes_of(s.energy, energy);
      lanes_of(window, accepted);
      lanes_of(select(live, S(T(1)), S(T(0))), counted);
      double sums[P::track_stride] = {};
      for (int i = 0; i < W; ++i) {
        if (counted[i] == T(0)) continue;
        vec<T, D> x;
        for (int d = 0; d < D; ++d) x[d] = xs[d][i];
        kept_chain<T, D> const chain{x, energy[i], double(accepted[i]) * inv_thin};
        sums[0] += 1;
        [&]<int... I>(std::integer_sequence<int, I...>) {
          ((sums[I + 1] += detail::statistic_term<I, D>(*stats, chain)), ...);
        }(std::make_integer_sequence<int, P::track_stride - 1>{});
      }
      double* a = track + (k - k0) * P::track_stride;
      for (int j = 0; j < P::track_stride; ++j) a[j] += sums[j];
    }
  }
  // Σ over lanes of v (or of v²), each lane widened to double first: Σx² − n·mean² cancels badly
  // when the mean is large against the spread, so nothing here may round in float.
  template <class S>
  static double lanes_in_double(S const& v, bool square) {
    T lane[width<S>()];
    lanes_of(v, lane);
    double q = 0;
    for (int i = 0; i < width<S>(); ++i) q += square ? double(lane[i]) * double(lane[i]) : double(lane[i]);
    return q;
  }
  template <class M>
  void diverged(std::uint32_t c, M const& newly, std::int64_t t) {
    c -= first;
    if constexpr (std::is_same_v<M, bool>) {
      if (newly) out->diverged_at[c] = t;
    } else {
      using S = typename M::batch_type;
      T flag[S::size];
      lanes_of(select(newly, S(T(1)), S(T(0))), flag);
      for (std::size_t i = 0; i < S::size; ++i)
        if (flag[i] != T(0)) out->diverged_at[c + std::uint32_t(i)] = t;
    }
  }
  template <class S, class M>
  void observe(std::uint32_t c, S const& accept_prob, M const&) {
    c -= first;
    store_lanes(obs_accept + c, accept_prob);
  }
  template <class State, class End>
  void observe_trajectory(std::uint32_t c, State const& start, End const& end) {
    c -= first;
    for (int d = 0; d < D; ++d) {
      store_lanes(obs_start + std::int64_t(d) * stride() + c, start.x[d]);
      store_lanes(obs_end + std::int64_t(d) * stride() + c, end.x[d]);
      store_lanes(obs_velocity + std::int64_t(d) * stride() + c, end.velocity[d]);
    }
  }
};

// Gathers the user's start states of chains c, c+1, ... into a batch (or one chain's state);
// ghost lanes past the last chain repeat the last chain's start.
template <class S, class T, int D>
vec<S, D> load_start(std::span<vec<T, D> const> init, std::int64_t c) {
  if constexpr (scalar_traits<S>::width == 1) {
    return init[std::size_t(c)];
  } else {
    vec<S, D> x;
    alignas(64) T lane[S::size];
    for (int d = 0; d < D; ++d) {
      for (std::size_t i = 0; i < S::size; ++i) lane[i] = init[std::min(std::size_t(c) + i, init.size() - 1)][d];
      x[d] = S::load_aligned(lane);
    }
    return x;
  }
}

}  // namespace detail

/// A run's chains in host memory, and how a CPU backend advances them: `Simd`, in batches of
/// W chains (backend::cpu), else one chain at a time (backend::scalar). The arrays are padded to
/// whole batches either way.
template <class P, bool Simd>
class detail::cpu_storage {
 public:
  using T = typename P::value_type;
  static constexpr int D = P::dim;
  using B = simd_batch<T>;
  static constexpr std::int64_t W = std::int64_t(B::size);
  using kernel_type = typename P::kernel_type;
  static constexpr int slots = decltype(std::declval<kernel_type const&>().init(vec<T, D>{}))::slots;

  cpu_storage() = default;
  template <class Backend>
  cpu_storage(Backend const& be, std::int64_t chains) : cpu_storage(be, chains, 0, chains) {}
  /// Chains [first, first + chains) of a run of `total` chains shared out over processes
  /// (ember/mpi.hpp): their streams are their global indices, their arrays this storage's.
  template <class Backend>
  cpu_storage(Backend const& be, std::int64_t chains, std::int64_t first, std::int64_t total)
      : chains_(chains), first_(first) {
    char const* const who = Simd ? "ember::backend::cpu" : "ember::backend::scalar";
    if (be.threads < 0)
      throw std::invalid_argument(std::string(who) + ": threads must be 0 (automatic) or positive, got " +
                                  std::to_string(be.threads));
    nthreads_ = detail::capped_thread_count(be.threads > 0 ? be.threads : omp_get_max_threads(), who);
    // Blocks are whole batches (`unit_` chains), so a batch never straddles two blocks. A user's
    // `.block` is rounded up to whole batches. The automatic choice is about 8 blocks per thread
    // (but never fewer blocks than threads while there are whole batches to share: 64 chains on 2
    // threads are 4 blocks of one batch), their batches shared out evenly: block b has q or q + 1
    // batches. (Equal blocks of ⌈batches / blocks⌉ left P1's 625 batches as 15 blocks of 40 and
    // one of 25: 320 batches for one thread and 305 for the other, 2.4 % over an even split.)
    unit_ = Simd ? W : 1;
    std::int64_t const units = (chains + unit_ - 1) / unit_;
    if (be.block > 0) {
      // In whole batches, and no larger than the run (a .block near 2⁶³ must not wrap).
      per_block_ = std::min(units, be.block / unit_ + (be.block % unit_ != 0));
      nblocks_ = (units + per_block_ - 1) / per_block_;
      extra_ = 0;
    } else {
      nblocks_ = std::min<std::int64_t>(units, std::max<std::int64_t>(64, 8 * std::int64_t(nthreads_)));
      per_block_ = units / nblocks_;
      extra_ = units % nblocks_;
    }
    if (be.split_rows != backend::row_split::automatic && be.split_rows != backend::row_split::never &&
        be.split_rows != backend::row_split::always)
      throw std::invalid_argument(std::string(who) + ": split_rows must be row_split::automatic, never or always, got " +
                                  std::to_string(int(be.split_rows)));
    // Rows split by the run's chains (all processes'), never by its threads: the same draws on any.
    split_ = be.split_rows == backend::row_split::always ||
             (be.split_rows == backend::row_split::automatic && (total + W - 1) / W < 8);
    // The second buffer is allocated by the first chunk (a run that is only started and read,
    // or loaded from a checkpoint, never needs it).
    a_.allocate(slots, (chains + W - 1) / W * W, chains);
  }

  /// The chains' first states. From the default start x₀ ~ uniform(−2, 2)^D they are drawn by the first
  /// chunk, batch by batch just before the batch's first transition (one parallel region less,
  /// and the state is still in cache), or when the state is read before that; from `.init` (a
  /// span that need not outlive this call) at once.
  template <class Init>
  void init(kernel_type const& kernel, std::uint64_t key, Init const& init) {
    parts_ = split_ ? host_parts(kernel) : 1;
    if (init.empty()) {
      pending_ = std::make_shared<kernel_type const>(kernel);
      key_ = key;
      return;
    }
    parallel([&](std::int64_t, std::int64_t c, std::int64_t end, auto& sink) {
      sink.out = &a_;
      if constexpr (Simd) {
        for (; c < end; c += W) {
          sink.lanes = int(std::min(W, end - c));
          fused_init<B>(kernel, detail::load_start<B>(init, c - first_), key, std::uint32_t(c), sink);
        }
      } else {
        sink.lanes = 1;
        for (; c < end; ++c) fused_init<T>(kernel, detail::load_start<T>(init, c - first_), key, std::uint32_t(c), sink);
      }
    });
  }

  /// One chunk: every chain from `a` (the committed state) into `b`, then b becomes a.
  template <observe Mode, class Kernel>
  chunk_output advance(Kernel const& kernel, chunk const& ch, T* samples, std::int64_t k0, std::int64_t k1,
                       typename P::tracked_type const& stats) {
    std::size_t const stride = std::size_t(k1 - k0) * std::size_t(P::track_stride);
    detail::require_host_memory((long double)nblocks_ * stride * sizeof(double), "ember::backend::cpu",
                                "tracked sums of " + detail::with_commas((long double)(k1 - k0)) + " kept steps in " +
                                    std::to_string(nblocks_) + " blocks of chains",
                                "use fewer, larger blocks (.block), thin more, or track fewer kept steps");
    std::vector<double> track(std::size_t(nblocks_) * stride, 0.0);
    if constexpr (Mode != observe::nothing) {
      obs_accept_.resize(std::size_t(a_.stride));
      if constexpr (Mode == observe::trajectory) {
        for (auto* v : {&obs_start_, &obs_end_, &obs_velocity_}) v->resize(std::size_t(D * a_.stride));
      }
    }
    if (b_.stride != a_.stride) b_.allocate(slots, a_.stride, chains_);
    parts_ = split_ ? host_parts(kernel) : 1;
    bool const first = pending_ != nullptr;
    // A thread team costs a fork and a join per chunk, and a warm-up is one chunk per transition:
    // on a loaded machine the join waits for a descheduled thread (64 chains of a 10-d Gaussian:
    // 6-7x slower on 2 threads than on 1). The first one-transition chunk runs on this thread and
    // is timed; chunks whose work that measures at under a millisecond run on this thread too.
    std::int64_t const n = ch.end - ch.begin;
    bool const timing = n == 1 && !(serial_transition_s_ >= 0);
    bool const alone = timing || (serial_transition_s_ >= 0 && serial_transition_s_ * double(n) < 1e-3);
    auto const t0 = std::chrono::steady_clock::now();
    auto const chunk_sink = [&](std::int64_t b, auto& sink) {
      sink.samples = samples;
      sink.track = track.data() + std::size_t(b) * stride;
      sink.stats = &stats;
      sink.k0 = k0;
      sink.inv_thin = 1.0 / double(ch.thin);
    };
    if constexpr (Simd && Mode == observe::nothing && grows_lanes<Kernel, B>) {
      if (kernel.own_pace) {
        // Lanes at their own pace, each taking up the next chain when its chain has made the
        // chunk's transitions (pipeline/fused_lanes.hpp). Without tracked sums, and while each
        // block runs on its own thread, one pool of every chain for all threads (a sink writes
        // only the arrays of the chain it is given); otherwise a pool of each block's chains.
        draw_pending_starts();
        std::atomic<std::int64_t> next{first_};
        std::int64_t const last = first_ + chains_;
        bool const one_pool = P::track_stride == 0 && !parts_parallel();
        parallel(alone ? 1 : nthreads_, one_pool, [&](std::int64_t b, std::int64_t c, std::int64_t end, auto& sink) {
          chunk_sink(b, sink);
          sink.lanes = 1;  // the sink is given one chain at a time
          if (one_pool)
            fused_chunk_lanes<B>(kernel, ch, [&] {
              std::int64_t const i = next.fetch_add(1, std::memory_order_relaxed);
              return i < last ? i : std::int64_t(-1);
            }, sink);
          else
            fused_chunk_lanes<B>(kernel, ch, [&] { return c < end ? c++ : std::int64_t(-1); }, sink);
        });
        // The padding's ghost lanes (a last partial batch's) stay as they were.
        for (std::int64_t g = chains_; g < a_.stride; ++g) {
          for (int i = 0; i < slots; ++i) {
            auto const at = std::size_t(i * a_.stride + g);
            b_.slots[at] = a_.slots[at];
          }
          b_.window[std::size_t(g)] = a_.window[std::size_t(g)];
          b_.frozen[std::size_t(g)] = a_.frozen[std::size_t(g)];
          b_.diverged_at[std::size_t(g)] = a_.diverged_at[std::size_t(g)];
          for (auto n : {&chain_arrays<T>::accepted, &chain_arrays<T>::divergent, &chain_arrays<T>::truncated,
                         &chain_arrays<T>::gradients})
            (b_.*n)[std::size_t(g)] = (a_.*n)[std::size_t(g)];
        }
        return finish_chunk(timing, t0, stride, std::move(track));
      }
    }
    parallel(alone ? 1 : nthreads_, [&](std::int64_t b, std::int64_t c, std::int64_t end, auto& sink) {
      chunk_sink(b, sink);
      if constexpr (Simd) {
        for (; c < end; c += W) {
          sink.lanes = int(std::min(W, end - c));
          if (first) draw_start<B>(std::uint32_t(c), sink);
          fused_chunk<B, Mode>(kernel, ch, std::uint32_t(c), sink);
        }
      } else {
        sink.lanes = 1;
        for (; c < end; ++c) {
          if (first) draw_start<T>(std::uint32_t(c), sink);
          fused_chunk<T, Mode>(kernel, ch, std::uint32_t(c), sink);
        }
      }
    });
    return finish_chunk(timing, t0, stride, std::move(track));
  }
  // The end of a chunk that succeeded: its arrays become the committed ones, its blocks' sums
  // the chunk's.
  chunk_output finish_chunk(bool timing, std::chrono::steady_clock::time_point t0, std::size_t stride,
                            std::vector<double>&& track) {
    if (timing) serial_transition_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pending_.reset();  // only once the whole chunk succeeded: a failed one leaves it pending
    std::swap(a_, b_);
    chunk_output out;
    out.track.assign(stride, 0.0);
    // Blocks' sums added in block order (fixed for a partition; see the file comment).
    for (std::int64_t b = 0; b < nblocks_; ++b)
      for (std::size_t i = 0; i < stride; ++i) out.track[i] += track[std::size_t(b) * stride + i];
    block_track_ = std::move(track);
    return out;
  }
  /// Takes back the last chunk, which succeeded here but not in another process of the run
  /// (ember/mpi.hpp): the committed arrays become the ones before it again (the other buffer,
  /// untouched since the chunk began; first states drawn by it stay drawn there).
  void undo_chunk() { std::swap(a_, b_); }
  /// The last chunk's tracked sums block by block (blocks × kept steps × P::track_stride), for a
  /// caller that adds blocks of several processes in one global order (ember/mpi.hpp).
  std::vector<double> const& block_sums() const { return block_track_; }
  std::int64_t blocks() const { return nblocks_; }

  /// One tile of `reduce`: f over chains [begin, end) into p. Warm-up runs it every transition
  /// over every chain, so it is hot (EMBER_HOT, core/config.hpp).
  template <class F>
  static EMBER_HOT void reduce_tile(F const& f, std::int64_t begin, std::int64_t end, double* p) {
    for (std::int64_t c = begin; c < end; ++c) f(c, p);
  }
  /// Σ over chains of `f(c, acc)`, in a fixed order: tiles of 256 chains each summed in chain
  /// order (in parallel), then the tiles in order.
  template <class F>
  void reduce(F const& f, double* result) const {
    constexpr int N = F::size;
    auto const part = reduce_tiles(f);
    for (int i = 0; i < N; ++i) result[i] = 0;
    for (std::size_t t = 0; t < part.size() / N; ++t)
      for (int i = 0; i < N; ++i) result[i] += part[t * N + i];
  }
  /// Chains per tile of `reduce`: a process of an MPI run holds whole tiles (ember/mpi.hpp).
  static constexpr std::int64_t reduce_tile_chains = 256;
  /// `reduce`'s sums tile by tile (tiles × F::size), before the tiles are added in order.
  template <class F>
  std::vector<double> reduce_tiles(F const& f) const {
    constexpr int N = F::size;
    constexpr std::int64_t tile = reduce_tile_chains;
    std::int64_t const tiles = (chains_ + tile - 1) / tile;
    std::vector<double> part(std::size_t(tiles) * N, 0.0);
    auto body = [&](std::int64_t t) {
      reduce_tile(f, t * tile, std::min(chains_, (t + 1) * tile), part.data() + std::size_t(t) * N);
    };
    // Waking the thread team costs more than a small reduction: below ~10⁵ values the calling
    // thread does it alone (the same tiles in the same order, so the same sums).
    if (double(chains_) * N < 1e5)
      for (std::int64_t t = 0; t < tiles; ++t) body(t);
    else
      run_parallel(tiles, body);
    return part;
  }

  /// The per-chain arrays for the reductions of warm-up.
  chain_view<T> view() const {
    draw_pending_starts();
    return {a_.slots.data(), a_.frozen.data(), obs_accept_.data(), obs_start_.data(), obs_end_.data(),
            obs_velocity_.data(), a_.stride};
  }
  /// The committed per-chain arrays (host memory: the CPU backend's own).
  chain_arrays<T> const& host() const {
    draw_pending_starts();
    return a_;
  }
  /// What a result keeps of the committed arrays, into the caller's arrays of `chains` entries
  /// (positions D × chains, as `result::final_states`); returns the chains' divergent transitions
  /// in all. The same member as backend::cuda's, which copies from device memory.
  std::int64_t copy_out(T* positions, std::uint8_t* frozen, std::int64_t* diverged_at, std::int64_t* accepted) const {
    auto const& a = host();
    auto const n = std::ptrdiff_t(chains_);
    for (int d = 0; d < D; ++d) std::copy_n(a.slots.begin() + d * a.stride, n, positions + d * n);
    std::copy_n(a.frozen.begin(), n, frozen);
    std::copy_n(a.diverged_at.begin(), n, diverged_at);
    std::copy_n(a.accepted.begin(), n, accepted);
    return std::accumulate(a.divergent.begin(), a.divergent.begin() + n, std::int64_t(0));
  }
  /// For a loaded checkpoint, which overwrites every array (so pending first states are dropped).
  chain_arrays<T>& host_mutable() {
    pending_.reset();
    return a_;
  }
  /// After `host_mutable()` was written (a checkpoint loaded): nothing to copy on the host.
  void upload() {}

 private:
  // body(0 … n − 1) over min(threads, n) threads: a run whose chains are one block (4 to 16 chains
  // in one SIMD batch) runs on the calling thread, without waking a team whose other threads would
  // only wait (a warm-up is a parallel region per transition, and on a loaded machine the join
  // waits for a descheduled idle thread: 1.0-1.4 s against 0.05 s for a 1,000-transition warm-up).
  template <class F>
  void run_parallel(std::int64_t n, F const& body) const {
    run_parallel(n, nthreads_, body);
  }
  template <class F>
  void run_parallel(std::int64_t n, int threads, F const& body) const {
    int const team = int(std::min<std::int64_t>(threads, n));
    if (team <= 1) {
      for (std::int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    std::exception_ptr error;
    std::mutex m;
#pragma omp parallel for schedule(static) num_threads(team)
    for (std::int64_t i = 0; i < n; ++i) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }
  // A split energy's parts (core/team.hpp, `row_split_request::run`) on a thread team; one after
  // another inside a parallel region (the blocks' threads are busy).
  static void run_parts(int parts, int threads, void* ctx, void (*one)(void*, int)) {
    if (omp_in_parallel()) {
      for (int p = 0; p < parts; ++p) one(ctx, p);
      return;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int p = 0; p < parts; ++p) one(ctx, p);
  }
  // The default start of the batch (or chain) at c and its first state, into the committed arrays.
  template <class S, class Sink>
  void draw_start(std::uint32_t c, Sink& sink) const {
    auto* const out = sink.out;
    sink.out = &a_;
    fused_default_init<S>(*pending_, key_, c, sink);
    sink.out = out;
  }
  // Draws the pending first states on their own, for a run read before its first chunk.
  void draw_pending_starts() const {
    if (!pending_) return;
    // parallel() writes through the sink only to a_, which is mutable.
    const_cast<cpu_storage&>(*this).parallel([&](std::int64_t, std::int64_t c, std::int64_t end, auto& sink) {
      if constexpr (Simd) {
        for (; c < end; c += W) {
          sink.lanes = int(std::min(W, end - c));
          draw_start<B>(std::uint32_t(c), sink);
        }
      } else {
        sink.lanes = 1;
        for (; c < end; ++c) draw_start<T>(std::uint32_t(c), sink);
      }
    });
    pending_.reset();
  }
  // Runs body(block, first chain, end chain, sink) for every block in parallel.
  template <class F>
  void parallel(F const& body) {
    parallel(nthreads_, body);
  }
  // With split rows (core/team.hpp) whose parts could keep more of the run's threads busy than its
  // blocks can, the blocks run one after another on this thread and each energy's parts on the
  // threads (also in a chunk that `advance` runs alone: a part's work is a data term's rows, at
  // least 512 of them); otherwise the blocks share `threads` and the parts run on their block's
  // thread. Both give the same bits.
  bool parts_parallel() const { return parts_ > 1 && nblocks_ < std::min(parts_, nthreads_); }
  template <class F>
  void parallel(int threads, F const& body) {
    parallel(threads, false, body);
  }
  // With `per_thread`, body(0, …) … body(n − 1, …), n = min(threads, blocks), once each, with the
  // whole range of chains (for a body that shares the chains out itself: fused_lanes.hpp's pool).
  template <class F>
  void parallel(int threads, bool per_thread, F const& body) {
    bool const parts_parallel = this->parts_parallel();
    std::int64_t const n = per_thread ? std::min<std::int64_t>(threads, nblocks_) : nblocks_;
    run_parallel(n, parts_parallel ? 1 : threads, [&](std::int64_t b) {
      detail::cpu_sink<P> sink{&a_, &b_, nullptr, chains_, nullptr, 0, 1.0,
                               obs_accept_.data(), obs_start_.data(), obs_end_.data(), obs_velocity_.data()};
      sink.first = std::uint32_t(first_);
      struct request_scope {  // the request holds for this block's work, however it ends
        detail::row_split_request saved = detail::host_row_split;
        ~request_scope() { detail::host_row_split = saved; }
      } scope;
      detail::host_row_split = {split_, parts_parallel ? nthreads_ : 1, &run_parts};
      if (per_thread)
        body(b, first_, first_ + chains_, sink);
      else
        body(b, first_ + block_begin(b), first_ + std::min(chains_, block_begin(b + 1)), sink);
    });
  }
  // First chain of block b: the first `extra_` blocks have one batch more.
  std::int64_t block_begin(std::int64_t b) const { return unit_ * (b * per_block_ + std::min(b, extra_)); }

  std::int64_t chains_ = 0, first_ = 0, nblocks_ = 0, unit_ = 1, per_block_ = 1, extra_ = 0;
  bool split_ = false;  // energies split their rows (backend::row_split)
  int parts_ = 1;       // the most parts of the kernel's energies when split (energy/for_each_view.hpp, host_parts)
  std::vector<double> block_track_;  // the last chunk's tracked sums per block (block_sums)
  int nthreads_ = 1;
  double serial_transition_s_ = -1;  // one transition of every chain on one thread (see advance); −1: not yet timed
  // The committed arrays are mutable for one reason: a run read before its first chunk draws its
  // pending first states then (in `host() const`, as the CUDA backend copies back in its own).
  mutable chain_arrays<T> a_;
  chain_arrays<T> b_;
  // The kernel whose first states are still to draw; held by pointer so that storage stays
  // assignable for kernels that are not (an energy from a capturing lambda).
  mutable std::shared_ptr<kernel_type const> pending_;
  std::uint64_t key_ = 0;
  std::vector<T> obs_accept_, obs_start_, obs_end_, obs_velocity_;
};

}  // namespace ember
