#pragma once
// verdict: how a run of ember's samplers on a posteriordb posterior compares with the reference
// draws (reference/<name>.json), for posteriordb_runs (runs.cpp, a benchmark table) and
// posteriordb_samplers (check_samplers.cpp, a test).
//
// Chains that never moved (no accepted kept-phase transition); chains off (a chain mean of some
// unconstrained coordinate more than 5 reference sds from the reference mean: stuck chains and
// chains in another mode or a tail); the largest |z| of the means and of the second moments of
// the constrained parameters and of the means of the unconstrained coordinates, z = (m − ref) /
// √(mcse² + mcse_ref²) with mcse = sd/√ESS (ESS by Geyer's initial monotone sequence over the
// pooled chains, as make_reference.py); the range of sd/sd_ref (constrained); the largest R̂ and the
// smallest bulk and tail ESS of the summary (unconstrained coordinates). CORRECT when no chain is
// stuck or off, every |z| < 5, every sd ratio within [0.9, 1.1] and R̂ < 1.01.
#include "posteriors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ember::posteriordb {

// ESS of the mean of M chains × N draws (x[c][k]), Geyer's initial monotone sequence.
inline double ess_geyer(std::vector<std::vector<double>> const& x) {
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

inline stats moments(std::vector<std::vector<double>> const& x) {
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

struct verdict {
  int stuck = 0, off = 0;
  double zc = 0, zc2 = 0, zu = 0, rlo = INFINITY, rhi = 0, rhat = 0, ess = INFINITY, ess_tail = INFINITY;
  bool finite = true;
  /// Every moment within 5 combined standard errors, no chain stuck or off, R̂ < 1.01.
  bool consistent() const { return finite && stuck == 0 && off == 0 && zc < 5 && zc2 < 5 && zu < 5 && rhat < 1.01; }
  /// Consistent, and every sd within 10 % of the reference's.
  bool correct() const { return consistent() && rlo >= 0.9 && rhi <= 1.1; }
};

/// The verdict on result `res` of posterior `p` against its reference `ref`. With EMBER_PDB_CHAINS
/// set, prints (stderr) where each chain off sits and what warm-up adapted.
template <class P, class R>
verdict judge(P const& p, json::value const& ref, R const& res) {
  constexpr int D = P::dim;
  verdict v;
  auto draws = res.samples();
  std::int64_t C = res.chains(), K = res.kept();
  for (std::int64_t c = 0; c < C; ++c) v.stuck += res.accepted(c) == 0;
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
  for (std::size_t j = 0; j < NP; ++j) {
    auto const& r = ref["constrained"][names[j]];
    auto s = moments(con[j]);
    double z = (s.mean - r["mean"].as_number()) / std::hypot(s.mcse, r["mcse_mean"].as_number());
    double z2 = (s.mean_sq - r["mean_sq"].as_number()) / std::hypot(s.mcse_sq, r["mcse_mean_sq"].as_number());
    v.finite = v.finite && std::isfinite(z) && std::isfinite(z2);
    v.zc = std::max(v.zc, std::fabs(z));
    v.zc2 = std::max(v.zc2, std::fabs(z2));
    double ratio = s.sd / r["sd"].as_number();
    v.rlo = std::min(v.rlo, ratio);
    v.rhi = std::max(v.rhi, ratio);
  }
  auto unames = P::unconstrained_names();
  for (int d = 0; d < D; ++d) {
    auto const& r = ref["unconstrained"][unames[std::size_t(d)]];
    auto s = moments(unc[std::size_t(d)]);
    double z = (s.mean - r["mean"].as_number()) / std::hypot(s.mcse, r["mcse_mean"].as_number());
    v.finite = v.finite && std::isfinite(z);
    v.zu = std::max(v.zu, std::fabs(z));
  }
  // Chains whose own mean of some unconstrained coordinate lies more than 5 reference sds from the
  // reference mean: stuck chains and chains caught in another mode or far out in a tail.
  for (std::int64_t c = 0; c < C; ++c) {
    bool far = false;
    for (int d = 0; d < D; ++d) {
      auto const& r = ref["unconstrained"][unames[std::size_t(d)]];
      double m = 0;
      for (double v : unc[std::size_t(d)][std::size_t(c)]) m += v;
      m /= double(K);
      far = far || !(std::fabs(m - r["mean"].as_number()) <= 5 * r["sd"].as_number());
    }
    v.off += far;
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
  auto sum = res.summary();
  for (int d = 0; d < D; ++d) {
    v.rhat = std::max(v.rhat, sum.dims[d].rhat);
    v.ess = std::min(v.ess, sum.dims[d].ess);
    v.ess_tail = std::min(v.ess_tail, sum.dims[d].ess_tail);
  }
  return v;
}

}  // namespace ember::posteriordb
