// 07_custom_kernel: random-walk Metropolis, a kernel written outside the library
// (07_custom_kernel.hpp), on an energy that has no gradient. Pipes, stages, backends and the
// summary work with it as with a built-in kernel.
#include "07_custom_kernel.hpp"

#include <iostream>

int main() {
  using namespace ember;
  auto rwm = rwm_kernel<laplace_energy>{{}, 1.5f};
  auto pipe = rwm | burn_in(1'000) | thin(5) | record() | track(moments, acceptance);
  auto res = sample(pipe, {.chains = 4'096, .steps = 2'000, .seed = 7});
  std::cout << res.summary();  // the truth: mean 0, variance 2
}
