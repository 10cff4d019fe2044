// 04_adaptive_hmc: an ill-conditioned 50-dimensional Gaussian (standard deviations from 0.03 to 1,
// condition number 1000) sampled by HMC with no hand-picked step size, metric or trajectory
// length: the warm-up adapts all three. The run is advanced in two pieces with a checkpoint in
// between, as a long job would be.
#include <ember/ember.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

int main() {
  using namespace ember;
  constexpr int D = 50;
  vec<double, D> mean, sd;
  for (int i = 0; i < D; ++i) {
    mean[i] = 0;
    sd[i] = std::pow(10.0, -1.5 * i / (D - 1));  // variances log-spaced from 1 to 10⁻³
  }
  gaussian<double, D, covariance::diagonal> U(mean, sd);

  // chees_hmc: HMC whose step size (dual averaging), metric (Stan's windows; diagonal here, where
  // the coordinates are independent) and trajectory length (ChEES) a 1,000-transition warm-up
  // adapts; the same pipeline as hmc(U) | warmup(1000, step_size(), auto_mass(), chees()).
  // Nothing hand-picked.
  auto pipe = chees_hmc(U, {.warmup = 1000}) | record();

  auto run = start(pipe, {.chains = 256, .seed = 2026});
  run.advance(1000 + 500);  // warm-up and the first 500 draws
  run.save("04_adaptive_hmc.ember");

  // ... a later process continues where the first stopped, with the same random streams.
  auto resumed = decltype(run)::load(pipe, "04_adaptive_hmc.ember");
  resumed.advance(500);
  auto res = resumed.result();
  std::remove("04_adaptive_hmc.ember");

  auto const& a = res.adapted();
  std::printf("adapted: step size %.4f, trajectory length %.3f; metric scale of x0 %.3f (sd 1), of x49 %.4f (sd %.4f)\n",
              a.step_size, a.trajectory_length, a.metric_scale[0], a.metric_scale[D - 1], sd[D - 1]);
  auto s = res.summary();
  std::printf("sd of x0 %.4f (truth 1), of x49 %.5f (truth %.5f); acceptance %.3f; divergent transitions %lld\n",
              s.dims[0].sd, s.dims[D - 1].sd, sd[D - 1], res.acceptance_rate(), (long long)res.divergent_transitions());
  double min_ess = 1e300;
  for (int d = 0; d < D; ++d) min_ess = std::min(min_ess, s.dims[d].ess);
  std::printf("smallest ESS over the 50 coordinates: %.0f of %lld draws\n", min_ess, (long long)(res.kept() * res.chains()));
}
