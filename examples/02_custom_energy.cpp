// 02_custom_energy: a user-written energy, a banana-shaped ("warped") Gaussian, as a generic
// lambda; its gradient comes from dual numbers. Mixed with a built-in Gaussian and sampled by MALA.
#include <ember/ember.hpp>

#include <iostream>

int main() {
  using namespace ember;
  constexpr int D = 2;
  // U(x) = x₀²/8 + (x₁ − x₀²/4)²: x₀ ~ N(0, 4), and x₁ follows x₀²/4 with unit variance.
  // Write it once over `auto`: ember calls it with float, SIMD batches and dual numbers.
  auto banana = custom_energy<D>([](auto const& x) {
    auto bend = x[1] - 0.25f * x[0] * x[0];
    return 0.125f * x[0] * x[0] + 0.5f * bend * bend;
  });
  // Plus a weak isotropic Gaussian pull towards the origin (σ = 3).
  gaussian<float, D, covariance::isotropic> prior(vec<float, D>{{0.f, 0.f}}, 3.f);
  auto U = banana + 0.5f * prior;

  auto pipe = mala(U, {.step_size = 0.5}) | burn_in(1'000) | thin(10) | record() | track(moments, acceptance);
  auto res = sample(pipe, {.chains = 10'000, .steps = 2'000, .seed = 7}, backend::cpu{});
  std::cout << res.summary();
}
