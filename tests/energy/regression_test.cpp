// Regression energies: gradients against central differences (float and double), values
// against a plain double sum, SIMD batches against single chains lane by lane, input checks,
// and MALA on the linear model, whose posterior is Gaussian in closed form.
#include <ember/data/dataset.hpp>
#include <ember/ember.hpp>
#include <ember/energy/regression.hpp>

#include "energy/gradient_check.hpp"
#include "generic/sampler_checks.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using ember::vec;
using ember_test::check_gradient_on_box;

namespace {

constexpr int D = 3;
constexpr int N = 53;  // not a multiple of the 8-row block: the remainder loop runs too

// Deterministic design in [−1, 1] with a column of ones, responses from the given kind.
template <class T>
struct synthetic {
  ember::dataset<T> X, y;
  explicit synthetic(int kind) : X(make_x(), N, D), y(make_y(kind), N, 1) {}
  static std::vector<T> make_x() {
    std::vector<T> v;
    for (int i = 0; i < N; ++i) {
      auto r = ember_test::test_point<double, D>(std::uint64_t(1000 + i), -1, 1);
      v.push_back(T(1));
      for (int j = 1; j < D; ++j) v.push_back(T(r[j]));
    }
    return v;
  }
  static std::vector<T> make_y(int kind) {
    std::vector<T> v;
    for (int i = 0; i < N; ++i) {
      double u = ember_test::test_point<double, 1>(std::uint64_t(5000 + i), 0, 1)[0];
      v.push_back(kind == 0 ? T(u < 0.4) : kind == 1 ? T(std::floor(4 * u)) : T(3 * u - 1));
    }
    return v;
  }
};

double naive_value(synthetic<double> const& U, vec<double, D> const& b, int kind, double noise_sd, double prior_q) {
  double u = prior_q;
  for (int i = 0; i < N; ++i) {
    double eta = 0;
    for (int j = 0; j < D; ++j) eta += U.X(i, j) * b[j];
    double y = U.y(i, 0);
    if (kind == 0) u += std::log1p(std::exp(eta)) - y * eta;
    if (kind == 1) u += std::exp(eta) - y * eta;
    if (kind == 2) u += (eta - y) * (eta - y) / (2 * noise_sd * noise_sd);
  }
  return u;
}

}  // namespace

TEMPLATE_TEST_CASE("regression energies' gradients match central differences", "[energy][regression]", float,
                   double) {
  using T = TestType;
  // Test points β ∈ [−1, 1]³ and |xᵢⱼ| ≤ 1, so |ηᵢ| ≤ 3. Magnitude: Σᵢ (|ℓ| + |yη|) ≤ N (2·3 + 1)
  // for the logistic (softplus(η) ≤ |η| + log 2), N (e³ + 4·3) for the Poisson, N (3 + 2)² for the
  // Gaussian. Third derivatives along βⱼ: Σᵢ |ℓ‴| |xᵢⱼ|³ ≤ N · 0.1 (logistic: |σ″| ≤ 0.1),
  // N e³ (Poisson), 0 (Gaussian); the Student-t prior adds at most 4(ν + 1)/(ν s²)^{3/2}.
  SECTION("logistic, normal prior") {
    synthetic<T> s(0);
    auto U = ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::normal_prior{1.5});
    check_gradient_on_box(U, 10, -1, 1, {0.1 * N, N * 7.0});
  }
  SECTION("logistic, Student-t prior") {
    synthetic<T> s(0);
    auto U = ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::student_t_prior{3, 1});
    check_gradient_on_box(U, 10, -1, 1, {0.1 * N + 16 / std::pow(3, 1.5), N * 7.0});
  }
  SECTION("poisson, normal prior") {
    synthetic<T> s(1);
    auto U = ember::poisson_regression<D>(s.X.view(), s.y.view(), ember::normal_prior{2});
    check_gradient_on_box(U, 10, -1, 1, {N * std::exp(3.0), N * (std::exp(3.0) + 12)});
  }
  SECTION("gaussian, Student-t prior") {
    synthetic<T> s(2);
    auto U = ember::linear_regression<D>(s.X.view(), s.y.view(), 0.5, ember::student_t_prior{4, 2});
    check_gradient_on_box(U, 10, -1, 1, {20 / std::pow(16, 1.5), N * 25.0 * 4});
  }
}

