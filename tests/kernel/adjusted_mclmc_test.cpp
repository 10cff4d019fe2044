// Adjusted MCLMC, MAMS (kernel/adjusted_mclmc.hpp, kernel/mams.hpp): exact invariance on a
// correlated Gaussian from exact draws under the scalar, a diagonal and a dense metric, with
// random and fixed trajectory lengths, on a SIMD batch and one chain at a time; a non-Gaussian
// target against quadrature; the counters on built cases; mams(U)'s warm-up end to end against a
// quadrature reference.
#include "generic/sampler_checks.hpp"
#include <ember/ember.hpp>
#include <ember/targets/banana.hpp>
#include <ember/targets/eight_schools.hpp>

#include <cmath>
#include <vector>

namespace {

using namespace ember;
using ember_test::gaussian10;

template <class Kernel, class Backend>
void check_invariance(Kernel const& k, Backend const& backend, std::uint64_t seed) {
  gaussian10 g;
  std::int64_t const chains = 40'000;
  auto r = sample(k | burn_in(4), {.chains = chains, .steps = 1, .seed = seed, .init = g.exact_draws(chains, seed)}, backend);
  CHECK(r.divergent_transitions() == 0);
  CHECK(r.truncated_transitions() == 0);
  INFO("acceptance " << r.acceptance_rate());
  // Step sizes rejected a fifth of the time or more: the Metropolis test carries the law.
  CHECK(r.acceptance_rate() < 0.8);
  ember_test::check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

}  // namespace

TEST_CASE("adjusted mclmc leaves a correlated gaussian invariant (scalar metric; SIMD batch and one chain at a time)",
          "[kernel][mams][statistics]") {
  gaussian10 g;
  check_invariance(adjusted_mclmc(g.energy(), {.step_size = 4.5, .trajectory_length = 9}), backend::cpu{}, 31);
  check_invariance(adjusted_mclmc(g.energy(), {.step_size = 5.0, .trajectory_length = 10, .random_length = false}),
                   backend::cpu{}, 32);
  check_invariance(adjusted_mclmc_with<isokinetic_velocity_verlet>(g.energy(), {.step_size = 3.2, .trajectory_length = 10}),
                   backend::scalar{}, 33);
}

TEST_CASE("adjusted mclmc leaves a correlated gaussian invariant under a diagonal and a dense metric",
          "[kernel][mams][statistics]") {
  gaussian10 g;
  diagonal_metric<float, 10> diag;
  for (int i = 0; i < 10; ++i) diag.scale[i] = float(std::sqrt(g.sigma[i][i]));
  check_invariance(adjusted_mclmc(g.energy(), {.step_size = 5.0, .trajectory_length = 10}).with_metric(diag), backend::cpu{}, 34);
  auto const l = g.cholesky();
  dense_metric<float, 10> dense{};
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j <= i; ++j) dense.lower[i * (i + 1) / 2 + j] = float(l[i][j]);
  check_invariance(adjusted_mclmc(g.energy(), {.step_size = 7.0, .trajectory_length = 14}).with_metric(dense), backend::cpu{}, 35);
}

