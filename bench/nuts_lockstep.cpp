// NUTS's lanes (kernel/nuts.hpp, pipeline/fused_lanes.hpp): in lock-step a SIMD batch takes as
// many leapfrog steps as its deepest tree while lanes whose tree ended idle; at their own pace a
// lane that ended starts its next transition at once and the batch waits only at the end of the
// run. Per matrix target, after the warm-up every run makes (nuts(U) | warmup(1000), 128 chains):
// the lanes' useful fraction of both (Σ leaves over a batch's chains / (lanes × the leaf-steps
// the batch took), from the trees of every chain, for batches of 16 lanes (float AVX-512) and of
// this machine's width), with each lane its own chain and with backend::cpu's pool of chains
// (a lane takes up the next chain once its own has made all its transitions), the bound of any
// such schedule (16 lanes), the mean leaves per transition, the share of each
// tree depth, and the sampling time of the same run in both loops (the same draws, bit for bit),
// measured in turn (own pace: backend::cpu's pool of chains).
//
//   ember_nuts_lockstep [transitions]     (default 500 after warm-up)
//
// A lane's tree does not depend on its batch (kernel/nuts.hpp: every draw is the chain's own), so
// the trees are grown one chain at a time for the fractions and grouped into batches afterwards.
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
#include <chrono>
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
  constexpr int W = int(simd_batch<float>::size);
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
    for (int w : {16, W}) {
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
  // At their own pace: a batch takes as many leaf-steps as its lane with the most leaves over
  // the whole run.
  auto own_pace = [&](int w) {
    double useful = 0, total = 0;
    for (std::int64_t b = 0; b < chains; b += w) {
      std::int64_t most = 0;
      for (std::int64_t c = b; c < b + w; ++c) {
        std::int64_t sum = 0;
        for (auto n : history[std::size_t(c)]) sum += n;
        useful += double(sum);
        most = std::max(most, sum);
      }
      total += double(w * most);
    }
    return useful / total;
  };
  // The most any schedule could make useful if a lane could take up any chain of its thread
  // once its own had made all its transitions (a chain's transitions stay in order, so one chain
  // is never on two lanes): each of 2 threads with 64 chains on w lanes takes at least
  // max(its longest chain's leaves, its leaves / w) leaf-steps.
  auto any_lane = [&](int w) {
    double useful = 0, total = 0;
    std::int64_t const per_thread = chains / 2;
    for (std::int64_t b = 0; b < chains; b += per_thread) {
      std::int64_t longest = 0, sum = 0;
      for (std::int64_t c = b; c < b + per_thread; ++c) {
        std::int64_t own = 0;
        for (auto n : history[std::size_t(c)]) own += n;
        sum += own;
        longest = std::max(longest, own);
      }
      useful += double(sum);
      total += double(w) * std::max(double(longest), double(sum) / double(w));
    }
    return useful / total;
  };
  // The pool as backend::cpu runs it (pipeline/fused_lanes.hpp): 2 threads of w lanes share one
  // queue of chains in index order; a lane whose chain has made all its transitions takes up the
  // next (the earliest free lane first, ties to the lower thread and lane, threads at equal speed),
  // and a thread takes as many leaf-steps as its last lane to finish.
  auto pool = [&](int w) {
    constexpr int threads = 2;
    std::vector<std::int64_t> free_at(std::size_t(threads * w), 0);
    double useful = 0;
    for (std::int64_t c = 0; c < chains; ++c) {
      auto const lane = std::min_element(free_at.begin(), free_at.end());
      std::int64_t own = 0;
      for (auto n : history[std::size_t(c)]) own += n;
      useful += double(own);
      *lane += own;
    }
    double total = 0;
    for (int t = 0; t < threads; ++t)
      total += double(w) * double(*std::max_element(free_at.begin() + t * w, free_at.begin() + (t + 1) * w));
    return useful / total;
  };
  // The sampling run itself, both loops from the warmed-up states, alternated, best of three.
  std::vector<vec<float, D>> starts;
  for (std::int64_t c = 0; c < chains; ++c) starts.push_back(res.final_state(c));
  double seconds[2] = {1e30, 1e30};
  std::int64_t gradients[2] = {};
  for (int rep = 0; rep < 3; ++rep)
    for (int lock = 0; lock < 2; ++lock) {
      auto kk = k;
      kk.own_pace = lock == 0;
      kk.measure_pace = false;
      auto const t0 = std::chrono::steady_clock::now();
      auto const r = sample(kk | record(), {.chains = chains, .steps = transitions, .seed = 2, .init = starts, .progress = false});
      seconds[lock] = std::min(seconds[lock], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      gradients[lock] = r.gradients();
    }
  if (gradients[0] != gradients[1]) std::printf("# %s: the two loops counted different gradients (%lld, %lld)\n", name,
                                                (long long)gradients[0], (long long)gradients[1]);
  std::string hist;
  double const n = double(chains * transitions);
  for (int d = 0; d < 16; ++d)
    if (depth[d] > 0) hist += " " + std::to_string(d) + ":" + std::to_string(int(100.0 * double(depth[d]) / n + 0.5)) + "%";
  std::printf("%-24s %4d %8.4f %8.1f   %5.1f%% %5.1f%% %5.1f%% %5.1f%%   %5.1f%% %5.1f%% %5.1f%%   %8.3f %8.3f %6.2fx  %s\n", name,
              D, double(k.step_size), all / n, 100 * useful16 / total16, 100 * own_pace(16), 100 * pool(16),
              100 * any_lane(16), 100 * useful8 / total8, 100 * own_pace(W), 100 * pool(W), seconds[1], seconds[0],
              seconds[1] / seconds[0], hist.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  namespace tg = ember::targets;
  std::int64_t const n = argc > 1 ? std::atoll(argv[1]) : 500;
  constexpr int W = int(ember::simd_batch<float>::size);
  std::printf("# NUTS's lanes: 128 chains after nuts(U) | warmup(1000), %lld transitions, float, %d-lane batches here\n",
              (long long)n, W);
  std::printf("# useful lane-steps: lock-step, each lane its own chain at its own pace (own), and lanes that take up the next\n"
              "# chain of one pool for 2 threads (pool, backend::cpu's own pace), for 16 lanes and for %d; for 16 lanes also the\n"
              "# bound of any schedule that lets a lane take up another chain of its thread (any); sampling seconds (2 threads)\n", W);
  std::printf("# target                   D   step  leaves   16: lock  own  pool   any    %2d: lock  own  pool   lock-step  own pace  speed-up  depths\n", W);
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
