// Must not compile: the kernel's own state has x and energy but no slots, so a run could not
// store it between chunks; ember names the missing member of the state protocol.
#include "use_kernel.hpp"

template <class S>
struct my_state {
  ember::vec<S, 2> x;
  S energy;
};

struct state_without_slots {
  using energy_type = ember::harmonic<float, 2>;
  using value_type = float;
  static constexpr int dim = 2;
  energy_type energy;
  float step_size = 1;
  template <class S>
  my_state<S> init(ember::vec<S, dim> const& x) const {
    return {x, energy.value(x)};
  }
  template <class S>
  ember::step_info<S> step(my_state<S>& s, ember::chain_rng<S> const&) const {
    return {S(1), !ember::is_finite(s.energy), S(1)};
  }
  void validate() const {}
};

int main() { use_kernel(state_without_slots{}); }
