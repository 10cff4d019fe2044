// Must not compile: a callable that takes only vec<float, 2> cannot be evaluated on dual numbers.
// tests/CMakeLists.txt runs the compiler on this file and expects custom_energy's one sentence.
#include <ember/ember.hpp>

int main() {
  auto V = ember::custom_energy<2>([](ember::vec<float, 2> x) { return x[0] * x[0] + x[1] * x[1]; });
  (void)V;
}
