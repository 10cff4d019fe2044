// The full-covariance gaussian with Eigen inputs, badly scaled covariances, and large D (784 in
// float, 512 in double: the precision lives on the heap).
#include <ember/ember.hpp>

// ember's headers include no Eigen and configure none: a program's own Eigen keeps its
// vectorisation (docs/decisions/2026-12-01-no-eigen-in-ember-headers.md).
#if defined(EIGEN_WORLD_VERSION)
#error "ember: <ember/ember.hpp> included Eigen, which only the opt-in ember/eigen.hpp may"
#endif
#if defined(EIGEN_DONT_VECTORIZE) || defined(EIGEN_MAX_ALIGN_BYTES) || defined(EIGEN_MAX_STATIC_ALIGN_BYTES) || \
    defined(EIGEN_NO_CUDA)
#error "ember: linking ember::ember or including ember configured Eigen for the user's own code"
#endif

#include "energy/gradient_check.hpp"
#include "support/message_of.hpp"

#include <Eigen/Core>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

using ember::vec;
using ember_test::message_of;

namespace {

// Σᵢⱼ = ρ^{|i−j|} (AR(1)): eigenvalues in [(1−ρ)/(1+ρ), (1+ρ)/(1−ρ)].
template <class M>
M ar1(int n, double rho) {
  M S(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) S(i, j) = typename M::Scalar(std::pow(rho, std::abs(i - j)));
  return S;
}

}  // namespace

TEST_CASE("gaussian accepts fixed-size Eigen vectors and matrices and gives the std::array result",
          "[energy][gaussian][eigen]") {
  Eigen::Vector3f mu(0.5f, -1.f, 2.f);
  Eigen::Matrix3f cov;
  cov << 2.f, 0.3f, 0.f, 0.3f, 1.f, 0.2f, 0.f, 0.2f, 0.5f;
  ember::gaussian U(mu, cov);
  static_assert(std::is_same_v<decltype(U), ember::gaussian<float, 3, ember::covariance::full>>);
  std::array<std::array<float, 3>, 3> a{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a[i][j] = cov(i, j);
  ember::gaussian V(vec<float, 3>{{0.5f, -1.f, 2.f}}, a);
  ember::gaussian W(vec<float, 3>{{0.5f, -1.f, 2.f}}, cov);
  for (int k = 0; k < 10; ++k) {
    auto x = ember_test::test_point<float, 3>(std::uint64_t(k), -2, 2);
    CHECK(U.value(x) == V.value(x));
    CHECK(W.value(x) == V.value(x));
  }
  CHECK(U.log_normalizer() == V.log_normalizer());
}

TEST_CASE("gaussian checks the sizes of dynamic Eigen inputs at run time", "[energy][gaussian][eigen]") {
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(4);
  Eigen::MatrixXd cov = Eigen::MatrixXd::Identity(4, 4);
  CHECK_NOTHROW(ember::gaussian<double, 4>(mu, cov));
  CHECK_THAT(message_of<std::invalid_argument>([&] { ember::gaussian<double, 3>(mu, Eigen::MatrixXd::Identity(3, 3)); }),
             Catch::Contains("ember::gaussian<T, 3>: the mean has 4 entries"));
  CHECK_THAT(message_of<std::invalid_argument>([&] { ember::gaussian<double, 4>(mu, Eigen::MatrixXd::Identity(4, 3)); }),
             Catch::Contains("the covariance is 4 x 3"));
}

TEST_CASE("a badly scaled SPD covariance is accepted and a singular one is refused with %g numbers",
          "[energy][gaussian][eigen]") {
  Eigen::Matrix2d c;
  c << 1, 0, 0, 1e-12;
  ember::gaussian<double, 2> U(Eigen::Vector2d::Zero(), c);
  CHECK(U.precision[1][1] == Approx(1e12).epsilon(1e-12));
  vec<double, 2> x{{0, 1e-6}};
  CHECK(U.value(x) == Approx(0.5).epsilon(1e-12));
  // Float precision too: Σ = diag(1, 1e-12) has a float precision of 1e12.
  Eigen::Matrix2f cf = c.cast<float>();
  CHECK_NOTHROW(ember::gaussian<float, 2>(Eigen::Vector2f::Zero(), cf));
  // Rank one: the second pivot is zero up to rounding.
  Eigen::Matrix2d r;
  r << 1, 1, 1, 1;
  CHECK_THAT(message_of<std::invalid_argument>([&] { ember::gaussian<double, 2>(Eigen::Vector2d::Zero(), r); }),
             Catch::Contains("not positive definite (Cholesky pivot 1 is 0)"));
  Eigen::Matrix2d n;
  n << 1e-9, 0, 0, -2.5e-9;
  CHECK_THAT(message_of<std::invalid_argument>([&] { ember::gaussian<double, 2>(Eigen::Vector2d::Zero(), n); }),
             Catch::Contains("(Cholesky pivot 1 is -2.5e-09)"));
}

TEST_CASE("gaussian<float, 784> and gaussian<double, 512> with full covariance have correct gradients",
          "[energy][gaussian][large]") {
  // Quadratic: no truncation error. The magnitude of U's terms: |r|² λ_max(P) ≤ 784·4·1/0.54.
  {
    constexpr int D = 784;
    Eigen::VectorXf mu = Eigen::VectorXf::LinSpaced(D, -1.f, 1.f);
    ember::gaussian<float, D> U(mu, ar1<Eigen::MatrixXf>(D, 0.3));
    static_assert(sizeof(U) < 4 * D * sizeof(float) + 64, "the precision must not live inside the energy");
    ember_test::check_gradient(U, ember_test::test_point<float, D>(1, -2, 2), {0, 4.0 * D * 4 / 0.54});
  }
  {
    constexpr int D = 512;
    Eigen::VectorXd mu = Eigen::VectorXd::Zero(D);
    ember::gaussian<double, D> U(mu, ar1<Eigen::MatrixXd>(D, 0.5));
    ember_test::check_gradient(U, ember_test::test_point<double, D>(2, -2, 2), {0, 4.0 * D * 4 * 3});
  }
}

TEMPLATE_TEST_CASE_SIG("mala samples gaussian<float, 784> and gaussian<double, 512> with full covariance: 2U is "
                       "chi-squared with D degrees",
                       "[energy][gaussian][large][statistics]", ((class T, int D), T, D), (float, 784), (double, 512)) {
  using V = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  V mu = V::LinSpaced(D, T(-1), T(1));
  ember::gaussian<T, D> U(mu, ar1<M>(D, D == 784 ? 0.3 : 0.5));
  // x ~ N(μ, Σ) ⇒ 2U(x) = rᵀPr ~ χ²_D: mean D, variance 2D. One draw per chain (the final state)
  // after a burn-in of many relaxation times (λ_max/η ≤ 3/0.05 = 60 steps per e-fold, 500 steps;
  // 2U relaxes at twice that rate).
  // The same run on the GPU is in gaussian_cuda_test.cu.
  auto r = ember::sample(ember::mala(U, {.step_size = 0.05}) | ember::burn_in(500), {.chains = 64, .steps = 1, .seed = 5});
  REQUIRE(r.divergent_chains() == 0);
  CHECK(r.acceptance_rate() > 0.3);
  double s = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) {
    auto x = r.final_state(c);
    s += 2 * double(U.value(x));
  }
  double m = s / double(r.chains());
  double z = (m - D) / std::sqrt(2.0 * D / double(r.chains()));
  INFO("mean of 2U over chains " << m << " (chi-squared mean " << D << "), z = " << z);
  CHECK(std::abs(z) < 5);
}
