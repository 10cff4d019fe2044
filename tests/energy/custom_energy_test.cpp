// custom_energy: every built-in energy rewritten as a lambda gives the built-in's analytic
// gradient to rounding (float and double); a zoo of lambdas over every math function, near the
// edge cases, against central differences in double; D = 40 (three passes of 14 partials);
// callables with their own gradient; expressions mixing custom and built-in energies; SIMD
// batches lane by lane; and ULA, MALA and HMC sampling custom energies, checked by moments.
#include "support/backends.hpp"
#include "energy/gradient_check.hpp"

#include <ember/core/simd.hpp>
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

namespace {

using namespace ember;

// The lambda versions of the built-ins: the same maths, written as a user would.
template <int D>
auto rosenbrock_lambda() {
  return [](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    S s = S(0);
    for (int i = 0; i + 1 < D; ++i) s = s + (1 - x[i]) * (1 - x[i]) + 100 * (x[i + 1] - x[i] * x[i]) * (x[i + 1] - x[i] * x[i]);
    return s;
  };
}

// |g_custom − g_analytic| ≤ 64 ε (1 + |U| + |g|∞) at n deterministic points: the two differ only
// in the order and grouping of roundings of terms no larger than |U| and |g|.
template <class A, class B>
void check_same_gradient(A const& analytic, B const& custom, double lo, double hi, int n = 20) {
  using T = typename A::value_type;
  constexpr int D = A::dim;
  double const eps = std::numeric_limits<T>::epsilon();
  for (int k = 0; k < n; ++k) {
    auto x = ember_test::test_point<T, D>(std::uint64_t(k), lo, hi);
    vec<T, D> ga, gc;
    T ua = analytic.value_and_grad(x, ga);
    T uc = custom.value_and_grad(x, gc);
    double gmax = 0;
    for (int i = 0; i < D; ++i) gmax = std::max(gmax, std::abs(double(ga[i])));
    double tol = 64 * eps * (1 + std::abs(double(ua)) + gmax);
    INFO("point " << k << ", U = " << double(ua) << ", tolerance " << tol);
    CHECK(std::abs(double(uc) - double(ua)) <= tol);
    CHECK(double(custom.value(x)) == Approx(double(ua)).epsilon(64 * eps).margin(tol));
    for (int i = 0; i < D; ++i) {
      INFO("coordinate " << i << ": analytic " << double(ga[i]) << ", dual " << double(gc[i]));
      CHECK(std::abs(double(gc[i]) - double(ga[i])) <= tol);
    }
  }
}

template <class T>
void built_ins_as_lambdas() {
  constexpr int D = 3;
  vec<T, D> mu{{T(0.5), T(-1), T(2)}};
  {
    gaussian<T, D, covariance::isotropic> g(mu, T(1.5));
    auto c = custom_energy<D, T>([mu, s = T(1.5)](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S q = S(0);
      for (int i = 0; i < D; ++i) q = q + (x[i] - mu[i]) * (x[i] - mu[i]);
      return q / (2 * s * s);
    });
    check_same_gradient(g, c, -3, 3);
  }
  {
    vec<T, D> sd{{T(0.5), T(1), T(2)}};
    gaussian<T, D, covariance::diagonal> g(mu, sd);
    auto c = custom_energy<D, T>([mu, sd](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S q = S(0);
      for (int i = 0; i < D; ++i) q = q + (x[i] - mu[i]) * (x[i] - mu[i]) / (sd[i] * sd[i]);
      return T(0.5) * q;
    });
    check_same_gradient(g, c, -3, 3);
  }
  {
    std::array<std::array<T, D>, D> cov{{{T(2), T(0.5), T(0.1)}, {T(0.5), T(1), T(-0.3)}, {T(0.1), T(-0.3), T(1.5)}}};
    gaussian<T, D, covariance::full> g(mu, cov);
    auto c = custom_energy<D, T>([p = g.precision, mu](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S q = S(0);
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j) q = q + (x[i] - mu[i]) * p[i][j] * (x[j] - mu[j]);
      return q / 2;
    });
    check_same_gradient(g, c, -3, 3);
  }
  check_same_gradient(double_well<T, D>{}, custom_energy<D, T>([](auto const& x) {
                        using S = std::decay_t<decltype(x[0])>;
                        S s = S(0);
                        for (int i = 0; i < D; ++i) s = s + (x[i] * x[i] - 1) * (x[i] * x[i] - 1);
                        return 2 * s;
                      }),
                      -2, 2);
  check_same_gradient(harmonic<T, D>{T(3)}, custom_energy<D, T>([](auto const& x) {
                        return T(1.5) * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
                      }),
                      -5, 5);
  check_same_gradient(rosenbrock<T, D>{}, custom_energy<D, T>(rosenbrock_lambda<D>()), -2, 2);
  check_same_gradient(rastrigin<T, D>{}, custom_energy<D, T>([](auto const& x) {
                        using S = std::decay_t<decltype(x[0])>;
                        S s = S(10 * D);
                        for (int i = 0; i < D; ++i) s = s + x[i] * x[i] - 10 * cos(two_pi<T> * x[i]);
                        return s;
                      }),
                      -3, 3);
  check_same_gradient(ackley<T, D>{}, custom_energy<D, T>([](auto const& x) {
                        using S = std::decay_t<decltype(x[0])>;
                        S sq = S(0), cs = S(0);
                        for (int i = 0; i < D; ++i) {
                          sq = sq + x[i] * x[i];
                          cs = cs + cos(two_pi<T> * x[i]);
                        }
                        return -20 * exp(T(-0.2) * sqrt(sq / T(D))) - exp(cs / T(D)) + T(20 + 2.718281828459045);
                      }),
                      0.1, 3);
  {
    gaussian_mixture<T, 2, 3> m({T(0.5), T(0.3), T(0.2)}, {vec<T, 2>{{-2, 0}}, vec<T, 2>{{2, 1}}, vec<T, 2>{{0, -2}}},
                                {T(0.6), T(0.8), T(0.5)});
    auto c = custom_energy<2, T>([m](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S a[3];
      for (int k = 0; k < 3; ++k) {
        S q = S(0);
        for (int i = 0; i < 2; ++i) q = q + m.inv_var[k][i] * (x[i] - m.mean[k][i]) * (x[i] - m.mean[k][i]);
        a[k] = m.log_weight[k] - q / 2;
      }
      return -log_sum_exp(a);
    });
    check_same_gradient(m, c, -6, 6);
  }
}

}  // namespace

