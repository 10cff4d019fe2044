// ember/distributions.hpp: every log-density's analytic partials against central differences of
// its value, the dual form against the partials, SIMD lanes against one-lane evaluations, mixed
// argument types, and use inside a custom energy. Values against SciPy: scipy_compare.py.
#include <ember/ember.hpp>
#include <ember/distributions.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

using ember::lpdf_partials;

namespace {

// A family by name: its partials at K double arguments, and its argument points.
template <int K>
struct family {
  std::string name;
  std::function<lpdf_partials<double, K>(std::array<double, K> const&)> partials;
  std::vector<std::array<double, K>> points;
};

std::vector<family<3>> three() {
  std::vector<std::array<double, 3>> pts = {{0.3, 0.1, 1.2}, {-2.5, 0.7, 0.4}, {4.0, -1.0, 2.5}, {0.05, 0.05, 0.9}};
  std::vector<std::array<double, 3>> pos = {{0.3, 0.1, 1.2}, {2.5, 0.7, 0.4}, {4.0, -1.0, 2.5}, {0.05, 0.2, 0.9}};
  std::vector<std::array<double, 3>> all_pos = {{0.3, 0.6, 1.2}, {2.5, 3.7, 0.4}, {4.0, 1.5, 2.5}, {0.05, 0.2, 0.9}};
  return {
      {"normal", [](auto const& a) { return ember::normal_lpdf_partials(a[0], a[1], a[2]); }, pts},
      {"lognormal", [](auto const& a) { return ember::lognormal_lpdf_partials(a[0], a[1], a[2]); }, pos},
      {"cauchy", [](auto const& a) { return ember::cauchy_lpdf_partials(a[0], a[1], a[2]); }, pts},
      {"laplace", [](auto const& a) { return ember::laplace_lpdf_partials(a[0], a[1], a[2]); }, pts},
      {"logistic", [](auto const& a) { return ember::logistic_lpdf_partials(a[0], a[1], a[2]); }, pts},
      {"gamma", [](auto const& a) { return ember::gamma_lpdf_partials(a[0], a[1], a[2]); }, all_pos},
      {"inv_gamma", [](auto const& a) { return ember::inv_gamma_lpdf_partials(a[0], a[1], a[2]); }, all_pos},
      {"weibull", [](auto const& a) { return ember::weibull_lpdf_partials(a[0], a[1], a[2]); }, all_pos},
      {"beta", [](auto const& a) { return ember::beta_lpdf_partials(a[0], a[1], a[2]); },
       {{0.3, 1.2, 2.5}, {0.8, 0.7, 0.4}, {0.05, 3.0, 12.0}}},
  };
}

// Central differences with h = 10⁻⁵ max(1, |a|): truncation h²|f'''|/6 and rounding ε|f|/h stay
// under 10⁻⁸ (1 + |∂|) at these points, far below the 10⁻⁶ allowed.
template <int K>
void check_against_differences(family<K> const& f) {
  for (auto const& p : f.points) {
    auto const got = f.partials(p);
    REQUIRE(std::isfinite(got.value));
    for (int k = 0; k < K; ++k) {
      double const h = 1e-5 * std::max(1.0, std::abs(p[k]));
      auto up = p, down = p;
      up[k] += h;
      down[k] -= h;
      double const fd = (f.partials(up).value - f.partials(down).value) / (2 * h);
      INFO(f.name << " at (" << p[0] << ", " << p[1] << (K > 2 ? ", " + std::to_string(p[K - 1]) : "") << "), argument " << k
                  << ": analytic " << got.d[k] << ", differences " << fd);
      CHECK(std::abs(got.d[k] - fd) <= 1e-6 * (1 + std::abs(got.d[k])));
    }
  }
}

}  // namespace

TEST_CASE("analytic partials match central differences", "[distributions]") {
  for (auto const& f : three()) check_against_differences(f);
  check_against_differences(family<2>{"exponential", [](auto const& a) { return ember::exponential_lpdf_partials(a[0], a[1]); },
                                      {{{0.3, 1.5}}, {{2.0, 0.4}}, {{0.0, 3.0}}}});
  check_against_differences(family<4>{"student_t", [](auto const& a) { return ember::student_t_lpdf_partials(a[0], a[1], a[2], a[3]); },
                                      {{{0.3, 3.0, 0.1, 1.2}}, {{-2.5, 0.7, 0.7, 0.4}}, {{4.0, 25.0, -1.0, 2.5}}}});
  for (int y : {0, 5}) {
    check_against_differences(family<2>{"neg_binomial_2_log", [y](auto const& a) { return ember::neg_binomial_2_log_lpmf_partials(y, a[0], a[1]); },
                                        {{{-1.0, 0.5}}, {{0.5, 3.0}}, {{2.0, 40.0}}, {{100.0, 3.0}}}});
  }
  for (int y : {0, 1}) {
    check_against_differences(family<1>{"bernoulli_logit", [y](auto const& a) { return ember::bernoulli_logit_lpmf_partials(y, a[0]); },
                                        {{{-2.0}}, {{0.3}}, {{4.0}}}});
    check_against_differences(family<1>{"poisson_log", [y](auto const& a) { return ember::poisson_log_lpmf_partials(3 * y + 2, a[0]); },
                                        {{{-1.0}}, {{0.5}}, {{2.0}}}});
    check_against_differences(family<1>{"binomial_logit", [y](auto const& a) { return ember::binomial_logit_lpmf_partials(4 * y + 1, 7, a[0]); },
                                        {{{-1.5}}, {{0.2}}, {{3.0}}}});
  }
}

