// Built against an installed ember via find_package(ember): ULA on a standard normal.
#include <ember/ember.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace ember;
  auto res = sample(ula(harmonic<double, 1>{}, {.step_size = 0.01}) | burn_in(1000),
                    {.chains = 4000, .steps = 1, .seed = 1}, backend::cpu{});
  double m = 0;
  for (long c = 0; c < res.chains(); ++c) m += res.final_state(c)[0] / double(res.chains());
  std::printf("consumer: mean %.4f over %ld chains\n", m, long(res.chains()));
  // The stationary law of ULA on N(0, 1) has mean 0 and sd ≈ 1: |mean| < 5 standard errors.
  return std::fabs(m) < 5.0 / std::sqrt(double(res.chains())) ? 0 : 1;
}
