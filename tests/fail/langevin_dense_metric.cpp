// Must not compile: the underdamped Langevin kernels adapt a diagonal metric only (their splittings
// carry the momentum whitened coordinate by coordinate); ember says so in one sentence.
#include <ember/ember.hpp>

int main() {
  ember::harmonic<float, 2> U;
  auto pipe = ember::adjusted_underdamped_langevin(U, {}) | ember::warmup(100, ember::step_size(), ember::dense_mass());
  auto r = ember::sample(pipe, {.chains = 64, .steps = 10});
  return int(r.chains());
}