static_assert(DifferentiableEnergy<decltype(custom_energy<2>([](auto const& x) { return x[0] * x[1]; }))>);
static_assert(std::is_same_v<decltype(custom_energy<2, double>([](auto const& x) { return x[0]; }))::value_type, double>);
static_assert(std::is_trivially_copyable_v<decltype(custom_energy<2>([](auto const& x) { return x[0]; }))>);
static_assert(detail::dual_passes<40> == 3 && detail::dual_chunk<40> == 14);

TEST_CASE("built-in energies written as lambdas give the analytic gradient to rounding", "[energy][custom]") {
  SECTION("float") { built_ins_as_lambdas<float>(); }
  SECTION("double") { built_ins_as_lambdas<double>(); }
}

TEST_CASE("lambdas over every math function match central differences, near the edge cases", "[energy][custom]") {
  using ember_test::check_gradient_on_box;
  // The DESIGN.md sketch: using std::sin, found for duals by ADL.
  check_gradient_on_box(custom_energy<2, double>([](auto const& x) {
                          using std::sin;
                          return sin(x[0]) * x[1] * x[1];
                        }),
                        20, -3, 3, {8, 20});
  // log, sqrt near 0+, log1p, expm1, pow, tanh at large arguments.
  check_gradient_on_box(custom_energy<3, double>([](auto const& x) {
                          return log(x[0]) + sqrt(x[1]) + log1p(x[2]) + expm1(x[0] * x[2]) + pow(x[1], 1.5) +
                                 pow(x[0], x[2]) + tanh(30 * x[1]);
                        }),
                        20, 1e-3, 0.2, {2e10, 100});
  // exp, sin, cos, tanh, sigmoid, softplus at ±large, abs away from 0, min/max via select.
  check_gradient_on_box(custom_energy<2, double>([](auto const& x) {
                          return exp(x[0] / 4) * cos(x[1]) + sin(x[0] * x[1]) + tanh(x[0]) + sigmoid(3 * x[1]) +
                                 softplus(40 * x[0]) + softplus(-40 * x[1]) + abs(x[0] - 0.05) + max(x[0], 2 * x[1]) +
                                 min(x[0], -x[1]);
                        }),
                        30, -4, 4, {4e5, 400});
  // log-sum-exp over terms of very different magnitude.
  check_gradient_on_box(custom_energy<2, double>([](auto const& x) {
                          using S = std::decay_t<decltype(x[0])>;
                          S a[4] = {50 * x[0], -50 * x[1], x[0] * x[1], S(-700)};
                          return log_sum_exp(a);
                        }),
                        20, -3, 3, {2e5, 200});
}

