#pragma once
/// \file
/// `measure(report, target, sampler, type_c<T>, type_c<Backend>, axes)`: one configuration of a
/// benchmark matrix, run once per chain count and seed of `axes` (its replicates) and added to
/// `report`. For each: the
/// target's instance in precision T, the sampler's pipeline on its energy with `record()`, a run
/// (run/run.hpp) advanced through the warm-up and then through the draws, each timed apart; gradient
/// evaluations counted exactly (`gradients_of_transition` at every transition, with the kernel
/// of that transition: ChEES changes the trajectory length during warm-up; NUTS's from the run's
/// own count, `result::gradients()`, since a tree's size is known only once built); then the draws of the
/// reported coordinates go to the report, which computes the metrics of metrics.hpp.
///
/// A configuration that cannot make sense is skipped at compile time, with the reason in its
/// row, instead of failing to compile: a sampler that needs a gradient on an energy without one,
/// or `backend::cuda` in a translation unit not compiled by nvcc. Without a GPU at run time a
/// CUDA configuration is skipped likewise.

#include <ember/benchmark/axes.hpp>
#include <ember/benchmark/report.hpp>
#include <ember/benchmark/samplers.hpp>
#include <ember/benchmark/target.hpp>
#include <ember/core/concepts.hpp>
#include <ember/run/run.hpp>
#if !defined(__CUDACC__)
#include <ember/backend/cpu.hpp>  // a host unit measures the CPU; a .cu unit includes ember/backend/cuda.cuh
#endif

#include <boost/hana/type.hpp>

#ifdef __CUDACC__
#include <ember/data/device.cuh>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace ember::backend {
struct cuda; // defined in backend/cuda.cuh, which only nvcc compiles
}

namespace ember::benchmark {

namespace detail {
template <class T>
constexpr char const* precision_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}
// A backend's own name; backend::cuda's is spelled here because a host unit sees it declared only.
template <class B>
constexpr char const* backend_name() {
  if constexpr (std::is_same_v<B, backend::cuda>)
    return "cuda";
  else
    return B::name;
}
// Whether this translation unit can run on Backend (CUDA needs nvcc).
template <class Backend>
#ifdef __CUDACC__
inline constexpr bool compiled_for = true;
#else
inline constexpr bool compiled_for = !std::is_same_v<Backend, backend::cuda>;
#endif
// The energy a run on Backend reads: on backend::cuda a copy whose data (data sets, a large
// gaussian's precision matrix) lives in device memory, owned by the returned object
// (data/device.cuh); elsewhere the energy itself. Either way `.energy()` gives it.
template <class E>
struct host_energy {
  E e;
  E const& energy() const { return e; }
};
template <class Backend, class E>
auto energy_for(E const& e) {
#ifdef __CUDACC__
  if constexpr (std::is_same_v<Backend, backend::cuda>)
    return to_device(e);
  else
#endif
    return host_energy<E>{e};
}
inline bool cuda_device_present() {
#ifdef __CUDACC__
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
#else
  return false;
#endif
}
}  // namespace detail

