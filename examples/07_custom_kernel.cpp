// 07_custom_kernel: random-walk Metropolis, a kernel written outside the library
// (07_custom_kernel.hpp), on an energy that has no gradient. Pipes, stages, backends and the
// summary work with it as with a built-in kernel.
#include "07_custom_kernel.hpp"

#include <iostream>

int main() {
  using namespace ember;
  auto rwm = rwm_kernel<laplace_energy>{{}, 1.0f};  // σ = 1 to start; the warm-up tunes it
  auto pipe = rwm | warmup(500, step_size()) | thin(5) | record() | track(moments, acceptance);
  auto res = sample(pipe, {.chains = 1'024, .steps = 2'000, .seed = 7});
  std::cout << "tuned step size " << res.adapted().step_size << '\n' << res.summary();  // truth: mean 0, sd 1.414
}
