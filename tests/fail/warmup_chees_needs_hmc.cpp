// Must not compile: chees() tunes HMC's trajectory length, and MALA has none. ember says so in one
// sentence, and nothing else: the pipeline is then built without the warm-up, so sample() reports
// no second error from inside the warm-up's code (the test fails on "no member named").
#include <ember/ember.hpp>

int main() {
  ember::harmonic<float, 2> U;
  auto pipe = ember::mala(U) | ember::warmup(100, ember::step_size(), ember::chees());
  auto r = ember::sample(pipe, {.chains = 64, .steps = 10});
  return int(r.chains());
}
