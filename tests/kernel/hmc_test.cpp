#include "generic/sampler_checks.hpp"
#include <ember/ember.hpp>

#include <algorithm>
#include <cmath>
#include <string>

TEST_CASE("hmc leaves a 10-dimensional correlated gaussian invariant", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_gaussian_moments(ember::backend::cpu{});
}


TEST_CASE("hmc on the double well matches quadrature of exp(-U)", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_double_well(ember::backend::cpu{});
}

TEST_CASE("hmc (scalar path) leaves a 10-dimensional correlated gaussian invariant", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_gaussian_moments(ember::backend::scalar{});
}

TEST_CASE("hmc (scalar path) on the double well matches quadrature of exp(-U)", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_double_well(ember::backend::scalar{});
}

TEST_CASE("hmc has no default trajectory: without L or T, or ChEES to adapt T, it says so; chees_hmc adapts all three",
          "[kernel][hmc]") {
  using namespace ember;
  gaussian<double, 3, covariance::isotropic> U(vec<double, 3>{}, 1.0);
  std::string const sentence = "ember::hmc: say how long a trajectory is: .integrator_steps = L or .trajectory_length = T";
  CHECK_THROWS_WITH(hmc(U, {.step_size = 0.1}), Catch::StartsWith(sentence));
  // The old trap: a step-size warm-up of one-leapfrog-step HMC.
  CHECK_THROWS_WITH(sample(hmc(U) | warmup(100) | record(), {.chains = 8, .steps = 10, .seed = 1}), Catch::StartsWith(sentence));
  CHECK_NOTHROW(hmc(U, {.step_size = 0.1, .integrator_steps = 5}));
  CHECK_NOTHROW(hmc(U, {.step_size = 0.1, .trajectory_length = 1.5}));
  // chees_hmc: step size, metric and trajectory length adapted; a pipeline that takes stages. The
  // metric is diagonal here (auto_mass() keeps it on this target), so the spelled-out pipeline
  // below with diagonal_mass() makes the same draws.
  auto r = sample(chees_hmc(U, {.warmup = 400}) | record(), {.chains = 32, .steps = 200, .seed = 3, .progress = false});
  auto const a = r.adapted();
  CHECK(a.step_size > 0);
  CHECK(a.trajectory_length > a.step_size);
  CHECK(a.metric_scale.size() == 3);
  CHECK(r.target_acceptance() == 0.8);
  CHECK(r.harmonic_target());
  // The same pipeline as spelled out by hand, draw for draw.
  auto h = sample(hmc(U) | warmup(400, step_size(), diagonal_mass(), chees()) | record(),
                  {.chains = 32, .steps = 200, .seed = 3, .progress = false});
  auto const x = r.samples().data(), y = h.samples().data();
  REQUIRE(x.size() == y.size());
  CHECK(std::equal(x.begin(), x.end(), y.begin()));
  // Its target acceptance: another one is the step size's, and one outside (0, 1) is refused
  // before any work.
  auto t = sample(chees_hmc(U, {.warmup = 400, .target_acceptance = 0.9}) | record(), {.chains = 32, .steps = 200, .seed = 3, .progress = false});
  CHECK(t.target_acceptance() == 0.9);
  CHECK(t.adapted().step_size < a.step_size);
  auto s = sample(hmc(U) | warmup(400, step_size({.target = 0.9}), auto_mass(), chees()) | record(),
                  {.chains = 32, .steps = 200, .seed = 3, .progress = false});
  CHECK(std::ranges::equal(t.samples().data(), s.samples().data()));
  for (double bad : {1.0, -0.1, std::nan("")})
    CHECK_THROWS_WITH(chees_hmc(U, {.target_acceptance = bad}),
                      Catch::StartsWith("ember::chees_hmc: target_acceptance must be 0 (the default, 0.8) or an acceptance rate in (0, 1)"));
}
