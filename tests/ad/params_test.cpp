// Named, shaped, constrained parameters (ad/params.hpp) and a run in the model's terms
// (posterior.hpp).
//
// Each constraint's log-Jacobian is checked against log |det| of its Jacobian by central
// differences (the square map from y to the constrained values that are free: all but a simplex's
// last, a Cholesky factor's strictly lower part), its backward pass through a model against forward
// duals and central differences, and the whole, statistically, by sampling laws whose moments are
// known: with the Jacobian wrong, the laws would be wrong (a uniform simplex, LKJ(1) correlations,
// order statistics). Statistical tolerances: z-scores of final states, one per chain, |z| < 5
// (tests/generic/sampler_checks.hpp).
#include <ember/ember.hpp>
#include <ember/posterior.hpp>

#include "energy/gradient_check.hpp"
#include "generic/sampler_checks.hpp"
#include "support/message_of.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>
#include <sstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using ember::vec;

// A parameter of every constraint and shape, each given a law with known moments by the body
// (none: the constraint's own uniform law; the log-Jacobian alone makes it right).
struct every_constraint {
  static constexpr auto u = ember::param<"u">(ember::bounded(-2.0, 3.0));    // uniform(−2, 3)
  static constexpr auto w = ember::param<"w", 4>(ember::simplex);             // Dirichlet(1, 1, 1, 1)
  static constexpr auto L = ember::param<"L", 3, 3>(ember::cholesky_corr);    // LKJ(2)
  static constexpr auto o = ember::param<"o", 3>(ember::ordered);             // order statistics of 3 N(0, 1)
  static constexpr auto po = ember::param<"po", 2>(ember::positive_ordered);  // order statistics of 2 Exp(1)
  static constexpr auto lo = ember::param<"lo">(ember::lower(1.5));           // 1.5 + Exp(rate 2)
  static constexpr auto up = ember::param<"up">(ember::upper(2.0));           // 2 − Exp(1)
  static constexpr auto g = ember::param<"g">(ember::positive);               // Gamma(3, rate 2)
  static constexpr auto p = ember::param<"p">(ember::unit_interval);          // Beta(2, 5)
  static constexpr auto r = ember::param<"r", 2>();                           // N(1, 0.5²)
  static constexpr auto params = ember::params(u, w, L, o, po, lo, up, g, p, r);

  template <class M>
  void operator()(M& m) const {
    m.add(ember::lkj_corr_cholesky_lpdf(m[L], 2.0));
    for (int k = 0; k < 3; ++k) m.add(ember::normal_lpdf(m[o][k], 0.0, 1.0));
    for (int k = 0; k < 2; ++k) m.add(ember::exponential_lpdf(m[po][k], 1.0));
    m.add(ember::exponential_lpdf(m[lo] - 1.5, 2.0));
    m.add(ember::exponential_lpdf(2.0 - m[up], 1.0));
    m.add(ember::gamma_lpdf(m[g], 3.0, 2.0));
    m.add(ember::beta_lpdf(m[p], 2.0, 5.0));
    for (int k = 0; k < 2; ++k) m.add(ember::normal_lpdf(m[r][k], 1.0, 0.5));
  }
};

// log |det A| of a small square matrix by Gaussian elimination with partial pivoting.
double log_abs_det(std::vector<double> a, int n) {
  double s = 0;
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int i = c + 1; i < n; ++i)
      if (std::abs(a[i * n + c]) > std::abs(a[piv * n + c])) piv = i;
    for (int j = 0; j < n; ++j) std::swap(a[c * n + j], a[piv * n + j]);
    s += std::log(std::abs(a[c * n + c]));
    for (int i = c + 1; i < n; ++i) {
      double const f = a[i * n + c] / a[c * n + c];
      for (int j = c; j < n; ++j) a[i * n + j] -= f * a[c * n + j];
    }
  }
  return s;
}