TEST_CASE("regression energies equal a plain sum over rows in double", "[energy][regression]") {
  auto b = ember_test::test_point<double, D>(77, -1, 1);
  double prior_q = 0;
  for (int j = 0; j < D; ++j) prior_q += b[j] * b[j] / (2 * 1.5 * 1.5);
  for (int kind = 0; kind < 3; ++kind) {
    synthetic<double> s(kind);
    double u = kind == 0   ? ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::normal_prior{1.5}).value(b)
               : kind == 1 ? ember::poisson_regression<D>(s.X.view(), s.y.view(), ember::normal_prior{1.5}).value(b)
                           : ember::linear_regression<D>(s.X.view(), s.y.view(), 0.7, ember::normal_prior{1.5}).value(b);
    double ref = naive_value(s, b, kind, 0.7, prior_q);
    INFO("likelihood kind " << kind);
    // Sums of N terms of size ≤ e³ + 12, reordered: a few ε per term.
    CHECK(std::abs(u - ref) <= 8 * N * 1e-16 * (std::exp(3.0) + 12));
  }
}

TEST_CASE("a SIMD batch of coefficient vectors gives each lane's single-chain value and gradient",
          "[energy][regression][simd]") {
  synthetic<float> s(0);
  auto U = ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::student_t_prior{3, 1});
  using B = ember::simd_batch<float>;
  constexpr int W = int(B::size);
  vec<B, D> xb;
  alignas(64) float lane[W];
  for (int j = 0; j < D; ++j) {
    for (int l = 0; l < W; ++l) lane[l] = ember_test::test_point<float, D>(std::uint64_t(300 + l), -2, 2)[j];
    xb[j] = B::load_aligned(lane);
  }
  vec<B, D> gb;
  alignas(64) float ub[W], gl[D][W];
  U.value_and_grad(xb, gb).store_aligned(ub);
  for (int j = 0; j < D; ++j) gb[j].store_aligned(gl[j]);
  for (int l = 0; l < W; ++l) {
    auto x = ember_test::test_point<float, D>(std::uint64_t(300 + l), -2, 2);
    vec<float, D> g;
    float u = U.value_and_grad(x, g);
    // xsimd's exp/log1p against libm's, and FMA contraction: a few ε of each of N terms.
    double tol = 8 * N * 1.2e-7 * (1 + std::abs(double(u)));
    INFO("lane " << l);
    CHECK(std::abs(double(ub[l]) - double(u)) <= tol);
    for (int j = 0; j < D; ++j) CHECK(std::abs(double(gl[j][l]) - double(g[j])) <= tol);
  }
}

