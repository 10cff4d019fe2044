// Reverse-mode gradients (ad/node.hpp, ad/model.hpp): every node's backward pass against forward
// duals (core/dual.hpp) on plain scalars and on SIMD batches whose lanes differ; select's masked
// seeds; model bodies against their dual oracle (model_duals), against central differences, and
// eight schools against the hand-written gradient of targets::eight_schools.
//
// Tolerances. Reverse and forward mode compute the same partials in a different order of sums, so
// they differ by rounding only: a few ε times the magnitude of the terms summed (|U| plus what
// cancels, bounded per model below), times √n for n terms. Central differences: gradient_check.hpp.
#include <ember/ember.hpp>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/hier_logit.hpp>

#include "energy/gradient_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using ember::vec;

// f(a, b) differentiated both ways at (a, b): reverse (nodes, seed 1) and forward (dual<T, 2>).
template <class T, class F>
void check_rule(char const* name, F const& f, T a, T b) {
  using D2 = ember::dual<T, 2>;
  D2 const r = f(D2::variable(a, 0), D2::variable(b, 1));
  T g[2] = {T(0), T(0)};
  auto const n = f(ember::ad::var<T>{a, {&g[0]}}, ember::ad::var<T>{b, {&g[1]}});
  n.bwd(T(1));
  double const eps = std::numeric_limits<T>::epsilon();
  INFO(name << " at (" << a << ", " << b << ")");
  CHECK(double(n.v) == double(r.val));
  for (int k = 0; k < 2; ++k) {
    INFO("partial " << k << ": reverse " << g[k] << ", forward " << r.d[k]);
    CHECK(std::abs(double(g[k]) - double(r.d[k])) <= 8 * eps * (1 + std::abs(double(r.d[k]))));
  }
}

