// std::exp on a coordinate: the dual numbers custom_energy differentiates with are not floats.
#include <ember/ember.hpp>

#include <cmath>

int main() {
  auto U = ember::custom_energy<2>([](auto const& x) { return std::exp(x[0]) + x[1] * x[1]; });
  ember::vec<float, 2> x{{0.f, 1.f}}, g;
  return int(U.value_and_grad(x, g));
}
