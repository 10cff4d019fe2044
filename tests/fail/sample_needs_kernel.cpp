// Must not compile: sample() takes a transition kernel or a pipeline, not an energy.
#include <ember/ember.hpp>

int main() {
  auto r = ember::sample(ember::harmonic<float, 2>{}, {.chains = 10, .steps = 10});
  (void)r;
}
