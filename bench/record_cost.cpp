// record_cost: what keeping the draws costs beside the sampling itself. ChEES-HMC on the 100-d
// standard normal (the benchmark matrix's target), 128 chains, warm-up 1,000, then 1,000
// transitions timed, with four pipelines that differ only in what they keep: nothing, every draw
// (`record()`, 51 MB), every draw and its transition's statistics (`record() | record_stats()`,
// 6 more values a draw), or the moments (`track(moments)`). Then the case where statistics weigh
// most against the work: MALA on a 2-d Gaussian (one gradient of a few operations a transition; 5
// statistics beside 2 coordinates), record() against record() | record_stats(). Rounds alternate
// the pipelines so that the machine's load hits all alike; prints each one's median and its ratio
// to the first. With a
// third argument 0 the host cache is off (set_host_cache_limit(0)): every recording first-touches
// fresh memory, as every run did before host memory was reused (host_cache.hpp).
//   ember_record_cost [chains] [rounds] [cache: 1 (default) or 0]
#include <ember/ember.hpp>
#include <ember/targets/standard_normal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

template <class Pipe>
double sampling_seconds(Pipe const& pipe, std::int64_t chains) {
  auto r = ember::start(pipe, {.chains = chains, .seed = 1, .progress = false}, ember::backend::cpu{});
  r.advance(1000);  // the warm-up
  auto const t0 = std::chrono::steady_clock::now();
  r.advance(1000);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ember;
  std::int64_t const chains = argc > 1 ? std::atoll(argv[1]) : 128;
  int const rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  bool const cache = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  if (!cache) set_host_cache_limit(0);
  auto const U = targets::standard_normal<float>{}.energy();
  auto const chees_hmc = hmc(U) | warmup(1000, step_size(), diagonal_mass(), chees());
  std::vector<double> none, rec, stats, mom;
  for (int i = 0; i < rounds; ++i) {
    none.push_back(sampling_seconds(chees_hmc, chains));
    rec.push_back(sampling_seconds(chees_hmc | record(), chains));
    stats.push_back(sampling_seconds(chees_hmc | record() | record_stats(), chains));
    mom.push_back(sampling_seconds(chees_hmc | track(moments), chains));
  }
  double const n = median(none), r = median(rec), st = median(stats), m = median(mom);
  std::printf("{\"host_cache\": %s, \"chains\": %lld, \"transitions\": 1000, \"dim\": 100, \"nothing_kept_s\": %.4f, \"record_s\": %.4f, "
              "\"record_stats_s\": %.4f, \"track_moments_s\": %.4f, \"record_ratio\": %.2f, \"record_stats_ratio\": %.2f, "
              "\"track_moments_ratio\": %.2f}\n",
              cache ? "true" : "false", (long long)chains, n, r, st, m, r / n, st / n, m / n);
  // The cheap transition: MALA on a 2-d Gaussian, 16 times the chains.
  gaussian<float, 2, covariance::isotropic> const G(vec<float, 2>{{0.f, 0.f}}, 1.f);
  auto const mala2 = mala(G, {.step_size = 0.8}) | warmup(1000, step_size());
  std::vector<double> none2, rec2, stats2;
  for (int i = 0; i < rounds; ++i) {
    none2.push_back(sampling_seconds(mala2, 16 * chains));
    rec2.push_back(sampling_seconds(mala2 | record(), 16 * chains));
    stats2.push_back(sampling_seconds(mala2 | record() | record_stats(), 16 * chains));
  }
  double const n2 = median(none2), r2 = median(rec2), s2 = median(stats2);
  std::printf("{\"host_cache\": %s, \"chains\": %lld, \"transitions\": 1000, \"dim\": 2, \"sampler\": \"mala\", \"nothing_kept_s\": %.4f, "
              "\"record_s\": %.4f, \"record_stats_s\": %.4f, \"record_ratio\": %.2f, \"record_stats_ratio\": %.2f}\n",
              cache ? "true" : "false", (long long)(16 * chains), n2, r2, s2, r2 / n2, s2 / n2);
}