template <class T>
void check_all_rules(T a, T b) {
  using ember::exp;
  check_rule<T>("a + b", [](auto x, auto y) { return x + y; }, a, b);
  check_rule<T>("a - b", [](auto x, auto y) { return x - y; }, a, b);
  check_rule<T>("a * b", [](auto x, auto y) { return x * y; }, a, b);
  check_rule<T>("a / b", [](auto x, auto y) { return x / y; }, a, b);
  check_rule<T>("-a + 2b", [](auto x, auto y) { return -x + 2.0 * y; }, a, b);
  check_rule<T>("3 - a / 2 + b", [](auto x, auto y) { return 3.0 - x / 2.0 + y; }, a, b);
  check_rule<T>("1 / a * b", [](auto x, auto y) { return 1.0 / x * y; }, a, b);
  check_rule<T>("exp(a) * log(b)", [](auto x, auto y) { return exp(x) * log(y); }, a, b);
  check_rule<T>("log1p(a) + expm1(b)", [](auto x, auto y) { return log1p(x) + expm1(y); }, a, b);
  check_rule<T>("sqrt(a * b)", [](auto x, auto y) { return sqrt(x * y); }, a, b);
  check_rule<T>("sin(a) cos(b)", [](auto x, auto y) { return sin(x) * cos(y); }, a, b);
  check_rule<T>("tanh(a - b)", [](auto x, auto y) { return tanh(x - y); }, a, b);
  check_rule<T>("sigmoid(a) + softplus(-b)", [](auto x, auto y) { return sigmoid(x) + softplus(-y); }, a, b);
  check_rule<T>("abs(a - b)", [](auto x, auto y) { return abs(x - y); }, a, b);
  check_rule<T>("pow(a, b)", [](auto x, auto y) { return pow(x, y); }, a, b);
  check_rule<T>("pow(a, 2.5) * b", [](auto x, auto y) { return pow(x, 2.5) * y; }, a, b);
  check_rule<T>("a * a + b * a", [](auto x, auto y) { return x * x + y * x; }, a, b);
  check_rule<T>("normal_lpdf(a, b, 2)", [](auto x, auto y) { return ember::normal_lpdf(x, y, 2.0); }, a, b);
  check_rule<T>("student_t_lpdf(a, 4, 0.5, b)", [](auto x, auto y) { return ember::student_t_lpdf(x, 4.0, 0.5, y); }, a,
                b);
  check_rule<T>("gamma_lpdf(b, a, 2)", [](auto x, auto y) { return ember::gamma_lpdf(y, x, 2.0); }, a, b);
  check_rule<T>("bernoulli_logit_lpmf(1, a - b)", [](auto x, auto y) { return ember::bernoulli_logit_lpmf(1, x - y); },
                a, b);
  check_rule<T>("poisson_log_lpmf(3, a * b)", [](auto x, auto y) { return ember::poisson_log_lpmf(3, x * y); }, a, b);
  // The other families of distributions.hpp, each with both operands in some argument.
  check_rule<T>("lognormal_lpdf(b, a, a)", [](auto x, auto y) { return ember::lognormal_lpdf(y, x, x); }, a, b);
  check_rule<T>("cauchy_lpdf(a, b, 1.5)", [](auto x, auto y) { return ember::cauchy_lpdf(x, y, 1.5); }, a, b);
  check_rule<T>("laplace_lpdf(a, 0.1, b)", [](auto x, auto y) { return ember::laplace_lpdf(x, 0.1, y); }, a, b);
  check_rule<T>("logistic_lpdf(a, b, b)", [](auto x, auto y) { return ember::logistic_lpdf(x, y, y); }, a, b);
  check_rule<T>("exponential_lpdf(a, b)", [](auto x, auto y) { return ember::exponential_lpdf(x, y); }, a, b);
  check_rule<T>("inv_gamma_lpdf(a, b, 1.2)", [](auto x, auto y) { return ember::inv_gamma_lpdf(x, y, 1.2); }, a, b);
  check_rule<T>("beta_lpdf(sigmoid(a - 2), b, a)", [](auto x, auto y) { return ember::beta_lpdf(sigmoid(x - 2.0), y, x); },
                a, b);
  check_rule<T>("uniform_lpdf(0.3, -a, b + 1)", [](auto x, auto y) { return ember::uniform_lpdf(0.3, -x, y + 1.0); }, a, b);
  check_rule<T>("weibull_lpdf(b, a, 1.5)", [](auto x, auto y) { return ember::weibull_lpdf(y, x, 1.5); }, a, b);
  check_rule<T>("binomial_logit_lpmf(3, 7, a - b)", [](auto x, auto y) { return ember::binomial_logit_lpmf(3, 7, x - y); },
                a, b);
  check_rule<T>("neg_binomial_2_log_lpmf(4, a, b)", [](auto x, auto y) { return ember::neg_binomial_2_log_lpmf(4, x, y); },
                a, b);
}

}  // namespace

TEST_CASE("every reverse-mode rule agrees with forward duals", "[ad]") {
  for (double a : {0.3, 1.7, 4.0})
    for (double b : {0.2, 1.1, 2.9}) {
      check_all_rules<double>(a, b);
      check_all_rules<float>(float(a), float(b));
    }
}