TEST_CASE("regression energies refuse mismatched data with a sentence", "[energy][regression]") {
  synthetic<float> s(0);
  auto msg = [](auto&& f) -> std::string {
    try {
      f();
    } catch (std::invalid_argument const& e) {
      return e.what();
    }
    return "no exception";
  };
  ember::dataset<float> y2(std::vector<float>(N, 2.f), N, 1), yshort(std::vector<float>(5, 0.f), 5, 1);
  CHECK_THAT(msg([&] { ember::logistic_regression<4>(s.X.view(), s.y.view(), ember::normal_prior{1}); }),
             Catch::Contains("ember::logistic_regression<4>: the design matrix has 3 columns"));
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(s.X.view(), yshort.view(), ember::normal_prior{1}); }),
             Catch::Contains("the responses must be 53 x 1, got 5 x 1"));
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(s.X.view(), y2.view(), ember::normal_prior{1}); }),
             Catch::Contains("response 0 must be 0 or 1, got 2"));
  ember::dataset<float> yneg(std::vector<float>(N, -1.f), N, 1), yfrac(std::vector<float>(N, 0.5f), N, 1);
  CHECK_THAT(msg([&] { ember::poisson_regression<D>(s.X.view(), yneg.view(), ember::normal_prior{1}); }),
             Catch::Contains("non-negative integer count"));
  CHECK_THAT(msg([&] { ember::poisson_regression<D>(s.X.view(), yfrac.view(), ember::normal_prior{1}); }),
             Catch::Contains("non-negative integer count"));
  CHECK_THAT(msg([&] { ember::linear_regression<D>(s.X.view(), s.y.view(), 0.0, ember::normal_prior{1}); }),
             Catch::Contains("noise_sd must be positive"));
  // linear_regression checks its responses (finite), every builder its design matrix (finite).
  auto ynan = s.y, xinf = s.X;
  const_cast<float*>(ynan.view().data)[4] = std::numeric_limits<float>::quiet_NaN();
  const_cast<float*>(xinf.view().data)[2 * D + 1] = std::numeric_limits<float>::infinity();
  CHECK_THAT(msg([&] { ember::linear_regression<D>(s.X.view(), ynan.view(), 1.0, ember::normal_prior{1}); }),
             Catch::StartsWith("ember::linear_regression: response 4 must be finite, got nan"));
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(xinf.view(), s.y.view(), ember::normal_prior{1}); }),
             Catch::StartsWith("ember::logistic_regression: design matrix row 2, column 1 is not finite (inf)"));
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::normal_prior{-1}); }),
             Catch::Contains("scale must be positive"));
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::student_t_prior{0, 1}); }),
             Catch::Contains("nu must be positive"));
  // Scales whose 1/s² leaves float are refused naming the value (the data here are float).
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::normal_prior{1e-30}); }),
             Catch::StartsWith("ember::normal_prior: scale = 1e-30 gives 1/scale^2 = 1e+60, which overflows float"));
  CHECK_THAT(msg([&] { ember::logistic_regression<D>(s.X.view(), s.y.view(), ember::student_t_prior{3, 1e25}); }),
             Catch::StartsWith("ember::student_t_prior: scale = 1e+25 gives 1/scale^2 = 1e-50, which underflows float"));
  CHECK_THAT(msg([&] { ember::linear_regression<D>(s.X.view(), s.y.view(), 1e-25, ember::normal_prior{1}); }),
             Catch::StartsWith("ember::linear_regression: noise_sd = 1e-25 gives 1/noise_sd^2 = 1e+50, which overflows "
                               "float"));
}

TEST_CASE("mala on Bayesian linear regression reproduces the closed-form Gaussian posterior",
          "[energy][regression][statistics]") {
  // With a N(0, s²I) prior and known noise σ the posterior is N(m, A⁻¹), A = XᵀX/σ² + I/s²,
  // m = A⁻¹ Xᵀy/σ².
  synthetic<float> s(2);
  double const sigma = 0.5, scale = 2;
  Eigen::MatrixXd X(N, D);
  Eigen::VectorXd y(N);
  for (int i = 0; i < N; ++i) {
    y[i] = s.y(i, 0);
    for (int j = 0; j < D; ++j) X(i, j) = s.X(i, j);
  }
  Eigen::MatrixXd A = X.transpose() * X / (sigma * sigma) + Eigen::MatrixXd::Identity(D, D) / (scale * scale);
  Eigen::MatrixXd cov = A.inverse();
  Eigen::VectorXd m = cov * X.transpose() * y / (sigma * sigma);
  std::array<double, D> mu;
  std::array<std::array<double, D>, D> S;
  for (int i = 0; i < D; ++i) {
    mu[i] = m[i];
    for (int j = 0; j < D; ++j) S[i][j] = cov(i, j);
  }
  auto U = ember::linear_regression<D>(s.X.view(), s.y.view(), sigma, ember::normal_prior{scale});
  // Posterior sds are about σ/√N ≈ 0.07, λ_max(A) ≈ 230: η = 0.004 keeps MALA accepting; the
  // slowest direction (λ_min ≈ 150) relaxes by e^{−0.6} per step... 600 steps are plenty.
  auto r = ember::sample(ember::mala(U, {.step_size = 0.004}) | ember::burn_in(600), {.chains = 8000, .steps = 1, .seed = 3});
  CHECK(r.acceptance_rate() > 0.5);
  ember_test::check_gaussian_moments<decltype(r), D>(r, mu, S, {{0, 1}, {1, 2}});
}
