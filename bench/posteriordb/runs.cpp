// runs: ember's samplers, nothing tuned, on every posteriordb posterior against the reference
// moments: the before and after tables of issue 26, point 6. A benchmark, not a test.
//
//   posteriordb_runs [DIR] [SEED] [SAMPLERS] [ONLY]
//     DIR       bench/posteriordb (data/ and reference/)
//     SEED      the run's seed (default 1)
//     SAMPLERS  comma-separated among mala, chees, chees_stan, chees_dense, chees_model, nuts, mams
//               (default mala,chees);
//               a name with "_uniform" (chees_uniform) starts the chains at uniform(−2, 2) draws
//               from std::mt19937_64(SEED) given as `.init`, instead of ember's default starts
//               (also uniform(−2, 2), from each chain's own stream)
//     ONLY      run only posteriors whose name contains this
//   Environment: EMBER_PDB_WARMUP=n another warm-up length for chees, chees_stan, nuts and mams;
//   EMBER_PDB_CHAINS=1 prints (stderr) what warm-up adapted and where each chain off sits.
//
// Samplers (double precision, 16 chains, ember's default starts, 1,000 warm-up transitions, 1,000
// kept draws, one thread):
//   mala         ember::mala(U, {}) | ember::warmup(1000) | ember::record()
//   chees        ember::chees_hmc(U) | ember::record()            (diagonal metric; the default)
//   chees_stan   the same with diagonal_mass({.gradients = false}) (Stan's metric estimate)
//   chees_dense  ember::hmc(U, {}) | ember::warmup(1000, step_size(), dense_mass(), chees()) | record()
//   chees_model  chees on the posterior's model body (reverse-mode gradient), where it has one
//   nuts         ember::nuts(U) | ember::warmup(1000) | ember::record()   (Stan's warm-up)
//   mams         ember::mams(U) | ember::record()               (MAMS with its warm-up)
// Per run: chains that never moved (no accepted kept-phase transition), chains off (a chain mean
// of some unconstrained coordinate more than 5 reference sds from the reference mean: stuck chains
// and chains in another mode or a tail), divergent chains, the
// largest |z| of the means and of the second moments of the constrained parameters against
// reference/<name>.json, z = (m − ref)/√(mcse² + mcse_ref²) with mcse = sd/√ESS (ESS by Geyer's
// initial monotone sequence over the pooled chains, as make_reference.py), the same for the means
// of the unconstrained coordinates, the range of sd/sd_ref (constrained), the largest R̂ and the
// smallest bulk and tail ESS of the summary (unconstrained coordinates), the seconds of warm-up
// and of the whole run, ESS/s (smallest bulk ESS over the whole run's seconds, warm-up included,
// as NumPyro's figures in numpyro_runs.py), the gradient evaluations of the whole run (counted by
// a wrapper around the energy: one per chain per evaluation, including the start checks) and
// gradients per ESS, and the chains warm-up restarted (run/run.hpp: for not moving, for standing far
// above the others in energy). The verdict: CORRECT when no chain is stuck or off, every |z| < 5, every sd
// ratio within [0.9, 1.1] and R̂ < 1.01.
#include "posteriors.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace pdb = ember::posteriordb;

