#pragma once
/// \file
/// `backend::cuda`: the fused per-chain loop (pipeline/fused_loop.hpp) as ONE `__global__` per
/// pipeline type, one thread per chain, the chain's state in registers for the whole run.
/// Only for `.cu` translation units:
///
///     auto res = ember::sample(pipe, {.chains = 1'000'000, .steps = 1'000}, ember::backend::cuda{});
///
/// What the kernel does, per chain (grid-stride over chains, grid = resident blocks per
/// multiprocessor × multiprocessors):
///  - draws the start state from the chain's own Philox stream (or reads `.init`), exactly as
///    backend::cpu does: the counters hold the chain index, never a thread or block index, so a
///    chain's path is the CPU's up to floating-point contraction;
///  - at kept steps writes the draw to `samples[(k·D + d)·chains + c]` (consecutive threads,
///    consecutive addresses: coalesced) and adds its diagnostics to per-kept-step sums, reduced
///    over the block with warp shuffles and one double `atomicAdd` per block and value;
///  - at the end writes the final state (`d·chains + c`) and the chain's flags.
/// The results are copied back once, after the kernel. Every CUDA call is checked; a failure
/// throws `ember::cuda_error` naming the call. A run that needs more device memory than is free
/// is refused before anything is allocated, with the byte counts.

#include <ember/core/vec.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>
#include <ember/sample.hpp>
#include <ember/sample_options.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
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

/// The CUDA backend: every chain is one thread of one kernel launch. `device` picks the GPU;
/// `block_size` (a multiple of 32, at most 1024) changes only speed, never the draws.
struct cuda {
  int device = 0;
  int block_size = 256;

  template <class P>
  void run(P const& pipe, schedule const& sch, sample_options<typename P::value_type, P::dim> const& opt,
           result<typename P::value_type, P::dim>& out) const;
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

// Device memory owned for the duration of one run; freed even when a later call throws.
template <class T>
struct device_buffer {
  T* ptr = nullptr;
  device_buffer(std::size_t n, char const* what) {
    if (n == 0) return;
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)), what);
  }
  device_buffer(device_buffer const&) = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  ~device_buffer() {
    if (ptr) (void)cudaFree(ptr);
  }
};

// Where the kernel writes; plain pointers, passed by value.
template <class T, int D>
struct cuda_outputs {
  T* samples;              // kept·D·chains, when recording
  T* final;                // D·chains
  std::uint8_t* frozen;    // chains
  std::int64_t* diverged_at;  // chains
  double* track;           // kept·track_stride, when tracking
  double* totals;          // [accepted over live chains, divergent transitions]
  vec<T, D> const* init;   // chains start states, or null for x₀ ~ N(0, I)
  std::int64_t chains;
};

__device__ EMBER_INLINE double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Adds value i of every thread of the block into dst[i] (i < N), with one atomicAdd per block and
// value. Every thread of the block must call it (the kernel keeps surplus threads running as
// ghosts that contribute zeros). `value(i)` is called with compile-time i only, so per-thread
// values stay in registers.
// One 8 KiB buffer per kernel, shared by every reduction in it: [warp][value within a chunk].
__device__ inline double (*reduction_buffer())[32] {
  __shared__ double part[32][32];
  return part;
}

template <int N, class F>
__device__ EMBER_INLINE void block_sum_into(double* dst, F const& value) {
  double(*part)[32] = reduction_buffer();
  int const lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5, warps = int(blockDim.x) >> 5;
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
      if (int(threadIdx.x) < 32 && Chunk * 32 + int(threadIdx.x) < N) {
        double s = 0;
        for (int w = 0; w < warps; ++w) s += part[w][threadIdx.x];
        atomicAdd(dst + Chunk * 32 + threadIdx.x, s);
      }
      __syncthreads();
    };
    (one(std::integral_constant<int, I>{}, std::make_integer_sequence<int, 32>{}), ...);
  }(std::make_integer_sequence<int, (N + 31) / 32>{});
}

// The per-thread sink of the fused loop: the chain's flags stay in registers until finish().
template <class P>
struct cuda_sink {
  using T = typename P::value_type;
  static constexpr int D = P::dim;

  cuda_outputs<T, D> const& o;
  std::uint32_t chain;
  bool real;  // false for the surplus threads of the last grid-stride round
  bool frozen = false;
  std::int64_t diverged_at = -2;
  double accepted = 0, divergent_transitions = 0;

