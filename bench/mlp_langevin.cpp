// Neural energies' speed (issue 29): Langevin (ULA) on TorchEBM's MLP energy, 2 → 128 → 128 → 1
// with SiLU, at 256, 4,096 and 16,384 chains × 100 steps, as chain-steps per second and as a
// fraction of this machine's FMA peak measured in the same run; and, for an input of 784
// (784 → 256 → 256 → 1), the time of one gradient against one value. One JSON line per
// measurement; bench/compare_mlp.sh runs PyTorch's same Langevin beside it and prints ratios.
// Beside each, the same network with run-time widths (`mlp<float, 2, nn::silu, dynamic>`) and a
// run-time activation too (`nn::any`), alternated with it, and whether they draw the same bits.
//
// The floor: a chain-step is one gradient, i.e. a forward pass (2·128 + 128·128 + 128 multiply-
// adds) and a backward pass (128·128 + 128·2), 33,408 multiply-adds, and 256 SiLUs forward with
// their slopes. At the measured FMA peak P (lane-FMAs per second on every thread) the step costs at
// least 33,408 / P seconds a chain; "of_peak" is the measured rate over P / 33,408.
//
// usage: ember_mlp_langevin [--threads N] [--steps N] [--weights FILE.npz]
//   --weights: the 2 → 128 → 128 → 1 network's state_dict (bench/peers/mlp_torch.py writes the
//   one it times, so both time the same weights); without it, torch.nn.Linear-style uniform ones.
#include <ember/ember.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ember;

namespace {

using F = simd_batch<float>;

// Lane-FMAs per second on `threads` threads: 12 independent accumulators per thread (more than the
// FMA latency × issue width), each a batch of float lanes.
double fma_peak(int threads) {
  constexpr int K = 12;
  long const reps = 40'000'000;
  auto t0 = std::chrono::steady_clock::now();
  double sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    F acc[K];
    for (int k = 0; k < K; ++k) acc[k] = F(float(k) * 1e-3f);
    F const a(0.999999f), b(1e-7f);
    for (long r = 0; r < reps; ++r)
      for (int k = 0; k < K; ++k) acc[k] = xsimd::fma(acc[k], a, b);
    F s = acc[0];
    for (int k = 1; k < K; ++k) s = s + acc[k];
    sink += double(xsimd::hadd(s));
  }
  double const sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 12345.678) std::puts("");
  return double(threads) * double(reps) * K * double(F::size) / sec;
}

