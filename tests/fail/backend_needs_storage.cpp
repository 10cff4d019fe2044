// Must not compile: sample() is given a backend without the chains' memory (storage<P>), and says
// so in one sentence.
#include <ember/ember.hpp>

struct my_backend {
  template <class P>
  void check(P const&) const {}
};

int main() {
  (void)ember::sample(ember::mala(ember::double_well<float, 2>{}, {.step_size = 0.1}), {.chains = 4, .steps = 10},
                      my_backend{});
}