TEST_CASE("adjusted mclmc on the double well matches quadrature of exp(-U), crossing the barrier",
          "[kernel][mams][statistics]") {
  auto starts = ember_test::right_well_starts(20'000);
  auto r = sample(adjusted_mclmc(double_well<float, 2>{}, {.step_size = 0.3, .trajectory_length = 2}) | burn_in(400),
                  {.chains = 20'000, .steps = 1, .seed = 36, .init = starts});
  ember_test::check_double_well_moments(r);
}

TEST_CASE("adjusted mclmc counts what it did: gradients, trajectories cut at the cap, divergences", "[kernel][mams]") {
  gaussian<float, 4, covariance::isotropic> U(vec<float, 4>{}, 1.0f);
  std::int64_t const chains = 37, steps = 64;  // a partial last SIMD batch
  SECTION("fixed length: ⌈L/ε⌉ McLachlan steps of two gradients each") {
    auto r = sample(adjusted_mclmc(U, {.step_size = 0.3, .trajectory_length = 1.0, .random_length = false}) | record(),
                    {.chains = chains, .steps = steps, .seed = 1});
    CHECK(r.gradients() == 2 * 4 * chains * steps);
    CHECK(r.truncated_transitions() == 0);
  }
  SECTION("random length: the steps average L/ε over the Halton numbers") {
    auto const k = adjusted_mclmc(U, {.step_size = 0.1, .trajectory_length = 1.55});
    auto r = sample(k | record(), {.chains = chains, .steps = 1024, .seed = 2});
    double const per = double(r.gradients()) / double(2 * chains * 1024);
    // 1024 transitions are a full base-2 Halton cycle: the mean is s/2 + 1/2 ± 1/1024 of a step.
    CHECK(std::abs(per - 15.5) < 0.05);
    bool capped;
    long total = 0;
    for (std::uint32_t t = 0; t < 1024; ++t) total += k.integrator_steps_at(t, capped);
    CHECK(double(total) / 1024 == Approx(per).epsilon(1e-12));
  }
  SECTION("a cap below L/ε: every transition truncated, and the summary says so") {
    auto r = sample(adjusted_mclmc(U, {.step_size = 0.01, .trajectory_length = 1, .random_length = false,
                                       .max_integrator_steps = 20}) | record(),
                    {.chains = chains, .steps = steps, .seed = 3});
    CHECK(r.gradients() == 2 * 20 * chains * steps);
    CHECK(r.truncated_transitions() == chains * steps);
    bool warned = false;
    for (auto const& w : r.summary().warnings()) warned = warned || w.find("trajectory cap") != std::string::npos;
    CHECK(warned);
  }
  SECTION("a step past float's range diverges: rejected, counted, the chain stays") {
    // (Isokinetic dynamics are stable far beyond HMC's steps: at ε = 10⁴ a step drifts out and the
    // kick turns the velocity straight back, so the chain lands near where it started and the
    // energy error is small. Only a step whose energy overflows diverges.)
    auto const starts = std::vector<vec<float, 4>>(std::size_t(chains), vec<float, 4>{{0.5f, -0.5f, 1.f, 0.f}});
    auto r = sample(adjusted_mclmc(U, {.step_size = 1e30, .trajectory_length = 1e30, .random_length = false}) | record(),
                    {.chains = chains, .steps = steps, .seed = 4, .init = starts});
    CHECK(r.divergent_transitions() == chains * steps);
    CHECK(r.acceptance_rate() == 0);
    CHECK(r.final_state(5)[2] == 1.f);
  }
}

TEST_CASE("mams with its warm-up matches the eight schools quadrature reference", "[kernel][mams][statistics]") {
  targets::eight_schools<double> t;
  auto r = sample(mams(t.energy()) | record(), {.chains = 8, .steps = 2000, .seed = 37});
  auto const s = r.summary();
  auto const ref = t.reference();
  CHECK(r.divergent_chains() == 0);
  CHECK(r.warmup_gradients() > 0);
  CHECK(r.target_acceptance() == 0.9);
  double const z = (s.dims[0].mean - ref.mean[0]) / s.dims[0].mcse;
  INFO("mu: mean " << s.dims[0].mean << ", reference " << ref.mean[0] << ", z = " << z);
  CHECK(std::abs(z) < ember_test::z_bound);
  for (auto const& row : s.dims) CHECK(row.rhat < 1.01);
  double const L = r.adapted().trajectory_length, eps = r.adapted().step_size;
  INFO("L = " << L << ", step size " << eps << ", acceptance " << r.acceptance_rate());
  CHECK(L > eps);
  CHECK(std::abs(r.acceptance_rate() - 0.9) < 0.1);
}

TEST_CASE("mams on the banana diverges nowhere: the kick's velocity norm holds where u opposes the gradient",
          "[kernel][mams]") {
  // The banana's far arms make δ large with u nearly opposite to e; normalising u by the closed
  // form |A e + B u| instead of its computed norm gave 300-450 divergent transitions (NaN energy
  // errors) here, and the matrix's health gate caught it.
  for (std::uint64_t seed : {1, 2}) {
    auto r = sample(mams(targets::banana<float>{}.energy()) | record(), {.chains = 128, .steps = 1000, .seed = seed});
    CHECK(r.divergent_transitions() == 0);
    CHECK(r.divergent_chains() == 0);
  }
}

TEST_CASE("adjusted mclmc refuses what it cannot run", "[kernel][mams]") {
  gaussian<double, 2, covariance::isotropic> U(vec<double, 2>{}, 1.0);
  CHECK_THROWS_WITH(adjusted_mclmc(U, {.step_size = 0.1, .trajectory_length = -1}), Catch::Contains("trajectory length"));
  CHECK_THROWS_WITH(adjusted_mclmc(U, {.step_size = -1, .trajectory_length = 1}), Catch::Contains("step size"));
  CHECK_THROWS_WITH(sample(adjusted_mclmc(U, {.step_size = 0.1}), {.chains = 4, .steps = 1}),
                    Catch::Contains("ember::mams(U)"));
  CHECK_THROWS_WITH(sample(mams(U), {.chains = 1, .steps = 1}), Catch::Contains("at least 2 chains"));
  CHECK_THROWS_WITH(mams(U, {.target_acceptance = 1}), Catch::StartsWith("ember::mams: target_acceptance must be 0 (the default, 0.9)"));
  // Another target is the step size's: a higher one, a smaller step.
  auto const own = sample(mams(U, {.warmup = 300}) | record(), {.chains = 8, .steps = 400, .seed = 2});
  auto const high = sample(mams(U, {.warmup = 300, .target_acceptance = 0.97}) | record(), {.chains = 8, .steps = 400, .seed = 2});
  CHECK(high.target_acceptance() == 0.97);
  CHECK(high.adapted().step_size < own.adapted().step_size);
}
