// Must not compile: the energy's value and value_and_grad are written for double only, but on the
// CPU a run calls them with a SIMD batch of chains; ember says to make them templates on the
// scalar type (before, the error came from deep inside the kernel's template).
#include "use_kernel.hpp"

struct double_only {
  using value_type = double;
  static constexpr int dim = 2;
  double value(ember::vec<double, 2> const& x) const { return 0.5 * (x[0] * x[0] + x[1] * x[1]); }
  double value_and_grad(ember::vec<double, 2> const& x, ember::vec<double, 2>& g) const {
    g = x;
    return value(x);
  }
};

int main() { use_kernel(ember::mala(double_only{}, {.step_size = 0.1})); }
