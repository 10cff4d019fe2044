// Constrained parameters: gradients of the transformed energies against central differences
// (float and double), the maps back and forth, bad bounds, and MALA reproducing Gamma and Beta
// moments through the positive and interval transforms.
#include <ember/ember.hpp>
#include <ember/energy/transform.hpp>

#include "energy/gradient_check.hpp"
#include "generic/sampler_checks.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using ember::vec;

namespace {

// A smooth inner energy defined on the whole of ℝ³ (so every transform can wrap it):
// U(x) = Σ (xᵢ − cᵢ)²/2 + 0.1 x₀x₁.
template <class T>
auto inner() {
  return ember::custom_energy<3, T>([](auto const& x) {
    return 0.5 * (x[0] - 0.5) * (x[0] - 0.5) + 0.5 * (x[1] + 1) * (x[1] + 1) + 0.5 * x[2] * x[2] + 0.1 * x[0] * x[1];
  });
}

}  // namespace

TEMPLATE_TEST_CASE("transformed energies' gradients match central differences", "[energy][transform]", float, double) {
  using T = TestType;
  T const inf = std::numeric_limits<T>::infinity();
  // y ∈ [−2, 2]³: x stays within e² ≈ 7.4 of the bounds. Third derivatives along yᵢ of U∘f and
  // of log J are bounded by about |∇U|·e^{3·2} + e^{2·2}·|∇²U| ≲ 10³ for the exp maps (less for
  // the logistic); magnitudes by |U| + |log J| ≲ 100.
  SECTION("positive") { ember_test::check_gradient_on_box(ember::positive(inner<T>()), 10, -2, 2, {2e3, 100}); }
  SECTION("interval") { ember_test::check_gradient_on_box(ember::interval(inner<T>(), -1, 3), 10, -2, 2, {2e3, 100}); }
  SECTION("mixed bounds") {
    auto U = ember::constrain(inner<T>(), vec<T, 3>{{T(0), -inf, T(-1)}}, vec<T, 3>{{inf, T(2), T(1)}});
    CHECK(U.kind[0] == ember::bound_kind::lower);
    CHECK(U.kind[1] == ember::bound_kind::upper);
    CHECK(U.kind[2] == ember::bound_kind::interval);
    ember_test::check_gradient_on_box(U, 10, -2, 2, {2e3, 100});
  }
  SECTION("free coordinates") {
    auto U = ember::constrain(inner<T>(), vec<T, 3>{{-inf, -inf, -inf}}, vec<T, 3>{{inf, inf, inf}});
    ember_test::check_gradient_on_box(U, 10, -2, 2, {1, 100});
  }
  SECTION("ordered") { ember_test::check_gradient_on_box(ember::ordered(inner<T>()), 10, -2, 2, {5e3, 200}); }
}

TEST_CASE("transforms map draws back to the constrained space and start states forward", "[energy][transform]") {
  double const inf = std::numeric_limits<double>::infinity();
  auto U = ember::constrain(inner<double>(), vec<double, 3>{{0, -inf, -1}}, vec<double, 3>{{inf, 2, 1}});
  vec<double, 3> y{{0.3, -0.7, 1.1}};
  auto x = U.constrain_point(y);
  CHECK(x[0] == Approx(std::exp(0.3)));
  CHECK(x[1] == Approx(2 - std::exp(-0.7)));
  CHECK(x[2] == Approx(-1 + 2 / (1 + std::exp(-1.1))));
  auto back = U.unconstrain_point(x);
  for (int i = 0; i < 3; ++i) CHECK(back[i] == Approx(y[i]).epsilon(1e-12));
  CHECK_THROWS_WITH(U.unconstrain_point(vec<double, 3>{{-1, 0, 0}}),
                    Catch::Contains("coordinate 0 = -1 is outside its support"));
  CHECK_THROWS_WITH(U.unconstrain_point(vec<double, 3>{{1, 0, 1}}), Catch::Contains("coordinate 2 = 1 is outside"));
  auto O = ember::ordered(inner<double>());
  auto xo = O.constrain_point(y);
  CHECK(xo[0] < xo[1]);
  CHECK(xo[1] < xo[2]);
  auto yo = O.unconstrain_point(xo);
  for (int i = 0; i < 3; ++i) CHECK(yo[i] == Approx(y[i]).epsilon(1e-12));
  CHECK_THROWS_WITH(O.unconstrain_point(vec<double, 3>{{0, 0, 1}}), Catch::Contains("not increasing at coordinate 1"));
  // The log-Jacobian makes V(y) = U(f(y)) − log J: check one value by hand.
  auto P = ember::positive(inner<double>());
  double logj = y[0] + y[1] + y[2];
  CHECK(P.value(y) == Approx(inner<double>().value(P.constrain_point(y)) - logj).epsilon(1e-14));
}

