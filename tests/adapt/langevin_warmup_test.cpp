// Warm-up adaptation of the two underdamped Langevin kernels, from their defaults-only form
// (`kernel(U, {}) | warmup(n)`: step size and diagonal metric), judged by statistics as in
// adapt/warmup_test.cpp: the draws after warm-up have the target's moments (one draw per chain, so
// the standard errors are exact), the adapted metric matches the target's variances within the
// error of its window, the adjusted kernel's acceptance ends near its target 0.9, and the
// unadjusted kernel's warm-up is the adjusted one's (kernel/underdamped_langevin.hpp).
#include <ember/ember.hpp>

#include "support/scratch_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using ember::vec;

namespace {

constexpr double z_bound = 5;

// A 10-d Gaussian with standard deviations log-spaced from 0.03 to 3 (condition number 10⁴):
// no single step size suits it without a metric.
constexpr int D = 10;
double sd_of(int i) { return 3 * std::pow(10.0, -2.0 * (D - 1 - i) / (D - 1)); }
double mean_of(int i) { return 0.5 * (i % 3) - 0.5; }
template <class T>
auto badly_scaled() {
  vec<T, D> mu, sd;
  for (int i = 0; i < D; ++i) {
    mu[i] = T(mean_of(i));
    sd[i] = T(sd_of(i));
  }
  return ember::gaussian<T, D, ember::covariance::diagonal>(mu, sd);
}

// Worst |z| of the final states' means and variances per coordinate against N(mean_of, sd_of²).
template <class R>
double worst_moment_z(R const& r) {
  double worst = 0;
  auto const n = double(r.chains());
  for (int d = 0; d < D; ++d) {
    double m = 0, q = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) m += double(r.final_state(c)[d]);
    m /= n;
    for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(double(r.final_state(c)[d]) - m, 2);
    double const var = q / (n - 1), s2 = sd_of(d) * sd_of(d);
    double const zm = (m - mean_of(d)) / std::sqrt(s2 / n), zv = (var - s2) / (s2 * std::sqrt(2 / (n - 1)));
    worst = std::max({worst, std::abs(zm), std::abs(zv)});
  }
  return worst;
}

// Worst |z| of the adapted metric's variances against the target's: the last window pools C
// chains, and each chain's window average of (x − μ)² has variance at most 2σ⁴ (one draw's), so
// the estimate's standard error is at most σ²√(2/C) (adapt/warmup_test.cpp).
template <class R>
double worst_metric_z(R const& r) {
  auto const& scale = r.adapted().metric_scale;
  REQUIRE(scale.size() == std::size_t(D));
  double worst = 0;
  for (int i = 0; i < D; ++i) {
    double const s2 = sd_of(i) * sd_of(i), v = scale[std::size_t(i)] * scale[std::size_t(i)];
    worst = std::max(worst, std::abs((v - s2) / (s2 * std::sqrt(2.0 / double(r.chains())))));
  }
  return worst;
}

// Mean and sd over values.
std::pair<double, double> mean_sd(std::vector<double> const& v) {
  double m = 0, q = 0;
  for (double a : v) m += a;
  m /= double(v.size());
  for (double a : v) q += (a - m) * (a - m);
  return {m, std::sqrt(q / double(v.size() - 1))};
}

}  // namespace

TEST_CASE("underdamped langevin kernels adapt step size and diagonal metric from their defaults",
          "[adapt][underdamped_langevin]") {
  auto const opt = ember::sample_options<double, D>{.chains = 2000, .steps = 200, .seed = 31, .progress = false};
  SECTION("adjusted (OBABO, exact): moments and metric") {
    auto r = ember::sample(ember::adjusted_underdamped_langevin(badly_scaled<double>(), {}) | ember::warmup(1000), opt);
    INFO("step size " << r.adapted().step_size << ", acceptance " << r.acceptance_rate());
    CHECK(r.divergent_chains() == 0);
    CHECK(worst_moment_z(r) < z_bound);
    CHECK(worst_metric_z(r) < z_bound);
    CHECK(r.target_acceptance() == 0.9);
  }
  SECTION("unadjusted (BAOAB, exact position law on a Gaussian at any stable step): moments and metric") {
    auto r = ember::sample(ember::underdamped_langevin(badly_scaled<double>(), {}) | ember::warmup(1000), opt);
    INFO("step size " << r.adapted().step_size);
    CHECK(r.divergent_chains() == 0);
    CHECK(worst_moment_z(r) < z_bound);
    CHECK(worst_metric_z(r) < z_bound);
    CHECK(r.acceptance_rate() == 1.0);         // nothing is rejected
    CHECK(std::isnan(r.target_acceptance()));  // and no acceptance target is reported
  }
}

