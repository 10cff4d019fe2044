#pragma once
/// \file
/// `configuration_metrics`: what a benchmark matrix measures for one configuration, field for
/// field the JSON line of docs/benchmarking.md (shared with bench/peers, so ember, BlackJAX and
/// NumPyro rows go through one ratio script). NaN stands for JSON null.
///
/// `measure_draws(m, xs, dim, chains, draws, reference, gradients)` fills the statistics from the
/// kept draws of the reported coordinates, xs[(d·chains + c)·draws + i] = coordinate d of draw i
/// of chain c:
///  - per coordinate, `diagnose` (diagnostics/convergence.hpp, Vehtari et al. 2021) of xᵢ and of
///    xᵢ²: ess_bulk_x, ess_tail_x, rhat_max from xᵢ; ess_bulk_x2 from xᵢ²; each the minimum
///    (R̂: maximum) over coordinates;
///  - b² (Robnik et al., the MAMS and LAPS papers): m̂_cᵢ(n) is chain c's mean of xᵢ² over its
///    first n draws, Vᵢ the variance of xᵢ² over all draws, bᵢ²(n) = mean over chains of
///    (m̂_cᵢ(n) − E[xᵢ²])²/Vᵢ, the squared error one chain's estimate has (≈ 1/ESS of that chain,
///    so 0.01 means about 100 effective draws per chain); b2_avg and b2_max are the mean and the
///    maximum over i at n = N, and grads_to_b2_avg/max the gradients per chain up to the first n
///    from which that curve stays below 0.01. (Averaged over chains before squaring instead, the
///    error of 128 chains' pooled mean is below 0.01 at the first draw after warm-up, and the
///    metric says nothing.)
///  - the bias z-scores: |mean − E| / √(MCSE² + se_ref²) for xᵢ and xᵢ², MCSE from the ESS (none
///    where the reference moment is NaN, unknown).
/// `finish(m)` derives ess_min, ess_per_s, ess_per_grad and `health`, the failed gates:
/// "divergences" (any divergent transition or chain), "rhat" (R̂ > 1.01), "acceptance" (more than
/// 0.1 from the target; for a harmonic target (ChEES), more than 0.1 below it), "bias" (some |z| > 5), "ess>draws" (ess_min above chains × draws, which
/// even x² shows only for antithetic or broken chains).

#include <ember/diagnostics/convergence.hpp>
#include <ember/targets/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace ember::benchmark {

/// One configuration's measurements (one JSON line). NaN = null.
struct configuration_metrics {
  static constexpr double null = std::numeric_limits<double>::quiet_NaN();
  std::string impl = "ember", target, sampler, precision, backend;
  std::int64_t chains = 0, warmup = 0, draws = 0;
  std::uint64_t seed = 0;
  int dim = 0;
  double compile_s = null, warmup_s = null, sampling_s = null;
  double grads_warmup = null, grads_sampling = null; ///< per chain
  double ess_bulk_x = null, ess_bulk_x2 = null, ess_tail_x = null, ess_min = null;
  double ess_per_s = null, ess_per_grad = null;
  /// The same with the warm-up's seconds and gradients added (what a user waits for and pays).
  double ess_per_s_with_warmup = null, ess_per_grad_with_warmup = null;
  double grads_to_b2_avg = null, grads_to_b2_max = null, b2_avg = null, b2_max = null;
  std::int64_t divergences = 0;
  double rhat_max = null, acceptance = null, target_acceptance = null;
  bool harmonic_target = false;  ///< the target is for the harmonic mean over chains (ChEES)
  std::string health;  ///< "ok" or the failed gates, comma-separated
  std::string skipped; ///< empty, or why the configuration was not run
  int threads = 0;      ///< threads the CPU backend ran on (OpenMP's default unless the backend set them)
  std::string machine;  ///< the CPU's model name and logical cores (/proc/cpuinfo)
  double z_max = null; ///< the largest bias |z| (not in the JSON line; decides the "bias" gate)
};

