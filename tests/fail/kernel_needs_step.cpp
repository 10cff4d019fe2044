// Must not compile: a kernel without step(), and ember names the missing member.
#include "use_kernel.hpp"

struct no_step {
  using energy_type = ember::harmonic<float, 2>;
  using value_type = float;
  static constexpr int dim = 2;
  energy_type energy;
  float step_size = 1;
  template <class S>
  ember::position_state<S, dim> init(ember::vec<S, dim> const& x) const {
    return ember::make_position_state(energy, x);
  }
  void validate() const {}
};

int main() { use_kernel(no_step{}); }
