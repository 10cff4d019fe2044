// Shared by ember's throughput benchmarks (cpu_suite.cpp, cuda_suite.cu): the benchmark Gaussian
// of cases P1, P2, P5–P7 and the moment checks every JSON line carries, so a speed is never shown
// without its correctness. Host code only; nothing here names a backend.
#pragma once

#include <ember/energy/gaussian.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ember_bench {
using namespace ember;

template <int D>
gaussian<float, D> bench_gaussian() {
  vec<float, D> mu;
  std::array<std::array<float, D>, D> cov{};
  for (int i = 0; i < D; ++i) {
    mu[i] = D == 1 ? 0.f : -1.f + 2.f * float(i) / float(D - 1);
    cov[i][i] = D == 1 ? 1.f : 0.5f + float(i) / float(D - 1);
  }
  return gaussian<float, D>(mu, cov);
}

// Largest |z| of the final-state mean and variance against (mean, var) per dimension.
template <class R>
std::string check_moments(R const& res, std::vector<double> const& mean, std::vector<double> const& var) {
  constexpr int D = R::dim;
  double n = double(res.chains() - res.divergent_chains()), zm = 0, zv = 0;
  for (int d = 0; d < D; ++d) {
    double m = 0, q = 0;
    for (std::int64_t c = 0; c < res.chains(); ++c)
      if (!res.divergent(c)) m += res.final_state(c)[d];
    m /= n;
    for (std::int64_t c = 0; c < res.chains(); ++c)
      if (!res.divergent(c)) q += std::pow(res.final_state(c)[d] - m, 2);
    q /= (n - 1);
    zm = std::max(zm, std::fabs(m - mean[std::size_t(d)]) / std::sqrt(var[std::size_t(d)] / n));
    zv = std::max(zv, std::fabs(q - var[std::size_t(d)]) / (var[std::size_t(d)] * std::sqrt(2 / (n - 1))));
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "{\"max_z_mean\": %.2f, \"max_z_var\": %.2f, \"tol_z\": 6, \"ok\": %s}", zm, zv,
                (zm < 6 && zv < 6) ? "true" : "false");
  return buf;
}

// Mean and variance of the final states against a reference whose own standard errors are
// ref_se (0 for an exact reference); the sample's standard errors come from its own second and
// fourth central moments, so this holds for non-Gaussian laws.
template <class R>
std::string check_reference(R const& res, std::vector<double> const& mean, std::vector<double> const& var,
                            double ref_se_mean, double ref_se_var, char const* truth) {
  constexpr int D = R::dim;
  double zm = 0, zv = 0;
  std::int64_t n = 0;
  for (int d = 0; d < D; ++d) {
    double m = 0, q2 = 0, q4 = 0;
    n = 0;
    for (std::int64_t c = 0; c < res.chains(); ++c)
      if (!res.divergent(c)) m += res.final_state(c)[d], ++n;
    m /= double(n);
    for (std::int64_t c = 0; c < res.chains(); ++c)
      if (!res.divergent(c)) {
        double e = double(res.final_state(c)[d]) - m;
        q2 += e * e;
        q4 += e * e * e * e;
      }
    q2 /= double(n - 1);
    q4 /= double(n);
    double se_m = std::sqrt(q2 / double(n) + ref_se_mean * ref_se_mean);
    double se_v = std::sqrt(std::max(q4 - q2 * q2, 0.0) / double(n) + ref_se_var * ref_se_var);
    zm = std::max(zm, std::fabs(m - mean[std::size_t(d)]) / se_m);
    zv = std::max(zv, std::fabs(q2 - var[std::size_t(d)]) / se_v);
  }
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "{\"truth\": \"%s\", \"max_z_mean\": %.2f, \"max_z_var\": %.2f, \"tol_z\": 6, "
                "\"divergent_chains\": %lld, \"ok\": %s}",
                truth, zm, zv, (long long)res.divergent_chains(), (zm < 6 && zv < 6) ? "true" : "false");
  return buf;
}

// ULA on the P1 Gaussian: the exact law after n steps from N(0, I) with a = 1 − η/σ².
inline std::pair<std::vector<double>, std::vector<double>> ula_law(int D, double eta, int n) {
  std::vector<double> m(static_cast<std::size_t>(D)), v(static_cast<std::size_t>(D));
  for (int i = 0; i < D; ++i) {
    double mu = -1 + 2.0 * i / (D - 1), s2 = 0.5 + double(i) / (D - 1), a = 1 - eta / s2;
    m[std::size_t(i)] = mu * (1 - std::pow(a, n));
    v[std::size_t(i)] = std::pow(a, 2 * n) + 2 * eta * (1 - std::pow(a, 2 * n)) / (1 - a * a);
  }
  return {m, v};
}

}  // namespace ember_bench