TEST_CASE("D = 40 is differentiated in three passes of 14 partials", "[energy][custom]") {
  constexpr int D = 40;
  auto c = custom_energy<D, double>([](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    S s = S(0);
    for (int i = 0; i < D; ++i) s = s + (i + 1) * x[i] * x[i] + x[i] * x[(i + 1) % D] + sin(x[i]);
    return s;
  });
  for (int k = 0; k < 5; ++k) {
    auto x = ember_test::test_point<double, D>(std::uint64_t(k), -2, 2);
    vec<double, D> g;
    double u = c.value_and_grad(x, g);
    CHECK(u == Approx(c.value(x)).epsilon(1e-14));
    for (int i = 0; i < D; ++i) {
      double exact = 2 * (i + 1) * x[i] + x[(i + 1) % D] + x[(i + D - 1) % D] + std::cos(x[i]);
      INFO("coordinate " << i);
      CHECK(g[i] == Approx(exact).epsilon(1e-14).margin(1e-13));
    }
  }
}

namespace {
// A callable with its own gradient: custom_energy must use it (the marker 7 proves it).
struct with_own_gradient {
  template <class S>
  S operator()(vec<S, 2> const& x) const {
    return x[0] * x[1];
  }
  template <class S>
  S value_and_grad(vec<S, 2> const& x, vec<S, 2>& g) const {
    g[0] = S(7);
    g[1] = S(7);
    return x[0] * x[1];
  }
};
}  // namespace

TEST_CASE("what has its own gradient is not differentiated again", "[energy][custom]") {
  harmonic<float, 2> h{};
  auto same = custom_energy<2>(h);
  STATIC_REQUIRE(std::is_same_v<decltype(same), harmonic<float, 2>>);
  auto own = custom_energy<2>(with_own_gradient{});
  vec<float, 2> x{{2, 3}}, g;
  CHECK(own.value_and_grad(x, g) == 6);
  CHECK(g[0] == 7);
  CHECK(g[1] == 7);
}

TEST_CASE("custom and built-in energies mix in expressions", "[energy][custom]") {
  auto V = custom_energy<2>([](auto const& x) { return sin(x[0]) * x[1] * x[1]; });
  gaussian<float, 2, covariance::isotropic> G(vec<float, 2>{{0, 0}}, 1.f);
  auto U = V + 0.5f * G;
  STATIC_REQUIRE(DifferentiableEnergy<decltype(U)>);
  vec<float, 2> x{{0.3f, -1.2f}}, g;
  float u = U.value_and_grad(x, g);
  CHECK(u == Approx(std::sin(0.3f) * 1.44f + 0.25f * (0.09f + 1.44f)).epsilon(1e-6));
  CHECK(g[0] == Approx(std::cos(0.3f) * 1.44f + 0.5f * 0.3f).epsilon(1e-6));
  CHECK(g[1] == Approx(2 * std::sin(0.3f) * -1.2f + 0.5f * -1.2f).epsilon(1e-6));
}

