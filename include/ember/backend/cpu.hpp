#pragma once
/// \file
/// `backend::cpu`: chains in blocks over OpenMP threads (Thrust's OMP system); inside a block
/// a SIMD batch of chains (16 floats with AVX-512) runs the whole fused loop
/// (pipeline/fused_loop.hpp) before the next batch starts; a last partial batch runs with its
/// extra lanes masked off. `backend::cpu{.simd = false}` runs every chain one at a time.
/// Per-kept-step diagnostics are summed per block in double and combined at the end, so
/// blocks never share a cache line on the hot path.

#include <ember/backend/detail/host_memory.hpp>
#include <ember/core/simd.hpp>
#include <ember/core/vec.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>
#include <ember/sample_options.hpp>

#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/omp/execution_policy.h>

#include <omp.h>

#include <span>
#include <type_traits>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {
namespace backend {

/// The CPU backend. `threads` (0: OpenMP's default) and `block` (chains per task, 0: automatic)
/// change only speed, never the draws: every chain's stream depends on its index alone.
/// `simd` picks the batch path (default) or the one-chain-at-a-time scalar path; both draw the
/// same random numbers bit for bit and agree to floating-point rounding.
struct cpu {
  int threads = 0;
  std::int64_t block = 0;
  bool simd = true;

  template <class P>
  void run(P const& pipe, schedule const& sch,
           sample_options<typename P::value_type, P::dim> const& opt,
           result<typename P::value_type, P::dim>& out) const;
};

}  // namespace backend

namespace detail {

template <class P>
struct cpu_sink {
  using T = typename P::value_type;
  static constexpr int D = P::dim;

  T* samples;
  T* final;
  std::uint8_t* frozen;
  std::int64_t* diverged_at;
  std::int64_t chains;
  double* track;  // this block's slice
  double accepted = 0;
  double divergent_transitions = 0;
  int lanes = 1;  // chains of the current batch that exist; the last batch may be partial

  // Lanes of the current batch that carry real chains (the rest run ghost chains past the end,
  // whose results are dropped).
  template <class S>
  mask_t<S> real() const {
    if constexpr (scalar_traits<S>::width == 1) {
      return true;
    } else {
      return lane_index<S>() < S(T(lanes));
    }
  }
  // Sum over lanes in the lane type's precision, for counts (exact in float below 2²⁴).
  template <class S>
  static double total(S const& v) {
    if constexpr (scalar_traits<S>::width == 1)
      return double(v);
    else
      return double(xsimd::hadd(v));
  }
  template <class S>
  void store(T* p, S const& v) const {
    if constexpr (scalar_traits<S>::width == 1) {
      *p = v;
    } else if (lanes == int(S::size)) {
      v.store_unaligned(p);
    } else {
      alignas(64) T tmp[S::size];
      v.store_aligned(tmp);
      for (int i = 0; i < lanes; ++i) p[i] = tmp[i];
    }
  }

