// How many threads a run of few chains uses, and what it gains (issue 11.4). For C = 4, 16, 64,
// 256 chains of MALA on a 50-d energy with a dual-number gradient (a typical Bayesian run: few
// chains, a costly gradient), with 1 and 2 threads: the OpenMP threads that evaluated the energy
// (recorded by the energy itself, so the count does not depend on the machine's load), the
// seconds per 1,000 transitions, and the speed-up of 2 threads over 1. One JSON line per run.
// usage: ember_few_chains [--steps N]
#include <ember/ember.hpp>

#include <omp.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
std::atomic<unsigned> threads_seen{0};

struct ridge_fn {  // ½ Σ (x_i − x_{i−1})² + ½ Σ x_i² / 4: a banded 50-d Gaussian
  template <class V>
  auto operator()(V const& x) const {
    threads_seen.fetch_or(1u << (omp_get_thread_num() & 31), std::memory_order_relaxed);
    auto s = 0.125f * x[0] * x[0];
    for (int i = 1; i < 50; ++i) {
      auto d = x[i] - x[i - 1];
      s = s + 0.5f * d * d + 0.125f * x[i] * x[i];
    }
    return s;
  }
};
}  // namespace

int main(int argc, char** argv) {
  long steps = 2000;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atol(argv[++i]);
  auto kernel = ember::mala(ember::custom_energy<50>(ridge_fn{}), {.step_size = 0.05});
  int const width = ember::scalar_traits<ember::simd_batch<float>>::width;
  for (long chains : {4L, 16L, 64L, 256L}) {
    double seconds[3] = {0, 0, 0};
    for (int threads : {1, 2}) {
      threads_seen = 0;
      auto t0 = std::chrono::steady_clock::now();
      auto r = ember::sample(kernel, {.chains = chains, .steps = steps, .seed = 1, .progress = false},
                             ember::backend::cpu{.threads = threads});
      seconds[threads] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("{\"chains\":%ld,\"simd_width\":%d,\"threads\":%d,\"threads_used\":%d,\"s_per_1000\":%.5f,"
                  "\"acceptance\":%.3f}\n",
                  chains, width, threads, std::popcount(threads_seen.load()), 1000 * seconds[threads] / steps,
                  r.acceptance_rate());
    }
    std::printf("# %ld chains (%ld batches of %d): 2 threads are %.2fx as fast as 1\n", chains,
                (chains + width - 1) / width, width, seconds[1] / seconds[2]);
  }
}
