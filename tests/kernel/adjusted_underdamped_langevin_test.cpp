// The Metropolis-adjusted underdamped Langevin kernel (OBABO with momentum flip on rejection)
// leaves its targets invariant: moments from exact starts (invariance itself) and after burn-in
// from N(0, I) and from one well (ergodicity), on the SIMD and scalar paths.
#include "kernel/langevin_checks.hpp"

#include <stdexcept>

using namespace ember_test;

TEST_CASE("adjusted underdamped langevin keeps a correlated 10-d gaussian from exact starts",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  check_adjusted_gaussian_from_exact(ember::backend::cpu{});
}

TEST_CASE("adjusted underdamped langevin reaches a correlated 10-d gaussian from N(0, I)",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  check_adjusted_gaussian_from_normal(ember::backend::cpu{});
}

TEST_CASE("adjusted underdamped langevin (scalar path) keeps a correlated 10-d gaussian from exact starts",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  check_adjusted_gaussian_from_exact(ember::backend::scalar{});
}

TEST_CASE("adjusted underdamped langevin keeps the double well from exact starts",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  check_adjusted_double_well_from_exact(ember::backend::cpu{});
}

TEST_CASE("adjusted underdamped langevin on the double well matches quadrature from one well",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  check_adjusted_double_well_from_right_well(ember::backend::cpu{});
}

TEST_CASE("adjusted underdamped langevin (scalar path) on the double well matches quadrature from N(0, I)",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  check_adjusted_double_well_from_normal(ember::backend::scalar{});
}

TEST_CASE("adjusted underdamped langevin with mclachlan's core between the O's keeps the gaussian",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  using namespace ember;
  constexpr double b1 = coefficients::mclachlan::b1;
  using omclo = splitting<O, B(b1), A(1, 2), B(1 - 2 * b1), A(1, 2), B(b1), O>;
  static_assert(omclo::adjustable && omclo::gradients_per_step == 2);
  gaussian10 g;
  auto starts = gaussian10_exact_starts(20'000, 7);
  auto r = sample(adjusted_underdamped_langevin_with<omclo>(g.energy(), {.step_size = 1.0, .friction = 0.5}),
                  {.chains = 20'000, .steps = 20, .seed = 26, .init = starts}, backend::cpu{});
  CHECK(r.acceptance_rate() < 0.97);
  check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

TEST_CASE("the same check sees the step-size bias of unadjusted obabo at the same settings",
          "[kernel][adjusted_underdamped_langevin][statistics]") {
  // Unadjusted OBABO keeps a Gaussian of covariance Σ(I − h²Σ⁻¹/4)⁻¹ (docs/integrators.md): at
  // h = 0.6 the stiffest directions (λ ≈ 0.2) are inflated by half. From exact starts, within
  // the same 20 transitions, the variances move by many standard errors (|z| ≈ 19): the check above has the
  // power to see a missing or wrong accept step.
  gaussian10 g;
  auto starts = gaussian10_exact_starts(20'000, 99);
  auto r = ember::sample(
      ember::underdamped_langevin_with<ember::obabo>(g.energy(), {.step_size = 0.6, .friction = 0.3}),
      {.chains = 20'000, .steps = 20, .seed = 22, .init = starts}, ember::backend::cpu{});
  final_moments<decltype(r)> m{r};
  double worst = 0;
  for (int d = 0; d < 10; ++d) {
    double s2 = g.sigma[d][d];
    worst = std::max(worst, std::abs(m.cov(d, d) - s2) / (s2 * std::sqrt(2.0 / (20'000 - 1))));
  }
  INFO("largest |z| of a variance, unadjusted: " << worst);
  CHECK(worst > 2 * z_bound);
}

TEST_CASE("adjusted_underdamped_langevin rejects bad parameters", "[kernel][adjusted_underdamped_langevin]") {
  ember::double_well<float, 2> U;
  CHECK_THROWS_AS(ember::adjusted_underdamped_langevin(U, {.step_size = -1}), std::invalid_argument);
  CHECK_THROWS_AS(ember::adjusted_underdamped_langevin(U, {.step_size = 0.1, .friction = -1}), std::invalid_argument);
  CHECK_THROWS_AS(ember::adjusted_underdamped_langevin(U, {.step_size = 0.1, .mass = 0}), std::invalid_argument);
  CHECK_THROWS_AS(ember::adjusted_underdamped_langevin(U, {.step_size = 0.1, .divergence_threshold = 0}),
                  std::invalid_argument);
  static_assert(ember::TransitionKernel<decltype(ember::adjusted_underdamped_langevin(U, {.step_size = 0.1}))>);
}