TEST_CASE("custom energies on a SIMD batch agree with the scalar path lane by lane", "[energy][custom][simd]") {
  using B = xsimd::batch<float>;
  constexpr int W = int(B::size);
  auto V = custom_energy<3>([](auto const& x) { return softplus(x[0] * x[1]) + log1p(x[2] * x[2]) - cos(x[0]); });
  alignas(64) float l[3][W];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < W; ++k) l[i][k] = -1.f + 0.13f * float(k) + 0.4f * float(i);
  vec<B, 3> xb{{B::load_aligned(l[0]), B::load_aligned(l[1]), B::load_aligned(l[2])}}, gb;
  B ub = V.value_and_grad(xb, gb);
  alignas(64) float u[W], g[3][W];
  ub.store_aligned(u);
  for (int i = 0; i < 3; ++i) gb[i].store_aligned(g[i]);
  for (int k = 0; k < W; ++k) {
    vec<float, 3> x{{l[0][k], l[1][k], l[2][k]}}, gs;
    float us = V.value_and_grad(x, gs);
    INFO("lane " << k);
    CHECK(u[k] == Approx(us).epsilon(1e-6));
    for (int i = 0; i < 3; ++i) CHECK(g[i][k] == Approx(gs[i]).epsilon(1e-5).margin(1e-6));
  }
}

namespace {
// A 3-d Gaussian written by hand: means (1, −0.5, 2), standard deviations (1, 0.5, 2), independent.
constexpr std::array<double, 3> true_mean{1, -0.5, 2};
auto gaussian_lambda() {
  return custom_energy<3>([](auto const& x) {
    return 0.5f * ((x[0] - 1.f) * (x[0] - 1.f) + 4.f * (x[1] + 0.5f) * (x[1] + 0.5f) +
                   0.25f * (x[2] - 2.f) * (x[2] - 2.f));
  });
}

// z-scores of the final states' per-coordinate mean and variance against the truth: one draw per
// chain, independent, SE(mean) = σ/√n and SE(variance) = σ²√(2/(n−1)).
template <class R>
void check_moments(R const& r, std::array<double, 3> const& var) {
  REQUIRE(r.divergent_chains() == 0);
  double n = double(r.chains());
  for (int d = 0; d < 3; ++d) {
    double m = 0, q = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) m += double(r.final_state(c)[d]);
    m /= n;
    for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(double(r.final_state(c)[d]) - m, 2);
    q /= n - 1;
    double zm = (m - true_mean[std::size_t(d)]) / std::sqrt(var[std::size_t(d)] / n);
    double zv = (q - var[std::size_t(d)]) / (var[std::size_t(d)] * std::sqrt(2 / (n - 1)));
    INFO("coordinate " << d << ": mean " << m << ", variance " << q << ", z " << zm << ", " << zv);
    CHECK(std::abs(zm) < 5);
    CHECK(std::abs(zv) < 5);
  }
}
}  // namespace