TEST_CASE("reverse mode on SIMD batches: each lane is its own chain, select masks the untaken branch", "[ad]") {
  using B = ember::simd_batch<float>;
  constexpr int W = int(B::size);
  alignas(64) float xs[W];
  for (int l = 0; l < W; ++l) xs[l] = float(l) / float(W) * 2.f - 0.5f;  // some lanes ≤ 0, some > 0
  B const x = B::load_aligned(xs);
  B g = B(0.f);
  // log(x) is NaN for x < 0 and its partial 1/x infinite at 0: those lanes take the other branch,
  // whose gradient must reach them undisturbed.
  auto const t = ember::select(x > 0.f, ember::log(ember::ad::var<B>{x, {&g}}) * 3.0, ember::ad::var<B>{x, {&g}} * 2.0);
  t.bwd(B(1.f));
  for (int l = 0; l < W; ++l) {
    INFO("lane " << l << ", x = " << xs[l]);
    float const expect = xs[l] > 0 ? 3.f / xs[l] : 2.f;
    CHECK(std::isfinite(g.get(l)));
    CHECK(g.get(l) == Approx(expect).epsilon(1e-6));
  }
  // Nested selects combine their masks.
  B g2 = B(0.f);
  ember::ad::var<B> v{x, {&g2}};
  auto const n = ember::select(x > 0.f, ember::select(x > 0.5f, sqrt(v), log(v)), v * v);
  n.bwd(B(1.f));
  for (int l = 0; l < W; ++l) {
    float const xl = xs[l];
    float const expect = xl > 0.5f ? 0.5f / std::sqrt(xl) : xl > 0 ? 1.f / xl : 2.f * xl;
    INFO("lane " << l << ", x = " << xl);
    CHECK(g2.get(l) == Approx(expect).epsilon(1e-6));
  }
}

namespace {

// Eight schools (non-centred) written as a model: the same posterior as
// targets::eight_schools_energy, whose gradient is written by hand; the values differ by the
// normalising constants only.
struct eight_schools_body {
  double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  template <class M>
  void operator()(M& m) const {
    auto const tau = m.positive(m[1]);
    m.add(ember::normal_lpdf(m[0], 0.0, 5.0));
    m.add(ember::cauchy_lpdf(tau, 0.0, 5.0));
    for (int j = 0; j < 8; ++j) {
      m.add(ember::normal_lpdf(m[2 + j], 0.0, 1.0));
      m.add(ember::normal_lpdf(y[j], m[0] + tau * m[2 + j], sigma[j]));
    }
  }
};

}  // namespace

TEST_CASE("eight schools as a model: reverse mode equals the hand-written gradient", "[ad]") {
  auto const U = ember::model<10, double>(eight_schools_body{});
  ember::targets::eight_schools_energy<double> const H;
  double offset = 0;
  for (int k = 0; k < 20; ++k) {
    auto const x = ember_test::test_point<double, 10>(std::uint64_t(k), -2, 2);
    vec<double, 10> g, gh;
    double const u = U.value_and_grad(x, g), uh = H.value_and_grad(x, gh);
    double const c = u - uh;  // log 2π, log π, log σ_j … : the same at every point
    if (k == 0) offset = c;
    // Both sides are sums of 26 terms below 10³ at these points: a few ε of 10³ apart at most.
    double const tol = 64 * std::numeric_limits<double>::epsilon() * 1e3;
    CHECK(std::abs(c - offset) <= tol);
    CHECK(std::abs(U.value(x) - u) <= tol);
    for (int i = 0; i < 10; ++i) {
      INFO("point " << k << ", coordinate " << i);
      CHECK(std::abs(g[i] - gh[i]) <= 64 * std::numeric_limits<double>::epsilon() * (1 + std::abs(uh)));
    }
  }
}