  __device__ EMBER_INLINE void keep(std::int64_t k, std::uint32_t c, chain_state<T, D> const& s, T window,
                                    bool live) {
    if constexpr (P::records)
      if (real)
#pragma unroll
        for (int d = 0; d < D; ++d) o.samples[(k * D + d) * o.chains + c] = s.x[d];
    if constexpr (P::tracks_any) {
      bool const counted = real && live;
      // Ghosts and frozen chains contribute 0 by selection, never by multiplying: a chain frozen
      // at its start state (t = −1) may carry a non-finite energy, and NaN·0 is NaN.
      block_sum_into<track_stride<D>>(o.track + k * track_stride<D>, [&](auto i) -> double {
        constexpr int I = decltype(i)::value;
        if (!counted) return 0.0;
        if constexpr (I == 0)
          return 1.0;
        else if constexpr (I == 1)
          return double(s.energy);
        else if constexpr (I == 2)
          return double(window);
        else if constexpr (I < 3 + D)
          return double(s.x[I - 3]);
        else
          return double(s.x[I - 3 - D]) * double(s.x[I - 3 - D]);
      });
    }
  }
  __device__ EMBER_INLINE void diverged(std::uint32_t, bool newly, std::int64_t t) {
    if (newly) {
      frozen = true;
      diverged_at = t;
    }
  }
  __device__ EMBER_INLINE void finish(std::uint32_t c, chain_state<T, D> const& s, bool is_frozen, T div, T acc) {
    if (!real) return;
#pragma unroll
    for (int d = 0; d < D; ++d) o.final[std::int64_t(d) * o.chains + c] = s.x[d];
    o.frozen[c] = is_frozen ? 1 : 0;
    o.diverged_at[c] = diverged_at;
    if (!is_frozen) accepted += double(acc);
    divergent_transitions += double(div);
  }
};

/// The one kernel of a pipeline type `P`. The transition kernel (energy parameters included)
/// travels by value in the launch parameters; per chain, everything else is registers.
template <class P, class Kernel>
__global__ void fused_chains(Kernel const kernel, schedule const sch, std::uint64_t const seed,
                             cuda_outputs<typename P::value_type, P::dim> const o) {
  using T = typename P::value_type;
  constexpr int D = P::dim;
  double accepted = 0, divergent = 0;
  std::int64_t const stride = std::int64_t(gridDim.x) * blockDim.x;
  // The bound depends on the block only, so every thread of a block runs the same rounds and
  // reaches the block reductions in keep() together; surplus threads run chain chains−1 as ghosts.
  for (std::int64_t base = std::int64_t(blockIdx.x) * blockDim.x; base < o.chains; base += stride) {
    std::int64_t c = base + threadIdx.x;
    bool const real = c < o.chains;
    auto const ci = std::uint32_t(real ? c : o.chains - 1);
    vec<T, D> const x0 = o.init ? o.init[ci] : default_start<T, D>(seed, ci);
    cuda_sink<P> sink{o, ci, real};
    fused_loop<T>(kernel, sch, seed, ci, x0, sink);
    accepted += sink.accepted;
    divergent += sink.divergent_transitions;
  }
  if (blockIdx.x * blockDim.x < o.chains)  // blocks with no chain at all never reach this far
    block_sum_into<2>(o.totals, [&](auto i) { return decltype(i)::value == 0 ? accepted : divergent; });
}

}  // namespace detail