TEST_CASE("constrain refuses empty or NaN bounds", "[energy][transform]") {
  double const inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(ember::interval(inner<double>(), 1, 1), Catch::Contains("coordinate 0 has bounds (1, 1)"));
  CHECK_THROWS_WITH(ember::constrain(inner<double>(), vec<double, 3>{{0, NAN, 0}}, vec<double, 3>{{1, 1, 1}}),
                    Catch::Contains("coordinate 1"));
  CHECK_THROWS_WITH(ember::constrain(inner<double>(), vec<double, 3>{{inf, 0, 0}}, vec<double, 3>{{inf, 1, 1}}),
                    Catch::Contains("need lower < upper"));
}

TEST_CASE("mala through the positive and interval transforms reproduces Gamma and Beta moments",
          "[energy][transform][statistics]") {
  // x₀ ~ Gamma(3, rate 2): U = −2 log x + 2x; x₁ ~ Beta(2, 5): U = −log x − 4 log(1 − x).
  // E x₀ = 1.5, E x₀² = 3; E x₁ = 2/7, E x₁² = 6/56. Coordinates are independent.
  auto U = ember::custom_energy<2, double>([](auto const& x) {
    using std::log;
    return -2 * log(x[0]) + 2 * x[0] - log(x[1]) - 4 * log(1 - x[1]);
  });
  auto V = ember::constrain(U, vec<double, 2>{{0, 0}}, vec<double, 2>{{std::numeric_limits<double>::infinity(), 1}});
  // MALA is not geometrically ergodic on tails lighter than Gaussian (here e^{−2eʸ}): a chain that
  // starts far out on the right, where ∇V is huge, rejects for a long time and biases E x₀ upward
  // (measured: 1.64 for η = 0.5 from y₀ ~ N(0, 1)). So the chains start in the bulk, at the
  // transform of x = (1, 0.3), and η = 0.1 keeps the bulk's proposals sensible.
  std::vector<vec<double, 2>> init(20'000, V.unconstrain_point(vec<double, 2>{{1.0, 0.3}}));
  auto r = ember::sample(ember::mala(V, {.step_size = 0.1}) | ember::burn_in(500),
                         {.chains = 20'000, .steps = 1, .seed = 11, .init = init});
  REQUIRE(r.divergent_chains() == 0);
  CHECK(r.acceptance_rate() > 0.5);
  auto x = [&](auto const& y, int d) { return V.constrain_point(y)[d]; };
  double const truth[4] = {1.5, 3.0, 2.0 / 7, 6.0 / 56};
  for (int d = 0; d < 2; ++d)
    for (int p = 1; p <= 2; ++p) {
      double z = ember_test::z_of_mean(r, [&](auto const& y) { return std::pow(x(y, d), p); }, truth[2 * d + p - 1]);
      INFO("coordinate " << d << ", moment " << p << ": z = " << z);
      CHECK(std::abs(z) < ember_test::z_bound);
    }
}
