#pragma once
/// \file
/// `backend::cuda`: the fused per-chain loop (pipeline/fused_loop.hpp) as ONE `__global__` per
/// pipeline type and chunk kind, one thread per chain, the chain's state in registers for the
/// whole chunk and in device memory between chunks. Only for `.cu` translation units:
///
///     auto res = ember::sample(pipe, {.chains = 1'000'000, .steps = 1'000}, ember::backend::cuda{});
///
/// A chain is one thread, or a *team* of 2–32 threads of one warp (`threads_per_chain`,
/// core/team.hpp): every member holds the chain's state and does the same arithmetic, and an
/// energy over data rows (the regressions, a model's add_rows) deals its rows out among the
/// members and adds the parts with warp shuffles in a fixed order. Automatic by default: a team of
/// up to 32 for an energy that splits hundreds of rows, at a few chains (at 128 chains, the
/// 569-row logistic regression gets 32 threads per chain); one thread per chain for energies that
/// split nothing (`team_blocks`, energy/for_each_view.hpp) and for many chains.
///
/// What a chunk kernel does, per chain (grid-stride over chains):
///  - loads the chain's state from device memory (`slot·stride + c`: consecutive threads,
///    consecutive addresses) and runs the chunk's transitions; counters hold the chain index,
///    never a thread or block index, so a chain's path is the CPU's up to floating-point
///    contraction;
///  - at kept steps writes the draw (and, with record_stats(), its statistics) to the chunk's slice
///    of `samples` (coalesced) and adds its
///    diagnostics to per-kept-step sums, reduced over the block with warp shuffles and one double
///    `atomicAdd` per block and value;
///  - stores the state into the second buffer (swapped in only when the chunk succeeded).
/// Warm-up reductions run on the device in a fixed order that depends on the chain count only
/// (tiles of 256 chains, each a block: each warp's butterfly of shuffles, then the warps in
/// order; then the tiles in order). The CPU backend sums a tile's chains in turn, so the two
/// backends' adapted parameters agree to rounding, not bit for bit. Every CUDA call is checked; a
/// failure throws `ember::cuda_error` naming the call. A run that needs more device memory than is
/// free is refused before anything is allocated, with the byte counts.

#include <ember/adapt/warmup.hpp>
#include <ember/backend/detail/chain_arrays.hpp>
#include <ember/core/team.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/check_views.hpp>
#include <ember/host_cache.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>
#include <ember/sample_options.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(__CUDACC__)
#error "ember/backend/cuda.cuh is for .cu translation units compiled by nvcc; use backend::cpu elsewhere"
#endif

namespace ember {

/// A failed CUDA runtime call (no device, out of memory, a failed launch...). `what()` names the
/// call and CUDA's own description, e.g.
/// "ember::backend::cuda: cudaMalloc(samples) failed: out of memory (cudaErrorMemoryAllocation)".
struct cuda_error : std::runtime_error {
  cudaError_t code;
  cuda_error(std::string const& call, cudaError_t e)
      : std::runtime_error("ember::backend::cuda: " + call + " failed: " + cudaGetErrorString(e) + " (" +
                           cudaGetErrorName(e) + ")"),
        code(e) {}
};

namespace backend {

/// The CUDA backend: every chain is a thread, or a team of threads (above), of one kernel launch.
/// `device` picks the GPU; `block_size` (a multiple of 32, at most 1024; a team's blocks hold no
/// more chains than spread the run over every multiprocessor) changes only speed, never
/// the draws. `threads_per_chain`: 1, 2, 4, 8, 16 or 32, or 0 (the default) to choose by the run
/// (`detail::auto_team_size`: the blocks of rows the energy splits among a team, `team_blocks`, and
/// the number of chains, never the device). A team adds an energy's rows in another order than one thread, so draws depend on
/// the team size as they would on any change of summation order (within rounding per gradient).
struct cuda {
  static constexpr char const* name = "cuda";
  int device = 0;
  int block_size = 256;
  int threads_per_chain = 0;

  template <class P>
  class storage;
  /// Refuses, before any work, a pipeline whose data views point to host memory (copy the
  /// energy with `ember::to_device(U)`, data/device.cuh).
  template <class P>
  void check(P const& pipe) const {
    require_device_views(pipe, "ember::backend::cuda");
  }
};

}  // namespace backend

namespace detail {

/// The largest kernel-parameter block: 32,764 bytes from CUDA 12.1 on Volta and newer (nvcc 13
/// compiles for nothing older than Turing, so every target it builds has it), 4,096 before.
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12010
inline constexpr std::size_t cuda_param_limit = 32764;
#else
inline constexpr std::size_t cuda_param_limit = 4096;
#endif

inline void cuda_check(cudaError_t e, char const* call) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear a non-sticky error so later calls start clean
    throw cuda_error(call, e);
  }
}