template <class P>
void backend::cuda::run(P const& pipe, schedule const& sch, sample_options<typename P::value_type, P::dim> const& opt,
                        result<typename P::value_type, P::dim>& out) const {
  using T = typename P::value_type;
  constexpr int D = P::dim;
  using Kernel = std::remove_cvref_t<decltype(pipe.kernel)>;
  static_assert(std::is_trivially_copyable_v<Kernel>,
                "ember::backend::cuda passes the transition kernel (with its energy) by value to the GPU, "
                "so it must be trivially copyable: no pointers to host memory, no std::vector, no virtuals");
  static_assert(sizeof(Kernel) + sizeof(schedule) + sizeof(std::uint64_t) + sizeof(detail::cuda_outputs<T, D>) <=
                    detail::cuda_param_limit,
                "ember::backend::cuda: this energy's parameters do not fit in a kernel launch's parameter "
                "block (32,764 bytes with CUDA >= 12.1, 4,096 before); use fewer mixture components or a "
                "smaller dimension, or sample it with backend::cpu");
  using detail::cuda_check;

  if (block_size < 32 || block_size > 1024 || block_size % 32 != 0)
    throw std::invalid_argument("ember::backend::cuda: block_size must be a multiple of 32 between 32 and 1024, got " +
                                std::to_string(block_size));
  int count = 0;
  cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (device < 0 || device >= count)
    throw std::invalid_argument("ember::backend::cuda: device " + std::to_string(device) + " does not exist (" +
                                std::to_string(count) + " CUDA devices)");
  cuda_check(cudaSetDevice(device), "cudaSetDevice");

  std::int64_t const C = opt.chains;
  std::size_t const n_samples = P::records ? std::size_t(sch.kept) * D * std::size_t(C) : 0;
  std::size_t const n_track = P::tracks_any ? std::size_t(sch.kept) * detail::track_stride<D> : 0;
  std::size_t const n_init = opt.init.empty() ? 0 : std::size_t(C);
  std::size_t const bytes = n_samples * sizeof(T) + std::size_t(C) * (D * sizeof(T) + 1 + 8) + n_track * 8 + 16 +
                            n_init * sizeof(vec<T, D>);
  detail::cuda_require_free(bytes, device);

  detail::device_buffer<T> samples(n_samples, "cudaMalloc(samples)"), final(std::size_t(D) * C, "cudaMalloc(final)");
  detail::device_buffer<std::uint8_t> frozen(std::size_t(C), "cudaMalloc(frozen)");
  detail::device_buffer<std::int64_t> diverged_at(std::size_t(C), "cudaMalloc(diverged_at)");
  detail::device_buffer<double> track(n_track, "cudaMalloc(track)"), totals(2, "cudaMalloc(totals)");
  detail::device_buffer<vec<T, D>> init(n_init, "cudaMalloc(init)");
  if (n_track) cuda_check(cudaMemset(track.ptr, 0, n_track * sizeof(double)), "cudaMemset(track)");
  cuda_check(cudaMemset(totals.ptr, 0, 2 * sizeof(double)), "cudaMemset(totals)");
  if (n_init)
    cuda_check(cudaMemcpy(init.ptr, opt.init.data(), n_init * sizeof(vec<T, D>), cudaMemcpyHostToDevice),
               "cudaMemcpy(init)");

  auto const kfn = detail::fused_chains<P, Kernel>;
  int sms = 0, per_sm = 0;
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(multiprocessor count)");
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kfn, block_size, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (per_sm < 1)
    throw std::invalid_argument("ember::backend::cuda: block_size " + std::to_string(block_size) +
                                " is too large for this kernel's register use on device " + std::to_string(device) +
                                "; try 128");
  std::int64_t const needed = (C + block_size - 1) / block_size;
  auto const grid = unsigned(std::min<std::int64_t>(needed, std::int64_t(sms) * per_sm));

  detail::cuda_outputs<T, D> const o{samples.ptr, final.ptr, frozen.ptr, diverged_at.ptr, track.ptr, totals.ptr,
                                     n_init ? init.ptr : nullptr, C};
  // The guard exists before either event, so a failed second create does not leak the first.
  struct events {
    cudaEvent_t a = nullptr, b = nullptr;
    ~events() {
      if (a) (void)cudaEventDestroy(a);
      if (b) (void)cudaEventDestroy(b);
    }
  } ev;
  cuda_check(cudaEventCreate(&ev.a), "cudaEventCreate");
  cuda_check(cudaEventCreate(&ev.b), "cudaEventCreate");
  cudaEvent_t const start = ev.a, stop = ev.b;
  cuda_check(cudaEventRecord(start), "cudaEventRecord");
  kfn<<<grid, unsigned(block_size)>>>(pipe.kernel, sch, opt.seed, o);
  cuda_check(cudaGetLastError(), "launch of ember::detail::fused_chains");
  cuda_check(cudaEventRecord(stop), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(stop), "ember::detail::fused_chains (kernel execution)");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  out.seconds_ = double(ms) * 1e-3;

  std::vector<double> tr(n_track);
  double tot[2] = {0, 0};
  if (n_samples)
    cuda_check(cudaMemcpy(out.samples_.data(), samples.ptr, n_samples * sizeof(T), cudaMemcpyDeviceToHost),
               "cudaMemcpy(samples)");
  cuda_check(cudaMemcpy(out.final_.data(), final.ptr, std::size_t(D) * C * sizeof(T), cudaMemcpyDeviceToHost),
             "cudaMemcpy(final)");
  cuda_check(cudaMemcpy(out.frozen_.data(), frozen.ptr, std::size_t(C), cudaMemcpyDeviceToHost), "cudaMemcpy(frozen)");
  cuda_check(cudaMemcpy(out.diverged_at_.data(), diverged_at.ptr, std::size_t(C) * 8, cudaMemcpyDeviceToHost),
             "cudaMemcpy(diverged_at)");
  if (n_track)
    cuda_check(cudaMemcpy(tr.data(), track.ptr, n_track * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy(track)");
  cuda_check(cudaMemcpy(tot, totals.ptr, sizeof tot, cudaMemcpyDeviceToHost), "cudaMemcpy(totals)");

  // The same summaries as backend::cpu, from the device's sums.
  detail::finish_result<P>(out, tr.data(), tot[0], tot[1]);
}

}  // namespace ember
