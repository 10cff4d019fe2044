// Must not compile: a pipeline with two track stages; every statistic goes in one.
#include <ember/ember.hpp>

int main() {
  auto p = ember::mala(ember::double_well<float, 2>{}, {.step_size = 0.1}) | ember::track(ember::moments) |
           ember::track(ember::acceptance);
  (void)p;
}
