// Must not compile: step is written for float only, but on the CPU a run calls it with a SIMD
// batch of chains; ember says to make it a template on the scalar type.
#include "use_kernel.hpp"

struct float_only_step {
  using energy_type = ember::harmonic<float, 2>;
  using value_type = float;
  static constexpr int dim = 2;
  energy_type energy;
  float step_size = 1;
  template <class S>
  ember::position_state<S, dim> init(ember::vec<S, dim> const& x) const {
    return ember::make_position_state(energy, x);
  }
  ember::step_info<float> step(ember::position_state<float, dim>& s, ember::chain_rng<float> const&) const {
    return {1.f, !ember::is_finite(s.energy), 1.f};
  }
  void validate() const {}
};

int main() { use_kernel(float_only_step{}); }
