// A temporary result's final states would point into memory freed at the end of the statement.
#include <ember/ember.hpp>

int main() {
  auto const x = ember::sample(ember::ula(ember::harmonic<float, 1>{1.f}, {.step_size = 0.1}), {.chains = 4, .steps = 1}).final_states();
  return int(x.size());
}