/// Mean, range and the half-width of a 95 % interval for the mean (Student's t with n − 1
/// degrees of freedom) of one metric over a configuration's seeds.
struct replicate_stats {
  double mean = configuration_metrics::null, min = mean, max = mean, half_width = mean;
};
inline replicate_stats replicate_spread(std::span<double const> v) {
  replicate_stats s;
  std::size_t n = 0;
  double sum = 0, lo = 0, hi = 0;
  for (double x : v)
    if (std::isfinite(x)) {
      lo = n == 0 ? x : std::min(lo, x);
      hi = n == 0 ? x : std::max(hi, x);
      sum += x;
      ++n;
    }
  if (n == 0) return s;
  s.mean = sum / double(n);
  s.min = lo;
  s.max = hi;
  if (n < 2) return s;
  double ss = 0;
  for (double x : v)
    if (std::isfinite(x)) ss += (x - s.mean) * (x - s.mean);
  // t quantiles 0.975 for 1 … 30 degrees of freedom, then the normal's.
  static constexpr double t975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  double const t = n - 1 <= 30 ? t975[n - 2] : 1.960;
  s.half_width = t * std::sqrt(ss / double(n - 1) / double(n));
  return s;
}

/// b² below this counts as converged (the MAMS/LAPS threshold).
inline constexpr double b2_threshold = 0.01;

/// Gradients per chain up to the first n (1-based) from which `curve[n−1]` stays below the
/// threshold until the end; NaN if its last value is not below it. cumulative[n] = gradients up
/// to and including kept draw n (cumulative[0] = 0).
inline double gradients_to_stay_below(std::span<double const> curve, std::span<double const> cumulative) {
  std::size_t n = curve.size();
  while (n > 0 && curve[n - 1] < b2_threshold)
    --n;
  if (n == curve.size())
    return std::numeric_limits<double>::quiet_NaN();
  return cumulative[n + 1];
}

/// The reference moments of a target's reported coordinates, as spans (any dimension).
struct reference_view {
  std::span<double const> mean, second, mean_se, second_se;
};
template <int D>
reference_view view_of(targets::reference_moments<D> const& r) {
  return {r.mean, r.second, r.mean_se, r.second_se};
}

