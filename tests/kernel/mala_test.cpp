#include "generic/sampler_checks.hpp"

#include <ember/targets/neal_funnel.hpp>

#include <cmath>

TEST_CASE("mala leaves a 10-dimensional correlated gaussian invariant", "[kernel][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::cpu{});
}


TEST_CASE("mala on the double well matches quadrature of exp(-U)", "[kernel][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::cpu{});
}

TEST_CASE("mala (scalar path) leaves a 10-dimensional correlated gaussian invariant", "[kernel][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::scalar{});
}

TEST_CASE("mala (scalar path) on the double well matches quadrature of exp(-U)", "[kernel][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::scalar{});
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
  auto h = sample(hmc(U) | warmup(300, step_size(), chees()) | record(), {.chains = 64, .steps = 10, .seed = 1});
  REQUIRE(h.adapted().trajectory_length > 0);
  CHECK(h.harmonic_target());  // ChEES tunes ε on the harmonic mean over chains
  CHECK(h.target_acceptance() == 0.8);
}

TEST_CASE("mala counts a transition whose energy error exceeds the threshold as divergent, and draws the same",
          "[kernel][mala]") {
  using namespace ember;
  // The centred funnel: a step that suits its mouth (log-scale v near 0) is far too long in its
  // neck (v ≪ 0), where proposals land at energies thousands above the current one.
  auto const U = targets::neal_funnel<float>{}.energy();
  sample_options<float, 10> const opt{.chains = 256, .steps = 400, .seed = 3};
  auto const counted = sample(mala(U, {.step_size = 0.3}), opt);
  auto const ignored = sample(mala(U, {.step_size = 0.3, .divergence_threshold = INFINITY}), opt);
  CHECK(counted.divergent_transitions() > 0);
  CHECK(ignored.divergent_transitions() == 0);
  // Such a proposal is rejected with or without the flag (its acceptance probability is e^{-1000}).
  REQUIRE(counted.final_states().size() == ignored.final_states().size());
  for (std::size_t i = 0; i < counted.final_states().size(); ++i)
    REQUIRE(counted.final_states()[i] == ignored.final_states()[i]);
  CHECK(counted.acceptance_rate() == ignored.acceptance_rate());
  // A step that suits a unit Gaussian: energy errors of order one, nothing divergent.
  gaussian<float, 10, covariance::isotropic> G(vec<float, 10>{}, 1.0f);
  CHECK(sample(mala(G, {.step_size = 0.3}), opt).divergent_transitions() == 0);
  REQUIRE_THROWS_WITH(mala(G, {.step_size = 0.3, .divergence_threshold = 0}),
                      Catch::Contains("divergence threshold must be positive"));
}