// The constraint c on n free values: its log-Jacobian against log |det ∂x_free/∂y| by central
// differences (`free_index(k)`: the constrained value that is free coordinate k's image). Step
// h = ε^{1/3}: each entry is off by h²/6 · |∂³x| + ε|x|/h ≈ 1e-10 at these points (|∂³x| ≤ e²
// for the exponentials, ≤ 1 for σ and tanh), so log |det| of a matrix of at most 6 × 6 whose
// smallest singular value is above 0.05 here is good to 1e-7; the check allows 1e-6.
template <class C, class FreeIndex>
void check_log_jacobian(C const& c, int n_free, int n_values, FreeIndex free_index, std::vector<double> const& y) {
  std::vector<double> x(static_cast<std::size_t>(n_values)), xp(x), xm(x), J(static_cast<std::size_t>(n_free * n_free));
  double const lj = c.forward(y.data(), x.data(), n_values);
  double const h = std::cbrt(std::numeric_limits<double>::epsilon());
  for (int j = 0; j < n_free; ++j) {
    auto yp = y, ym = y;
    yp[std::size_t(j)] += h;
    ym[std::size_t(j)] -= h;
    c.forward(yp.data(), xp.data(), n_values);
    c.forward(ym.data(), xm.data(), n_values);
    for (int i = 0; i < n_free; ++i)
      J[std::size_t(i * n_free + j)] = (xp[std::size_t(free_index(i))] - xm[std::size_t(free_index(i))]) / (2 * h);
  }
  CHECK(std::abs(lj - log_abs_det(J, n_free)) <= 1e-6);
}

// Reverse mode against the body's forward duals (model_duals) at `n` points of [−h, h]^D: the
// same partials summed in another order, so they differ by rounding only, a few ε times the
// magnitude of the terms (64ε · `magnitude`, with the magnitude bounded per model by the caller).
template <class U>
void check_reverse_against_duals(U const& energy, int n, std::uint64_t first, double h, double magnitude) {
  constexpr int D = U::dim;
  auto const V = ember::model_duals(energy);
  double const tol = 64 * std::numeric_limits<double>::epsilon() * magnitude;
  for (int k = 0; k < n; ++k) {
    auto const x = ember_test::test_point<double, D>(first + std::uint64_t(k), -h, h);
    vec<double, D> g, gd;
    double const u = energy.value_and_grad(x, g), ud = V.value_and_grad(x, gd);
    CHECK(std::abs(u - ud) <= tol);
    CHECK(std::abs(energy.value(x) - u) <= tol);
    for (int i = 0; i < D; ++i) {
      INFO("point " << k << ", coordinate " << i << ": reverse " << g[i] << ", duals " << gd[i]);
      CHECK(std::abs(g[i] - gd[i]) <= tol);
    }
  }
}

}  // namespace

TEST_CASE("each constraint's log-Jacobian is log |det| of its Jacobian", "[params]") {
  std::vector<double> const y6 = {0.3, -1.1, 0.7, 1.6, -0.4, 0.05};
  for (int n : {1, 3, 6}) {
    std::vector<double> const y(y6.begin(), y6.begin() + n);
    auto same = [](int i) { return i; };
    INFO("n = " << n);
    check_log_jacobian(ember::lower(1.5), n, n, same, y);
    check_log_jacobian(ember::upper(-0.5), n, n, same, y);
    check_log_jacobian(ember::bounded(-2.0, 3.0), n, n, same, y);
    check_log_jacobian(ember::ordered, n, n, same, y);
    check_log_jacobian(ember::positive_ordered, n, n, same, y);
    check_log_jacobian(ember::simplex, n, n + 1, same, y);  // x_0 … x_{n−1} of n + 1
  }
  // The strictly lower part of a K×K factor, row by row, is the image of the K(K − 1)/2 free values.
  for (int K : {2, 3, 4}) {
    int const m = K * (K - 1) / 2;
    std::vector<int> lower;
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < i; ++j) lower.push_back(i * K + j);
    std::vector<double> const y(y6.begin(), y6.begin() + m);
    INFO("cholesky_corr, K = " << K);
    check_log_jacobian(ember::cholesky_corr, m, K * K, [&](int i) { return lower[std::size_t(i)]; }, y);
  }
}

