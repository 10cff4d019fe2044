#pragma once
/// \file
/// `backend::cpu`: chains in blocks over OpenMP threads (Thrust's OMP system); inside a block
/// each chain runs the whole fused loop (pipeline/fused_loop.hpp) before the next starts.
/// Per-kept-step diagnostics are summed per block in double and combined at the end, so
/// blocks never share a cache line on the hot path.

#include <ember/core/vec.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>
#include <ember/sample_options.hpp>

#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/omp/execution_policy.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace ember {
namespace backend {

/// The CPU backend. `threads` (0: OpenMP's default) and `block` (chains per task, 0: automatic)
/// change only speed, never the draws: every chain's stream depends on its index alone.
struct cpu {
  int threads = 0;
  std::int64_t block = 0;

  template <class P>
  void run(P const& pipe, schedule const& sch,
           sample_options<typename P::value_type, P::dim> const& opt,
           result<typename P::value_type, P::dim>& out) const;
};

}  // namespace backend

namespace detail {

// Per-block accumulators of the tracked diagnostics: for each kept step, [live count, energy,
// acceptance, Σx (D), Σx² (D)].
template <int D>
inline constexpr int track_stride = 3 + 2 * D;

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

  void keep(std::int64_t k, std::uint32_t c, chain_state<T, D> const& s, T window, bool live) {
    if constexpr (P::records)
      for (int d = 0; d < D; ++d) samples[(k * D + d) * chains + c] = s.x[d];
    if constexpr (P::tracks_any) {
      if (!live) return;
      double* a = track + k * track_stride<D>;
      a[0] += 1;
      a[1] += double(s.energy);
      a[2] += double(window);
      for (int d = 0; d < D; ++d) {
        double x = double(s.x[d]);
        a[3 + d] += x;
        a[3 + D + d] += x * x;
      }
    }
  }
  void diverged(std::uint32_t c, bool, std::int64_t t) {
    frozen[c] = 1;
    diverged_at[c] = t;
  }
  void finish(std::uint32_t c, chain_state<T, D> const& s, bool is_frozen, T div, T acc) {
    for (int d = 0; d < D; ++d) final[std::int64_t(d) * chains + c] = s.x[d];
    if (!is_frozen) accepted += double(acc);
    divergent_transitions += double(div);
  }
};

}  // namespace detail

template <class P>
void backend::cpu::run(P const& pipe, schedule const& sch,
                       sample_options<typename P::value_type, P::dim> const& opt,
                       result<typename P::value_type, P::dim>& out) const {
  using T = typename P::value_type;
  constexpr int D = P::dim;
  std::int64_t const C = opt.chains;
  int const nthreads = threads > 0 ? threads : omp_get_max_threads();
  std::int64_t blk = block > 0 ? block : std::max<std::int64_t>(64, (C + 8 * nthreads - 1) / (8 * nthreads));
  std::int64_t const nblocks = (C + blk - 1) / blk;
  std::size_t const stride = P::tracks_any ? std::size_t(sch.kept) * detail::track_stride<D> : 0;

  std::vector<double> track(std::size_t(nblocks) * stride, 0.0);
  std::vector<double> accepted(std::size_t(nblocks), 0.0), divergent(std::size_t(nblocks), 0.0);
  auto const kernel = pipe.kernel;
  auto const seed = opt.seed;

  auto body = [&](std::int64_t b) {
    detail::cpu_sink<P> sink{out.samples_.data(), out.final_.data(), out.frozen_.data(),
                             out.diverged_at_.data(), C, track.data() + std::size_t(b) * stride};
    std::int64_t end = std::min(C, (b + 1) * blk);
    for (std::int64_t c = b * blk; c < end; ++c) {
      auto ci = std::uint32_t(c);
      vec<T, D> x0 = opt.init.empty() ? default_start<T, D>(seed, ci) : opt.init[std::size_t(c)];
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
  out.divergent_transitions_ = std::int64_t(div);
  for (auto f : out.frozen_) out.divergent_chains_ += f;
  std::int64_t live = C - out.divergent_chains_;
  out.acceptance_ = (live > 0 && sch.steps > 0) ? acc / (double(live) * double(sch.steps)) : 0.0;

  if constexpr (P::tracks_any) {
    auto& tr = out.trace_;
    for (std::int64_t k = 0; k < sch.kept; ++k) {
      double a[detail::track_stride<D>] = {};
      for (std::int64_t b = 0; b < nblocks; ++b)
        for (int i = 0; i < detail::track_stride<D>; ++i)
          a[i] += track[std::size_t(b) * stride + std::size_t(k) * detail::track_stride<D> + i];
      double n = a[0];
      tr.live_chains.push_back(std::int64_t(n));
      if constexpr (P::tracks_moments) {
        vec<double, D> m, v;
        for (int d = 0; d < D; ++d) {
          m[d] = a[3 + d] / n;
          v[d] = n > 1 ? std::max(0.0, (a[3 + D + d] - n * m[d] * m[d]) / (n - 1)) : 0.0;
        }
        tr.mean.push_back(m);
        tr.variance.push_back(v);
      }
      if constexpr (P::tracks_energy) tr.energy.push_back(a[1] / n);
      if constexpr (P::tracks_acceptance) tr.acceptance.push_back(a[2] / n);
    }
  }
}

}  // namespace ember
