// NUTS in lock-step (kernel/nuts.hpp): chains of a SIMD batch build their trees leaf by leaf
// together, so a batch takes as many leapfrog steps as its deepest tree; a lane whose tree ended
// idles. This measures, per matrix target, the lanes' useful fraction: Σ leaves over the batch's
// chains / (lanes × the batch's most leaves), transition by transition, for batches of 16 (float
// AVX-512) and 8 lanes, after the warm-up every run makes (nuts(U) | warmup(1000), 128 chains).
// Also the mean leaves per transition and the share of transitions at each tree depth.
//
//   ember_nuts_lockstep [transitions]     (default 500 after warm-up)
//
// A lane's tree does not depend on its batch (kernel/nuts.hpp: every draw is the chain's own), so
// the trees are grown one chain at a time here and grouped into batches afterwards.
#include <ember/ember.hpp>
#include <ember/targets/banana.hpp>
#include <ember/targets/breast_cancer_logistic.hpp>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/neal_funnel_noncentred.hpp>
#include <ember/targets/rosenbrock_pairs.hpp>
#include <ember/targets/rotated_gaussian.hpp>
#include <ember/targets/standard_normal.hpp>
#include <ember/targets/two_mode_mixture.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef EMBER_DATA_DIR
#define EMBER_DATA_DIR "data"
#endif

namespace {

template <class Target>
void measure(char const* name, Target const& target, std::int64_t transitions) {
  using namespace ember;
  constexpr int D = Target::dim;
  std::int64_t const chains = 128, warm = 1000;
  auto run = start(nuts(target.energy()) | warmup(warm), {.chains = chains, .seed = 1, .progress = false});
  run.advance(warm);
  auto const k = run.kernel();
  auto const res = run.result();
  std::vector<chain_state<float, D>> s;
  for (std::int64_t c = 0; c < chains; ++c) s.push_back(k.init(res.final_state(c)));
  std::vector<std::int64_t> leaves(static_cast<std::size_t>(chains));
  std::vector<std::vector<std::int64_t>> history(static_cast<std::size_t>(chains));
  double useful16 = 0, total16 = 0, useful8 = 0, total8 = 0, all = 0;
  std::int64_t depth[16] = {};
  for (std::int64_t t = 0; t < transitions; ++t) {
    for (std::int64_t c = 0; c < chains; ++c) {
      auto const rng = make_chain_rng<float>(0x5eedu, std::uint32_t(c), std::uint32_t(warm + t));
      auto const info = k.step(s[std::size_t(c)], rng);
      auto const n = std::int64_t(info.gradients);
      leaves[std::size_t(c)] = n;
      history[std::size_t(c)].push_back(n);
      all += double(n);
      int d = 0;
      while ((std::int64_t(1) << d) - 1 < n) ++d;
      ++depth[std::min(d, 15)];
    }
    for (int w : {16, 8}) {
      for (std::int64_t b = 0; b < chains; b += w) {
        std::int64_t most = 0, sum = 0;
        for (std::int64_t c = b; c < b + w; ++c) {
          most = std::max(most, leaves[std::size_t(c)]);
          sum += leaves[std::size_t(c)];
        }
        (w == 16 ? useful16 : useful8) += double(sum);
        (w == 16 ? total16 : total8) += double(w * most);
      }
    }
  }
  // What a lane that ended its tree could do while its batch finishes: start its next transition
  // (at most one ahead). Each call then lasts as long as the longest remainder of the current
  // transition; a lane spends the rest on its next tree.
  double ahead_useful = 0, ahead_total = 0;
  for (std::int64_t b = 0; b < chains; b += 16) {
    std::vector<std::int64_t> done(16, 0);  // leaves of the current transition already built
    for (std::int64_t t = 0; t + 1 < transitions; ++t) {
      std::int64_t most = 0;
      for (int l = 0; l < 16; ++l) most = std::max(most, history[std::size_t(b + l)][std::size_t(t)] - done[std::size_t(l)]);
      for (int l = 0; l < 16; ++l) {
        std::int64_t const rest = history[std::size_t(b + l)][std::size_t(t)] - done[std::size_t(l)];
        std::int64_t const next = std::min(most - rest, history[std::size_t(b + l)][std::size_t(t + 1)]);
        ahead_useful += double(rest + next);
        done[std::size_t(l)] = next;
      }
      ahead_total += double(16 * most);
    }
  }
  std::string hist;
  double const n = double(chains * transitions);
  for (int d = 0; d < 16; ++d)
    if (depth[d] > 0) hist += " " + std::to_string(d) + ":" + std::to_string(int(100.0 * double(depth[d]) / n + 0.5)) + "%";
  std::printf("%-26s %4d  eps %8.4f  leaves/transition %7.1f  useful 16 lanes %5.1f%%  8 lanes %5.1f%%  16 lanes one ahead %5.1f%%  depth%s\n",
              name, D, double(k.step_size), all / n, 100 * useful16 / total16, 100 * useful8 / total8,
              100 * ahead_useful / ahead_total, hist.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  namespace tg = ember::targets;
  std::int64_t const n = argc > 1 ? std::atoll(argv[1]) : 500;
  std::printf("# NUTS lock-step efficiency: 128 chains after nuts(U) | warmup(1000), %lld transitions, float\n",
              (long long)n);
  std::printf("# target                       D  step size   leaves a transition  useful lane-steps (16, 8 lanes)  tree depths\n");
  measure("standard_normal", tg::standard_normal<float>{}, n);
  measure("ill_conditioned_gaussian", tg::ill_conditioned_gaussian<float>{}, n);
  measure("rotated_gaussian", tg::rotated_gaussian<float>{}, n);
  measure("neal_funnel", tg::neal_funnel<float>{}, n);
  measure("neal_funnel_noncentred", tg::neal_funnel_noncentred<float>{}, n);
  measure("banana", tg::banana<float>{}, n);
  measure("rosenbrock_pairs", tg::rosenbrock_pairs<float>{}, n);
  measure("two_mode_mixture", tg::two_mode_mixture<float>{}, n);
  measure("eight_schools", tg::eight_schools<float>{}, n);
  measure("breast_cancer_logistic", tg::breast_cancer_logistic<float>(EMBER_DATA_DIR "/breast_cancer.csv"), n);
}