  template <class S>
  void keep(std::int64_t k, std::uint32_t c, chain_state<S, D> const& s, S window, mask_t<S> live) {
    if constexpr (P::records)
      for (int d = 0; d < D; ++d) store(samples + (k * D + d) * chains + c, s.x[d]);
    if constexpr (P::tracks_any) {
      live = live && real<S>();
      if (!any(live)) return;
      double* a = track + k * track_stride<D>;
      a[0] += total(select(live, S(1), S(0)));
      if constexpr (P::tracks_energy) a[1] += lanes_in_double(select(live, s.energy, S(0)), false);
      if constexpr (P::tracks_acceptance) a[2] += total(select(live, window, S(0)));
      if constexpr (P::tracks_moments)
        for (int d = 0; d < D; ++d) {
          S x = select(live, s.x[d], S(0));
          a[3 + d] += lanes_in_double(x, false);
          a[3 + D + d] += lanes_in_double(x, true);
        }
    }
  }
  // Σ over lanes of v (or of v²), each lane widened to double first: Σx² − n·mean² cancels badly
  // when the mean is large against the spread, so nothing here may round in float.
  template <class S>
  static double lanes_in_double(S const& v, bool square) {
    if constexpr (scalar_traits<S>::width == 1) {
      return square ? double(v) * double(v) : double(v);
    } else {
      alignas(64) T lane[S::size];
      v.store_aligned(lane);
      double q = 0;
      for (std::size_t i = 0; i < S::size; ++i) q += square ? double(lane[i]) * double(lane[i]) : double(lane[i]);
      return q;
    }
  }
  template <class M>
  void diverged(std::uint32_t c, M const& newly, std::int64_t t) {
    if constexpr (std::is_same_v<M, bool>) {
      frozen[c] = 1;
      diverged_at[c] = t;
    } else {
      using S = typename M::batch_type;
      alignas(64) T flag[S::size];
      select(newly, S(1), S(0)).store_aligned(flag);
      for (int i = 0; i < lanes; ++i)
        if (flag[i] != T(0)) {
          frozen[c + std::uint32_t(i)] = 1;
          diverged_at[c + std::uint32_t(i)] = t;
        }
    }
  }
  template <class S>
  void finish(std::uint32_t c, chain_state<S, D> const& s, mask_t<S> is_frozen, S div, S acc) {
    for (int d = 0; d < D; ++d) store(final + std::int64_t(d) * chains + c, s.x[d]);
    auto r = real<S>();
    accepted += total(select(r && !is_frozen, acc, S(0)));
    divergent_transitions += total(select(r, div, S(0)));
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

template <class P>
void backend::cpu::run(P const& pipe, schedule const& sch,
                       sample_options<typename P::value_type, P::dim> const& opt,
                       result<typename P::value_type, P::dim>& out) const {
  using T = typename P::value_type;
  constexpr int D = P::dim;
  std::int64_t const C = opt.chains;
  int const nthreads = threads > 0 ? threads : omp_get_max_threads();
  using B = simd_batch<T>;
  constexpr std::int64_t W = std::int64_t(B::size);
  std::int64_t blk = block > 0 ? block : std::max<std::int64_t>(64, (C + 8 * nthreads - 1) / (8 * nthreads));
  // Whole batches per block, so a batch never straddles two blocks.
  if (simd) blk = (blk + W - 1) / W * W;
  std::int64_t const nblocks = (C + blk - 1) / blk;
  std::size_t const stride = P::tracks_any ? std::size_t(sch.kept) * detail::track_stride<D> : 0;

  // Per-block diagnostic sums: refused before any work if they would not fit.
  detail::require_host_memory((long double)nblocks * stride * sizeof(double), "ember::backend::cpu",
                              "tracked sums of " + detail::with_commas((long double)sch.kept) + " kept steps in " +
                                  std::to_string(nblocks) + " blocks of chains",
                              "use fewer, larger blocks (.block), thin more, or track fewer kept steps");
  std::vector<double> track(std::size_t(nblocks) * stride, 0.0);
  std::vector<double> accepted(std::size_t(nblocks), 0.0), divergent(std::size_t(nblocks), 0.0);
  auto const kernel = pipe.kernel;
  auto const seed = opt.seed;

  auto body = [&](std::int64_t b) {
    detail::cpu_sink<P> sink{out.samples_.data(), out.final_.data(), out.frozen_.data(),
                             out.diverged_at_.data(), C, track.data() + std::size_t(b) * stride};
    std::int64_t end = std::min(C, (b + 1) * blk);
    std::int64_t c = b * blk;
#if !defined(__CUDACC__)  // nvcc rejects xsimd batches in host-device code: scalar path only
    // Every chain runs in a batch, the last one partial if need be (its extra lanes run ghost
    // chains, C, C+1, ..., whose results are dropped), so a chain's path never depends on the
    // number of chains.
    if (simd)
      for (; c < end; c += W) {
        sink.lanes = int(std::min(W, end - c));
        auto ci = std::uint32_t(c);
        auto x0 = opt.init.empty() ? default_start<B, D>(seed, ci) : detail::load_start<B>(opt.init, c);
        fused_loop<B>(kernel, sch, seed, ci, x0, sink);
      }
#endif
    sink.lanes = 1;
    for (; c < end; ++c) {
      auto ci = std::uint32_t(c);
      auto x0 = opt.init.empty() ? default_start<T, D>(seed, ci) : detail::load_start<T>(opt.init, c);
      fused_loop<T>(kernel, sch, seed, ci, x0, sink);
    }
    accepted[std::size_t(b)] = sink.accepted;
    divergent[std::size_t(b)] = sink.divergent_transitions;
  };

  int const saved = omp_get_max_threads();
  omp_set_num_threads(nthreads);
  auto t0 = std::chrono::steady_clock::now();
  thrust::for_each(thrust::omp::par, thrust::counting_iterator<std::int64_t>(0),
                   thrust::counting_iterator<std::int64_t>(nblocks), body);
  auto t1 = std::chrono::steady_clock::now();
  omp_set_num_threads(saved);
  out.seconds_ = std::chrono::duration<double>(t1 - t0).count();

  double acc = 0, div = 0;
  for (std::int64_t b = 0; b < nblocks; ++b) {
    acc += accepted[std::size_t(b)];
    div += divergent[std::size_t(b)];
  }
  // Blocks' tracked sums, added in block order (fixed, so the trace does not depend on threads).
  std::vector<double> sums(stride, 0.0);
  for (std::int64_t b = 0; b < nblocks; ++b)
    for (std::size_t i = 0; i < stride; ++i) sums[i] += track[std::size_t(b) * stride + i];
  detail::finish_result<P>(out, sums.data(), acc, div);
}

}  // namespace ember
