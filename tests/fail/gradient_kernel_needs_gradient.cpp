// Must not compile: a gradient-based kernel (its state keeps the gradient) on an energy with
// value(x) only, and ember says so in one sentence.
#include "use_kernel.hpp"

struct value_only {
  using value_type = float;
  static constexpr int dim = 2;
  template <class S>
  S value(ember::vec<S, 2> const& x) const {
    return x[0] * x[0] + x[1] * x[1];
  }
};

int main() { use_kernel(ember::mala_kernel<value_only>{}); }