namespace {

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

// ESS of the mean of M chains × N draws (x[c][k]), Geyer's initial monotone sequence.
double ess_geyer(std::vector<std::vector<double>> const& x) {
  std::size_t M = x.size(), N = x[0].size();
  std::vector<double> mean(M, 0.0);
  for (std::size_t c = 0; c < M; ++c) {
    for (double v : x[c]) mean[c] += v;
    mean[c] /= double(N);
  }
  auto acov = [&](std::size_t c, std::size_t t) {
    double s = 0;
    for (std::size_t k = 0; k + t < N; ++k) s += (x[c][k] - mean[c]) * (x[c][k + t] - mean[c]);
    return s / double(N);
  };
  double W = 0, gm = 0, B = 0;
  for (std::size_t c = 0; c < M; ++c) {
    W += acov(c, 0) * double(N) / double(N - 1);
    gm += mean[c];
  }
  W /= double(M);
  gm /= double(M);
  for (std::size_t c = 0; c < M; ++c) B += (mean[c] - gm) * (mean[c] - gm);
  B = B * double(N) / double(M - 1);
  double var_plus = double(N - 1) / double(N) * W + B / double(N);
  if (!(var_plus > 0)) return double(M * N);
  auto rho = [&](std::size_t t) {
    if (t == 0) return 1.0;
    double a = 0;
    for (std::size_t c = 0; c < M; ++c) a += acov(c, t);
    return 1.0 - (W - a / double(M)) / var_plus;
  };
  double sum = 0, prev = INFINITY;
  for (std::size_t t = 0; t + 1 < N; t += 2) {
    double p = rho(t) + rho(t + 1);
    if (!(p > 0)) break;
    p = std::min(p, prev);
    prev = p;
    sum += p;
  }
  double tau = std::max(-1.0 + 2.0 * sum, 1.0 / std::log10(double(M * N)));
  return double(M * N) / tau;
}

struct stats {
  double mean = 0, sd = 0, mean_sq = 0, mcse = 0, mcse_sq = 0;
};

stats moments(std::vector<std::vector<double>> const& x) {
  stats s;
  double n = 0, q = 0, q2 = 0;
  std::vector<std::vector<double>> sq = x;
  for (auto& ch : sq)
    for (double& v : ch) v = v * v;
  for (auto const& ch : x)
    for (double v : ch) {
      s.mean += v;
      s.mean_sq += v * v;
      n += 1;
    }
  s.mean /= n;
  s.mean_sq /= n;
  for (auto const& ch : x)
    for (double v : ch) {
      q += (v - s.mean) * (v - s.mean);
      q2 += (v * v - s.mean_sq) * (v * v - s.mean_sq);
    }
  s.sd = std::sqrt(q / (n - 1));
  s.mcse = s.sd / std::sqrt(ess_geyer(x));
  s.mcse_sq = std::sqrt(q2 / (n - 1)) / std::sqrt(ess_geyer(sq));
  return s;
}

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
  auto draws = res.samples();
  std::int64_t C = res.chains(), K = res.kept();
  int stuck = 0;
  for (std::int64_t c = 0; c < C; ++c) stuck += res.accepted(c) == 0;
  auto names = P::parameter_names();
  std::size_t NP = names.size();
  // constrained and unconstrained draws, [parameter][chain][draw]
  std::vector<std::vector<std::vector<double>>> con(NP, std::vector<std::vector<double>>(C, std::vector<double>(K))),
      unc(D, std::vector<std::vector<double>>(C, std::vector<double>(K)));
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t k = 0; k < K; ++k) {
      ember::vec<double, D> y;
      for (int d = 0; d < D; ++d) y[d] = unc[d][c][k] = double(draws(k, c, d));
      auto q = p.constrain(y);
      for (std::size_t j = 0; j < NP; ++j) con[j][c][k] = q[j];
    }
  double zc = 0, zc2 = 0, zu = 0, rlo = INFINITY, rhi = 0;
  bool finite = true;
  for (std::size_t j = 0; j < NP; ++j) {
    auto const& r = ref["constrained"][names[j]];
    auto s = moments(con[j]);
    double z = (s.mean - r["mean"].as_number()) / std::hypot(s.mcse, r["mcse_mean"].as_number());
    double z2 = (s.mean_sq - r["mean_sq"].as_number()) / std::hypot(s.mcse_sq, r["mcse_mean_sq"].as_number());
    finite = finite && std::isfinite(z) && std::isfinite(z2);
    zc = std::max(zc, std::fabs(z));
    zc2 = std::max(zc2, std::fabs(z2));
    double ratio = s.sd / r["sd"].as_number();
    rlo = std::min(rlo, ratio);
    rhi = std::max(rhi, ratio);
  }
  auto unames = P::unconstrained_names();
  for (int d = 0; d < D; ++d) {
    auto const& r = ref["unconstrained"][unames[std::size_t(d)]];
    auto s = moments(unc[std::size_t(d)]);
    double z = (s.mean - r["mean"].as_number()) / std::hypot(s.mcse, r["mcse_mean"].as_number());
    finite = finite && std::isfinite(z);
    zu = std::max(zu, std::fabs(z));
  }
  // Chains whose own mean of some unconstrained coordinate lies more than 5 reference sds from the
  // reference mean: stuck chains and chains caught in another mode or far out in a tail.
  int off = 0;
  for (std::int64_t c = 0; c < C; ++c) {
    bool far = false;
    for (int d = 0; d < D; ++d) {
      auto const& r = ref["unconstrained"][unames[std::size_t(d)]];
      double m = 0;
      for (double v : unc[std::size_t(d)][std::size_t(c)]) m += v;
      m /= double(K);
      far = far || !(std::fabs(m - r["mean"].as_number()) <= 5 * r["sd"].as_number());
    }
    off += far;
    if (far && std::getenv("EMBER_PDB_CHAINS")) {  // where the chains off sit, and their energy there
      ember::vec<double, D> m{};
      for (int d = 0; d < D; ++d) {
        for (double v : unc[std::size_t(d)][std::size_t(c)]) m[d] += v / double(K);
      }
      std::fprintf(stderr, "%s: chain %lld off, mean (unconstrained)", P::name, (long long)c);
      for (int d = 0; d < D; ++d) std::fprintf(stderr, " %.4g", m[d]);
      std::fprintf(stderr, "\n");
    }
  }
  if (std::getenv("EMBER_PDB_CHAINS")) {  // what warm-up adapted, against the reference sds
    auto const& a = res.adapted();
    std::fprintf(stderr, "%s: step size %.4g, T %.4g, metric sd / reference sd", P::name, a.step_size, a.trajectory_length);
    for (std::size_t d = 0; d < a.metric_scale.size() && d < std::size_t(D); ++d)
      std::fprintf(stderr, " %.3g", a.metric_scale[d] / ref["unconstrained"][unames[d]]["sd"].as_number());
    std::fprintf(stderr, "\n");
  }
  double rhat = 0, ess = INFINITY, ess_tail = INFINITY;
  auto sum = res.summary();
  for (int d = 0; d < D; ++d) {
    rhat = std::max(rhat, sum.dims[d].rhat);
    ess = std::min(ess, sum.dims[d].ess);
    ess_tail = std::min(ess_tail, sum.dims[d].ess_tail);
  }
  bool correct = finite && stuck == 0 && off == 0 && zc < 5 && zc2 < 5 && zu < 5 && rlo >= 0.9 && rhi <= 1.1 && rhat < 1.01;
  std::printf("| %s | %d | %s | %s | %d | %d | %lld | %.3g | %.3g | %.3g | %.2f–%.2f | %.3f | %.0f | %.0f | %.2f | %.2f | %.0f | "
              "%.3g | %.0f | %lld, %lld |%s\n",
              P::name, D, sampler, correct ? "CORRECT" : "wrong", stuck, off, (long long)res.divergent_chains(), zc, zc2,
              zu, rlo, rhi, rhat, ess, ess_tail, res.warmup_seconds(), res.seconds(), ess / res.seconds(),
              double(gradients), double(gradients) / ess, (long long)res.adapted().restarted_chains,
              (long long)res.adapted().restarted_high_energy_chains, finite ? "" : " (non-finite z)");
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
              "warm-up s | s | ESS/s | gradients | gradients/ESS | warm-up restarts (still, high U) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
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
    run("chees_stan", [&] {  // the default with Stan's metric estimate (draws only)
      return ember::hmc(U, {}) |
             ember::warmup(warm, ember::step_size(), ember::diagonal_mass({.gradients = false}), ember::chees()) |
             ember::record();
    });
    run("chees_dense", [&] {
      return ember::hmc(U, {}) | ember::warmup(1000, ember::step_size(), ember::dense_mass(), ember::chees()) |
             ember::record();
    });
    run("nuts", [&] { return ember::nuts(U) | ember::warmup(warm) | ember::record(); });
    run("mams", [&] { return ember::mams(U, {.warmup = warm}) | ember::record(); });
    // The posterior's model body (reverse-mode gradient), where posteriors.hpp has one.
    if constexpr (requires { p.model(); }) {
      auto M = counted_energy<decltype(p.model())>{p.model(), &gradients};
      run("chees_model", [&] { return ember::chees_hmc(M, {.warmup = warm}) | ember::record(); });
    }
  });
}
