// Must not compile: chees() tunes the trajectory length only, and HMC's step size must be adapted
// beside it (towards harmonic-mean acceptance); ember says so in one sentence.
#include <ember/ember.hpp>

int main() {
  ember::harmonic<float, 2> U;
  auto pipe = ember::hmc(U) | ember::warmup(100, ember::diagonal_mass(), ember::chees());
  auto r = ember::sample(pipe, {.chains = 64, .steps = 10});
  return int(r.chains());
}