TEST_CASE("log_gamma and digamma: recurrences, known values, and one the derivative of the other", "[distributions]") {
  // Γ(1) = Γ(2) = 1, Γ(1/2) = √π, ψ(1) = −γ; log Γ(x + 1) = log Γ(x) + log x, ψ(x + 1) = ψ(x) + 1/x,
  // across the shift to x ≥ 10; ψ against central differences of log Γ.
  CHECK(std::abs(ember::log_gamma(1.0)) < 1e-13);
  CHECK(std::abs(ember::log_gamma(2.0)) < 1e-13);
  CHECK(std::abs(ember::log_gamma(0.5) - 0.5 * std::log(M_PI)) < 1e-13);
  CHECK(std::abs(ember::digamma(1.0) + 0.57721566490153286) < 1e-13);
  for (double x : {0.01, 0.3, 1.7, 6.2, 9.5, 9.99, 10.0, 42.0, 1e4}) {
    INFO("x = " << x);
    CHECK(std::abs(ember::log_gamma(x + 1) - ember::log_gamma(x) - std::log(x)) <= 1e-13 * (1 + std::abs(ember::log_gamma(x))));
    CHECK(std::abs(ember::digamma(x + 1) - ember::digamma(x) - 1 / x) <= 1e-13 * (1 + 1 / x));
    CHECK(std::abs(ember::log_gamma(x) - std::lgamma(x)) <= 1e-13 * (1 + std::abs(std::lgamma(x))));
    double const h = 1e-5 * x;
    double const fd = (ember::log_gamma(x + h) - ember::log_gamma(x - h)) / (2 * h);
    CHECK(std::abs(ember::digamma(x) - fd) <= 1e-6 * (1 + std::abs(fd)));
  }
}

TEST_CASE("with dual arguments the log-density carries exactly the analytic partials", "[distributions]") {
  using D3 = ember::dual<double, 3>;
  D3 x(0.3), mu(-0.2), sigma(1.4);
  x.d[0] = mu.d[1] = sigma.d[2] = 1;
  auto const check = [](auto const& r, auto const& p, char const* name) {
    INFO(name);
    CHECK(r.val == p.value);
    for (int k = 0; k < 3; ++k) CHECK(r.d[k] == p.d[k]);
  };
  check(ember::normal_lpdf(x, mu, sigma), ember::normal_lpdf_partials(0.3, -0.2, 1.4), "normal");
  check(ember::cauchy_lpdf(x, mu, sigma), ember::cauchy_lpdf_partials(0.3, -0.2, 1.4), "cauchy");
  check(ember::laplace_lpdf(x, mu, sigma), ember::laplace_lpdf_partials(0.3, -0.2, 1.4), "laplace");
  check(ember::logistic_lpdf(x, mu, sigma), ember::logistic_lpdf_partials(0.3, -0.2, 1.4), "logistic");
  check(ember::lognormal_lpdf(x, mu, sigma), ember::lognormal_lpdf_partials(0.3, -0.2, 1.4), "lognormal");
  // A constant argument contributes nothing: d/dσ of normal(x | 0, σ) with x data.
  using D1 = ember::dual<double, 1>;
  D1 s(1.4);
  s.d[0] = 1;
  auto const r = ember::normal_lpdf(0.3, 0.0, s);
  auto const p = ember::normal_lpdf_partials(0.3, 0.0, 1.4);
  CHECK(r.val == p.value);
  CHECK(r.d[0] == p.d[2]);
  D1 eta(0.7);
  eta.d[0] = 1;
  CHECK(ember::bernoulli_logit_lpmf(1, eta).d[0] == ember::bernoulli_logit_lpmf_partials(1, 0.7).d[0]);
  CHECK(ember::poisson_log_lpmf(4, eta).d[0] == ember::poisson_log_lpmf_partials(4, 0.7).d[0]);
  CHECK(ember::binomial_logit_lpmf(3, 9, eta).d[0] == ember::binomial_logit_lpmf_partials(3, 9, 0.7).d[0]);
}

