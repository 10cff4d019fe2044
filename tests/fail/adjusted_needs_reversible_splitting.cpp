// Must not compile: BAOAB has its O in the middle, so there is no reversible core to
// Metropolis-adjust, and the kernel says so in one sentence.
#include <ember/ember.hpp>

int main() {
  auto k = ember::adjusted_underdamped_langevin_with<ember::baoab>(ember::double_well<float, 2>{}, {.step_size = 0.1});
  (void)k;
}
