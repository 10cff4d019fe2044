// Must not compile: step forgets the random numbers (no rng parameter), and ember says what
// signature step must have.
#include "use_kernel.hpp"

struct step_without_rng {
  using energy_type = ember::harmonic<float, 2>;
  using value_type = float;
  static constexpr int dim = 2;
  energy_type energy;
  float step_size = 1;
  template <class S>
  ember::position_state<S, dim> init(ember::vec<S, dim> const& x) const {
    return ember::make_position_state(energy, x);
  }
  template <class S>
  ember::step_info<S> step(ember::position_state<S, dim>& s) const {
    return {S(1), !ember::is_finite(s.energy), S(1)};
  }
  void validate() const {}
};

int main() { use_kernel(step_without_rng{}); }
