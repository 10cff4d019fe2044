// hier_logit: the 60-parameter hierarchical logistic regression a user brings (targets/hier_logit.hpp,
// ../shared/models/hier_logit/), sampled by the default sampler (chees_hmc: 1,000 warm-up, 1,000
// draws per chain) with the model's gradient in reverse mode and, for comparison in the same run,
// by forward duals (model_duals). For 4 and 16 chains: warm-up and sampling seconds apart, the
// smallest bulk and tail ESS over the 60 parameters, ESS per second of sampling, largest R-hat,
// divergent transitions. JSON lines.
//   usage: ember_hier_logit [DATA_DIR [threads]]   (DATA_DIR: simulate.py's .npy files; default:
//          the target's own simulated data, 2,000 rows)
#include <ember/ember.hpp>
#include <ember/targets/hier_logit.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

template <class E>
void run(char const* gradient, E const& U, int chains, int threads) {
  auto pipe = ember::chees_hmc(U, {.warmup = 1000}) | ember::record();
  auto res = ember::sample(pipe, {.chains = chains, .steps = 1000 + 1000, .seed = 2026}, ember::backend::cpu{.threads = threads});
  auto s = res.summary();
  double ess = 1e300, tail = 1e300, rhat = 0;
  for (auto const& d : s.dims) {
    ess = std::min(ess, d.ess);
    tail = std::min(tail, d.ess_tail);
    rhat = std::max(rhat, d.rhat);
  }
  std::printf(
      "{\"gradient\": \"%s\", \"chains\": %d, \"threads\": %d, \"warmup_s\": %.2f, \"sampling_s\": %.2f, "
      "\"min_ess_bulk\": %.0f, \"min_ess_tail\": %.0f, \"ess_per_s\": %.1f, \"ess_per_s_with_warmup\": %.1f, "
      "\"max_rhat\": %.3f, \"divergent\": %lld}\n",
      gradient, chains, threads, res.warmup_seconds(), res.sampling_seconds(), ess, tail, ess / res.sampling_seconds(),
      ess / res.seconds(), rhat, (long long)res.divergent_transitions());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  auto const target = argc > 1 ? ember::targets::hier_logit<float>::from_npy(argv[1])
                               : ember::targets::hier_logit<float>::simulated(20261127, 2000);
  int const threads = argc > 2 ? std::atoi(argv[2]) : 1;
  auto const U = target.energy();
  for (int chains : {4, 16}) {
    run("reverse", U, chains, threads);
    run("duals", ember::model_duals(U), chains, threads);
  }
}