/// Fills the statistics of `m` (see the file comment) from `xs`, the kept draws of the reported
/// coordinates laid out [d][c][i] (coordinate, chain, draw); `cumulative` has draws + 1 entries.
/// Not a template, so a matrix compiles it once (report.hpp) rather than once per configuration.
inline void measure_draws(configuration_metrics& m, std::span<double const> xs, int dim, std::int64_t chains,
                          std::int64_t draws, reference_view ref, std::span<double const> cumulative) {
  std::int64_t const C = chains, N = draws;
  int const D = dim;
  auto const x = [&](std::int64_t c, std::int64_t i, int d) { return xs[std::size_t((d * C + c) * N + i)]; };
  std::size_t const dims = static_cast<std::size_t>(D);
  std::vector<convergence> cx(dims), cx2(dims);
  std::vector<double> sums(dims * static_cast<std::size_t>(N), 0.0), var(dims);
#pragma omp parallel for schedule(dynamic)
  for (int d = 0; d < D; ++d) {
    cx[std::size_t(d)] = diagnose([&](std::int64_t c, std::int64_t i) { return x(c, i, d); }, C, N);
    cx2[std::size_t(d)] = diagnose(
        [&](std::int64_t c, std::int64_t i) {
          double const v = x(c, i, d);
          return v * v;
        },
        C, N);
    // The pooled variance of x² (two passes, in double), and at each draw n the sum over chains
    // of the squared error of each chain's running mean of x² against the reference.
    double total = 0;
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t i = 0; i < N; ++i)
        total += x(c, i, d) * x(c, i, d);
    double const mean = total / double(C * N);
    double ss = 0;
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t i = 0; i < N; ++i)
        ss += std::pow(x(c, i, d) * x(c, i, d) - mean, 2);
    var[std::size_t(d)] = ss / double(C * N - 1);
    double* err = &sums[std::size_t(d) * std::size_t(N)];
    for (std::int64_t c = 0; c < C; ++c) {
      double run = 0;
      for (std::int64_t i = 0; i < N; ++i) {
        run += x(c, i, d) * x(c, i, d);
        err[i] += std::pow(run / double(i + 1) - ref.second[std::size_t(d)], 2);
      }
    }
  }
  double const inf = std::numeric_limits<double>::infinity();
  m.ess_bulk_x = m.ess_bulk_x2 = m.ess_tail_x = inf;
  m.rhat_max = m.z_max = 0;
  // A NaN (a coordinate without variance: stuck chains) must fail the gates, so it propagates.
  auto const min_nan = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b);
  };
  auto const max_nan = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
  };
  for (std::size_t d = 0; d < std::size_t(D); ++d) {
    auto const &a = cx[d], &b = cx2[d];
    m.ess_bulk_x = min_nan(m.ess_bulk_x, a.ess_bulk);
    m.ess_tail_x = min_nan(m.ess_tail_x, a.ess_tail);
    m.ess_bulk_x2 = min_nan(m.ess_bulk_x2, b.ess_bulk);
    m.rhat_max = max_nan(m.rhat_max, a.rhat);
    // A reference moment of NaN is unknown (a posterior nobody has integrated): no z for it.
    double const z1 = std::isnan(ref.mean[d]) ? 0 : std::abs(a.mean - ref.mean[d]) / std::hypot(a.mcse_mean, ref.mean_se[d]);
    double const z2 =
        std::isnan(ref.second[d]) ? 0 : std::abs(b.mean - ref.second[d]) / std::hypot(b.mcse_mean, ref.second_se[d]);
    m.z_max = max_nan(m.z_max, max_nan(z1, z2));
  }
  // b²(n) for n = 1..N: the chains' mean squared error over Vᵢ.
  std::vector<double> avg(static_cast<std::size_t>(N)), worst(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    double sum = 0, mx = 0;
    for (std::size_t d = 0; d < std::size_t(D); ++d) {
      double const b2 = sums[d * std::size_t(N) + std::size_t(n)] / (double(C) * var[d]);
      sum += b2;
      mx = max_nan(mx, b2);
    }
    avg[std::size_t(n)] = sum / D;
    worst[std::size_t(n)] = mx;
  }
  m.b2_avg = N > 0 ? avg.back() : std::nan("");
  m.b2_max = N > 0 ? worst.back() : std::nan("");
  m.grads_to_b2_avg = gradients_to_stay_below(avg, cumulative);
  m.grads_to_b2_max = gradients_to_stay_below(worst, cumulative);
}

/// Derives ess_min, ess_per_s, ess_per_grad and the health gates from the other fields.
inline void finish(configuration_metrics& m) {
  m.ess_min =
      std::isnan(m.ess_bulk_x) || std::isnan(m.ess_bulk_x2) ? std::nan("") : std::min(m.ess_bulk_x, m.ess_bulk_x2);
  m.ess_per_s = m.ess_min / m.sampling_s;
  m.ess_per_grad = m.ess_min / (double(m.chains) * m.grads_sampling);
  m.ess_per_s_with_warmup = m.ess_min / (m.warmup_s + m.sampling_s);
  m.ess_per_grad_with_warmup = m.ess_min / (double(m.chains) * (m.grads_warmup + m.grads_sampling));
  std::string h;
  auto const fail = [&](char const* gate) {
    if (!h.empty())
      h += ',';
    h += gate;
  };
  if (m.divergences > 0)
    fail("divergences");
  if (!(m.rhat_max <= 1.01))
    fail("rhat");
  // ChEES targets the harmonic mean over chains of each transition's acceptance probability,
  // which a run does not report; per transition the arithmetic mean (m.acceptance) bounds it from
  // above, so only an arithmetic acceptance below the band proves ChEES missed its target.
  double const off = m.acceptance - m.target_acceptance;
  if (!std::isnan(m.target_acceptance) && (!(off >= -0.1) || (!m.harmonic_target && !(off <= 0.1))))
    fail("acceptance");
  if (!(m.z_max <= 5))
    fail("bias");
  if (m.ess_min > double(m.chains) * double(m.draws))
    fail("ess>draws");
  m.health = h.empty() ? "ok" : h;
}

}  // namespace ember::benchmark
