#pragma once
// Test draws with known autocorrelation: M chains of N draws of a stationary Gaussian AR(1)
// process x_t = φ x_{t−1} + √(1 − φ²) ε_t (unit variance), each chain scaled and shifted, and iid
// Cauchy chains. x(c, i) is draw i of chain c.

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace ember_test {

struct chains {
  std::int64_t M, N;
  std::vector<double> v;
  double operator()(std::int64_t c, std::int64_t i) const { return v[std::size_t(c * N + i)]; }
};

inline chains ar1(std::int64_t M, std::int64_t N, double phi, std::uint64_t seed, std::vector<double> offset = {},
                  std::vector<double> scale = {}) {
  chains d{M, N, std::vector<double>(std::size_t(M * N))};
  std::mt19937_64 g(seed);
  std::normal_distribution<double> z;
  for (std::int64_t c = 0; c < M; ++c) {
    double x = z(g);  // stationary start
    for (std::int64_t i = 0; i < N; ++i) {
      if (i > 0) x = phi * x + std::sqrt(1 - phi * phi) * z(g);
      d.v[std::size_t(c * N + i)] =
          x * (scale.empty() ? 1.0 : scale[std::size_t(c)]) + (offset.empty() ? 0.0 : offset[std::size_t(c)]);
    }
  }
  return d;
}

inline chains cauchy(std::int64_t M, std::int64_t N, std::uint64_t seed, std::vector<double> offset) {
  chains d{M, N, std::vector<double>(std::size_t(M * N))};
  std::mt19937_64 g(seed);
  std::cauchy_distribution<double> z;
  for (std::int64_t c = 0; c < M; ++c)
    for (std::int64_t i = 0; i < N; ++i) d.v[std::size_t(c * N + i)] = z(g) + offset[std::size_t(c)];
  return d;
}

// ESS/S of x for AR(1): (1 − φ)/(1 + φ). Of x²: x_t² has autocorrelation φ^{2k}, so
// (1 − φ²)/(1 + φ²).
inline double ess_fraction(double phi) { return (1 - phi) / (1 + phi); }
inline double ess_sq_fraction(double phi) { return (1 - phi * phi) / (1 + phi * phi); }

// ESS/S of the indicator I(x ≤ q) for AR(1): 1/τ, τ = 1 + 2 Σ_k Cov(I_0, I_k)/(p(1 − p)),
// p = Φ(q), where Cov(I_0, I_k) = Φ₂(q, q; φ^k) − p² = ∫_0^{φ^k} exp(−q²/(1 + r)) / (2π√(1 − r²)) dr
// (Plackett's identity ∂Φ₂/∂ρ = φ₂), by Simpson's rule on 200 intervals.
inline double tail_ess_fraction(double phi, double q) {
  double const p = 0.5 * std::erfc(-q / std::numbers::sqrt2);
  double tau = 1, rk = 1;
  for (int k = 1; k < 5000; ++k) {
    rk *= phi;
    if (std::abs(rk) < 1e-15) break;
    int const n = 200;
    double const step = rk / n;
    double s = 0;
    for (int i = 0; i <= n; ++i) {
      double r = i * step, f = std::exp(-q * q / (1 + r)) / (2 * std::numbers::pi * std::sqrt(1 - r * r));
      s += f * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
    }
    tau += 2 * (s * step / 3) / (p * (1 - p));
  }
  return 1 / tau;
}

}  // namespace ember_test
