// runs: ember's samplers, nothing tuned, on every posteriordb posterior against the reference
// moments: the before and after tables of issue 26, point 6. A benchmark, not a test.
//
//   posteriordb_runs [DIR] [SEED] [SAMPLERS] [ONLY]
//     DIR       bench/posteriordb (data/ and reference/)
//     SEED      the run's seed (default 1)
//     SAMPLERS  comma-separated among mala, chees, chees_651, chees_diag, chees_stan, chees_dense,
//               chees_model, nuts, nuts_diag, nuts_pc, nuts_harmonic, mams, mams_diag, mams_dense, mclmc
//               (default mala,chees);
//               a name with "_uniform" (chees_uniform) starts the chains at uniform(−2, 2) draws
//               from std::mt19937_64(SEED) given as `.init`, instead of ember's default starts
//               (also uniform(−2, 2), from each chain's own stream)
//     ONLY      run only posteriors whose name contains this
//   Environment: EMBER_PDB_WARMUP=n another warm-up length for all but mala and chees_dense;
//   EMBER_PDB_CHAINS=1 prints (stderr) what warm-up adapted and where each chain off sits.
//
// Samplers (double precision, 16 chains, ember's default starts, 1,000 warm-up transitions, 1,000
// kept draws, one thread):
//   mala         ember::mala(U, {}) | ember::warmup(1000) | ember::record()
//   chees        ember::chees_hmc(U) | ember::record()            (the default: metric auto_mass(), target 0.8)
//   chees_651    ember::chees_hmc(U, {.target_acceptance = 0.651}) | ember::record()   (ChEES's paper's target)
//   chees_diag   ember::chees_hmc(U, {}, diagonal_mass()) | ember::record()   (a diagonal metric)
//   chees_stan   the same with diagonal_mass({.gradients = false}) (Stan's metric estimate)
//   chees_dense  ember::chees_hmc(U, {}, dense_mass()) | ember::record()
//   chees_model  chees on the posterior's model body (reverse-mode gradient), where it has one
//   nuts         ember::nuts(U) | ember::warmup(1000) | ember::record()   (Stan's windows, auto_mass())
//   nuts_diag    ember::nuts(U) | ember::warmup(1000, step_size(), diagonal_mass()) | ember::record()
//   nuts_pc      ember::nuts(U) | ember::warmup(1000, step_size(per_chain), auto_mass()) | ember::record()
//   nuts_harmonic  nuts with step_size() aiming at the harmonic mean of acceptance over chains
//   mams         ember::mams(U) | ember::record()               (MAMS with its warm-up, auto_mass())
//   mams_diag    ember::mams(U, {}, ember::diagonal_mass()) | ember::record()   (a diagonal metric)
//   mams_dense   ember::mams(U, {}, ember::dense_mass()) | ember::record()
//   mclmc        ember::mclmc(U) | ember::mams_warmup(1000) | ember::record()   (unadjusted: biased)
// Per run: the verdict against reference/<name>.json (verdict.hpp: stuck chains, chains off, the
// largest |z| of constrained means, second moments and unconstrained means, the sd ratios, R̂,
// bulk and tail ESS; CORRECT or wrong), divergent chains, the seconds of warm-up and of the whole
// run, ESS/s (smallest bulk ESS over the whole run's seconds, warm-up included, as NumPyro's
// figures in numpyro_runs.py), the gradient evaluations of the whole run (counted by a wrapper
// around the energy: one per chain per evaluation, including the start checks) and gradients per
// ESS, the chains warm-up restarted (run/run.hpp: for not moving, for standing far above the
// others in energy), and the metric the warm-up ended with (diagonal or dense).
#include "posteriors.hpp"
#include "verdict.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace pdb = ember::posteriordb;