// The host cache's pinning (host_cache.hpp): a block registered with every CUDA context
// (portable), so copies from the device into it run at the bus's speed. A refusal (a sandbox that
// cannot lock pages) is not an error: copies stay pageable.
inline bool cuda_pin(void* p, std::size_t bytes) {
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}
inline void cuda_unpin(void* p) {
  if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
}
// Copies of at least this many bytes pin their destination's block first.
inline constexpr std::size_t cuda_pin_min_bytes = std::size_t(1) << 20;

// Refuses, with the byte counts, a run that needs more than the current device has free.
// Allocation granularity and the CUDA context take a little of what is free: keep 64 MiB spare.
inline void cuda_require_free(std::size_t bytes, int device) {
  std::size_t free_b = 0, total_b = 0;
  cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  std::size_t const spare = std::size_t(64) << 20;
  if (bytes + spare > free_b)
    throw std::length_error("ember::backend::cuda: this run needs " + with_commas((long double)bytes) +
                            " bytes of device memory but device " + std::to_string(device) + " has " +
                            with_commas((long double)free_b) + " bytes free (of " +
                            with_commas((long double)total_b) +
                            "); thin more, run fewer chains, or track moments instead of recording");
}

__device__ EMBER_INLINE double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's sum of value i of every thread, for each i < N, handed to store(i, sum): each warp's
// butterfly of shuffles, then the warps in order (a fixed order: it depends on the block's shape
// only). Every thread of the block must call it (surplus threads run as ghosts that contribute
// zeros). `value(i)` is called with compile-time i only, so per-thread values stay in registers.
// One 8 KiB buffer per kernel, shared by every reduction in it: [warp][value within a chunk].
__device__ inline double (*reduction_buffer())[32] {
  __shared__ double part[32][32];
  return part;
}

template <int N, class F, class Store>
__device__ EMBER_INLINE void block_sum(F const& value, Store const& store) {
  double(*part)[32] = reduction_buffer();
  int const id = int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  int const lane = id & 31, warp = id >> 5, warps = int(blockDim.x * blockDim.y * blockDim.z) >> 5;
  [&]<int... I>(std::integer_sequence<int, I...>) {
    // Chunks of 32 values, so the shared buffer is 8 KiB whatever D is.
    auto one = [&]<int Chunk, int... J>(std::integral_constant<int, Chunk>, std::integer_sequence<int, J...>) {
      (
          [&] {
            if constexpr (Chunk * 32 + J < N) {
              double v = warp_sum(value(std::integral_constant<int, Chunk * 32 + J>{}));
              if (lane == 0) part[warp][J] = v;
            }
          }(),
          ...);
      __syncthreads();
      if (id < 32 && Chunk * 32 + id < N) {
        double s = 0;
        for (int w = 0; w < warps; ++w) s += part[w][id];
        store(Chunk * 32 + id, s);
      }
      __syncthreads();
    };
    (one(std::integral_constant<int, I>{}, std::make_integer_sequence<int, 32>{}), ...);
  }(std::make_integer_sequence<int, (N + 31) / 32>{});
}
// The block's sums added into dst[i] with one atomicAdd per block and value (the chunks' tracked
// sums: blocks add in any order, so these are deterministic up to rounding only).
template <int N, class F>
__device__ EMBER_INLINE void block_sum_into(double* dst, F const& value) {
  block_sum<N>(value, [dst](int i, double s) { atomicAdd(dst + i, s); });
}

// Device pointers of a run's per-chain arrays (chain_arrays's layout).
template <class T>
struct device_arrays {
  T* slots;
  T* window;
  std::uint8_t* frozen;
  std::int64_t* diverged_at;
  std::int64_t* accepted;
  std::int64_t* divergent;
  std::int64_t* truncated;
  std::int64_t* gradients;
};

// Where a chunk kernel reads and writes; plain pointers, passed by value.
template <class T>
struct cuda_chunk_io {
  device_arrays<T> in, out;
  std::int64_t stride, chains;
  T* samples;     // the chunk's kept steps × P::recorded_columns × chains, when recording
  double* track;  // the chunk's kept steps × P::track_stride, when tracking
  std::int64_t k0;
  double inv_thin;
  T *obs_accept, *obs_start, *obs_end, *obs_velocity;
};

