// 09_diagnostics_and_files: what summary() warns about, and a run written to a .npz file for
// NumPy, ArviZ or scripts/plot_draws.py.
//   09_diagnostics_and_files [out.npz]      (default banana.npz)
#include <ember/ember.hpp>
#include <ember/io/save_npz.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  using namespace ember;
  std::string const path = argc > 1 ? argv[1] : "banana.npz";

  // 1. HMC whose trajectories last about half a period of a unit Gaussian (L·ε = 3 ≈ π) maps x
  //    to nearly −x: antithetic chains. The ESS of x exceeds the number of draws; that of x²
  //    does not, and summary() says so.
  gaussian<double, 2, covariance::isotropic> N01(vec<double, 2>{{0.0, 0.0}}, 1.0);
  auto antithetic = hmc(N01, {.step_size = 0.25, .integrator_steps = 12}) | burn_in(100) | record();
  auto a = sample(antithetic, {.chains = 64, .steps = 1'000, .seed = 1});
  std::cout << a.summary({.target_acceptance = 0.65}) << "\n";

  // 2. A banana-shaped energy (examples/02_custom_energy.cpp) under MALA, saved for plotting.
  auto banana = custom_energy<2>([](auto const& x) {
    auto bend = x[1] - 0.25f * x[0] * x[0];
    return 0.125f * x[0] * x[0] + 0.5f * bend * bend;
  });
  //    record_stats() keeps each kept transition's report (lp, acceptance, divergence, gradients),
  //    which save_npz writes as sample_stats.<name> for ArviZ.
  auto pipe = mala(banana, {.step_size = 1.0}) | burn_in(1'000) | thin(10) | record() | record_stats() |
              track(moments, acceptance);
  auto res = sample(pipe, {.chains = 256, .steps = 10'000, .seed = 7});
  std::cout << res.summary({.target_acceptance = 0.574});
  save_npz(res, path, {.target_acceptance = 0.574});
  std::cout << "wrote " << path << " (draws as (chain, draw, dim), per-draw statistics, divergences, acceptance, trace, summary)\n";
}