TEST_CASE("argument types mix as in an energy's body", "[distributions]") {
  // Double constants with a float value give float; with a float batch, a float batch.
  STATIC_REQUIRE(std::is_same_v<decltype(ember::normal_lpdf(0.5f, 0.0, 1.0)), float>);
  using B = ember::simd_batch<float>;
  STATIC_REQUIRE(std::is_same_v<decltype(ember::normal_lpdf(B(0.5f), 0.0, 1.0)), B>);
  STATIC_REQUIRE(std::is_same_v<decltype(ember::exponential_lpdf(B(0.5f), 2)), B>);
  using DB = ember::dual<B, 2>;
  STATIC_REQUIRE(std::is_same_v<decltype(ember::normal_lpdf(DB(B(0.5f)), 0.0, 1.0)), DB>);
  CHECK(ember::normal_lpdf(0.5f, 0.0, 1.0) == Approx(-0.125 - 0.9189385332046727).epsilon(1e-6));
}

TEST_CASE("each SIMD lane is its own evaluation", "[distributions]") {
  using B = ember::simd_batch<double>;
  constexpr int W = int(B::size);
  alignas(64) double xs[W], out[W];
  for (int i = 0; i < W; ++i) xs[i] = -2.0 + 0.7 * i;
  auto const v = ember::logistic_lpdf(B::load_aligned(xs), 0.3, 1.7) + ember::cauchy_lpdf(B::load_aligned(xs), -0.4, 0.8) +
                 ember::laplace_lpdf(B::load_aligned(xs), 0.1, 2.0) + ember::bernoulli_logit_lpmf(1, B::load_aligned(xs));
  v.store_aligned(out);
  for (int i = 0; i < W; ++i) {
    double const one = ember::logistic_lpdf(xs[i], 0.3, 1.7) + ember::cauchy_lpdf(xs[i], -0.4, 0.8) +
                       ember::laplace_lpdf(xs[i], 0.1, 2.0) + ember::bernoulli_logit_lpmf(1, xs[i]);
    INFO("lane " << i);
    CHECK(out[i] == Approx(one).epsilon(1e-13));
  }
  // log Γ and ψ shift each lane by its own count of steps (lanes below and above 10).
  alignas(64) double ys[W], lg[W], dg[W];
  for (int i = 0; i < W; ++i) ys[i] = 0.3 + 4.1 * i;  // lanes below and above 10 from 4 lanes on
  ember::log_gamma(B::load_aligned(ys)).store_aligned(lg);
  ember::digamma(B::load_aligned(ys)).store_aligned(dg);
  auto const t = ember::student_t_lpdf(B::load_aligned(xs), B::load_aligned(ys), 0.2, 1.1);
  t.store_aligned(out);
  for (int i = 0; i < W; ++i) {
    INFO("lane " << i << ", x = " << ys[i]);
    CHECK(lg[i] == Approx(ember::log_gamma(ys[i])).epsilon(1e-13));
    CHECK(dg[i] == Approx(ember::digamma(ys[i])).epsilon(1e-13));
    CHECK(out[i] == Approx(ember::student_t_lpdf(xs[i], ys[i], 0.2, 1.1)).epsilon(1e-13));
  }
}

TEST_CASE("a custom energy written with log-densities has their gradient", "[distributions]") {
  // U(μ, log σ) = −Σ normal_lpdf(yᵢ | μ, e^{log σ}) − normal_lpdf(μ | 0, 10) − log σ (the half-flat
  // prior on σ through its log): its gradient by duals through the lifted partials against
  // central differences of its value.
  static constexpr std::array<double, 5> y = {1.2, -0.3, 0.8, 2.1, 0.4};
  auto const U = ember::custom_energy<2, double>([](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    S const sigma = exp(x[1]);
    S lp = ember::normal_lpdf(x[0], 0.0, 10.0) + x[1];
    for (double v : y) lp = lp + ember::normal_lpdf(v, x[0], sigma);
    return -lp;
  });
  ember::vec<double, 2> x{{0.5, -0.2}}, g;
  double const u = U.value_and_grad(x, g);
  CHECK(u == Approx(U.value(x)).epsilon(1e-14));
  for (int k = 0; k < 2; ++k) {
    auto up = x, down = x;
    up[k] += 1e-5;
    down[k] -= 1e-5;
    double const fd = (U.value(up) - U.value(down)) / 2e-5;
    INFO("coordinate " << k << ": " << g[k] << " against " << fd);
    CHECK(std::abs(g[k] - fd) <= 1e-6 * (1 + std::abs(g[k])));
  }
}