TEST_CASE("a Cholesky factor of a correlation matrix has unit rows; a simplex adds up to 1; ordered is increasing", "[params]") {
  double const y[6] = {2.5, -3.0, 0.2, 7.0, -0.1, 1.0};
  double L[16];
  ember::cholesky_corr.forward(y, L, 16);
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 4; ++j) s += L[i * 4 + j] * L[i * 4 + j];
    CHECK(std::abs(s - 1) <= 8 * std::numeric_limits<double>::epsilon());
    CHECK(L[i * 4 + i] > 0);
    for (int j = i + 1; j < 4; ++j) CHECK(L[i * 4 + j] == 0);
  }
  double w[7];
  ember::simplex.forward(y, w, 7);
  double s = 0;
  for (double v : w) {
    CHECK(v > 0);
    s += v;
  }
  CHECK(std::abs(s - 1) <= 8 * std::numeric_limits<double>::epsilon());
  double zero[3] = {0, 0, 0}, uniform[4];
  ember::simplex.forward(zero, uniform, 4);  // centred: y = 0 is the uniform simplex
  for (double v : uniform) CHECK(std::abs(v - 0.25) <= 4 * std::numeric_limits<double>::epsilon());
  double o[6];
  ember::ordered.forward(y, o, 6);
  for (int k = 1; k < 6; ++k) CHECK(o[k] > o[k - 1]);
}

TEST_CASE("a model with named parameters: dimension, reverse mode against duals and central differences", "[params]") {
  auto const U = ember::model<double>(every_constraint{});
  STATIC_REQUIRE(decltype(U)::dim == 1 + 3 + 3 + 3 + 2 + 1 + 1 + 1 + 1 + 2);
  STATIC_REQUIRE(decltype(U)::params_type::size == 1 + 4 + 9 + 3 + 2 + 1 + 1 + 1 + 1 + 2);
  // The exponentials of |y| ≤ 1.5 keep the terms below 50 in magnitude.
  check_reverse_against_duals(U, 6, 0, 1.5, 50.0);
  // Third derivatives along a coordinate: at most e^{3·1.5} · 2 from the gamma term in g = eʸ
  // (2e^{y}), the exponentials' e^{y}, σ's and tanh's below 1: 200 covers them.
  ember_test::check_gradient_on_box(U, 4, -1.5, 1.5, {200.0, 50.0});
}

