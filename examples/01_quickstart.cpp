// 01_quickstart: sample a two-dimensional Gaussian mixture with MALA and print the summary.
#include <ember/ember.hpp>

#include <iostream>

int main() {
  using namespace ember;
  constexpr int D = 2;
  // Three components; the energy is −log of the mixture density.
  gaussian_mixture<float, D, 3> U({0.5f, 0.3f, 0.2f},
                                  {vec<float, D>{{-2.f, 0.f}}, vec<float, D>{{2.f, 1.f}}, vec<float, D>{{0.f, -2.f}}},
                                  {0.6f, 0.8f, 0.5f});

  auto pipe = mala(U, {.step_size = 0.2f}) | burn_in(500) | thin(10) | record() | track(moments, acceptance);
  auto res = sample(pipe, {.chains = 10'000, .steps = 2'000, .seed = 42}, backend::cpu{});

  std::cout << res.summary();
  // Exact mixture mean: Σ wₖ μₖ = (-0.4, -0.1).
  std::cout << "  exact mean: (-0.4000, -0.1000)\n";
}
