// Explicit Runge–Kutta tableaus against the closed-form solution of a linear ODE: the order of
// each method from the error ratio when the step halves, the order of Dormand–Prince's error
// estimate, and the adaptive integrator with lanes that finish at different times.
#include <ember/core/simd.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/integrator/butcher.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using ember::vec;

namespace {

// dy/dt = M y with M = [[−½, 1], [−1, −½]]: a damped rotation, y(t) = e^{−t/2} R(t) y₀ with
// R(t) = [[cos t, sin t], [−sin t, cos t]]. Linear, so every method's error is smooth in h.
struct damped_rotation {
  template <class S>
  vec<S, 2> operator()(S, vec<S, 2> const& y) const {
    using T = ember::element_t<S>;
    return {{S(T(-0.5)) * y[0] + y[1], -y[0] - S(T(0.5)) * y[1]}};
  }
};

vec<double, 2> exact(double t, vec<double, 2> y0) {
  double e = std::exp(-t / 2), c = std::cos(t), s = std::sin(t);
  return {{e * (c * y0[0] + s * y0[1]), e * (-s * y0[0] + c * y0[1])}};
}

// Global error at t = 2 with n steps.
template <class Method>
double global_error(int n) {
  vec<double, 2> y0{{1.0, 0.5}};
  auto y = ember::integrate<Method>(damped_rotation{}, 0.0, 2.0, y0, n);
  auto z = exact(2.0, y0);
  return std::hypot(y[0] - z[0], y[1] - z[1]);
}

}  // namespace

TEST_CASE("heun, rk4 and dopri5 converge at orders 2, 4 and 5 on a linear ODE", "[integrator][butcher]") {
  // The global error of an order-r method is C h^r (1 + O(h)): halving h divides it by 2^r up to
  // a relative O(h) term; at h = 2/40 and below that is a few percent. Band: ±10 %.
  for (int n : {40, 80}) {
    double heun = global_error<ember::heun>(n) / global_error<ember::heun>(2 * n);
    double rk4 = global_error<ember::rk4>(n) / global_error<ember::rk4>(2 * n);
    double dp5 = global_error<ember::dopri5>(n / 4) / global_error<ember::dopri5>(n / 2);
    INFO(n << " steps: ratios heun " << heun << ", rk4 " << rk4 << ", dopri5 " << dp5);
    CHECK(heun == Approx(4).epsilon(0.1));
    CHECK(rk4 == Approx(16).epsilon(0.1));
    CHECK(dp5 == Approx(32).epsilon(0.1));
  }
  CHECK(global_error<ember::rk4>(40) < 1e-6);
}

TEST_CASE("dopri5's embedded error estimate is the local error of a fourth-order method", "[integrator][butcher]") {
  // err = h Σ (bᵢ − b̂ᵢ) kᵢ = y₅ − y₄ is dominated by the fourth-order solution's local error,
  // C h⁵: halving h divides it by 32 (a wrong b̂ entry would leave an O(h) term: ratio ≈ 2).
  vec<double, 2> y0{{1.0, 0.5}};
  double prev = 0;
  for (double h : {0.2, 0.1, 0.05, 0.025}) {
    vec<double, 2> k[7], err;
    k[0] = damped_rotation{}(0.0, y0);
    auto y1 = ember::dopri5::step_with_error(damped_rotation{}, 0.0, y0, h, k, err);
    double e = std::hypot(err[0], err[1]);
    // The fifth-order solution's own local error is O(h⁶), far below the estimate.
    auto z = exact(h, y0);
    CHECK(std::hypot(y1[0] - z[0], y1[1] - z[1]) < 0.2 * e);
    if (prev > 0) CHECK(prev / e == Approx(32).epsilon(0.1));
    prev = e;
  }
  static_assert(ember::dopri5::first_same_as_last && !ember::rk4::first_same_as_last);
}

TEST_CASE("adaptive dopri5 brings every SIMD lane to its own end time within tolerance", "[integrator][butcher]") {
  using Bt = ember::simd_batch<double>;
  constexpr int W = int(Bt::size);
  alignas(64) double t1[W], y0a[W], y0b[W];
  for (int l = 0; l < W; ++l) {
    t1[l] = 0.5 + 1.5 * l;  // lanes end between t = 0.5 and 11: they finish after different step counts
    y0a[l] = 1.0 - 0.1 * l;
    y0b[l] = 0.5 + 0.05 * l;
  }
  vec<Bt, 2> y{{Bt::load_aligned(y0a), Bt::load_aligned(y0b)}};
  ember::adaptive_options o{.rtol = 1e-8, .atol = 1e-10, .initial_step = 0.01, .max_attempts = 500};
  auto rep = ember::integrate_adaptive(damped_rotation{}, Bt(0.0), Bt::load_aligned(t1), y, o);
  CHECK(xsimd::all(rep.done));
  for (int l = 0; l < W; ++l) {
    auto z = exact(t1[l], vec<double, 2>{{y0a[l], y0b[l]}});
    double err = std::hypot(y[0].get(std::size_t(l)) - z[0], y[1].get(std::size_t(l)) - z[1]);
    INFO("lane " << l << " to t = " << t1[l] << ": error " << err << ", " << rep.accepted.get(std::size_t(l))
                 << " accepted, " << rep.rejected.get(std::size_t(l)) << " rejected steps");
    // Local tolerance ~1e-8 relative per step, errors accumulating over at most ~100 steps.
    CHECK(err < 1e-6);
    // The same lane alone (scalar path) takes the same steps: a lane never depends on the others.
    vec<double, 2> ys{{y0a[l], y0b[l]}};
    auto rs = ember::integrate_adaptive(damped_rotation{}, 0.0, t1[l], ys, o);
    CHECK(rs.done);
    CHECK(rs.accepted == rep.accepted.get(std::size_t(l)));
    CHECK(ys[0] == Approx(y[0].get(std::size_t(l))).epsilon(1e-12));
  }
  // More distant end times take more steps.
  CHECK(rep.accepted.get(std::size_t(W - 1)) > rep.accepted.get(0) + 5);
}

TEST_CASE("adaptive integration stops after max_attempts and reports the lanes not done", "[integrator][butcher]") {
  vec<double, 2> y{{1.0, 0.5}};
  auto rep = ember::integrate_adaptive(damped_rotation{}, 0.0, 50.0, y,
                                       {.rtol = 1e-10, .atol = 1e-12, .initial_step = 0.01, .max_attempts = 20});
  CHECK_FALSE(rep.done);
  CHECK(rep.accepted + rep.rejected == 20);
}

TEST_CASE("rk4 on the gradient flow of a gaussian follows x(t) = mu + e^{-t/sigma^2}(x0 - mu)",
          "[integrator][butcher]") {
  ember::gaussian<double, 2, ember::covariance::diagonal> U(vec<double, 2>{{1.0, -1.0}}, vec<double, 2>{{0.5, 2.0}});
  ember::gradient_flow f{U};
  vec<double, 2> x0{{3.0, 2.0}};
  auto x = ember::integrate<ember::rk4>(f, 0.0, 1.5, x0, 200);
  CHECK(x[0] == Approx(1.0 + std::exp(-1.5 / 0.25) * 2.0).epsilon(1e-8));
  CHECK(x[1] == Approx(-1.0 + std::exp(-1.5 / 4.0) * 3.0).epsilon(1e-8));
}