// The per-thread sink of the fused loop: loads and stores one chain; its flags stay in registers.
template <class P>
struct cuda_sink {
  using T = typename P::value_type;
  static constexpr int D = P::dim;

  cuda_chunk_io<T> const& o;
  bool real;  // false for the surplus threads of the last grid-stride round (they run chain chains−1)
              // and for every member of a team but the first: one thread writes a chain
  typename P::tracked_type const* stats = nullptr;  // the pipeline's tracked statistics (chunks only)
  std::int64_t diverged_at = -2;

  template <class State>
  __device__ EMBER_INLINE void load(std::uint32_t c, State& s, bool& frozen, T& window) {
    for (int i = 0; i < State::slots; ++i) s.slot(i) = o.in.slots[i * o.stride + c];
    window = o.in.window[c];
    frozen = o.in.frozen[c] != 0;
    diverged_at = o.in.diverged_at[c];
  }
  template <class State>
  __device__ EMBER_INLINE void store(std::uint32_t c, State const& s, bool frozen, T window, chunk_counts<T> const& n) {
    if (!real) return;
    for (int i = 0; i < State::slots; ++i) o.out.slots[i * o.stride + c] = s.slot(i);
    o.out.window[c] = window;
    o.out.frozen[c] = frozen ? 1 : 0;
    o.out.diverged_at[c] = diverged_at;
    o.out.divergent[c] = o.in.divergent[c] + std::int64_t(n.divergent);
    o.out.accepted[c] = o.in.accepted[c] + std::int64_t(n.accepted);
    o.out.truncated[c] = o.in.truncated[c] + std::int64_t(n.truncated);
    o.out.gradients[c] = o.in.gradients[c] + std::int64_t(n.gradients);
  }
  template <class State>
  __device__ EMBER_INLINE void keep(std::int64_t k, std::uint32_t c, State const& s, step_info<T> const& info, T window,
                                    bool live) {
    constexpr int R = P::recorded_columns;
    if constexpr (P::records)
      if (real)
#pragma unroll
        for (int d = 0; d < D; ++d) o.samples[((k - o.k0) * R + d) * o.chains + c] = s.x[d];
    if constexpr (P::records_stats)
      if (real) {
        T v[P::stat_count];
        draw_stat_values<P>(s, info, v);
#pragma unroll
        for (int j = 0; j < P::stat_count; ++j) o.samples[((k - o.k0) * R + P::stat_offset + j) * o.chains + c] = v[j];
      }
    if constexpr (P::track_stride > 0) {
      bool const counted = real && live;
      kept_chain<T, D> const chain{s.x, s.energy, double(window) * o.inv_thin};
      // Ghosts and frozen chains contribute 0 by selection, never by multiplying: a chain frozen
      // at its start state (t = −1) may carry a non-finite energy, and NaN·0 is NaN. What the
      // terms are is the statistics' business (pipeline/track.hpp), not the sink's.
      block_sum_into<P::track_stride>(o.track + (k - o.k0) * P::track_stride, [&](auto i) -> double {
        constexpr int I = decltype(i)::value;
        if (!counted) return 0.0;
        if constexpr (I == 0)
          return 1.0;
        else
          return detail::statistic_term<I - 1, D>(*stats, chain);
      });
    }
  }
  __device__ EMBER_INLINE void diverged(std::uint32_t, bool newly, std::int64_t t) {
    if (newly) diverged_at = t;
  }
  __device__ EMBER_INLINE void observe(std::uint32_t c, T accept_prob, bool) {
    if (real) o.obs_accept[c] = accept_prob;
  }
  template <class State, class End>
  __device__ EMBER_INLINE void observe_trajectory(std::uint32_t c, State const& start, End const& end) {
    if (!real) return;
    for (int d = 0; d < D; ++d) {
      o.obs_start[d * o.stride + c] = start.x[d];
      o.obs_end[d * o.stride + c] = end.x[d];
      o.obs_velocity[d * o.stride + c] = end.velocity[d];
    }
  }
};

// Where a thread is in a launch: blocks of one thread per chain are 1-D, blocks of teams are
// (team size, chains per block / 2, 2) (core/team.hpp reads the team from that shape).
struct chain_slot {
  int member, slot, per_block;  // member of its chain's team; its chain's place in the block
};
__device__ EMBER_INLINE chain_slot this_slot() {
  team const t = this_team();  // core/team.hpp owns the shape rule
  if (t.size > 1) return {t.rank, int(threadIdx.y + blockDim.y * threadIdx.z), int(2 * blockDim.y)};
  return {0, int(threadIdx.x), int(blockDim.x)};
}