TEST_CASE("constraints sampled: each law's moments within Monte-Carlo error", "[params]") {
  auto const U = ember::model<double>(every_constraint{});
  auto const res = ember::sample(ember::chees_hmc(U), {.chains = 4096, .steps = 100, .seed = 11});
  REQUIRE(res.divergent_chains() == 0);
  auto const post = ember::posterior(res, U);
  auto at = [&](auto const& x, char const* name, int i) {
    for (auto const& v : post.variables())
      if (v.name == name) return double(x[v.offset + i]);
    throw std::logic_error("no variable");
  };
  auto check = [&](char const* what, auto f, double truth) {
    double const z = ember_test::z_of_mean(post, f, truth);
    INFO(what << ": z = " << z);
    CHECK(std::abs(z) < ember_test::z_bound);
  };
  check("E u", [&](auto const& x) { return at(x, "u", 0); }, 0.5);
  check("E u²", [&](auto const& x) { return std::pow(at(x, "u", 0), 2); }, 25.0 / 12 + 0.25);
  for (int k = 0; k < 4; ++k) {
    check("E w_k", [&](auto const& x) { return at(x, "w", k); }, 0.25);
    check("E w_k²", [&](auto const& x) { return std::pow(at(x, "w", k), 2); }, 0.1);  // α(α+1)/(A(A+1))
  }
  // Ω = L Lᵀ: under LKJ(η) each correlation is 2·Beta(a, a) − 1 with a = η − 1 + K/2, so E r = 0
  // and E r² = 1/(2a + 1): 1/6 for η = 2, K = 3.
  auto omega = [&](auto const& x, int i, int j) {
    double s = 0;
    for (int l = 0; l < 3; ++l) s += at(x, "L", i * 3 + l) * at(x, "L", j * 3 + l);
    return s;
  };
  for (auto const& ij : {std::pair{1, 0}, std::pair{2, 0}, std::pair{2, 1}}) {
    int const i = ij.first, j = ij.second;  // not a structured binding: clang 14 cannot capture one
    check("E Ω_ij", [&](auto const& x) { return omega(x, i, j); }, 0.0);
    check("E Ω_ij²", [&](auto const& x) { return std::pow(omega(x, i, j), 2); }, 1.0 / 6);
  }
  double const max3 = 1.5 / std::sqrt(std::numbers::pi);  // E max of 3 N(0, 1)
  check("E o_0", [&](auto const& x) { return at(x, "o", 0); }, -max3);
  check("E o_1", [&](auto const& x) { return at(x, "o", 1); }, 0.0);
  check("E o_2", [&](auto const& x) { return at(x, "o", 2); }, max3);
  check("E po_0", [&](auto const& x) { return at(x, "po", 0); }, 0.5);
  check("E po_1", [&](auto const& x) { return at(x, "po", 1); }, 1.5);
  check("E lo", [&](auto const& x) { return at(x, "lo", 0); }, 2.0);
  check("E up", [&](auto const& x) { return at(x, "up", 0); }, 1.0);
  check("E g", [&](auto const& x) { return at(x, "g", 0); }, 1.5);
  check("E g²", [&](auto const& x) { return std::pow(at(x, "g", 0), 2); }, 3.0);
  check("E p", [&](auto const& x) { return at(x, "p", 0); }, 2.0 / 7);
  check("E p²", [&](auto const& x) { return std::pow(at(x, "p", 0), 2); }, 2.0 * 3 / (7 * 8));
  for (int k = 0; k < 2; ++k) check("E r_k", [&](auto const& x) { return at(x, "r", k); }, 1.0);
}

TEST_CASE("posterior: names, shapes, constrained draws and derived quantities", "[params]") {
  auto const U = ember::model<double>(every_constraint{});
  auto const res = ember::sample(ember::chees_hmc(U) | ember::record(), {.chains = 4, .steps = 50, .seed = 3});
  auto gq = ember::generated<"u_plus_g">([](auto const& p, ember::draw_rng&, std::span<double> out) {
    out[0] = p[every_constraint::u] + p[every_constraint::g];
  });
  auto pp = ember::predictive<"r_rep", 2>([](auto const& p, ember::draw_rng& rng, std::span<double> out) {
    for (int k = 0; k < 2; ++k) out[k] = rng.normal(p[every_constraint::r][k], 0.5);
  });
  auto const post = ember::posterior(res, U, {.seed = 5}, gq, pp);
  STATIC_REQUIRE(decltype(post)::dim == 25 + 1 + 2);
  REQUIRE(post.variables().size() == 12);
  CHECK(post.variables()[2].name == "L");
  CHECK(post.variables()[2].shape == std::vector<int>{3, 3});
  CHECK(post.variables()[2].offset == 5);
  CHECK(post.variables()[11].group == "posterior_predictive");
  CHECK(post.column_name(0) == "u");
  CHECK(post.column_name(1) == "w[0]");
  CHECK(post.column_name(5 + 3 * 1 + 2) == "L[1,2]");
  CHECK(post.column_name(27) == "r_rep[1]");
  REQUIRE(post.kept() == res.kept());
  REQUIRE(post.chains() == res.chains());
  // Every kept draw is the run's draw through the constraints.
  auto const& ps = U.ps;
  for (std::int64_t k = 0; k < res.kept(); k += 7)
    for (std::int64_t c = 0; c < res.chains(); ++c) {
      vec<double, 18> const y = res.samples().draw(k, c);
      double x[25];
      ps.template values<double>(y, x);
      for (int d = 0; d < 25; ++d) CHECK(post.samples()(k, c, d) == x[d]);
      CHECK(post.samples()(k, c, 25) == x[0] + x[21]);  // u + g
    }
  // The derived quantities' streams: the same seed gives the same bits; another seed, others.
  auto const again = ember::posterior(res, U, {.seed = 5}, gq, pp);
  auto const other = ember::posterior(res, U, {.seed = 6}, gq, pp);
  int same = 0;
  for (std::int64_t k = 0; k < res.kept(); ++k) {
    CHECK(again.samples()(k, 1, 26) == post.samples()(k, 1, 26));
    same += other.samples()(k, 1, 26) == post.samples()(k, 1, 26);
  }
  CHECK(same == 0);
  // The summary names its rows.
  std::ostringstream os;
  os << post.summary();
  CHECK(os.str().find("L[2,1]") != std::string::npos);
  CHECK(os.str().find("r_rep[0]") != std::string::npos);
}