namespace {

// An adapter that tunes nothing and asks step_size() to aim at the harmonic mean of acceptance
// over chains (as under chees()): the nuts_harmonic experiment.
struct harmonic_step_size {
  static constexpr bool harmonic_acceptance = true;
  struct state {
    int unused = 0;
  };
  template <class K>
  state init(K const&, ember::warmup_setup const&) const {
    return {};
  }
  template <class P>
  void set(state const&, P&) const {}
  template <class Step>
  void update(state&, Step const&) const {}
};

// The energy with a counter of gradient evaluations (one per chain: a SIMD batch counts its width).
template <class E>
struct counted_energy {
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  E e;
  std::int64_t* count;
  template <class S>
  S value(ember::vec<S, dim> const& x) const {
    return e.value(x);
  }
  template <class S>
  S value_and_grad(ember::vec<S, dim> const& x, ember::vec<S, dim>& g) const {
    *count += ember::scalar_traits<S>::width;
    return e.value_and_grad(x, g);
  }
};

template <class P, class Pipe>
void report(P const& p, pdb::json::value const& ref, char const* sampler, Pipe const& pipe, std::uint64_t seed,
            std::int64_t const& gradients, bool uniform_starts) {
  constexpr int D = P::dim;
  // Stan's and NumPyro's starts, where asked: uniform(−2, 2) on the unconstrained coordinates.
  std::vector<ember::vec<double, D>> starts;
  if (uniform_starts) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-2, 2);
    starts.resize(16);
    for (auto& x : starts)
      for (int d = 0; d < D; ++d) x[d] = u(g);
  }
  auto res = ember::sample(pipe, {.chains = 16, .steps = 1000, .seed = seed, .init = starts, .progress = false},
                           ember::backend::cpu{.threads = 1});
  auto const v = pdb::judge(p, ref, res);
  std::printf("| %s | %d | %s | %s | %d | %d | %lld | %.3g | %.3g | %.3g | %.2f–%.2f | %.3f | %.0f | %.0f | %.2f | %.2f | %.0f | "
              "%.3g | %.0f | %lld, %lld | %s |%s\n",
              P::name, D, sampler, v.correct() ? "CORRECT" : "wrong", v.stuck, v.off, (long long)res.divergent_chains(), v.zc,
              v.zc2, v.zu, v.rlo, v.rhi, v.rhat, v.ess, v.ess_tail, res.warmup_seconds(), res.seconds(), v.ess / res.seconds(),
              double(gradients), double(gradients) / v.ess, (long long)res.adapted().restarted_chains,
              (long long)res.adapted().restarted_high_energy_chains,
              res.adapted().metric_scale.empty() ? "-" : res.adapted().dense_metric ? "dense" : "diagonal", v.finite ? "" : " (non-finite z)");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : std::string(EMBER_POSTERIORDB_DIR);
  std::uint64_t seed = argc > 2 ? std::stoull(argv[2]) : 1;
  std::string samplers = "," + std::string(argc > 3 ? argv[3] : "mala,chees") + ",";
  std::string only = argc > 4 ? argv[4] : "";
  auto wanted = [&](char const* s) { return samplers.find("," + std::string(s) + ",") != std::string::npos; };
  std::printf("| posterior | D | sampler | verdict | stuck chains | chains off | divergent chains | max \\|z\\| mean | "
              "max \\|z\\| E x² | max \\|z\\| mean (unconstr.) | sd ratio | max R̂ | min ESS bulk | min ESS tail | "
              "warm-up s | s | ESS/s | gradients | gradients/ESS | warm-up restarts (still, high U) | metric |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  pdb::for_each_posterior<double>(dir + "/data", [&](auto& p) {
    using P = std::decay_t<decltype(p)>;
    if (std::string(P::name).find(only) == std::string::npos) return;
    auto ref = pdb::json::read_file(dir + "/reference/" + P::name + ".json");
    std::int64_t gradients = 0;
    auto U = counted_energy<decltype(p.energy())>{p.energy(), &gradients};
    auto run = [&](char const* name, auto make) {
      for (bool uniform : {false, true}) {
        std::string const label = std::string(name) + (uniform ? "_uniform" : "");
        if (!wanted(label.c_str())) continue;
        gradients = 0;
        try {
          report(p, ref, label.c_str(), make(), seed, gradients, uniform);
        } catch (std::exception const& e) {
          std::printf("| %s | %d | %s | error: %s |\n", P::name, P::dim, label.c_str(), e.what());
        }
      }
    };
    run("mala", [&] { return ember::mala(U, {}) | ember::warmup(1000) | ember::record(); });
    // EMBER_PDB_WARMUP: another warm-up length for chees (the default's is 1,000).
    std::int64_t const warm = std::getenv("EMBER_PDB_WARMUP") ? std::atoll(std::getenv("EMBER_PDB_WARMUP")) : 1000;
    run("chees", [&] { return ember::chees_hmc(U, {.warmup = warm}) | ember::record(); });
    run("chees_651", [&] { return ember::chees_hmc(U, {.warmup = warm, .target_acceptance = 0.651}) | ember::record(); });
    run("chees_diag", [&] { return ember::chees_hmc(U, {.warmup = warm}, ember::diagonal_mass()) | ember::record(); });
    run("chees_stan", [&] {  // a diagonal metric from the draws alone (Stan's estimate)
      return ember::chees_hmc(U, {.warmup = warm}, ember::diagonal_mass({.gradients = false})) | ember::record();
    });
    run("chees_dense", [&] { return ember::chees_hmc(U, {.warmup = warm}, ember::dense_mass()) | ember::record(); });
    run("nuts", [&] { return ember::nuts(U) | ember::warmup(warm) | ember::record(); });
    run("nuts_diag", [&] { return ember::nuts(U) | ember::warmup(warm, ember::step_size(), ember::diagonal_mass()) | ember::record(); });
    run("nuts_pc", [&] {
      return ember::nuts(U) | ember::warmup(warm, ember::step_size(ember::per_chain), ember::auto_mass()) | ember::record();
    });
    run("nuts_harmonic", [&] {
      return ember::nuts(U) | ember::warmup(warm, ember::step_size(), ember::auto_mass(), harmonic_step_size{}) | ember::record();
    });
    run("mams", [&] { return ember::mams(U, {.warmup = warm}) | ember::record(); });
    run("mams_diag", [&] { return ember::mams(U, {.warmup = warm}, ember::diagonal_mass()) | ember::record(); });
    run("mams_dense", [&] { return ember::mams(U, {.warmup = warm}, ember::dense_mass()) | ember::record(); });
    run("mclmc", [&] { return ember::mclmc(U) | ember::mams_warmup(warm) | ember::record(); });
    // The posterior's model body (reverse-mode gradient), where posteriors.hpp has one.
    if constexpr (requires { p.model(); }) {
      auto M = counted_energy<decltype(p.model())>{p.model(), &gradients};
      run("chees_model", [&] { return ember::chees_hmc(M, {.warmup = warm}) | ember::record(); });
    }
  });
}
