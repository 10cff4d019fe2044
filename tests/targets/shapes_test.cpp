// Reference targets with non-Gaussian shapes: Neal's funnel (centred and non-centred), banana,
// Rosenbrock pairs. Gradients against central differences; shipped moments reproduced.
#include <ember/ember.hpp>
#include <ember/targets/banana.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/neal_funnel_noncentred.hpp>
#include <ember/targets/rosenbrock_pairs.hpp>

#include "energy/gradient_check.hpp"
#include "targets/target_checks.hpp"

#include <cmath>

TEMPLATE_TEST_CASE("funnel, banana and rosenbrock-pairs gradients match central differences", "[targets]", float,
                   double) {
  using T = TestType;
  // Funnel on [−2, 2]^10: third derivatives along v of ½e^{−v}Σxᵢ² are ≤ ½e²·9·4 ≈ 133, along xᵢ 0;
  // terms up to e²·18 ≈ 133.
  ember_test::check_gradient_on_box(ember::targets::neal_funnel<T>{}.energy(), 10, -2, 2, {133, 140});
  // Banana on [−12, 12]²: ∂³/∂x₁³ of r²/2 is 12b²x₁ ≤ 0.13; terms (b·144 + 12)² ≈ 270.
  ember_test::check_gradient_on_box(ember::targets::banana<T>{}.energy(), 10, -12, 12, {0.2, 300});
  // Rosenbrock pairs on [−3, 3]^36: ∂³ b(x₂ − x₁²)² = 24b x₁ ≤ 360; terms b(3 + 9)²·18 ≈ 1.3e4.
  ember_test::check_gradient_on_box(ember::targets::rosenbrock_pairs<T>{}.energy(), 5, -3, 3, {360, 1.3e4});
}

TEST_CASE("target neal_funnel_noncentred: MALA reproduces the funnel's moments", "[targets]") {
  ember::targets::neal_funnel_noncentred<float> t;
  auto r = ember::sample(ember::mala(t.energy(), {.step_size = 0.5}) | ember::burn_in(100),
                         {.chains = 20000, .steps = 1, .seed = 201});
  // xᵢ² = eᵛzᵢ² has Var = 3e¹⁸ − e⁹: its sample mean is far from normal at any feasible n, so a
  // z-test of E xᵢ² would be meaningless; E log|xᵢ| = E v/2 + E log|zᵢ| = −(γ + log 2)/2 is
  // checked instead, with E v, E v², E xᵢ against the reference.
  ember_test::check_target_moments(t, r, [](int d) { return d > 0; });
  double const truth = -(0.5772156649015329 + std::log(2.0)) / 2;
  for (int i = 1; i < 10; ++i) {
    double s = 0, q = 0, n = double(r.chains());
    for (std::int64_t c = 0; c < r.chains(); ++c) s += std::log(std::abs(t.reported(r.final_state(c))[i]));
    for (std::int64_t c = 0; c < r.chains(); ++c)
      q += std::pow(std::log(std::abs(t.reported(r.final_state(c))[i])) - s / n, 2);
    double z = (s / n - truth) / std::sqrt(q / (n - 1) / n);
    INFO("E log|x" << i << "|: " << s / n << " (truth " << truth << "), z = " << z);
    CHECK(std::abs(z) < 5);
  }
}

TEST_CASE("target neal_funnel (centred): MALA with one step size misses the neck, as documented", "[targets]") {
  // Not a pass/fail check of the reference: the centred funnel is in the suite to show the failure.
  // What is checked is the documented symptom: E v is biased upward (the neck v < −3 is
  // under-sampled), by many standard errors.
  ember::targets::neal_funnel<float> t;
  auto r = ember::sample(ember::mala(t.energy(), {.step_size = 0.2}) | ember::burn_in(1000),
                         {.chains = 4000, .steps = 1, .seed = 202});
  double s = 0, q = 0, n = double(r.chains());
  for (std::int64_t c = 0; c < r.chains(); ++c) s += double(r.final_state(c)[0]);
  for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(double(r.final_state(c)[0]) - s / n, 2);
  double z = (s / n) / std::sqrt(q / (n - 1) / n);
  WARN("centred funnel, MALA: E v = " << s / n << " (truth 0), z = " << z);
  CHECK(z > 5);
}

TEST_CASE("target banana: HMC reproduces its moments", "[targets]") {
  ember::targets::banana<float> t;
  auto r = ember::sample(ember::hmc(t.energy(), {.step_size = 0.15, .integrator_steps = 20}) | ember::burn_in(400),
                         {.chains = 8000, .steps = 1, .seed = 203});
  ember_test::check_target_moments(t, r);
}

// The curvature across the ridge reaches 8b·x₁² ≈ 4400 at x₁ = 10.5 (3 sd out), so ε = 0.03;
// x₁ has sd 3.2, so trajectories of length 3 (L = 100). Shorter runs are visibly under-dispersed
// (measured over all 18 pairs: 400 transitions of L = 50 gave E x₁² = 8.2 instead of 11, and
// 1,000 of L = 100 gave 10.7, E x₂² 330 instead of 361): the tails of x₁ take long to fill.
TEST_CASE("target rosenbrock_pairs: HMC reproduces its moments", "[targets]") {
  ember::targets::rosenbrock_pairs<float> t;
  auto r = ember::sample(ember::hmc(t.energy(), {.step_size = 0.03, .integrator_steps = 100}) | ember::burn_in(1500),
                         {.chains = 1000, .steps = 1, .seed = 204});
  ember_test::check_target_moments(t, r);
}