/// A chunk of the fused loop for every chain. The transition kernel (energy parameters included)
/// travels by value in the launch parameters; per chain, everything else is registers.
template <class P, observe Mode, class Kernel>
__global__ void fused_chains(Kernel const kernel, chunk const ch, cuda_chunk_io<typename P::value_type> const o,
                             typename P::tracked_type const stats) {
  using T = typename P::value_type;
  chain_slot const at = this_slot();
  std::int64_t const stride = std::int64_t(gridDim.x) * at.per_block;
  // The bound depends on the block only, so every thread of a block runs the same rounds and
  // reaches the block reductions in keep() together; surplus threads run chain chains−1 as ghosts.
  for (std::int64_t base = std::int64_t(blockIdx.x) * at.per_block; base < o.chains; base += stride) {
    std::int64_t c = base + at.slot;
    bool const real = c < o.chains;
    auto const ci = std::uint32_t(real ? c : o.chains - 1);
    cuda_sink<P> sink{o, real && at.member == 0, &stats};
    fused_chunk<T, Mode>(kernel, ch, ci, sink);
  }
}

/// Every chain's first state.
template <class P, class Kernel>
__global__ void init_chains(Kernel const kernel, std::uint64_t const key, vec<typename P::value_type, P::dim> const* init,
                            cuda_chunk_io<typename P::value_type> const o) {
  using T = typename P::value_type;
  chain_slot const at = this_slot();
  std::int64_t const stride = std::int64_t(gridDim.x) * at.per_block;
  for (std::int64_t c = std::int64_t(blockIdx.x) * at.per_block + at.slot; c < o.chains; c += stride) {
    auto const ci = std::uint32_t(c);
    cuda_sink<P> sink{o, at.member == 0};
    if (init)
      fused_init<T>(kernel, init[ci], key, ci, sink);
    else
      fused_default_init<T>(kernel, key, ci, sink);
  }
}

// Fixed-order reduction: block t sums tile t (256 chains, a thread each, block_sum's order) into
// part[·][t] (one thread per tile summing its chains in turn waited ~1 µs of memory latency a
// chain: 0.5 ms a warm-up transition at 128 chains, H200, 2026-11-29) ...
template <class F>
__global__ void reduce_tiles(F const f, std::int64_t const chains, std::int64_t const tiles, double* part) {
  std::int64_t const t = blockIdx.x, c = t * 256 + threadIdx.x;
  double acc[F::size];
#pragma unroll
  for (int i = 0; i < F::size; ++i) acc[i] = 0;
  if (c < chains) f(c, acc);
  block_sum<F::size>([&](auto i) { return acc[decltype(i)::value]; }, [&](int i, double s) { part[i * tiles + t] = s; });
}
// ... then thread i adds value i of every tile, in tile order.
// (A template: a __global__ function cannot be inline, and a plain one in a header would be
// defined by every .cu unit of a program.)
template <class = void>
__global__ void reduce_values(double const* part, std::int64_t const tiles, int const n, double* out) {
  int const i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  double s = 0;
  for (std::int64_t t = 0; t < tiles; ++t) s += part[i * tiles + t];
  out[i] = s;
}

}  // namespace detail

/// A run's chains in device memory, and how the CUDA backend advances them.
template <class P>
class backend::cuda::storage {
 public:
  using T = typename P::value_type;
  static constexpr int D = P::dim;
  using Kernel = typename P::kernel_type;
  static constexpr int slots = decltype(std::declval<Kernel const&>().init(vec<T, D>{}))::slots;
  static_assert(std::is_trivially_copyable_v<Kernel>,
                "ember::backend::cuda passes the transition kernel (with its energy) by value to the GPU, "
                "so it must be trivially copyable: no pointers to host memory, no std::vector, no virtuals");
  static_assert(sizeof(Kernel) + sizeof(chunk) + sizeof(detail::cuda_chunk_io<T>) + sizeof(typename P::tracked_type) <=
                    detail::cuda_param_limit,
                "ember::backend::cuda: this kernel's parameters (energy, metric and tracked statistics) do not fit in a kernel launch's "
                "parameter block (32,764 bytes with CUDA >= 12.1, 4,096 before); keep large parameters in a data "
                "set in device memory, use a diagonal metric (warmup(n, step_size(), diagonal_mass()): the default "
                "auto_mass() carries a dense one too up to 64 dimensions), or sample it with backend::cpu");

