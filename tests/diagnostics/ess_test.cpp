// ess and split_rhat on draws with known effective sample size: iid normals and AR(1) chains.
#include <ember/diagnostics/ess.hpp>
#include <ember/diagnostics/rhat.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

// M chains of N draws of a stationary AR(1) process x_t = φ x_{t−1} + √(1 − φ²) ε_t (unit
// variance), plus a per-chain offset. Its integrated autocorrelation time is (1 + φ)/(1 − φ).
struct draws {
  std::int64_t M, N;
  std::vector<double> v;
  draws(std::int64_t m, std::int64_t n, double phi, std::uint64_t seed, std::vector<double> offset = {})
      : M(m), N(n), v(std::size_t(m * n)) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> z;
    for (std::int64_t c = 0; c < M; ++c) {
      double x = z(g);  // stationary start
      for (std::int64_t i = 0; i < N; ++i) {
        if (i > 0) x = phi * x + std::sqrt(1 - phi * phi) * z(g);
        v[std::size_t(c * N + i)] = x + (offset.empty() ? 0.0 : offset[std::size_t(c)]);
      }
    }
  }
  double operator()(std::int64_t c, std::int64_t i) const { return v[std::size_t(c * N + i)]; }
};

}  // namespace

TEST_CASE("ess of iid normal draws is the number of draws", "[diagnostics][ess]") {
  // For iid draws the estimated autocorrelations are O(1/√(MN)) noise; Geyer's truncation sums a
  // few of them, so ESS/(MN) scatters by about 2% (sd over 40 seeds at MN = 16,000, largest
  // deviation 8%). 12% is six sd.
  for (std::uint64_t seed : {1, 2, 3}) {
    draws d(8, 2000, 0.0, seed);
    double e = ember::ess(d, d.M, d.N);
    INFO("seed " << seed << ": ESS " << e);
    CHECK(e == Approx(double(d.M * d.N)).epsilon(0.12));
    // R̂ − 1 for iid draws at this size: sd 1.7e-4 over 200 seeds; 1e-3 is about six sd.
    CHECK(ember::split_rhat(d, d.M, d.N) == Approx(1).margin(1e-3));
  }
}

TEST_CASE("ess of AR(1) chains is N(1 - phi)/(1 + phi)", "[diagnostics][ess]") {
  for (double phi : {0.5, 0.9, -0.3}) {
    // Relative sd of the estimate over 40 seeds at this size: 1.2% (φ = 0.5), 2.6% (φ = 0.9),
    // 1% (φ = −0.3); 12% is at least 4.5 sd.
    draws d(4, 80'000, phi, 42);
    double want = double(d.M * d.N) * (1 - phi) / (1 + phi);
    double e = ember::ess(d, d.M, d.N);
    INFO("phi " << phi << ": ESS " << e << ", expected " << want);
    // A negative φ gives ESS > N; Stan's cap N log10 N is far above it here.
    CHECK(e == Approx(want).epsilon(0.12));
    // R̂ − 1: sd ≤ 1.4e-4 over 200 seeds, plus a bias of about τ/2h ≤ 2.4e-4 (τ = 19 at φ = 0.9,
    // h = 40,000 draws per half): 1.5e-3 is over eight sd past the bias.
    CHECK(ember::split_rhat(d, d.M, d.N) == Approx(1).margin(1.5e-3));
  }
}

TEST_CASE("split_rhat is clearly above 1 when chains have different means", "[diagnostics][rhat]") {
  // Half the chains shifted by one standard deviation. Split, that is 16 halves, 8 at 0 and 8 at
  // 1: the variance of the half means with denominator 15 is 16·¼/15 = 4/15, so
  // R̂ ≈ √(1 + 4/15) = 1.1255; its sd over 200 seeds is 0.0057, and 0.029 is five sd.
  draws d(8, 1000, 0.0, 7, {0, 0, 0, 0, 1, 1, 1, 1});
  double r = ember::split_rhat(d, d.M, d.N);
  CHECK(r == Approx(std::sqrt(1.0 + 4.0 / 15)).margin(0.029));
  // A trend inside every chain is caught by splitting, even with equal chain means.
  struct trend {
    double operator()(std::int64_t, std::int64_t i) const { return double(i) / 1000 + 0.1 * std::sin(double(i)); }
  } t;
  CHECK(ember::split_rhat(t, 4, 1000) > 1.5);
  // And the split chains' ESS is far below their count.
  CHECK(ember::ess(d, d.M, d.N) < 0.2 * double(d.M * d.N));
}

TEST_CASE("ess and split_rhat are NaN with fewer than 4 draws", "[diagnostics]") {
  draws d(3, 3, 0.0, 1);
  CHECK(std::isnan(ember::ess(d, 3, 3)));
  CHECK(std::isnan(ember::split_rhat(d, 3, 3)));
}