template <class P>
double seconds(P const& pipe, std::int64_t chains, std::int64_t steps, int threads) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = sample(pipe, {.chains = chains, .steps = steps, .seed = 7, .progress = false}, backend::cpu{.threads = threads});
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!(r.final_state(0)[0] == r.final_state(0)[0])) std::puts("NaN");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  std::int64_t steps = 100;
  std::string weights;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--weights") && i + 1 < argc) weights = argv[++i];
    else {
      std::fprintf(stderr, "usage: ember_mlp_langevin [--threads N] [--steps N] [--weights FILE.npz]\n");
      return 2;
    }
  }
  // The best of three (the clock ramps up under load); again after the runs, the higher counts.
  double peak = 0;
  for (int rep = 0; rep < 3; ++rep) peak = std::max(peak, fma_peak(threads));
  std::printf("{\"what\": \"fma_peak\", \"threads\": %d, \"lane_fma_per_s\": %.4g, \"lanes\": %d}\n", threads, peak, int(F::size));

  auto const w = weights.empty() ? mlp_weights<float>::uniform({2, 128, 128, 1}, 1) : mlp_weights<float>::from_npz(weights);
  mlp<float, 2, nn::silu, 128, 128> const U(w);
  double const fmas = 2 * (2 * 128 + 128 * 128) + 128;
  // The same network with its widths (and then its activation) chosen at run time
  // (energy/mlp_dynamic.hpp): the same sums in the same order, so the same draws.
  mlp<float, 2, nn::silu, dynamic> const Ud(w);
  mlp<float, 2, nn::any, dynamic> const Ua(w, {}, nn::any::named("silu"));
  auto const kernel = ula(U, {.step_size = 0.01});
  auto const kernel_d = ula(Ud, {.step_size = 0.01});
  auto const kernel_a = ula(Ua, {.step_size = 0.01});
  seconds(kernel, 1024, 5, threads);  // warm the thread team and the host cache
  seconds(kernel_d, 1024, 5, threads);
  seconds(kernel_a, 1024, 5, threads);
  {
    auto const opts = sample_options<float, 2>{.chains = 64, .steps = 20, .seed = 3, .progress = false};
    auto const ra = sample(kernel, opts), rb = sample(kernel_d, opts), rc = sample(kernel_a, opts);
    auto const a = ra.final_states(), b = rb.final_states(), c = rc.final_states();
    bool const same = std::equal(a.begin(), a.end(), b.begin()) && std::equal(a.begin(), a.end(), c.begin());
    std::printf("{\"what\": \"dynamic_same_draws\", \"same\": %s}\n", same ? "true" : "false");
  }
  for (std::int64_t chains : {256, 4096, 16384}) {
    // Alternated, best of three each: compile-time widths, run-time widths, run-time activation too.
    double best[3] = {1e300, 1e300, 1e300};
    for (int rep = 0; rep < 3; ++rep) {
      best[0] = std::min(best[0], seconds(kernel, chains, steps, threads));
      best[1] = std::min(best[1], seconds(kernel_d, chains, steps, threads));
      best[2] = std::min(best[2], seconds(kernel_a, chains, steps, threads));
    }
    peak = std::max(peak, fma_peak(threads));
    char const* impl[3] = {"ember", "ember_dynamic", "ember_dynamic_any"};
    for (int v = 0; v < 3; ++v) {
      double const rate = double(chains) * double(steps) / best[v];
      std::printf("{\"what\": \"langevin\", \"impl\": \"%s\", \"net\": \"2-128-128-1 silu\", \"chains\": %lld, \"steps\": %lld, "
                  "\"threads\": %d, \"seconds\": %.4g, \"chain_steps_per_s\": %.4g, \"of_peak\": %.3f, \"over_compile_time\": %.3f}\n",
                  impl[v], (long long)chains, (long long)steps, threads, best[v], rate, rate * fmas / peak, best[0] / best[v]);
    }
    std::fflush(stdout);
  }

  // 784 → 256 → 256 → 1: one gradient against one value, on one thread, a batch of chains at a
  // time over 64 batches (the weights, 0.9 MB, stay in L2/L3 as in a run).
  {
    auto const wi = mlp_weights<float>::uniform({784, 256, 256, 1}, 2);
    mlp<float, 784, nn::silu, 256, 256> const V(wi);
    constexpr int nb = 64;
    std::vector<vec<F, 784>> xs(nb), gs(nb);
    for (int b = 0; b < nb; ++b)
      for (int i = 0; i < 784; ++i) xs[std::size_t(b)][i] = F(float((i * 7 + b) % 13) / 13.f - 0.5f);
    auto time = [&](auto&& f) {
      double best = 1e300;
      for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        F s(0.f);
        for (int b = 0; b < nb; ++b) s = s + f(b);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (xsimd::hadd(s) == 12345.f) std::puts("");
      }
      return best / nb / double(F::size);
    };
    mlp<float, 784, nn::silu, dynamic> const Vd(wi);
    for (int rep = 0; rep < 2; ++rep) {  // alternated: compile-time widths, then run-time widths
      double const tv = time([&](int b) { return V.value(xs[std::size_t(b)]); });
      double const tg = time([&](int b) { return V.value_and_grad(xs[std::size_t(b)], gs[std::size_t(b)]); });
      double const tvd = time([&](int b) { return Vd.value(xs[std::size_t(b)]); });
      double const tgd = time([&](int b) { return Vd.value_and_grad(xs[std::size_t(b)], gs[std::size_t(b)]); });
      std::printf("{\"what\": \"grad_over_value\", \"net\": \"784-256-256-1 silu\", \"value_us\": %.4g, \"grad_us\": %.4g, \"ratio\": %.3f, "
                  "\"dynamic_value_us\": %.4g, \"dynamic_grad_us\": %.4g, \"dynamic_ratio\": %.3f}\n",
                  tv * 1e6, tg * 1e6, tg / tv, tvd * 1e6, tgd * 1e6, tgd / tvd);
    }
  }
  return 0;
}