  storage() = default;
  storage(cuda const& be, std::int64_t chains) : be_(be), chains_(chains), stride_(chains) {
    using detail::cuda_check;
    if (be.block_size < 32 || be.block_size > 1024 || be.block_size % 32 != 0)
      throw std::invalid_argument("ember::backend::cuda: block_size must be a multiple of 32 between 32 and 1024, got " +
                                  std::to_string(be.block_size));
    if (be.threads_per_chain < 0 || be.threads_per_chain > 32 || (be.threads_per_chain & (be.threads_per_chain - 1)) != 0)
      throw std::invalid_argument("ember::backend::cuda: threads_per_chain must be 0 (automatic) or 1, 2, 4, 8, 16 or 32, got " +
                                  std::to_string(be.threads_per_chain));
    int count = 0;
    cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (be.device < 0 || be.device >= count)
      throw std::invalid_argument("ember::backend::cuda: device " + std::to_string(be.device) + " does not exist (" +
                                  std::to_string(count) + " CUDA devices)");
    cuda_check(cudaSetDevice(be.device), "cudaSetDevice");
    detail::host_block_cache::instance().set_pinning({&detail::cuda_pin, &detail::cuda_unpin});
    std::size_t const per_chain = 2 * (slots * sizeof(T) + sizeof(T) + 1 + 3 * 8) + (3 * D + 1) * sizeof(T);
    detail::cuda_require_free(per_chain * std::size_t(chains), be.device);
    for (auto* a : {&a_, &b_}) allocate(*a);
    obs_.resize(std::size_t(3 * D + 1) * std::size_t(chains));
    // The host mirror (host_) is allocated when first asked for: a plain sample() never needs it
    // (copy_out below), and for ULA at 10^7 chains its 1.13 GB of fresh pages cost 0.7 s
    // (bench/cuda_suite.cu --phases).
  }

  template <class K, class Init>
  void init(K const& kernel, std::uint64_t key, Init const& init) {
    using detail::cuda_check;
    device_vector<vec<T, D>> x0(init.size());
    if (!init.empty())
      cuda_check(cudaMemcpy(x0.data(), init.data(), init.size() * sizeof(vec<T, D>), cudaMemcpyHostToDevice),
                 "cudaMemcpy(init)");
    auto io = io_for(nullptr, nullptr, 0, 1.0);
    io.out = io.in;
    auto const kfn = detail::init_chains<P, K>;
    auto const [g, b] = launch(kfn, kernel);
    kfn<<<g, b>>>(kernel, key, init.empty() ? nullptr : x0.data(), io);
    sync("ember::detail::init_chains");
    dirty_ = counters_dirty_ = true;
  }

  template <observe Mode, class K>
  chunk_output advance(K const& kernel, chunk const& ch, T* samples, std::int64_t k0, std::int64_t k1,
                       typename P::tracked_type const& stats) {
    using detail::cuda_check;
    std::size_t const n_kept = std::size_t(k1 - k0);
    std::size_t const n_samples = n_kept * std::size_t(P::recorded_columns) * std::size_t(chains_);
    std::size_t const n_track = n_kept * std::size_t(P::track_stride);
    // The chunk's buffers are kept between chunks and grow only: a warm-up launches a one-
    // transition chunk per transition, where an allocation and a free each time (cudaFree waits
    // for the device) would cost more than the transition.
    if (n_samples > dsamples_.n || n_track > dtrack_.n) {
      std::size_t const grow_s = n_samples > dsamples_.n ? n_samples : 0, grow_t = n_track > dtrack_.n ? n_track : 0;
      detail::cuda_require_free(grow_s * sizeof(T) + grow_t * 8, be_.device);
      if (grow_s) dsamples_.resize(grow_s);
      if (grow_t) dtrack_.resize(grow_t);
    }
    if (n_track) cuda_check(cudaMemset(dtrack_.data(), 0, n_track * 8), "cudaMemset(track)");
    auto io = io_for(dsamples_.data(), dtrack_.data(), k0, 1.0 / double(ch.thin));
    auto const kfn = detail::fused_chains<P, Mode, K>;
    auto const [g, b] = launch(kfn, kernel);
    kfn<<<g, b>>>(kernel, ch, io, stats);
    sync("ember::detail::fused_chains");
    chunk_output out;
    out.track.resize(n_track);
    if (n_track) cuda_check(cudaMemcpy(out.track.data(), dtrack_.data(), n_track * 8, cudaMemcpyDeviceToHost), "cudaMemcpy(track)");
    // The recording's block (the run reserves a whole advance in one) pinned at its first chunk
    // of 1 MiB or more.
    if (n_samples * sizeof(T) >= detail::cuda_pin_min_bytes) detail::host_block_cache::instance().pin(samples);
    if (n_samples)
      cuda_check(cudaMemcpy(samples + std::size_t(k0) * P::recorded_columns * std::size_t(chains_), dsamples_.data(),
                            n_samples * sizeof(T),
                            cudaMemcpyDeviceToHost),
                 "cudaMemcpy(samples)");
    std::swap(a_, b_);
    dirty_ = counters_dirty_ = true;
    return out;
  }