TEST_CASE("ula, mala and hmc sample a custom 3-d gaussian", "[energy][custom][statistics]") {
  auto V = gaussian_lambda();
  std::array<double, 3> var{1, 0.25, 4};
  ember_test::for_each_cpu_backend([&](auto be) {
    INFO("backend " << be.name);
    {
      // ULA's finite-step law is Gaussian with variance σ² / (1 − η / 2σ²): test against it exactly.
      double eta = 0.05;
      std::array<double, 3> v;
      for (int d = 0; d < 3; ++d) v[std::size_t(d)] = var[std::size_t(d)] / (1 - eta / (2 * var[std::size_t(d)]));
      auto r = sample(ula(V, {.step_size = eta}) | burn_in(600), {.chains = 4000, .steps = 1, .seed = 1}, be);
      check_moments(r, v);
    }
    {
      auto r = sample(mala(V, {.step_size = 0.1}) | burn_in(600), {.chains = 4000, .steps = 1, .seed = 2}, be);
      check_moments(r, var);
    }
    {
      // Trajectory length 1.05: 2.1 rad for σ = 0.5, far from the half period π at which HMC only flips signs.
      auto r = sample(hmc(V, {.step_size = 0.15, .integrator_steps = 7}) | burn_in(400), {.chains = 4000, .steps = 1, .seed = 3}, be);
      check_moments(r, var);
    }
  });
}

TEST_CASE("an energy that branches on a coordinate is refused before a SIMD run; select and ember:: math work on batches",
          "[custom_energy][simd]") {
  // N(0, 1) × half-normal written with a branch: on a batch, `if` on a mask means "any chain".
  auto branching = custom_energy<2>([](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    S wall = S(0.f);
    if constexpr (scalar_traits<S>::width == 1 && std::is_floating_point_v<S>) {
      if (x[1] < 0) wall = S(1e6f);
    } else {
      // What compiles on AVX-512 (a mask converts to an integer there): emulated for every target,
      // "any lane" taken for all lanes.
      wall = ember::select(any(x[1] < S(0.f)) ? S(1.f) < S(2.f) : S(2.f) < S(1.f), S(1e6f), S(0.f));
    }
    return 0.5f * x[0] * x[0] + 0.5f * x[1] * x[1] + wall;
  });
  CHECK_THROWS_WITH(sample(mala(branching, {.step_size = 0.5}) | record(), {.chains = 32, .steps = 5, .progress = false}),
                    Catch::StartsWith("ember::sample: the energy gives a chain in a SIMD batch of") &&
                        Catch::Contains("write select(x[0] < 0, a, b)"));
  // The scalar path has nothing to mix, and runs.
  CHECK_NOTHROW(sample(mala(branching, {.step_size = 0.5}) | record(), {.chains = 4, .steps = 5, .progress = false},
                       backend::scalar{}));
  // The same energy with select, unqualified and qualified, runs and is right: E x₁ = √(2/π).
  auto selecting = custom_energy<2>([](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    return 0.5f * x[0] * x[0] + 0.5f * x[1] * x[1] + ember::select(x[1] < S(0.f), S(1e6f), S(0.f));
  });
  auto r = sample(mala(selecting, {.step_size = 0.8}) | burn_in(200) | record(),
                  {.chains = 256, .steps = 400, .seed = 3, .progress = false}, backend::cpu{});
  auto const s = r.summary();
  double const exact = std::sqrt(2 / 3.141592653589793);
  INFO("E x1 = " << s.dims[1].mean << " +- " << s.dims[1].mcse << ", exact " << exact);
  CHECK(std::abs(s.dims[1].mean - exact) < 5 * s.dims[1].mcse);
  // ember:: math called qualified on the batches ember runs compiles and agrees with each lane alone.
  using B = simd_batch<float>;
  constexpr int W = scalar_traits<B>::width;
  alignas(64) float in[W], out[W];
  for (int i = 0; i < W; ++i) in[i] = 0.1f + 0.3f * float(i);
  B const b = B::load_aligned(in);
  B const y = ember::exp(b) + ember::log(b) + ember::log1p(b) + ember::sqrt(b) + ember::tanh(b) + ember::abs(-b) +
              ember::select(b < B(1.f), b, B(0.f));
  y.store_aligned(out);
  for (int i = 0; i < W; ++i) {
    float const v = in[i];
    float const want = std::exp(v) + std::log(v) + std::log1p(v) + std::sqrt(v) + std::tanh(v) + v + (v < 1.f ? v : 0.f);
    CHECK(out[i] == Approx(want).epsilon(1e-5));
  }
}
