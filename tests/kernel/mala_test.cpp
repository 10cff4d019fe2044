#include "generic/sampler_checks.hpp"

TEST_CASE("mala leaves a 10-dimensional correlated gaussian invariant", "[kernel][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::cpu{});
}


TEST_CASE("mala on the double well matches quadrature of exp(-U)", "[kernel][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::cpu{});
}

TEST_CASE("mala (scalar path) leaves a 10-dimensional correlated gaussian invariant", "[kernel][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::cpu{.simd = false});
}

TEST_CASE("mala (scalar path) on the double well matches quadrature of exp(-U)", "[kernel][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::cpu{.simd = false});
}

TEST_CASE("mala(U) and hmc(U) need no options: a warm-up adapts the step size, a run without one says so",
          "[kernel][mala][hmc]") {
  using namespace ember;
  gaussian<double, 3, covariance::isotropic> U(vec<double, 3>{}, 1.0);
  REQUIRE_THROWS_WITH(sample(mala(U) | record(), {.chains = 4, .steps = 1, .seed = 1}),
                      Catch::Contains("give .step_size"));
  REQUIRE_THROWS_WITH(sample(hmc(U) | record(), {.chains = 4, .steps = 1, .seed = 1}),
                      Catch::Contains("give .step_size"));
  auto r = sample(mala(U) | warmup(300) | record(), {.chains = 64, .steps = 10, .seed = 1});
  REQUIRE(r.adapted().step_size > 0);
  CHECK(!r.harmonic_target());
  auto h = sample(hmc(U) | warmup(300, chees()) | record(), {.chains = 64, .steps = 10, .seed = 1});
  REQUIRE(h.adapted().trajectory_length > 0);
  CHECK(h.harmonic_target());  // ChEES tunes ε on the harmonic mean over chains
  CHECK(h.target_acceptance() == 0.651);
}
