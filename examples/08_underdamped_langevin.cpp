// 08_underdamped_langevin: sample the quickstart's two-dimensional Gaussian mixture with
// underdamped Langevin dynamics (BAOAB, unadjusted), its Metropolis-adjusted form (OBABO with a
// momentum flip on rejection) and MALA, and compare them by effective sample size per gradient
// evaluation: each kernel spends one gradient per transition, so ESS per transition is ESS per
// gradient here. Step sizes and frictions are the best of the grids in bench/langevin_suite.cpp.
#include <ember/ember.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace {

constexpr int D = 2;
constexpr std::int64_t chains = 256, steps = 4000;

// Mean, sd and ESS (Stan's multi-chain ESS over the recorded draws) per coordinate, and the
// smallest ESS of x_d and x_d² per 1000 gradients; the error of each mean in standard errors
// (sd/√ESS) against the exact mixture mean shows the unadjusted kernel's step-size bias.
template <class R>
void report(char const* name, R const& r, double gradients_per_transition) {
  double const exact_mean[D] = {-0.4, 0.15};
  auto draws = r.samples();
  double min_ess = 1e300;
  std::printf("%-30s", name);
  for (int d = 0; d < D; ++d) {
    double e = ember::ess([&](std::int64_t c, std::int64_t i) { return double(draws(i, c, d)); }, r.chains(), r.kept());
    double e2 = ember::ess(
        [&](std::int64_t c, std::int64_t i) { return double(draws(i, c, d)) * double(draws(i, c, d)); }, r.chains(),
        r.kept());
    double s = 0, q = 0, n = double(r.chains() * r.kept());
    for (std::int64_t c = 0; c < r.chains(); ++c)
      for (std::int64_t i = 0; i < r.kept(); ++i) {
        s += draws(i, c, d);
        q += double(draws(i, c, d)) * draws(i, c, d);
      }
    double mean = s / n, sd = std::sqrt(q / n - mean * mean);
    double z = (mean - exact_mean[d]) / (sd / std::sqrt(e));
    std::printf("  x%d: mean %7.4f (%+5.1f se) sd %6.4f ESS %6.0f", d, mean, z, sd, e);
    min_ess = std::min({min_ess, e, e2});
  }
  double grads = double(r.chains()) * double(steps) * gradients_per_transition;
  std::printf("\n%30s  acceptance %.3f, min ESS (x and x²) per 1000 gradients %.1f\n", "", r.acceptance_rate(),
              1000 * min_ess / grads);
}

}  // namespace

int main() {
  using namespace ember;
  // The quickstart's mixture: weights 0.7 and 0.3, means (−1, 0) and (1, 0.5), sds 0.6 and 0.8.
  gaussian_mixture<float, D, 2> U({0.7f, 0.3f}, {vec<float, D>{{-1.f, 0.f}}, vec<float, D>{{1.f, 0.5f}}},
                                  {0.6f, 0.8f});
  sample_options<float, D> opt{.chains = chains, .steps = steps, .seed = 42};

  // Underdamped Langevin: momentum carried across transitions; small friction keeps its direction
  // for about 1/γ time units, so the chain travels instead of diffusing.
  auto uld = sample(underdamped_langevin(U, {.step_size = 0.8, .friction = 0.25}) | burn_in(1000) | record(), opt,
                    backend::cpu{});
  // The adjusted form: unbiased at any step size (the unadjusted one is biased by O(h²)).
  auto adj = sample(adjusted_underdamped_langevin(U, {.step_size = 0.8, .friction = 0.25}) | burn_in(1000) | record(),
                    opt, backend::cpu{});
  auto ml = sample(mala(U, {.step_size = 0.8}) | burn_in(1000) | record(), opt, backend::cpu{});

  // Exact: Var = Σ wₖ (σₖ² + μₖ²) − mean², 1.284 and 0.4965.
  std::printf("exact: x0 mean -0.4000 sd %.4f, x1 mean 0.1500 sd %.4f\n", std::sqrt(1.284), std::sqrt(0.4965));
  report("underdamped_langevin (BAOAB)", uld, 1);
  report("adjusted_underdamped_langevin", adj, 1);
  report("mala", ml, 1);
}
