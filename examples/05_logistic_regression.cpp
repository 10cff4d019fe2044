// 05_logistic_regression: Bayesian logistic regression on real data. The breast-cancer data
// (data/breast_cancer.csv, 569 rows) is read into a dataset, its 30 features standardised, an
// intercept column added; the energy holds views of those tables. MALA from the posterior mode,
// 64 chains, and the summary's per-coefficient mean and ESS compared with the importance-sampling
// reference that ships with the target: z = (mean − ref) / √(sd²/ESS + se_ref²).
//
//   build/examples/05_logistic_regression [path/to/breast_cancer.csv]
#include <ember/ember.hpp>
#include <ember/targets/breast_cancer_logistic.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string csv = argc > 1 ? argv[1] : std::string(EMBER_DATA_DIR) + "/breast_cancer.csv";
  // The target owns the data sets (X: 569 × 31 with the intercept, y: 569 × 1); U holds views,
  // so `target` must outlive every use of U.
  ember::targets::breast_cancer_logistic<float> target(csv);
  auto U = target.energy();

  constexpr int C = 64;
  std::vector<ember::vec<float, 31>> init(C, target.mode());
  auto pipe = ember::mala(U, {.step_size = 0.008}) | ember::burn_in(2'000) | ember::thin(5) | ember::record();
  auto res = ember::sample(pipe, {.chains = C, .steps = 20'000, .seed = 2026, .init = init});
  auto s = res.summary();
  std::cout << s;

  auto ref = target.reference();
  std::printf("\nagainst the reference (%s):\n", ref.method);
  std::printf("  dim   ember mean   reference        z\n");
  double worst = 0;
  for (int d = 0; d < 31; ++d) {
    auto const& r = s.dims[d];
    double se = r.sd / std::sqrt(r.ess);
    double z = (r.mean - ref.mean[d]) / std::sqrt(se * se + ref.mean_se[d] * ref.mean_se[d]);
    worst = std::fmax(worst, std::fabs(z));
    std::printf("  %3d %12.4f %11.4f %8.2f\n", d, r.mean, ref.mean[d], z);
  }
  std::printf("largest |z| = %.2f over 31 coefficients; %.2f s of sampling after %.2f s of warm-up\n", worst,
              res.sampling_seconds(), res.warmup_seconds());
  return worst < 5 ? 0 : 1;
}