/// Runs one configuration for every chain count and seed of `axes` and adds a row each to `out`.
/// `id` names the configuration's translation unit (for its compile time), if it has its own;
/// `backend` points to the backend's settings (threads, block size, threads per chain), or is null
/// for `Backend{}` (a pointer: in a host unit `backend::cuda` is only declared).
/// Only the run and the copying out of its draws are compiled here, once per configuration; the
/// statistics, health gates and JSON of the row are the report's, compiled once (report.hpp).
template <class Target, class Sampler, class T, class Backend>
void measure(report& out, Target const& target, Sampler const& sampler, boost::hana::basic_type<T>,
             boost::hana::basic_type<Backend>, run_axes const& axes, char const* id = "",
             Backend const* backend = nullptr) {
  using instance_type = decltype(target.template make<T>());
  constexpr int D = instance_type::dim;
  using skip = configuration_run::skip;
  auto const row = [&](std::int64_t chains) {
    configuration_run r;
    r.id = id;
    r.target = target.name;
    r.sampler = sampler.name;
    r.precision = detail::precision_name<T>();
    r.backend = detail::backend_name<Backend>();
    r.chains = target.max_chains > 0 ? std::min(chains, target.max_chains) : chains;
    r.warmup = axes.warmup;
    r.draws = axes.draws;
    r.dim = D;
    r.target_acceptance = sampler.target_acceptance;
    if constexpr (requires { backend->threads; })
      if (backend && backend->threads > 0) r.threads = backend->threads;
    return r;
  };
  // The chain counts of `axes` as this target runs them (capped by its max_chains), each once:
  // two counts above the cap would otherwise measure the same run twice.
  std::vector<std::int64_t> counts;
  for (std::int64_t chains : axes.chains) {
    std::int64_t const n = row(chains).chains;
    if (std::find(counts.begin(), counts.end(), n) == counts.end()) counts.push_back(n);
  }
  // Decided before anything of the target is compiled, so a skipped configuration costs nothing.
  if constexpr (!detail::compiled_for<Backend>) {
    for (std::int64_t chains : counts) {
      auto r = row(chains);
      r.seed = axes.seed;
      r.skipped = skip::needs_nvcc;
      out.add(r);
    }
  } else {
    auto const instance = target.template make<T>();
    using energy_type = std::remove_cvref_t<decltype(instance.energy())>;
    for (std::int64_t chains : counts)
    for (std::int64_t rep = 0; rep < axes.replicates; ++rep) {
      configuration_run r = row(chains);
      r.seed = axes.seed + std::uint64_t(rep);
      if constexpr (Sampler::needs_gradient && !DifferentiableEnergy<energy_type>)
        r.skipped = skip::needs_gradient;
      if constexpr (std::is_same_v<Backend, backend::cuda>) {
        if (r.skipped == skip::none && !detail::cuda_device_present())
          r.skipped = skip::no_device;
      }
      if (r.skipped != skip::none) {
        if (rep == 0) out.add(r);  // one row for a configuration that did not run
        continue;
      }
      if constexpr (!Sampler::needs_gradient || DifferentiableEnergy<energy_type>) {
        auto const held = detail::energy_for<Backend>(instance.energy());
        auto const& energy = held.energy();
        auto const pipe = sampler(energy, axes.warmup) | record();
        auto run = start(pipe, {.chains = r.chains, .seed = r.seed, .progress = false},
                         backend ? *backend : Backend{});
        using clock = std::chrono::steady_clock;
        auto const t0 = clock::now();
        double grads = 0;
        using kernel_type = std::remove_cvref_t<decltype(run.kernel())>;
        if constexpr (counts_gradients_as_it_goes<kernel_type>) {
          run.advance(axes.warmup);  // counted by the run (below)
        } else if constexpr (requires { run.kernel().trajectory_length; }) {
          // HMC: the warm-up may change the steps per transition, so step through it.
          for (std::int64_t t = 0; t < axes.warmup; ++t) {
            grads += gradients_of_transition(run.kernel(), t);
            run.advance(1);
          }
        } else {
          grads = gradients_of_transition(run.kernel(), 0) * double(axes.warmup);
          run.advance(axes.warmup);
        }
        auto const t1 = clock::now();
        run.advance(axes.draws);
        auto const t2 = clock::now();
        r.warmup_s = std::chrono::duration<double>(t1 - t0).count();
        r.sampling_s = std::chrono::duration<double>(t2 - t1).count();
        r.grads_warmup = grads;
        auto const k = run.kernel();
        auto const res = run.result();
        std::vector<double> cumulative(std::size_t(axes.draws + 1), 0.0);
        if constexpr (counts_gradients_as_it_goes<kernel_type>) {
          // The run's exact counts, per chain; a kept draw's own count is not kept, so the
          // cumulative count is the mean per transition times n (NUTS's tree sizes vary by draw).
          r.grads_warmup = double(res.warmup_gradients()) / double(r.chains);
          double const per = double(res.gradients()) / (double(r.chains) * double(axes.draws));
          for (std::int64_t n = 0; n < axes.draws; ++n) cumulative[std::size_t(n + 1)] = per * double(n + 1);
        } else {
          for (std::int64_t n = 0; n < axes.draws; ++n)
            cumulative[std::size_t(n + 1)] = cumulative[std::size_t(n)] + gradients_of_transition(k, axes.warmup + n);
        }

        r.acceptance = res.acceptance_rate();
        r.harmonic_target = res.harmonic_target();
        // Where the sampler declares a target (NaN: no acceptance gate), the one the run's warm-up
        // had, so a row never claims a target it did not aim at (NUTS reports none: its acceptance
        // statistic is not its acceptance rate, and the sampler's stays).
        if (std::isfinite(r.target_acceptance) && std::isfinite(res.target_acceptance())) r.target_acceptance = res.target_acceptance();
        r.divergences = res.divergent_transitions() + res.divergent_chains();
        // The reported coordinates of every kept draw, [d][c][i], so each chain's series is contiguous.
        auto const s = res.samples();
        std::int64_t const C = r.chains, N = axes.draws;
        std::vector<double> xs(std::size_t(D * C * N));
        for (std::int64_t c = 0; c < C; ++c)
          for (std::int64_t i = 0; i < N; ++i) {
            auto const y = instance.reported(s.draw(i, c));
            for (int d = 0; d < D; ++d)
              xs[std::size_t((d * C + c) * N + i)] = y[d];
          }
        auto const reference = instance.reference();
        r.xs = xs;
        r.cumulative = cumulative;
        r.reference = view_of(reference);
        out.add(r);
      }
    }
  }
}

}  // namespace ember::benchmark
