// record_cost: what keeping the draws costs beside the sampling itself. ChEES-HMC on the 100-d
// standard normal (the benchmark matrix's target), 128 chains, warm-up 1,000, then 1,000
// transitions timed, with three pipelines that differ only in what they keep: nothing, every draw
// (`record()`, 51 MB), or the moments (`track(moments)`). Rounds alternate the three so that the
// machine's load hits all alike; prints each one's median and its ratio to the first. With a
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
  std::vector<double> none, rec, mom;
  for (int i = 0; i < rounds; ++i) {
    none.push_back(sampling_seconds(chees_hmc, chains));
    rec.push_back(sampling_seconds(chees_hmc | record(), chains));
    mom.push_back(sampling_seconds(chees_hmc | track(moments), chains));
  }
  double const n = median(none), r = median(rec), m = median(mom);
  std::printf("{\"host_cache\": %s, \"chains\": %lld, \"transitions\": 1000, \"dim\": 100, \"nothing_kept_s\": %.4f, \"record_s\": %.4f, "
              "\"track_moments_s\": %.4f, \"record_ratio\": %.2f, \"track_moments_ratio\": %.2f}\n",
              cache ? "true" : "false", (long long)chains, n, r, m, r / n, m / n);
}
