// TorchEBM's Himmelblau, Booth and Styblinski–Tang energies: gradients against central
// differences (float and double) and their known minima.
#include <ember/energy/booth.hpp>
#include <ember/energy/himmelblau.hpp>
#include <ember/energy/styblinski_tang.hpp>

#include "energy/gradient_check.hpp"

#include <cmath>

using ember::vec;
using ember_test::check_gradient_on_box;

TEMPLATE_TEST_CASE("himmelblau, booth and styblinski_tang gradients match central differences", "[energy]", float,
                   double) {
  using T = TestType;
  // On [−4, 4]²: Himmelblau's third derivatives are 24x (≤ 96), its terms (x² + y − a)² ≤ 30²;
  // Booth is quadratic (no truncation error), terms ≤ 25²; Styblinski–Tang: ∂³ = 12x ≤ 48,
  // terms ≤ ½(256 + 256 + 20) per coordinate.
  check_gradient_on_box(ember::himmelblau<T>{}, 20, -4, 4, {96, 2 * 900});
  check_gradient_on_box(ember::booth<T>{}, 20, -4, 4, {0, 2 * 625});
  check_gradient_on_box(ember::styblinski_tang<T, 5>{}, 20, -4, 4, {48, 5 * 266});
}

TEST_CASE("himmelblau, booth and styblinski_tang have their known minima", "[energy]") {
  vec<double, 2> g;
  for (auto m : {vec<double, 2>{{3, 2}}, vec<double, 2>{{-2.805118, 3.131312}}, vec<double, 2>{{-3.779310, -3.283186}},
                 vec<double, 2>{{3.584428, -1.848126}}}) {
    CHECK(ember::himmelblau<double>{}.value_and_grad(m, g) < 1e-9);
    CHECK(std::abs(g[0]) < 1e-4);
    CHECK(std::abs(g[1]) < 1e-4);
  }
  CHECK(ember::booth<double>{}.value_and_grad(vec<double, 2>{{1, 3}}, g) == 0);
  CHECK(g[0] == 0);
  CHECK(g[1] == 0);
  vec<double, 3> x = ember::filled<double, 3>(-2.903534), h;
  CHECK(ember::styblinski_tang<double, 3>{}.value_and_grad(x, h) == Approx(-39.16617 * 3).epsilon(1e-6));
  for (int i = 0; i < 3; ++i) CHECK(std::abs(h[i]) < 1e-4);
}
