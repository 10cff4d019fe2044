// Must not compile: the drifts of this BAOAB-like sequence cover 3/4 of the step, and the
// splitting says so in one sentence.
#include <ember/integrator/splitting.hpp>

int main() {
  using broken = ember::splitting<ember::B(1, 2), ember::A(1, 2), ember::O, ember::A(1, 4), ember::B(1, 2)>;
  return broken::size;
}