TEST_CASE("adjusted underdamped langevin's step size ends at its target acceptance 0.9",
          "[adapt][underdamped_langevin]") {
  // Over seeds, as in adapt/warmup_test.cpp: each warm-up ends at a different step size, so the
  // Monte-Carlo error of an adapted acceptance is its spread over seeds.
  std::vector<double> acc;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    auto const opt = ember::sample_options<double, D>{.chains = 256, .steps = 100, .seed = seed, .progress = false};
    acc.push_back(ember::sample(ember::adjusted_underdamped_langevin(badly_scaled<double>(), {}) | ember::warmup(1000), opt)
                      .acceptance_rate());
  }
  auto [m, sd] = mean_sd(acc);
  INFO("acceptance after warm-up " << m << ", sd over seeds " << sd);
  CHECK(std::abs(m - 0.9) < z_bound * sd);
}

TEST_CASE("the unadjusted kernel's warm-up is the adjusted kernel's: the same step size and metric, bitwise",
          "[adapt][underdamped_langevin]") {
  // In warm-up each transition of underdamped_langevin is one of adjusted OBABO with the same
  // step size, friction and metric, from the same draws: both warm-ups end where the other does.
  for (double friction : {1.0, 0.2}) {
    auto const opt = ember::sample_options<double, D>{.chains = 64, .steps = 10, .seed = 12, .progress = false};
    auto u = ember::sample(ember::underdamped_langevin(badly_scaled<double>(), {.friction = friction}) | ember::warmup(500), opt);
    auto a = ember::sample(ember::adjusted_underdamped_langevin(badly_scaled<double>(), {.friction = friction}) | ember::warmup(500), opt);
    INFO("friction " << friction << ": step sizes " << u.adapted().step_size << " and " << a.adapted().step_size);
    CHECK(u.adapted().step_size == a.adapted().step_size);
    CHECK(u.adapted().metric_scale == a.adapted().metric_scale);
    CHECK(u.adapted().restarted_chains == a.adapted().restarted_chains);
  }
}

TEST_CASE("underdamped langevin kernels refuse a missing step size without a warm-up, in one sentence",
          "[adapt][underdamped_langevin]") {
  auto const opt = ember::sample_options<double, D>{.chains = 8, .steps = 10, .seed = 1, .progress = false};
  CHECK_THROWS_WITH(ember::sample(ember::underdamped_langevin(badly_scaled<double>(), {}), opt),
                    Catch::Contains("step size") && Catch::Contains("warmup"));
  CHECK_THROWS_WITH(ember::sample(ember::adjusted_underdamped_langevin(badly_scaled<double>(), {}), opt),
                    Catch::Contains("step size") && Catch::Contains("warmup"));
}

TEST_CASE("an adapted underdamped langevin run resumes bitwise from a checkpoint", "[adapt][underdamped_langevin]") {
  auto const pipe = ember::adjusted_underdamped_langevin(badly_scaled<double>(), {}) | ember::warmup(200) | ember::record();
  auto const opt = ember::sample_options<double, D>{.chains = 16, .steps = 100, .seed = 5, .progress = false};
  ember_test::scratch_dir dir("langevin_warmup");
  auto const path = (dir / "run.ember").string();
  {
    auto r = ember::start(pipe, opt);
    r.advance(150);  // in the middle of warm-up: the adaptation's state travels too
    r.save(path);
  }
  auto run = decltype(ember::start(pipe, opt))::load(pipe, path);
  run.advance(150);
  auto full = ember::start(pipe, opt);
  full.advance(300);
  auto const resumed = run.result(), whole = full.result();
  REQUIRE(resumed.kept() == whole.kept());
  bool same = true;
  for (std::int64_t k = 0; k < whole.kept(); ++k)
    for (std::int64_t c = 0; c < whole.chains(); ++c)
      for (int d = 0; d < D; ++d) same = same && resumed.samples()(k, c, d) == whole.samples()(k, c, d);
  CHECK(same);
  CHECK(resumed.adapted().step_size == whole.adapted().step_size);
}