TEST_CASE("hier_logit: reverse mode against forward duals and central differences, float and double", "[ad]") {
  auto const target = ember::targets::hier_logit<double>::simulated(7, 500);
  auto const U = target.energy();
  auto const V = ember::model_duals(U);
  // |U| plus what cancels in it: each of the n rows contributes at most |y η| + softplus(η).
  double const magnitude = 4.0 * double(target.rows());
  for (int k = 0; k < 6; ++k) {
    auto const x = ember_test::test_point<double, 60>(std::uint64_t(k), -1, 1);
    vec<double, 60> g, gd;
    double const u = U.value_and_grad(x, g), ud = V.value_and_grad(x, gd);
    double const eps = std::numeric_limits<double>::epsilon();
    double const tol = 16 * eps * magnitude;
    CHECK(std::abs(u - ud) <= tol);
    CHECK(std::abs(U.value(x) - u) <= tol);
    for (int i = 0; i < 60; ++i) {
      INFO("point " << k << ", coordinate " << i << ": reverse " << g[i] << ", duals " << gd[i]);
      CHECK(std::abs(g[i] - gd[i]) <= tol);
    }
  }
  // Central differences: third derivatives of the log-likelihood in log σ are bounded by
  // n · max|x|³-ish terms; 10 n covers the simulated design at these points.
  ember_test::check_gradient_on_box(U, 3, -1, 1, {10.0 * double(target.rows()), magnitude});

  // float, one chain and a batch of chains with different positions: each lane equals the
  // one-chain result to float rounding.
  auto const tf = ember::targets::hier_logit<float>::simulated(7, 500);
  auto const Uf = tf.energy();
  using B = ember::simd_batch<float>;
  constexpr int W = int(B::size);
  vec<B, 60> xb, gb;
  vec<float, 60> xl[W];
  for (int l = 0; l < W; ++l) xl[l] = ember_test::test_point<float, 60>(std::uint64_t(100 + l), -1, 1);
  for (int i = 0; i < 60; ++i) {
    alignas(64) float lane[W];
    for (int l = 0; l < W; ++l) lane[l] = xl[l][i];
    xb[i] = B::load_aligned(lane);
  }
  B const ub = Uf.value_and_grad(xb, gb);
  double const feps = std::numeric_limits<float>::epsilon();
  for (int l = 0; l < W; ++l) {
    vec<float, 60> g1;
    float const u1 = Uf.value_and_grad(xl[l], g1);
    INFO("lane " << l);
    CHECK(std::abs(double(ub.get(l)) - double(u1)) <= 16 * feps * magnitude);
    for (int i = 0; i < 60; ++i) CHECK(std::abs(double(gb[i].get(l)) - double(g1[i])) <= 16 * feps * magnitude);
  }
}

namespace {

// Every construct of a body once: a let built from a let, lets used under a select whose other
// branch has an infinite or NaN partial, a scalar let as a scale, positive(), square, min, max,
// int literals, pow with a constant, add_rows.
struct constructs_body {
  template <class M>
  void operator()(M& m) const {
    using ember::block;
    constexpr block<2, 4> b;
    auto const s = m.positive(m[1]);
    auto const first = ember::let<4>(m, [&](int j) { return m[0] + s * m[b][j]; });
    auto const second = ember::let<3>(m, [&](int j) { return first[j] * first[j + 1] - 2 * m[b][j]; });
    for (int j = 0; j < 3; ++j) m.add(ember::normal_lpdf(second[j], 0.5, 3.0));
    // first[3] only where it is positive; log(first[3]) is NaN with an infinite partial elsewhere.
    m.add(ember::select(first[3] > 0.0, ember::log(first[3]), first[3] * 0.25));
    m.add(-ember::square(m[0]) / 2 + ember::min(m[b][0], m[b][1]) - ember::max(m[b][2], 0.3));
    m.add(ember::pow(s, 1.5) * -0.1 + 3);
    // A let whose own partial is NaN (√ of a negative) where it is used by no one: its adjoint is 0
    // there, and 0 · NaN must not reach the gradient.
    auto const root = ember::let<1>(m, [&](int) { return ember::sqrt(m[b][3]); });
    m.add(ember::select(m[b][3] > 0.0, root[0], m[b][3] * 0.5));
    // A scalar let as a normal's σ (its cached 1/σ and log σ) and in arithmetic.
    auto const scale = ember::let(m, s * 0.5 + 0.1);
    m.add_rows(5, [&](std::int64_t i) { return ember::normal_lpdf(0.3 * double(i), m[b][0], scale) + scale * m[b][1]; });
  }
};

}  // namespace