  template <class F>
  void reduce(F const& f, double* result) const {
    using detail::cuda_check;
    std::int64_t const tiles = (chains_ + 255) / 256;
    // Kept between calls (a warm-up reduces every transition): the tiles' sums, then the sums.
    std::size_t const need = std::size_t(tiles + 1) * F::size;
    if (need > reduction_.n) reduction_.resize(need);
    double* const part = reduction_.data();
    double* const out = part + std::size_t(tiles) * F::size;
    detail::reduce_tiles<<<unsigned(tiles), 256u>>>(f, chains_, tiles, part);
    // One tile (up to 256 chains) is its own sum: no second launch.
    cuda_check(cudaGetLastError(), "ember::detail::reduce_tiles");
    if (tiles > 1) {
      detail::reduce_values<><<<unsigned((F::size + 127) / 128), 128u>>>(part, tiles, F::size, out);
      cuda_check(cudaGetLastError(), "ember::detail::reduce_values");
    }
    // The copy waits for the kernels (the default stream), and reports their failure.
    cuda_check(cudaMemcpy(result, tiles > 1 ? out : part, F::size * sizeof(double), cudaMemcpyDeviceToHost),
               "cudaMemcpy(reduction)");
  }

  chain_view<T> view() const {
    T* o = const_cast<T*>(obs_.data());
    auto const n = stride_;
    return {a_.slots.data(), a_.frozen.data(), o, o + n, o + n + D * n, o + n + 2 * D * n, n};
  }
  /// The committed per-chain arrays, copied to the host when they changed since the last call.
  chain_arrays<T> const& host() const {
    mirror();
    if (dirty_) {
      copy_back(a_.slots, host_.slots);
      copy_back(a_.window, host_.window);
      copy_back(a_.frozen, host_.frozen);
      copy_back(a_.diverged_at, host_.diverged_at);
      copy_back(a_.accepted, host_.accepted);
      copy_back(a_.divergent, host_.divergent);
      copy_back(a_.truncated, host_.truncated);
      copy_back(a_.gradients, host_.gradients);
      dirty_ = counters_dirty_ = false;
    }
    return host_;
  }
  /// Only the counters of the committed arrays (frozen flags, accepted, divergent, truncated and
  /// gradient counts)
  /// copied to the host: what a progress report reads, without the chains' state (slots may be
  /// stale in the returned arrays).
  chain_arrays<T> const& counters() const {
    if (host_.stride == 0 && host_.frozen.size() != std::size_t(chains_)) {
      // Only the counter arrays, not the whole mirror (at 10^7 ULA chains, 170 MB of 1.13 GB).
      host_.frozen.resize(std::size_t(chains_));
      host_.accepted.resize(std::size_t(chains_));
      host_.divergent.resize(std::size_t(chains_));
      host_.truncated.resize(std::size_t(chains_));
      host_.gradients.resize(std::size_t(chains_));
      counters_dirty_ = true;
    }
    if (counters_dirty_) {
      copy_back(a_.frozen, host_.frozen);
      copy_back(a_.accepted, host_.accepted);
      copy_back(a_.divergent, host_.divergent);
      copy_back(a_.truncated, host_.truncated);
      copy_back(a_.gradients, host_.gradients);
      counters_dirty_ = false;
    }
    return host_;
  }
  /// What a result keeps of the committed arrays, copied from device memory straight into the
  /// caller's arrays of `chains` entries (positions D × chains, as `result::final_states`), with
  /// no host mirror in between: the run's result() at large chain counts is these copies and
  /// the fresh pages they land in. Returns the chains' divergent transitions in all.
  std::int64_t copy_out(T* positions, std::uint8_t* frozen, std::int64_t* diverged_at, std::int64_t* accepted) const {
    using detail::cuda_check;
    auto const n = std::size_t(chains_);
    auto get = [&](auto* dst, auto const& src, std::size_t count) {
      // At 10^7 chains these are 570 MB; pinned, each block is registered once and copies at the
      // bus's speed when a later result takes it from the host cache (host_cache.hpp).
      if (count * sizeof(*dst) >= detail::cuda_pin_min_bytes) detail::host_block_cache::instance().pin(dst);
      cuda_check(cudaMemcpy(dst, src.data(), count * sizeof(*dst), cudaMemcpyDeviceToHost), "cudaMemcpy(result)");
    };
    get(positions, a_.slots, std::size_t(D) * n);  // slots d < D are the position; stride_ == chains_
    get(frozen, a_.frozen, n);
    get(diverged_at, a_.diverged_at, n);
    get(accepted, a_.accepted, n);
    detail::host_vector<std::int64_t> divergent(n);
    get(divergent.data(), a_.divergent, n);
    return std::accumulate(divergent.begin(), divergent.end(), std::int64_t(0));
  }
  chain_arrays<T>& host_mutable() {
    host();
    return host_;
  }
  /// Copies the host arrays (a loaded checkpoint) to the device.
  void upload() {
    mirror();
    copy_to(host_.slots, a_.slots);
    copy_to(host_.window, a_.window);
    copy_to(host_.frozen, a_.frozen);
    copy_to(host_.diverged_at, a_.diverged_at);
    copy_to(host_.accepted, a_.accepted);
    copy_to(host_.divergent, a_.divergent);
    copy_to(host_.truncated, a_.truncated);
    copy_to(host_.gradients, a_.gradients);
  }

