// before_runs: one quick run of ember's current default samplers on every posteriordb posterior,
// nothing tuned: the "before" table of issue 26, point 6. Not a test and not a verdict.
//
//   before_runs [DIR] [SEED]        DIR = bench/posteriordb
//
// Samplers (double precision, 16 chains, 1,000 warm-up transitions, 1,000 kept draws, starts
// x₀ ~ N(0, I) as ember draws them):
//   mala   ember::mala(U, {}) | ember::warmup(1000) | ember::record()
//   chees  ember::hmc(U, {}) | ember::warmup(1000, step_size(), diagonal_mass(), chees()) | record()
//          (ember::benchmark::chees_hmc's pipeline, as in examples/04_adaptive_hmc.cpp)
// Per run: chains that never moved (no accepted kept-phase transition), chains off (a chain mean
// of some unconstrained coordinate more than 5 reference sds from the reference mean: stuck chains
// and chains in another mode or a tail), divergent chains, the
// largest |z| of the means and of the second moments of the constrained parameters against
// reference/<name>.json, z = (m − ref)/√(mcse² + mcse_ref²) with mcse = sd/√ESS (ESS by Geyer's
// initial monotone sequence over the pooled chains, as make_reference.py), the same for the means
// of the unconstrained coordinates, the range of sd/sd_ref (constrained), the largest R̂ of the
// summary (unconstrained coordinates) and the run's seconds.
#include "posteriors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace pdb = ember::posteriordb;

namespace {

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
void report(P const& p, pdb::json::value const& ref, char const* sampler, Pipe const& pipe, std::uint64_t seed) {
  constexpr int D = P::dim;
  auto res = ember::sample(pipe, {.chains = 16, .steps = 1000, .seed = seed, .progress = false}, ember::backend::cpu{.threads = 1});
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
  }
  double rhat = 0;
  auto sum = res.summary();
  for (int d = 0; d < D; ++d) rhat = std::max(rhat, sum.dims[d].rhat);
  std::printf("| %s | %d | %s | %d | %d | %lld | %.3g | %.3g | %.3g | %.2f–%.2f | %.3f | %.2f |%s\n", P::name, D, sampler,
              stuck, off, (long long)res.divergent_chains(), zc, zc2, zu, rlo, rhi, rhat, res.seconds(),
              finite ? "" : " (non-finite z)");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : std::string(EMBER_POSTERIORDB_DIR);
  std::uint64_t seed = argc > 2 ? std::stoull(argv[2]) : 1;
  std::printf("| posterior | D | sampler | stuck chains | chains off | divergent chains | max \\|z\\| mean | max \\|z\\| E x² | max \\|z\\| mean (unconstr.) | sd ratio | max R̂ | s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  pdb::for_each_posterior<double>(dir + "/data", [&](auto& p) {
    using P = std::decay_t<decltype(p)>;
    auto ref = pdb::json::read_file(dir + "/reference/" + P::name + ".json");
    auto U = p.energy();
    try {
      report(p, ref, "mala", ember::mala(U, {}) | ember::warmup(1000) | ember::record(), seed);
    } catch (std::exception const& e) {
      std::printf("| %s | %d | mala | error: %s |\n", P::name, P::dim, e.what());
    }
    try {
      report(p, ref, "chees",
             ember::hmc(U, {}) | ember::warmup(1000, ember::step_size(), ember::diagonal_mass(), ember::chees()) |
                 ember::record(),
             seed);
    } catch (std::exception const& e) {
      std::printf("| %s | %d | chees | error: %s |\n", P::name, P::dim, e.what());
    }
  });
}
