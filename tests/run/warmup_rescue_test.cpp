// What keeps a warm-up right when chains are not yet where the posterior is (issue 26): the
// diagonal metric from draws and gradients, which chains still on their way in do not inflate,
// and the restart of chains that settle far above the others in energy.
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using ember::vec;

namespace {

constexpr double z_bound = 5;

}  // namespace

TEST_CASE("the diagonal metric from draws and gradients is the variance however far the chains still are",
          "[adapt][metric]") {
  // Independent Gaussian coordinates with scales 10³, 1 and 10⁻², every chain started 50 sds out
  // in each and a warm-up too short to come in: ∂ᵢU = (xᵢ − μᵢ)/σᵢ² on every draw, so
  // √(Var xᵢ / Var ∂ᵢU) is σᵢ² exactly whatever the spread, and what is left is Stan's
  // regularisation, σ² ← w σ² + 10⁻³ (1 − w) with w = n/(n + 5); warm-up 150 has one window,
  // transitions 75 to 99, so n = 16 · 25 = 400. The draws' own variance (Stan's estimate,
  // `.gradients = false`) takes the chains' transit with it.
  constexpr int D = 3;
  vec<double, D> const sd{{1e3, 1.0, 1e-2}};
  auto const U = ember::gaussian<double, D, ember::covariance::diagonal>(vec<double, D>{}, sd);
  constexpr int C = 16;
  std::vector<vec<double, D>> init(C);
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < D; ++i) init[std::size_t(c)][i] = (c % 2 ? 50 : -50) * sd[i] * (1 + 0.01 * c);
  auto const opt = ember::sample_options<double, D>{.chains = C, .steps = 0, .seed = 3, .init = init, .progress = false};
  auto const fisher = ember::sample(ember::mala(U, {}) | ember::warmup(150), opt);
  auto const stan = ember::sample(ember::mala(U, {}) | ember::warmup(150, ember::step_size(), ember::diagonal_mass({.gradients = false})), opt);
  auto const& a = fisher.adapted().metric_scale;
  auto const& b = stan.adapted().metric_scale;
  REQUIRE(a.size() == std::size_t(D));
  REQUIRE(b.size() == std::size_t(D));
  double const n = 400, w = n / (n + 5);
  for (int i = 0; i < D; ++i) {
    double const s2 = sd[i] * sd[i], want = w * s2 + 1e-3 * (1 - w);
    INFO("coordinate " << i << ": draws and gradients " << a[std::size_t(i)] << ", draws " << b[std::size_t(i)]
                       << ", sd " << sd[i]);
    CHECK(std::abs(a[std::size_t(i)] * a[std::size_t(i)] / want - 1) < 1e-8);
    if (i < 2) CHECK(b[std::size_t(i)] > 2 * sd[i]);  // the test tells the two apart (coordinate 2 came in)
  }
}

TEST_CASE("on correlated coordinates the metric from draws and gradients is the Fisher diagonal", "[adapt][metric]") {
  // Two coordinates with sds 1 and 2, correlation 0.9: Var ∂ᵢU = (Σ⁻¹)ᵢᵢ = 1/(σᵢ²(1 − ρ²)), so
  // the estimate tends to σᵢ² √(1 − ρ²) = 0.436 σᵢ², where the draws' variance tends to σᵢ².
  // The last window pools C chains; each chain's window averages of (x − μ)² and of (∂U)² have
  // variance at most one draw's, so each variance's relative standard error is at most √(2/C),
  // and that of their ratio's square root, which they share the sign of, at most √(2/C) too.
  constexpr int D = 2;
  double const rho = 0.9;
  vec<double, D> const s{{1.0, 2.0}};
  std::array<std::array<double, D>, D> const cov{{{s[0] * s[0], rho * s[0] * s[1]}, {rho * s[0] * s[1], s[1] * s[1]}}};
  auto const U = ember::gaussian(vec<double, D>{}, cov);
  constexpr std::int64_t C = 512;
  // (diagonal_mass() named: the default, auto_mass(), takes a dense metric here.)
  auto const r = ember::sample(ember::hmc(U, {.integrator_steps = 5}) | ember::warmup(600, ember::step_size(), ember::diagonal_mass()),
                               {.chains = C, .steps = 0, .seed = 11, .progress = false});
  auto const& a = r.adapted().metric_scale;
  REQUIRE(a.size() == std::size_t(D));
  for (int i = 0; i < D; ++i) {
    double const want = s[i] * s[i] * std::sqrt(1 - rho * rho), got = a[std::size_t(i)] * a[std::size_t(i)];
    double const z = (got - want) / (want * std::sqrt(2.0 / double(C)));
    INFO("coordinate " << i << ": variance " << got << ", Fisher diagonal " << want << ", marginal " << s[i] * s[i]
                       << ", z " << z);
    CHECK(std::abs(z) < z_bound);
  }
}