TEST_CASE("posterior refuses a derived quantity named as a parameter, and passes a derived quantity's error on", "[params]") {
  auto const U = ember::model<double>(every_constraint{});
  auto const res = ember::sample(ember::chees_hmc(U) | ember::record(), {.chains = 2, .steps = 5, .seed = 3});
  auto clash = ember::generated<"g">([](auto const&, ember::draw_rng&, std::span<double> out) { out[0] = 0; });
  CHECK(ember_test::message_of([&] { (void)ember::posterior(res, U, clash); }).find("two variables are named \"g\"") !=
        std::string::npos);
  auto bad = ember::predictive<"n">([](auto const&, ember::draw_rng& rng, std::span<double> out) { out[0] = rng.poisson(-1); });
  CHECK(ember_test::message_of([&] { (void)ember::posterior(res, U, bad); }).find("poisson: the mean must be finite") !=
        std::string::npos);
}

TEST_CASE("draw_rng: normal and Poisson draws have their laws' moments", "[params]") {
  // 20,000 independent draws each (one per (chain, draw) stream); z of mean and variance < 5.
  int const n = 20'000;
  for (double lambda : {0.7, 4.0, 25.0, 400.0}) {
    double s = 0, q = 0;
    for (int i = 0; i < n; ++i) {
      ember::draw_rng rng(9, std::uint32_t(i), 0);
      double const k = rng.poisson(lambda);
      CHECK(k == std::floor(k));
      s += k;
      q += k * k;
    }
    double const m = s / n, v = q / n - m * m;
    INFO("lambda " << lambda << ": mean " << m << ", variance " << v);
    CHECK(std::abs(m - lambda) / std::sqrt(lambda / n) < ember_test::z_bound);
    // Var of (k − λ)² for a Poisson: μ₄ − σ⁴ = λ(1 + 3λ) − λ² = λ + 2λ².
    CHECK(std::abs(v - lambda) / std::sqrt((lambda + 2 * lambda * lambda) / n) < ember_test::z_bound);
  }
  double s = 0, q = 0;
  for (int i = 0; i < n; ++i) {
    ember::draw_rng rng(9, 0, std::uint32_t(i));
    double const a = rng.normal(), b = rng.normal();
    s += a + b;
    q += a * a + b * b;
  }
  CHECK(std::abs(s / (2 * n)) / std::sqrt(1.0 / (2 * n)) < ember_test::z_bound);
  CHECK(std::abs(q / (2 * n) - 1) / std::sqrt(2.0 / (2 * n)) < ember_test::z_bound);
}

