// Must not compile: mala needs value_and_grad, and says so in one sentence.
#include <ember/ember.hpp>

struct value_only {
  using value_type = float;
  static constexpr int dim = 2;
  float value(ember::vec<float, 2> const& x) const { return x[0] * x[0] + x[1] * x[1]; }
};

int main() {
  auto k = ember::mala(value_only{}, {.step_size = 0.1});
  (void)k;
}
