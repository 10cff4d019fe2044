// summary_cost: wall time of result::summary() for 8,192 chains × 400 kept draws × 50 dims
// (issue 11's size; the previous direct-sum summary took 11–15 s), with the thread count of
// OMP_NUM_THREADS. Prints one JSON line per repeat; exit status 1 if a statistic is not finite.
//   ember_summary_cost [chains] [kept] [repeats] [--old]
// --old also times the previous estimator (ess and split_rhat by direct lag sums, one thread) on
// the first dimension, and multiplies by 50.
#include <ember/ember.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

int main(int argc, char** argv) {
  constexpr int D = 50;
  std::int64_t chains = argc > 1 ? std::atoll(argv[1]) : 8192, kept = argc > 2 ? std::atoll(argv[2]) : 400;
  int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  bool old = argc > 4 && std::strcmp(argv[4], "--old") == 0;
  ember::gaussian<float, D, ember::covariance::isotropic> U(ember::vec<float, D>{}, 1.f);
  auto pipe = ember::mala(U, {.step_size = 0.3}) | ember::burn_in(200) | ember::record();
  std::clock_t const s0 = std::clock();
  auto r = ember::sample(pipe, {.chains = chains, .steps = kept, .seed = 1});
  std::clock_t const s1 = std::clock();
  // sample_s: the run's own wall clock (sampling only); sample_cpu_s: CPU time of the whole
  // sample() call over all threads (allocation included).
  std::printf("{\"sampled\": true, \"chains\": %lld, \"kept\": %lld, \"dims\": %d, \"sample_s\": %.3f, "
              "\"sample_cpu_s\": %.3f}\n",
              (long long)chains, (long long)kept, D, r.seconds(), double(s1 - s0) / CLOCKS_PER_SEC);
  int bad = 0;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::clock_t c0 = std::clock();
    auto s = r.summary({.target_acceptance = 0.574});
    std::clock_t c1 = std::clock();
    auto t1 = std::chrono::steady_clock::now();
    // The check: every statistic finite (MALA over 400 draws has τ ≈ 10, so R̂ ≈ 1 + τ/2h ≈ 1.02
    // is expected here and not a failure).
    double worst = 1;
    for (int d = 0; d < D; ++d) {
      worst = std::max(worst, s.dims[d].rhat);
      bad += !std::isfinite(s.dims[d].rhat) || !std::isfinite(s.dims[d].ess) || !std::isfinite(s.dims[d].ess_tail);
    }
    std::printf("{\"summary_wall_s\": %.4f, \"summary_cpu_s\": %.4f, \"max_rhat\": %.5f, \"ess_bulk_dim0\": %.0f}\n",
                std::chrono::duration<double>(t1 - t0).count(), double(c1 - c0) / CLOCKS_PER_SEC, worst, s.dims[0].ess);
  }
  if (old) {
    auto x = [&](std::int64_t c, std::int64_t k) { return double(r.samples()(k, c, 0)); };
    auto t0 = std::chrono::steady_clock::now();
    double e = ember::ess(x, chains, kept), rh = ember::split_rhat(x, chains, kept);
    auto t1 = std::chrono::steady_clock::now();
    std::printf("{\"old_one_dim_s\": %.4f, \"old_50_dims_estimate_s\": %.2f, \"old_ess\": %.0f, \"old_rhat\": %.5f}\n",
                std::chrono::duration<double>(t1 - t0).count(), 50 * std::chrono::duration<double>(t1 - t0).count(), e, rh);
  }
  return bad ? 1 : 0;
}
