// std::exp on a model's parameter: in a model's gradient the parameters are reverse-mode nodes, not floats.
#include <ember/ember.hpp>

#include <cmath>

struct body {
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[0], 0.0, 1.0) - std::exp(m[1]));
  }
};

int main() {
  auto U = ember::model<2>(body{});
  ember::vec<float, 2> x{{0.f, 1.f}}, g;
  return int(U.value_and_grad(x, g));
}
