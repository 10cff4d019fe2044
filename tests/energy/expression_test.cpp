// Energy expressions: sums, scaling and tempering compose values and gradients.
#include <ember/energy/double_well.hpp>
#include <ember/energy/expression.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/energy/rastrigin.hpp>
#include <ember/energy/rosenbrock.hpp>

#include "energy/gradient_check.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

using ember::vec;

TEMPLATE_TEST_CASE("energy expressions compose values and gradients", "[energy][expression]", float, double) {
  using T = TestType;
  constexpr int D = 3;
  ember::gaussian a(vec<T, D>{{T(1), T(0), T(-1)}}, vec<T, D>{{T(0.5), T(1), T(2)}});
  ember::double_well<T, D> b;
  ember::rosenbrock<T, D> c;
  // Third-derivative and magnitude bounds on [−1.5, 1.5]: those of the operands (see
  // test_functions_test.cpp), scaled by the coefficients.
  double const eps = std::numeric_limits<T>::epsilon();
  auto near = [&](double got, double want, double mag) { return std::abs(got - want) <= 16 * eps * (mag + std::abs(want)); };

  SECTION("U1 + U2") {
    auto U = a + b;
    static_assert(ember::DifferentiableEnergy<decltype(U)>);
    ember_test::check_gradient_on_box(U, 20, -1.5, 1.5, {72, 1});
    auto x = ember_test::test_point<T, D>(1, -1.5, 1.5);
    CHECK(near(U.value(x), a.value(x) + b.value(x), 10));
  }
  SECTION("c * U and U * c") {
    auto U = T(2.5) * b;
    auto V = b * 2.5;
    ember_test::check_gradient_on_box(U, 20, -1.5, 1.5, {2.5 * 72, 1});
    auto x = ember_test::test_point<T, D>(2, -1.5, 1.5);
    CHECK(near(U.value(x), 2.5 * b.value(x), 10));
    // U * c is built as the very node c * U; the same code may still give different bits, because
    // the compiler decides per call site which a·b + c to fuse (clang also folds constants without
    // fusing). Each evaluation of c·h·Σ(xᵢ² − b²)² is within (D + 6)·u·c·h·Σ(xᵢ² + b²)² of the
    // exact value whatever is fused (u = ε/2): xᵢ² − b² is off by ≤ 2u(xᵢ² + b²), its square by
    // ≤ 5u(xᵢ² + b²)² with the product's rounding, the D-term sum adds (D − 1)u, h and c one u each.
    // Two evaluations differ by at most twice that: 10ε·c·h·Σ(xᵢ² + b²)² at D = 3, O(u²) included.
    static_assert(std::is_same_v<decltype(U), decltype(V)>);
    double m = 0;
    for (int i = 0; i < D; ++i) m += std::pow(double(x[i]) * x[i] + double(b.b) * b.b, 2);
    CHECK(std::abs(double(U.value(x)) - double(V.value(x))) <= 10 * eps * 2.5 * double(b.barrier_height) * m);
  }
  SECTION("c * (c' * U) and (c' * U) / T fold into one scaled node") {
    auto U = T(4) * (T(0.5) * b);
    auto V = (T(0.5) * b) / 8;
    static_assert(std::is_same_v<decltype(U), ember::scaled_energy<ember::double_well<T, D>>>);
    static_assert(std::is_same_v<decltype(V), ember::scaled_energy<ember::double_well<T, D>>>);
    CHECK(U.c == T(2));  // 4 · 0.5 and 0.5 / 8, exact in binary
    CHECK(V.c == T(0.0625));
    ember_test::check_gradient_on_box(U, 20, -1.5, 1.5, {2 * 72, 1});
    auto x = ember_test::test_point<T, D>(4, -1.5, 1.5);
    CHECK(near(U.value(x), 2 * double(b.value(x)), 10));
  }
  SECTION("U / T is U scaled by 1/T") {
    auto U = c / 4;
    ember_test::check_gradient_on_box(U, 20, -1.5, 1.5, {3600 / 4.0, 1e4 / 4});
    auto x = ember_test::test_point<T, D>(3, -1.5, 1.5);
    CHECK(near(U.value(x), c.value(x) / 4, 1e4));
  }
  SECTION("(a + 0.5 b) / 2 + c, nested") {
    auto U = (a + 0.5f * b) / 2 + c;
    static_assert(ember::DifferentiableEnergy<decltype(U)>);
    static_assert(std::is_trivially_copyable_v<decltype(U)>);
    ember_test::check_gradient_on_box(U, 20, -1.5, 1.5, {3600 + 18, 1e4});
    for (int n = 0; n < 10; ++n) {
      auto x = ember_test::test_point<T, D>(std::uint64_t(n), -1.5, 1.5);
      double want = (double(a.value(x)) + 0.5 * double(b.value(x))) / 2 + double(c.value(x));
      CHECK(near(U.value(x), want, 1e4));
      vec<T, D> g, ga, gb, gc;
      U.value_and_grad(x, g);
      a.value_and_grad(x, ga);
      b.value_and_grad(x, gb);
      c.value_and_grad(x, gc);
      for (int i = 0; i < D; ++i)
        CHECK(near(g[i], (double(ga[i]) + 0.5 * double(gb[i])) / 2 + double(gc[i]), 1e4));
    }
  }
}

TEST_CASE("tempering rejects a temperature that is not positive and finite", "[energy][expression]") {
  ember::double_well<float, 2> U;
  auto message = [&](double t) -> std::string {
    try {
      (void)(U / t);
    } catch (std::invalid_argument const& e) {
      return e.what();
    }
    return "no exception";
  };
  CHECK_THAT(message(0), Catch::Contains("temperature") && Catch::Contains("positive"));
  CHECK_THAT(message(-1), Catch::Contains("temperature"));
  CHECK_THAT(message(std::numeric_limits<double>::quiet_NaN()), Catch::Contains("temperature"));
  CHECK_THAT(message(std::numeric_limits<double>::infinity()), Catch::Contains("temperature"));
  CHECK_THROWS_AS(U / 0, std::invalid_argument);
  CHECK(message(0.5) == "no exception");
}
