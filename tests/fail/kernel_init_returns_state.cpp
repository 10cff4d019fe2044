// Must not compile: init returns the position instead of a state, and ember says what init must
// return.
#include "use_kernel.hpp"

struct init_returns_position {
  using energy_type = ember::harmonic<float, 2>;
  using value_type = float;
  static constexpr int dim = 2;
  energy_type energy;
  float step_size = 1;
  template <class S>
  ember::vec<S, dim> init(ember::vec<S, dim> const& x) const {
    return x;
  }
  template <class S>
  ember::step_info<S> step(ember::vec<S, dim>&, ember::chain_rng<S> const&) const {
    return {S(1), S(0) != S(0), S(1)};
  }
  void validate() const {}
};

int main() { use_kernel(init_returns_position{}); }
