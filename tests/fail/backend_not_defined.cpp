// Must not compile: the default backend (backend::cpu) is only declared in a unit that includes
// sample.hpp without ember.hpp, and sample() says where it comes from in one sentence.
#include <ember/energy/double_well.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/sample.hpp>

int main() {
  (void)ember::sample(ember::mala(ember::double_well<float, 2>{}, {.step_size = 0.1}), {.chains = 4, .steps = 10});
}
