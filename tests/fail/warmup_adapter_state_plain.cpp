// Must not compile: an adapter whose state owns memory (a std::vector) cannot be saved in a
// checkpoint byte for byte; ember says so in one sentence.
#include <ember/ember.hpp>

#include <vector>

struct remembers_everything {
  struct state {
    std::vector<double> history;
  };
  template <class K>
  state init(K const&, ember::warmup_setup const&) const {
    return {};
  }
  template <class K>
  void set(state const&, ember::kernel_params<K>&) const {}
  template <class K, class R>
  void update(state&, ember::warmup_step<K, R> const&) const {}
};

int main() {
  ember::harmonic<float, 2> U;
  auto pipe = ember::mala(U, {.step_size = 0.1}) | ember::warmup(100, remembers_everything{});
  auto r = ember::sample(pipe, {.chains = 64, .steps = 10});
  return int(r.chains());
}