 private:
  // Device memory that frees itself; movable so a storage can be moved into a run.
  template <class V>
  struct device_vector {
    V* ptr = nullptr;
    std::size_t n = 0;
    device_vector() = default;
    explicit device_vector(std::size_t count) { resize(count); }
    device_vector(device_vector&& o) noexcept : ptr(std::exchange(o.ptr, nullptr)), n(std::exchange(o.n, 0)) {}
    device_vector& operator=(device_vector&& o) noexcept {
      std::swap(ptr, o.ptr);
      std::swap(n, o.n);
      return *this;
    }
    ~device_vector() {
      if (ptr) (void)cudaFree(ptr);
    }
    void resize(std::size_t count) {
      if (ptr) (void)cudaFree(ptr);
      ptr = nullptr;
      n = 0;  // a failed allocation leaves an empty buffer (kept buffers are asked again), never a size without memory
      if (count) detail::cuda_check(cudaMalloc(reinterpret_cast<void**>(&ptr), count * sizeof(V)), "cudaMalloc");
      n = count;
    }
    V* data() const { return ptr; }
  };
  struct arrays {
    device_vector<T> slots, window;
    device_vector<std::uint8_t> frozen;
    device_vector<std::int64_t> diverged_at, accepted, divergent, truncated, gradients;
    detail::device_arrays<T> pointers() const {
      return {slots.data(),    window.data(),    frozen.data(),   diverged_at.data(),
              accepted.data(), divergent.data(), truncated.data(), gradients.data()};
    }
  };
  void allocate(arrays& a) {
    auto const n = std::size_t(stride_);
    a.slots.resize(std::size_t(slots) * n);
    a.window.resize(n);
    a.frozen.resize(n);
    a.diverged_at.resize(n);
    a.accepted.resize(n);
    a.divergent.resize(n);
    a.truncated.resize(n);
    a.gradients.resize(n);
    detail::cuda_check(cudaMemset(a.window.data(), 0, n * sizeof(T)), "cudaMemset");
    detail::cuda_check(cudaMemset(a.accepted.data(), 0, n * 8), "cudaMemset");
    detail::cuda_check(cudaMemset(a.divergent.data(), 0, n * 8), "cudaMemset");
    detail::cuda_check(cudaMemset(a.truncated.data(), 0, n * 8), "cudaMemset");
    detail::cuda_check(cudaMemset(a.gradients.data(), 0, n * 8), "cudaMemset");
    detail::cuda_check(cudaMemset(a.frozen.data(), 0, n), "cudaMemset");
    detail::cuda_check(cudaMemset(a.diverged_at.data(), 0xFF, n * 8), "cudaMemset");  // −1 until init says −2
  }
  detail::cuda_chunk_io<T> io_for(T* samples, double* track, std::int64_t k0, double inv_thin) const {
    T* o = const_cast<T*>(obs_.data());
    auto const n = stride_;
    return {a_.pointers(), b_.pointers(), n, chains_, samples, track, k0, inv_thin,
            o, o + n, o + n + D * n, o + n + 2 * D * n};
  }
public:
  /// The team size a run of this kernel gets (threads_per_chain, or the automatic choice),
  /// decided at the run's first launch and kept: every kernel of a run (the warm-up's too) has the
  /// same energy, and a ChEES warm-up launches once per transition.
  template <class K>
  int team_size(K const& kernel) const {
    if (team_ == 0) team_ = be_.threads_per_chain > 0 ? be_.threads_per_chain : detail::auto_team_size(chains_, team_blocks(kernel));
    return team_;
  }

