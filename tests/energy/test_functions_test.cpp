// The test-function energies (double_well, harmonic, rosenbrock, rastrigin, ackley): gradients
// against central differences and their known minima.
#include <ember/energy/ackley.hpp>
#include <ember/energy/double_well.hpp>
#include <ember/energy/harmonic.hpp>
#include <ember/energy/rastrigin.hpp>
#include <ember/energy/rosenbrock.hpp>

#include "energy/gradient_check.hpp"

#include <cmath>

using ember::vec;
using ember_test::check_gradient_on_box;

TEMPLATE_TEST_CASE("the test-function energies' analytic gradients match central differences", "[energy]", float,
                   double) {
  using T = TestType;
  constexpr int D = 5;
  // Bounds on |∂ᵢ³U| over the boxes below, and on the magnitude of U's terms.
  SECTION("double_well") {
    // ∂³ h(x² − b²)² = 24 h x: 48·2 = 96 on [−2, 2] for h = 2.
    check_gradient_on_box(ember::double_well<T, D>{}, 20, -2, 2, {96, 1});
    check_gradient_on_box(ember::double_well<T, D>{T(0.5), T(1.5)}, 20, -2, 2, {24, 1});
  }
  SECTION("harmonic") {
    check_gradient_on_box(ember::harmonic<T, D>{}, 20, -3, 3, {0, 1});
    check_gradient_on_box(ember::harmonic<T, D>{T(2.5)}, 20, -3, 3, {0, 1});
  }
  SECTION("rosenbrock") {
    // ∂³ b(y − x²)² = 24 b x: 3600 on [−1.5, 1.5]; y − x² cancels terms of size ≤ 2.25, each
    // squared and scaled by b: magnitudes up to b·(2·2.25)²·D ≈ 1e4.
    check_gradient_on_box(ember::rosenbrock<T, D>{}, 20, -1.5, 1.5, {3600, 1e4});
  }
  SECTION("rastrigin") {
    // ∂³ (−a cos 2πx) = −a(2π)³ sin 2πx: ≤ 10·248; the terms aD cancel against a cos: 2aD + 4D.
    check_gradient_on_box(ember::rastrigin<T, D>{}, 20, -2, 2, {2500, 2 * 10 * D + 4 * D});
  }
  SECTION("ackley") {
    // Away from the kink at 0 (|x| ≥ 0.5 coordinatewise): the cosine term gives
    // ≤ (c³/D)·e·(1 + 3c/D + c²/D²)·... ≈ 1000, the exponential one ≤ a b³ + a b/r² ≈ 20;
    // magnitudes a + e.
    check_gradient_on_box(ember::ackley<T, D>{}, 20, 0.5, 2.5, {1500, 25});
    check_gradient_on_box(ember::ackley<T, D>{}, 20, -2.5, -0.5, {1500, 25});
  }
}

TEMPLATE_TEST_CASE("the test-function energies vanish at their known minima", "[energy]", float, double) {
  using T = TestType;
  constexpr int D = 4;
  vec<T, D> g;
  SECTION("double_well: U = 0 at every xᵢ = ±b") {
    for (T b : {T(1), T(1.5)}) {
      ember::double_well<T, D> U{T(2), b};
      for (int mask = 0; mask < (1 << D); ++mask) {
        vec<T, D> x;
        for (int i = 0; i < D; ++i) x[i] = (mask >> i & 1) ? b : -b;
        CHECK(U.value(x) == T(0));
        CHECK(U.value_and_grad(x, g) == T(0));
        for (int i = 0; i < D; ++i) CHECK(g[i] == T(0));
      }
      // And the barrier at the origin is h per coordinate times b⁴.
      CHECK(double(U.value(vec<T, D>{})) == Approx(2.0 * D * std::pow(double(b), 4)));
    }
  }
  SECTION("ackley: U(0) = 0, with a zero gradient at the kink") {
    ember::ackley<T, D> U;
    double tol = 4 * std::numeric_limits<T>::epsilon() * 25;  // cancellation of a + e
    CHECK(std::abs(double(U.value(vec<T, D>{}))) <= tol);
    CHECK(std::abs(double(U.value_and_grad(vec<T, D>{}, g))) <= tol);
    for (int i = 0; i < D; ++i) CHECK(g[i] == T(0));
    CHECK(U.value(vec<T, D>{{T(1), T(0), T(0), T(0)}}) > T(1));
  }
  SECTION("rastrigin: U(0) = 0") {
    ember::rastrigin<T, D> U;
    CHECK(U.value(vec<T, D>{}) == T(0));
    CHECK(U.value_and_grad(vec<T, D>{}, g) == T(0));
    for (int i = 0; i < D; ++i) CHECK(g[i] == T(0));
  }
  SECTION("rosenbrock: U(1, …, 1) = 0") {
    ember::rosenbrock<T, D> U;
    auto one = ember::filled<T, D>(1);
    CHECK(U.value(one) == T(0));
    CHECK(U.value_and_grad(one, g) == T(0));
    for (int i = 0; i < D; ++i) CHECK(g[i] == T(0));
    // With a = 2 the minimum moves to (2, 4, 16, 256).
    ember::rosenbrock<T, 2> V{T(2), T(100)};
    CHECK(V.value(vec<T, 2>{{T(2), T(4)}}) == T(0));
  }
  SECTION("harmonic: U = ½k|x|²") {
    ember::harmonic<T, D> U{T(3)};
    CHECK(U.value(vec<T, D>{}) == T(0));
    CHECK(double(U.value(vec<T, D>{{T(1), T(2), T(0), T(0)}})) == Approx(7.5));
  }
}