TEST_CASE("lkj_corr_cholesky_lpdf is LKJ's normalised density; uniform_lpdf is -inf outside", "[params]") {
  // K = 2: L = [[1, 0], [r, √(1 − r²)]] and the density of r is (1 − r²)^{η−1} / (2^{2η−1} B(η, η)).
  for (double eta : {0.5, 1.0, 2.5})
    for (double r : {-0.9, 0.1, 0.6}) {
      double const l[4] = {1, 0, r, std::sqrt(1 - r * r)};
      ember::matrix_view<ember::block_values<double, 4>, 2, 2> const L{{l}};
      double const want = (eta - 1) * std::log1p(-r * r) - (2 * eta - 1) * std::log(2.0) -
                          (2 * std::lgamma(eta) - std::lgamma(2 * eta));
      // ember::log_gamma is within 1e-13 (1 + |log Γ|) of lgamma (tests/distributions): three of them.
      CHECK(std::abs(ember::lkj_corr_cholesky_lpdf(L, eta) - want) <= 1e-12);
    }
  // K = 3, η = 1: uniform on the 3×3 correlation matrices, whose volume is π²/2.
  CHECK(std::abs(ember::detail::lkj_log_normaliser(3, 1.0) - std::log(std::numbers::pi * std::numbers::pi / 2)) <= 1e-12);
  double const inf = std::numeric_limits<double>::infinity();
  CHECK(ember::uniform_lpdf(-0.1, 0.0, 2.0) == -inf);
  CHECK(ember::uniform_lpdf(2.5, 0.0, 2.0) == -inf);
  CHECK(ember::uniform_lpdf(0.5, 0.0, 2.0) == -std::log(2.0));
}

TEST_CASE("a category outside 0 ... K - 1 is refused", "[params]") {
  double eta[3] = {0.1, 0.2, 0.3}, cut[2] = {-1.0, 1.0};
  ember::block_values<double, 3> const e{eta};
  ember::block_values<double, 2> const c{cut};
  CHECK(ember_test::message_of([&] { (void)ember::categorical_logit_lpmf(3, e); }).find("category 3") != std::string::npos);
  CHECK(ember_test::message_of([&] { (void)ember::categorical_logit_lpmf(-1, e); }).find("is not one of 0 ... 2") != std::string::npos);
  CHECK(ember_test::message_of([&] { (void)ember::categorical_logit_lpmf(1.5, e); }).find("category 1.5") != std::string::npos);
  CHECK(ember_test::message_of([&] { (void)ember::ordered_logistic_lpmf(3, 0.5, c); }).find("is not one of 0 ... 2") != std::string::npos);
  CHECK_NOTHROW(ember::ordered_logistic_lpmf(2, 0.5, c));
}

TEST_CASE("bounds that cannot hold are refused before any work", "[params]") {
  CHECK(ember_test::message_of([] { (void)ember::bounded(2.0, 1.0); }).find("lo must be below hi") != std::string::npos);
  double const inf = std::numeric_limits<double>::infinity();
  CHECK(ember_test::message_of([&] { (void)ember::bounded(0.0, inf); }).find("both finite") != std::string::npos);
}

namespace {
struct regression_body {
  static constexpr auto beta = ember::param<"beta", 2>();
  static constexpr auto params = ember::params(beta);
  ember::data_view<double> X, y;
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[beta], 0.0, 1.0));
    m.add_rows(y.rows, [&](std::int64_t i) { return ember::normal_lpdf(y.data[i], ember::dot(X.row(i), m[beta]), 1.0); });
  }
  template <class F>
  void for_each_view(F&& f) {
    f(X);
    f(y);
  }
};
}  // namespace

TEST_CASE("a data row whose length is not its parameter's is refused before any work", "[params]") {
  ember::dataset<double> const X(std::vector<double>(12, 0.5), 4, 3), y(std::vector<double>(4, 1.0), 4, 1);
  auto const U = ember::model<double>(regression_body{X.view(), y.view()});
  auto const msg = ember_test::message_of([&] { (void)ember::sample(ember::chees_hmc(U), {.chains = 8, .steps = 10, .seed = 1}); });
  CHECK(msg.find("ember: a data row of 3 values where 2 are needed") != std::string::npos);
  ember::dataset<double> const X2(std::vector<double>(8, 0.5), 4, 2);
  auto const V = ember::model<double>(regression_body{X2.view(), y.view()});
  CHECK_NOTHROW(ember::sample(ember::chees_hmc(V), {.chains = 8, .steps = 10, .seed = 1}));
}

