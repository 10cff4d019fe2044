// Must not compile: energies of different dimensions cannot be added.
#include <ember/ember.hpp>

int main() {
  auto U = ember::harmonic<float, 2>{} + ember::double_well<float, 3>{};
  (void)U;
}
