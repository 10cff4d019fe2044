// hier_logit: the 60-parameter hierarchical logistic regression a user brings (targets/hier_logit.hpp,
// ../shared/models/hier_logit/), sampled by the default sampler (chees_hmc: 1,000 warm-up, 1,000
// draws per chain) with the model's gradient in reverse mode and, for comparison in the same run,
// by forward duals (model_duals). Reverse mode runs twice, with the backend's automatic row split
// (a run of fewer than 8 SIMD batches evaluates its model's rows in parts on all threads:
// core/team.hpp) and with whole rows (`row_split::never`, the baseline in the same run). For 4 and
// 16 chains: warm-up and sampling seconds apart, the smallest bulk and tail ESS over the 60
// parameters, ESS per second of sampling, largest R-hat, divergent transitions, and the wall
// microseconds of one gradient step of every chain (sampling seconds × chains / gradients). JSON lines.
//   usage: ember_hier_logit [DATA_DIR [threads [seeds]]]   (DATA_DIR: simulate.py's .npy files, or
//          "-" for the target's own simulated data, 2,000 rows; seeds: reverse mode's runs repeated
//          with seeds 2026, 2027, ..., duals once)
#include <ember/ember.hpp>
#include <ember/targets/hier_logit.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

template <class E>
void run(char const* gradient, E const& U, int chains, int threads, bool split, std::uint64_t seed) {
  auto pipe = ember::chees_hmc(U, {.warmup = 1000}) | ember::record();
  ember::backend::cpu const be{.threads = threads,
                               .split_rows = split ? ember::backend::row_split::automatic : ember::backend::row_split::never};
  auto res = ember::sample(pipe, {.chains = chains, .steps = 1000 + 1000, .seed = seed}, be);
  auto s = res.summary();
  double ess = 1e300, tail = 1e300, rhat = 0;
  for (auto const& d : s.dims) {
    ess = std::min(ess, d.ess);
    tail = std::min(tail, d.ess_tail);
    rhat = std::max(rhat, d.rhat);
  }
  std::printf(
      "{\"gradient\": \"%s\", \"split_rows\": %s, \"seed\": %llu, \"chains\": %d, \"threads\": %d, \"warmup_s\": %.2f, "
      "\"sampling_s\": %.2f, \"min_ess_bulk\": %.0f, \"min_ess_tail\": %.0f, \"ess_per_s\": %.1f, "
      "\"ess_per_s_with_warmup\": %.1f, \"max_rhat\": %.3f, \"divergent\": %lld, \"us_per_gradient_step\": %.2f}\n",
      gradient, split ? "true" : "false", (unsigned long long)seed, chains, threads, res.warmup_seconds(), res.sampling_seconds(), ess, tail,
      ess / res.sampling_seconds(), ess / res.seconds(), rhat, (long long)res.divergent_transitions(),
      1e6 * res.sampling_seconds() * chains / double(res.gradients()));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  auto const target = argc > 1 && std::string(argv[1]) != "-" ? ember::targets::hier_logit<float>::from_npy(argv[1])
                                                               : ember::targets::hier_logit<float>::simulated(20261127, 2000);
  int const threads = argc > 2 ? std::atoi(argv[2]) : 1;
  int const seeds = argc > 3 ? std::atoi(argv[3]) : 1;
  auto const U = target.energy();
  for (int chains : {4, 16}) {
    for (int s = 0; s < seeds; ++s) {
      run("reverse", U, chains, threads, true, 2026 + std::uint64_t(s));
      run("reverse", U, chains, threads, false, 2026 + std::uint64_t(s));
    }
    run("duals", ember::model_duals(U), chains, threads, false, 2026);  // duals never split (core/team.hpp)
  }
}