TEST_CASE("warm-up restarts chains that settle far above the others in energy, and says so", "[adaptation][rescue]") {
  // x₀ from −log(e^{−x₀²/2} + e^{−60 − (x₀ − 20)²/2}), x₁ standard normal: a second mode at
  // x₀ = 20 as wide as the first, e^{−60} of its mass, behind a barrier 24.5 high (a chain there
  // stays). Its typical energy stands 60 above the first mode's, beyond the bound 20·D = 40.
  auto const U = ember::custom_energy<2, double>([](auto const& x) {
    auto const a = 0.5 * x[0] * x[0], b = 60.0 + 0.5 * (x[0] - 20.0) * (x[0] - 20.0);
    return -log(exp(-a) + exp(-b)) + 0.5 * x[1] * x[1];
  });
  constexpr int C = 16;
  std::vector<vec<double, 2>> init(C);
  for (int c = 0; c < C; ++c) init[std::size_t(c)] = c % 2 ? vec<double, 2>{{20.0, 0.0}} : vec<double, 2>{{0.1 * c, 0.0}};
  auto const r = ember::sample(ember::chees_hmc(U) | ember::record(),
                               {.chains = C, .steps = 1000, .seed = 4, .init = init, .progress = false});
  auto const a = r.adapted();
  INFO("restarted: " << a.restarted_high_energy_chains << " high, " << a.restarted_chains << " still");
  CHECK(a.restarted_high_energy_chains >= 1);  // a chain may also jump the barrier on an early long step
  int left = 0;
  for (int c = 0; c < C; ++c) left += r.final_state(c)[0] > 10;
  CHECK(left == 0);
  bool said = false;
  for (auto const& w : a.warnings) said = said || w.find("settled with its energy more than 20 x 2 above") != std::string::npos;
  CHECK(said);
  auto const s = r.summary();
  CHECK(s.chains_apart == 0);
  INFO("x0: mean " << s.dims[0].mean << " +- " << s.dims[0].mcse << ", sd " << s.dims[0].sd << ", R-hat " << s.dims[0].rhat);
  CHECK(std::abs(s.dims[0].mean) < z_bound * s.dims[0].mcse);
  CHECK(s.dims[0].rhat < 1.01);
  // Started in the first mode, the same run restarts none.
  std::vector<vec<double, 2>> home(C, vec<double, 2>{{0.0, 0.0}});
  auto const q = ember::sample(ember::chees_hmc(U) | ember::record(),
                               {.chains = C, .steps = 200, .seed = 4, .init = home, .progress = false});
  CHECK(q.adapted().restarted_high_energy_chains == 0);
}

TEST_CASE("a real second mode is never emptied by the energy rescue", "[adaptation][rescue]") {
  // A 0.3/0.7 mixture of unit Gaussians in d = 10 whose modes lie 12 sds apart (no chain crosses
  // in 1,100 transitions), half the chains started in each: the modes' typical energies lie
  // within log(7/3) of each other, far inside 20·D, so no chain is moved and each mode keeps
  // exactly its 8 chains. (A bound under about log(7/3) + a few √D would empty the 0.3 mode.)
  constexpr int D = 10, C = 16;
  double const c = 6 / std::sqrt(double(D));
  auto const U = ember::gaussian_mixture<double, D, 2>({0.3, 0.7}, {ember::filled<double, D>(-c), ember::filled<double, D>(c)},
                                                       {1.0, 1.0});
  std::vector<vec<double, D>> init(C);
  for (int k = 0; k < C; ++k) init[std::size_t(k)] = ember::filled<double, D>(k % 2 ? c : -c);
  auto const r = ember::sample(ember::chees_hmc(U) | ember::record(),
                               {.chains = C, .steps = 100, .seed = 2, .init = init, .progress = false});
  CHECK(r.adapted().restarted_high_energy_chains == 0);
  int upper = 0;
  for (int k = 0; k < C; ++k) {
    double m = 0;
    for (int i = 0; i < D; ++i) m += double(r.final_state(k)[i]) / D;
    upper += m > 0;
  }
  INFO("chains in the 0.7 mode: " << upper << " of " << C);
  CHECK(upper == C / 2);
}

TEST_CASE("Stan's diagonal metric (draws only) matches the target's variances", "[adapt][metric]") {
  // `diagonal_mass({.gradients = false})`, the draws' variance: the last window pools C chains,
  // each chain's window average of (x − μ)² has variance at most one draw's, 2σ⁴, so the
  // estimate's standard error is at most σ²√(2/C) (as adapt/warmup_test.cpp for the default).
  constexpr int D = 10;
  vec<double, D> sd;
  for (int i = 0; i < D; ++i) sd[i] = std::pow(10.0, -1.5 * i / (D - 1));
  auto const U = ember::gaussian<double, D, ember::covariance::diagonal>(vec<double, D>{}, sd);
  constexpr std::int64_t C = 512;
  auto const r = ember::sample(
      ember::mala(U, {}) | ember::warmup(600, ember::step_size(), ember::diagonal_mass({.gradients = false})),
      {.chains = C, .steps = 0, .seed = 9, .progress = false});
  auto const& a = r.adapted().metric_scale;
  REQUIRE(a.size() == std::size_t(D));
  double worst = 0;
  for (int i = 0; i < D; ++i) {
    double const s2 = sd[i] * sd[i];
    worst = std::max(worst, std::abs((a[std::size_t(i)] * a[std::size_t(i)] - s2) / (s2 * std::sqrt(2.0 / double(C)))));
  }
  INFO("worst z of an adapted variance: " << worst);
  CHECK(worst < z_bound);
}
