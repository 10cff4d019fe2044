// check_samplers: ember's samplers from their defaults on posteriordb posteriors nobody on the
// project wrote, judged against the reference draws (verdict.hpp). A test (posteriordb_samplers):
//
//   check_samplers [DIR]     DIR = bench/posteriordb (data/ and reference/ under it)
//
// The cases are the ones a sampler once failed, kept so that it cannot fail them again unseen:
//   - mams on earnings-earn_height: chains start about 500 sds from log σ's posterior; isokinetic
//     dynamics never arrived (all 16 chains off, R̂ 2.3) until the approach (adapt/approach.hpp),
//     and the trajectory length came out 10× too short (R̂ 1.03) while mams_length averaged the
//     coordinates' ESS arithmetically;
//   - mams on arma11: half the chains start at U ≈ 10²¹–10³³, where the approach's step size
//     collapsed to 10⁻³⁶ under the arithmetic mean of acceptance (adapt/step_size.hpp).
// Each on two seeds, 16 chains, 1,000 warm-up transitions and 1,000 draws, double precision, one
// thread. A run passes when no chain is stuck, off or divergent, every |z| of the means and second
// moments is below 5 (combined Monte-Carlo standard errors of the run and the reference) and R̂ <
// 1.01; the sd ratios within [0.9, 1.1] are printed beside (at ESS ≈ 5,000 their standard error is
// about 1 %). Exit status 0 when every run passes.
#include "posteriors.hpp"
#include "verdict.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace pdb = ember::posteriordb;

namespace {

int failures = 0;

template <class P, class Make>
void check(std::string const& dir, char const* sampler, Make make) {
  P p(dir + "/data");
  auto const ref = pdb::json::read_file(dir + "/reference/" + P::name + ".json");
  for (std::uint64_t seed : {1, 2}) {
    auto res = ember::sample(make(p.energy()), {.chains = 16, .steps = 1000, .seed = seed, .progress = false},
                             ember::backend::cpu{.threads = 1});
    auto const v = pdb::judge(p, ref, res);
    bool const pass = v.consistent() && res.divergent_chains() == 0;
    failures += !pass;
    std::printf("%s %s seed %llu: %s (stuck %d, off %d, divergent %lld, max |z| %.2f %.2f %.2f, sd ratio %.2f-%.2f, "
                "R-hat %.4f, ESS %.0f)\n",
                P::name, sampler, (unsigned long long)seed, pass ? "pass" : "FAIL", v.stuck, v.off,
                (long long)res.divergent_chains(), v.zc, v.zc2, v.zu, v.rlo, v.rhi, v.rhat, v.ess);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string const dir = argc > 1 ? argv[1] : std::string(EMBER_POSTERIORDB_DIR);
  auto mams = [](auto const& U) { return ember::mams(U) | ember::record(); };
  check<pdb::earn_height<double>>(dir, "mams", mams);
  check<pdb::arma11<double>>(dir, "mams", mams);
  return failures == 0 ? 0 : 1;
}