 private:
  // Grid and block of a launch: block_size threads, 1-D for one thread per chain; for teams,
  // (team, chains per block / 2, 2), at least two chains per block (detail::this_slot, and
  // core/team.hpp, which reads a team from that shape), and no more than spreads the run's chains
  // over the device (whole warps): a ghost team is a warp of work, where a ghost thread shared a
  // warp with real chains.
  template <class F, class K>
  std::pair<dim3, dim3> launch(F kfn, K const& kernel) const {
    // Asked of the runtime once per kernel function and kept: a warm-up launches every transition.
    void const* const id = reinterpret_cast<void const*>(kfn);
    for (auto const& l : launches_)
      if (l.kfn == id) return {l.grid, l.block};
    int sms = 0, per_sm = 0;
    detail::cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, be_.device),
                       "cudaDeviceGetAttribute(multiprocessor count)");
    int const w = team_size(kernel);
    int per_block = be_.block_size;
    if (w > 1) {
      // Teams: as few chains a block as spreads the run over every multiprocessor (a team's
      // warps share their multiprocessor's issue slots and L1: 128 chains in 16 blocks of 8 took
      // 47 µs a gradient of the logistic regression, 4 chains in one block 30 µs; H200,
      // 2026-11-29), in units of even counts of whole warps, at most block_size threads.
      int const unit = std::max(2, 32 / w);
      int const most = std::max(unit, (be_.block_size / w) / unit * unit);
      std::int64_t const spread = (chains_ + sms - 1) / sms;
      per_block = int(std::clamp<std::int64_t>((spread + unit - 1) / unit * unit, unit, most));
    }
    // One thread per chain keeps block_size threads a block: spreading few chains over every
    // multiprocessor in smaller blocks was measured both ways (bench/results/2026-11-29-gpu-h200.md:
    // 13-18 % faster at 10^3-10^4 chains x 1,000 steps, 13 % slower for P1's 10^4 x 100 tracked).
    detail::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kfn, w * per_block, 0),
                       "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (per_sm < 1)
      throw std::invalid_argument("ember::backend::cuda: block_size " + std::to_string(be_.block_size) +
                                  " is too large for this kernel's register use on device " + std::to_string(be_.device) +
                                  "; try 128");
    std::int64_t const needed = (chains_ + per_block - 1) / per_block;
    dim3 const block = w == 1 ? dim3(unsigned(per_block)) : dim3(unsigned(w), unsigned(per_block / 2), 2u);
    dim3 const grid(unsigned(std::min<std::int64_t>(needed, std::int64_t(sms) * per_sm)));
    launches_.push_back({id, grid, block});
    return {grid, block};
  }
  static void sync(char const* what) {
    detail::cuda_check(cudaGetLastError(), what);
    detail::cuda_check(cudaDeviceSynchronize(), what);
  }
  // The whole host mirror, allocated at the first call that needs it (counters() may have made
  // its three counter arrays already; chain_arrays::allocate sizes everything).
  void mirror() const {
    if (host_.stride == 0) {
      host_.allocate(slots, stride_, chains_);
      dirty_ = counters_dirty_ = true;
    }
  }
  template <class V, class A>
  static void copy_back(device_vector<V> const& d, A& h) {  // A: a std::vector or detail::host_buffer of V
    static_assert(std::is_same_v<typename A::value_type, V>, "ember: a host copy of device memory needs the same element type");
    detail::cuda_check(cudaMemcpy(h.data(), d.data(), h.size() * sizeof(V), cudaMemcpyDeviceToHost), "cudaMemcpy(state)");
  }
  template <class V, class A>
  static void copy_to(A const& h, device_vector<V>& d) {
    static_assert(std::is_same_v<typename A::value_type, V>, "ember: a device copy of host memory needs the same element type");
    detail::cuda_check(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice), "cudaMemcpy(state)");
  }

  cuda be_;
  std::int64_t chains_ = 0, stride_ = 0;
  arrays a_, b_;
  device_vector<T> obs_;
  mutable chain_arrays<T> host_;
  mutable bool dirty_ = true, counters_dirty_ = true;
  mutable int team_ = 0;  // team_size(), once known
  // Kept between launches: each kernel function's launch shape, a chunk's draws and tracked
  // sums, and reduce()'s sums (device memory that only grows).
  struct launch_shape {
    void const* kfn;
    dim3 grid, block;
  };
  mutable std::vector<launch_shape> launches_;
  device_vector<T> dsamples_;
  device_vector<double> dtrack_;
  mutable device_vector<double> reduction_;
};

}  // namespace ember