TEST_CASE("model constructs: lets of lets, a let under select, positive, square, min, max, pow", "[ad]") {
  auto const U = ember::model<6, double>(constructs_body{});
  auto const V = ember::model_duals(U);
  double const eps = std::numeric_limits<double>::epsilon();
  for (int k = 0; k < 20; ++k) {
    auto const x = ember_test::test_point<double, 6>(std::uint64_t(k), -1.5, 1.5);
    vec<double, 6> g, gd;
    double const u = U.value_and_grad(x, g), ud = V.value_and_grad(x, gd);
    // Each term is a handful of roundings of numbers below 10⁴ at these points.
    double const tol = 64 * eps * (1 + std::abs(u));
    INFO("point " << k);
    CHECK(std::abs(u - ud) <= tol);
    CHECK(std::abs(U.value(x) - u) <= tol);
    for (int i = 0; i < 6; ++i) {
      INFO("coordinate " << i << ": reverse " << g[i] << ", duals " << gd[i]);
      CHECK(std::abs(g[i] - gd[i]) <= 64 * eps * (1 + std::abs(gd[i]) + std::abs(u)));
    }
  }
  // On SIMD batches (lanes at different points, some on each side of the select), every lane as
  // the one-chain value and gradient, and nothing infinite leaks from the untaken branch.
  using B = ember::simd_batch<double>;
  constexpr int W = int(B::size);
  vec<B, 6> xb, gb;
  vec<double, 6> xl[W];
  for (int l = 0; l < W; ++l) xl[l] = ember_test::test_point<double, 6>(std::uint64_t(50 + l), -1.5, 1.5);
  for (int i = 0; i < 6; ++i) {
    alignas(64) double lane[W];
    for (int l = 0; l < W; ++l) lane[l] = xl[l][i];
    xb[i] = B::load_aligned(lane);
  }
  B const ub = U.value_and_grad(xb, gb), vb = U.value(xb);
  for (int l = 0; l < W; ++l) {
    vec<double, 6> g1;
    double const u1 = U.value_and_grad(xl[l], g1);
    double const tol = 64 * eps * (1 + std::abs(u1));
    INFO("lane " << l);
    CHECK(std::abs(ub.get(l) - u1) <= tol);
    CHECK(std::abs(vb.get(l) - u1) <= tol);
    for (int i = 0; i < 6; ++i) {
      CHECK(std::isfinite(gb[i].get(l)));
      CHECK(std::abs(gb[i].get(l) - g1[i]) <= 64 * eps * (1 + std::abs(g1[i]) + std::abs(u1)));
    }
  }
}

TEST_CASE("a let inside add_rows' row function is refused before it can lose its gradient", "[ad]") {
  auto body = [](auto& m) {
    m.add_rows(3, [&](std::int64_t i) {
      auto const l = ember::let<1>(m, [&](int) { return m[0] * double(i); });
      return ember::normal_lpdf(1.0, l[0], 1.0);
    });
  };
  auto const U = ember::model<1, double>(body);
  vec<double, 1> x{{0.5}}, g;
  CHECK_THROWS_WITH(U.value_and_grad(x, g), Catch::Contains("build it in the model's body, before add_rows"));
  CHECK_THROWS_WITH(U.value(x), Catch::Contains("build it in the model's body, before add_rows"));
}

TEST_CASE("hier_logit refuses data that is not the model's", "[ad]") {
  using ember::dataset;
  auto X = dataset<float>(std::vector<float>(6, 0.f), 2, 3);
  auto y = dataset<float>(std::vector<float>{0.f, 1.f}, 2, 1);
  auto bad_county = dataset<float>(std::vector<float>{3.f, 48.f}, 2, 1);
  auto state = dataset<float>(std::vector<float>(48, 0.f), 48, 1);
  CHECK_THROWS_WITH(ember::targets::hier_logit<float>(X, y, bad_county, state),
                    Catch::Contains("county of row 1 is not an integer in [0, 48)"));
}