namespace {
// The vector log-densities in one body: logits and cutpoints from parameters, a covariance factor
// built in a let (σ times a correlation factor), data rows.
struct vector_lpdfs {
  static constexpr auto eta = ember::param<"eta", 4>();
  static constexpr auto c = ember::param<"c", 3>(ember::ordered);
  static constexpr auto g = ember::param<"g">();
  static constexpr auto mu = ember::param<"mu", 3>();
  static constexpr auto L = ember::param<"L", 3, 3>(ember::cholesky_corr);
  static constexpr auto sigma = ember::param<"sigma", 3>(ember::positive);
  static constexpr auto params = ember::params(eta, c, g, mu, L, sigma);
  double y[2][3] = {{0.4, -1.0, 2.0}, {-0.3, 0.2, 0.9}};

  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[eta], 0.0, 1.0) + ember::normal_lpdf(m[c], 0.0, 3.0) + ember::normal_lpdf(m[g], 0.0, 1.0));
    m.add(ember::normal_lpdf(m[mu], 0.0, 1.0) + ember::lkj_corr_cholesky_lpdf(m[L], 2.0));
    for (int k = 0; k < 3; ++k) m.add(ember::lognormal_lpdf(m[sigma][k], 0.0, 1.0));
    for (int k = 0; k < 4; ++k) m.add(ember::categorical_logit_lpmf(k, m[eta]));
    m.add_rows(8, [&](std::int64_t i) { return ember::ordered_logistic_lpmf(double(i % 4), m[g] * (0.2 * double(i)), m[c]); });
    auto const Lcov = ember::let<9>(m, [&](int t) { return m[sigma][t / 3] * m[L](t / 3, t % 3); });
    for (auto const& row : y) m.add(ember::multi_normal_cholesky_lpdf(row, m[mu], ember::as_matrix<3, 3>(Lcov.block())));
  }
};
}  // namespace

TEST_CASE("categorical_logit, ordered_logistic and multi_normal_cholesky in a model: reverse against duals and differences", "[params]") {
  auto const U = ember::model<double>(vector_lpdfs{});
  constexpr int D = decltype(U)::dim;
  STATIC_REQUIRE(D == 4 + 3 + 1 + 3 + 3 + 3);
  // The terms (8 rows, 2 multivariate rows with z ≤ 10) stay below 200 in magnitude at these points.
  check_reverse_against_duals(U, 4, 20, 1.0, 200.0);
  // Third derivatives: e^{3y} of σ through 1/σ² of the multivariate rows, |y| ≤ 1: 1e3 covers them.
  ember_test::check_gradient_on_box(U, 3, -1, 1, {1e3, 200.0});
}

TEST_CASE("a model with named parameters resumes from a checkpoint bitwise", "[params][checkpoint]") {
  auto const U = ember::model<double>(every_constraint{});
  auto const pipe = ember::chees_hmc(U, {.warmup = 100}) | ember::record();
  ember::sample_options<double, 18> const opt{.chains = 9, .seed = 8, .progress = false};
  std::string const path = "params_test_checkpoint.ember";
  {
    auto r = ember::start(pipe, opt);
    r.advance(70);
    r.save(path);
  }
  auto resumed = decltype(ember::start(pipe, opt))::load(pipe, path);
  resumed.advance(80);
  auto whole = ember::start(pipe, opt);
  whole.advance(150);
  auto const a = resumed.result(), b = whole.result();
  REQUIRE(a.samples().data().size() == b.samples().data().size());
  CHECK(std::memcmp(a.samples().data().data(), b.samples().data().data(), a.samples().data().size() * sizeof(double)) == 0);
  std::remove(path.c_str());
}
