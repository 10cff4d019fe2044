// Reference targets that are Bayesian models: eight schools (non-centred) and logistic regression
// on the breast-cancer data. Gradients against central differences; shipped moments reproduced.
#include <ember/ember.hpp>
#include <ember/targets/breast_cancer_logistic.hpp>
#include <ember/targets/eight_schools.hpp>

#include "energy/gradient_check.hpp"
#include "targets/target_checks.hpp"

#include <string>

namespace {
std::string const csv = std::string(EMBER_DATA_DIR) + "/breast_cancer.csv";
}

TEMPLATE_TEST_CASE("eight-schools and breast-cancer gradients match central differences", "[targets]", float, double) {
  using T = TestType;
  // Eight schools on [−2, 2]^10: τ ≤ e², terms (μ + τθ̃ − y)²/σ² ≤ (2 + 15 + 28)²/81 ≈ 25 each;
  // third derivatives along s of (τθ̃ − d)²/2σ² grow like 8τ²θ̃²/σ² ≤ 8·55·4/81 ≈ 22 per school.
  ember_test::check_gradient_on_box(ember::targets::eight_schools<T>{}.energy(), 10, -2, 2, {8 * 22, 8 * 25 + 10});
  // Breast cancer on [−1, 1]^31: |xᵢⱼ| ≤ 12 (standardised), |η| ≤ 31·12; terms Σ(|η| + log 2)·2.
  // Third derivatives Σᵢ 0.1|xᵢⱼ|³ ≤ 569·0.1·1728.
  ember::targets::breast_cancer_logistic<T> t(csv);
  ember_test::check_gradient_on_box(t.energy(), 3, -1, 1, {569 * 0.1 * 1728, 569 * 2 * 31 * 12.0});
}

TEST_CASE("target eight_schools: MALA reproduces the quadrature moments", "[targets]") {
  ember::targets::eight_schools<float> t;
  auto r = ember::sample(ember::mala(t.energy(), {.step_size = 0.3}) | ember::burn_in(1500),
                         {.chains = 8000, .steps = 1, .seed = 301});
  ember_test::check_target_moments(t, r);
}

TEST_CASE("target breast_cancer_logistic: the data and MALA reproduce the importance-sampling moments", "[targets]") {
  ember::targets::breast_cancer_logistic<float> t(csv);
  CHECK(t.design().rows() == 569);
  CHECK(t.design().cols() == 31);
  int benign = 0;
  for (std::int64_t i = 0; i < 569; ++i) benign += int(t.response()(i, 0));
  CHECK(benign == 357);  // the class distribution of the UCI description: 212 malignant, 357 benign
  CHECK(t.scaling().mean[0] == Approx(14.127291739894563));  // mean radius
  // Start at the mode. The largest posterior variance is about 1.1 (coordinate 24): with η = 0.008
  // the variance along it relaxes like (1 − η/λ)^{2n}, 70 steps per e-fold: 1,200 steps are 17.
  // The stiffest directions (collinear features) limit η; acceptance is about 0.86.
  std::vector<ember::vec<float, 31>> init(1000, t.mode());
  auto r = ember::sample(ember::mala(t.energy(), {.step_size = 0.008}) | ember::burn_in(1200),
                         {.chains = 1000, .steps = 1, .seed = 302, .init = init});
  WARN("acceptance " << r.acceptance_rate() << ", " << r.seconds() << " s");
  ember_test::check_target_moments(t, r);
}
