// Must not compile: two adapters of one warm-up would write the same parameter (here the step
// size, by dual averaging and per chain); ember says so in one sentence.
#include <ember/ember.hpp>

int main() {
  ember::harmonic<float, 2> U;
  auto pipe = ember::mala(U) | ember::warmup(100, ember::step_size(), ember::step_size(ember::per_chain));
  auto r = ember::sample(pipe, {.chains = 64, .steps = 10});
  return int(r.chains());
}
