// gaussian_mixture: gradients, exact normalisation, and stability far from every component.
#include <ember/energy/gaussian_mixture.hpp>

#include "energy/gradient_check.hpp"
#include "support/message_of.hpp"

#include <array>
#include <cmath>

using ember::vec;

namespace {

template <class T>
auto isotropic_mixture() {
  return ember::gaussian_mixture<T, 3, 3>({T(0.5), T(0.3), T(0.2)},
                                          {vec<T, 3>{{T(-2), T(0), T(1)}}, vec<T, 3>{{T(2), T(1), T(0)}},
                                           vec<T, 3>{{T(0), T(-2), T(-1)}}},
                                          {T(0.8), T(1.0), T(1.2)});
}
template <class T>
auto diagonal_mixture() {
  return ember::gaussian_mixture<T, 3, 2>(
      {T(1), T(3)}, {vec<T, 3>{{T(-1), T(0), T(1)}}, vec<T, 3>{{T(1.5), T(1), T(-0.5)}}}, ember::covariance::diagonal{},
      {vec<T, 3>{{T(0.8), T(1.2), T(1)}}, vec<T, 3>{{T(1), T(0.9), T(1.1)}}});
}

}  // namespace

TEMPLATE_TEST_CASE("gaussian_mixture's analytic gradients match central differences", "[energy][gaussian_mixture]",
                   float, double) {
  using T = TestType;
  // U = −log Σ exp(aₖ) with quadratic aₖ: ∂³U is the third cumulant of ∂aₖ under the
  // responsibilities (≤ 0.1·(spread of ∂aₖ)³) plus mixed terms. With 1/σ² ≤ 1.6 and |x − μ| ≤ 5,
  // ∂aₖ spreads by at most 16: M3 ≈ 0.1·16³ + 3·1.6·16 ≈ 500. The terms of U are ≤ 1.6·25·3.
  ember_test::fd_scales sc{500, 150};
  SECTION("isotropic") { ember_test::check_gradient_on_box(isotropic_mixture<T>(), 30, -3, 3, sc); }
  SECTION("diagonal") { ember_test::check_gradient_on_box(diagonal_mixture<T>(), 30, -3, 3, sc); }
}

TEMPLATE_TEST_CASE("gaussian_mixture is the exact negative log density", "[energy][gaussian_mixture]", float, double) {
  using T = TestType;
  auto U = isotropic_mixture<T>();
  double const w[3] = {0.5, 0.3, 0.2}, s[3] = {0.8, 1.0, 1.2};
  double const m[3][3] = {{-2, 0, 1}, {2, 1, 0}, {0, -2, -1}};
  for (int n = 0; n < 10; ++n) {
    auto x = ember_test::test_point<T, 3>(std::uint64_t(n), -3, 3);
    double p = 0;
    for (int k = 0; k < 3; ++k) {
      double q = 0;
      for (int i = 0; i < 3; ++i) q += std::pow(double(x[i]) - m[k][i], 2);
      p += w[k] * std::exp(-0.5 * q / (s[k] * s[k])) / std::pow(2 * M_PI * s[k] * s[k], 1.5);
    }
    CHECK(double(U.value(x)) == Approx(-std::log(p)).epsilon(100 * std::numeric_limits<T>::epsilon()));
  }
}

TEMPLATE_TEST_CASE("gaussian_mixture far from every component gives a finite energy and gradient",
                   "[energy][gaussian_mixture]", float, double) {
  using T = TestType;
  auto iso = isotropic_mixture<T>();
  auto dia = diagonal_mixture<T>();
  // exp(−½|x|²/σ²) underflows for |x| ~ 1e3; the shifted log-sum-exp must not.
  for (double r : {1e3, -1e3, 3e3}) {
    vec<T, 3> x{{T(r), T(0.5 * r), T(-0.7 * r)}};
    vec<T, 3> g;
    T u = iso.value_and_grad(x, g);
    REQUIRE(std::isfinite(double(u)));
    REQUIRE(std::isfinite(double(iso.value(x))));
    for (int i = 0; i < 3; ++i) REQUIRE(std::isfinite(double(g[i])));
    // Far out the widest component (σ = 1.2) dominates: ∇U ≈ (x − μ₃)/σ₃² to relative ~1/|x|.
    double const mu3[3] = {0, -2, -1};
    for (int i = 0; i < 3; ++i)
      CHECK(double(g[i]) == Approx((double(x[i]) - mu3[i]) / 1.44).epsilon(1e-3));
    u = dia.value_and_grad(x, g);
    REQUIRE(std::isfinite(double(u)));
    for (int i = 0; i < 3; ++i) REQUIRE(std::isfinite(double(g[i])));
  }
}

TEST_CASE("gaussian_mixture rejects non-positive weights and scales", "[energy][gaussian_mixture]") {
  using V = vec<double, 1>;
  CHECK_THROWS_AS((ember::gaussian_mixture<double, 1, 2>({1.0, 0.0}, {V{{0}}, V{{1}}}, {1.0, 1.0})),
                  std::invalid_argument);
  CHECK_THROWS_AS((ember::gaussian_mixture<double, 1, 2>({1.0, 1.0}, {V{{0}}, V{{1}}}, {1.0, -1.0})),
                  std::invalid_argument);
}

TEST_CASE("gaussian_mixture refuses a non-finite mean and a sigma whose 1/sigma^2 leaves float",
          "[energy][gaussian_mixture]") {
  using ember_test::message_of;
  using V = vec<float, 2>;
  float const nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(message_of([&] { ember::gaussian_mixture<float, 2, 2>({1.f, 1.f}, {V{}, V{{0.f, nan}}}, {1.f, 1.f}); }) ==
        "ember::gaussian_mixture: mean[1][1] must be finite, got nan");
  CHECK_THAT(message_of([&] { ember::gaussian_mixture<float, 2, 2>({1.f, 1.f}, {V{}, V{}}, {1.f, 1e-30f}); }),
             Catch::StartsWith("ember::gaussian_mixture: sigma[1][0] = 1e-30 gives 1/sigma[1][0]^2 = 1e+60, which "
                               "overflows float"));
  CHECK_THAT(message_of([&] {
               ember::gaussian_mixture<float, 2, 2>({1.f, 1.f}, {V{}, V{}}, ember::covariance::diagonal{},
                                                    {V{{1.f, 1.f}}, V{{1.f, 1e25f}}});
             }),
             Catch::StartsWith("ember::gaussian_mixture: sigma[1][1] = 1e+25 gives 1/sigma[1][1]^2 = 1e-50, which "
                               "underflows float"));
}
