// Splitting integrators against the harmonic oscillator's exact leapfrog map and analytic
// trajectory, energy-error order on a Gaussian, and time reversibility.
#include <ember/energy/gaussian.hpp>
#include <ember/energy/harmonic.hpp>
#include <ember/integrator/palindromic.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using ember::vec;

namespace {

// Runs L steps of `Integrator` from (x, p) on U and returns the final state; p is updated.
template <class Integrator, class E>
ember::chain_state<double, E::dim> run(E const& U, vec<double, E::dim> x, vec<double, E::dim>& p, double eps, int L,
                                       double inv_mass = 1) {
  ember::chain_state<double, E::dim> s;
  s.x = x;
  s.energy = U.value_and_grad(s.x, s.grad);
  Integrator::steps(U, s, p, eps, inv_mass, L);
  return s;
}

template <int D>
double kinetic(vec<double, D> const& p, double inv_mass = 1) {
  double k = 0;
  for (int i = 0; i < D; ++i) k += p[i] * p[i];
  return 0.5 * inv_mass * k;
}

// A 10-dimensional Gaussian with scales from 0.5 to 2 (so the stiffest direction has ε/σ = 2ε).
ember::gaussian<double, 10, ember::covariance::diagonal> gaussian10() {
  vec<double, 10> mu, sigma;
  for (int i = 0; i < 10; ++i) {
    mu[i] = 0.1 * i;
    sigma[i] = 0.5 + 1.5 * i / 9.0;
  }
  return {mu, sigma};
}

// |ΔH| after integrating a fixed time T = 1 with step eps from a fixed start.
template <class Integrator>
double energy_error(double eps) {
  auto U = gaussian10();
  vec<double, 10> x, p;
  for (int i = 0; i < 10; ++i) {
    x[i] = 1.0 - 0.15 * i;
    p[i] = 0.3 + 0.1 * i;
  }
  double h0 = U.value(x) + kinetic(p);
  int L = int(std::lround(1.0 / eps));
  auto s = run<Integrator>(U, x, p, eps, L);
  return std::abs(s.energy + kinetic(p) - h0);
}

}  // namespace

TEST_CASE("velocity_verlet on the harmonic oscillator is the exact leapfrog rotation to rounding",
          "[integrator][velocity_verlet]") {
  ember::harmonic<double, 1> U;
  for (double eps : {0.3, 0.1, 0.01}) {
    int const L = 1000;
    vec<double, 1> p{{0.25}};
    auto s = run<ember::velocity_verlet>(U, vec<double, 1>{{1.0}}, p, eps, L);
    // One leapfrog step of ẍ = −x is linear: x' = c x + ε p, p' = −ε(1 − ε²/4) x + c p with
    // c = cos θ = 1 − ε²/2. Iterate it in long double.
    long double X = 1.0L, P = 0.25L, c = 1 - (long double)eps * eps / 2;
    for (int l = 0; l < L; ++l) {
      long double x1 = c * X + (long double)eps * P;
      long double p1 = -(long double)eps * (1 - (long double)eps * eps / 4) * X + c * P;
      X = x1;
      P = p1;
    }
    // Rounding: a few ε_double per step, growing at most linearly over L steps of a rotation.
    double tol = 8.0 * L * std::numeric_limits<double>::epsilon();
    INFO("eps = " << eps);
    CHECK(std::abs(s.x[0] - double(X)) <= tol);
    CHECK(std::abs(p[0] - double(P)) <= tol);
    CHECK(s.energy == Approx(0.5 * s.x[0] * s.x[0]));
    CHECK(s.grad[0] == s.x[0]);
  }
}

TEST_CASE("velocity_verlet follows x(t) = cos t to second order in the step", "[integrator][velocity_verlet]") {
  // From x = 1, p = 0 the leapfrog gives x_n = cos(nθ), cos θ = 1 − ε²/2, so θ = ε(1 + ε²/24 + O(ε⁴))
  // and |x_n − cos t| ≈ |sin t| · t ε²/24 at t = nε.
  ember::harmonic<double, 1> U;
  double const t = 2.0;
  double prev = 0;
  for (double eps : {0.2, 0.1, 0.05, 0.025}) {
    vec<double, 1> p{{0.0}};
    auto s = run<ember::velocity_verlet>(U, vec<double, 1>{{1.0}}, p, eps, int(std::lround(t / eps)));
    double err = std::abs(s.x[0] - std::cos(t));
    double predicted = std::abs(std::sin(t)) * t * eps * eps / 24;
    INFO("eps = " << eps << ": error " << err << ", predicted " << predicted);
    // The next term is O(ε⁴) relative to ε²: within 5% for ε ≤ 0.2.
    CHECK(err == Approx(predicted).epsilon(0.05));
    CHECK(std::abs(p[0] + std::sin(t)) <= 2 * predicted + eps * eps);  // p_n = −sin(nθ)·√(1 − ε²/4)
    if (prev > 0) CHECK(prev / err == Approx(4).epsilon(0.05));
    prev = err;
  }
}

TEST_CASE("the energy error of HMC's integrators shrinks with the step at their order", "[integrator]") {
  // A palindromic integrator of order r conserves a modified Hamiltonian H̃ = H + ε^r H_r + …, so
  // over a fixed time ΔH = ε^r (H_r(start) − H_r(end)) (1 + O(ε²)): halving ε divides |ΔH| by
  // 2^r up to a relative O(ε²/σ_min²) term, ≤ 4·(2·0.05)² ≈ 4% here. Band: ±15% of 2^r.
  double const eps[] = {0.05, 0.025, 0.0125};
  for (int i = 0; i + 1 < 3; ++i) {
    double vv = energy_error<ember::velocity_verlet>(eps[i]) / energy_error<ember::velocity_verlet>(eps[i + 1]);
    double mc = energy_error<ember::mclachlan>(eps[i]) / energy_error<ember::mclachlan>(eps[i + 1]);
    double yo = energy_error<ember::yoshida>(eps[i]) / energy_error<ember::yoshida>(eps[i + 1]);
    INFO("eps " << eps[i] << ": ratios velocity_verlet " << vv << ", mclachlan " << mc << ", yoshida " << yo);
    CHECK(vv == Approx(4).epsilon(0.15));
    CHECK(mc == Approx(4).epsilon(0.15));
    CHECK(yo == Approx(16).epsilon(0.15));
  }
  // McLachlan's point is a smaller error constant than two velocity Verlet steps of half the size.
  CHECK(energy_error<ember::mclachlan>(0.05) < energy_error<ember::velocity_verlet>(0.025));
}

TEST_CASE("palindromic integrators are time reversible", "[integrator]") {
  auto U = gaussian10();
  vec<double, 10> x0, p;
  for (int i = 0; i < 10; ++i) {
    x0[i] = 0.5 - 0.1 * i;
    p[i] = 1.0 - 0.2 * i;
  }
  auto p0 = p;
  auto s = run<ember::yoshida>(U, x0, p, 0.1, 30, 0.5);
  for (auto& v : p.v) v = -v;
  auto back = run<ember::yoshida>(U, s.x, p, 0.1, 30, 0.5);
  for (int i = 0; i < 10; ++i) {
    CHECK(back.x[i] == Approx(x0[i]).margin(1e-12));
    CHECK(-p[i] == Approx(p0[i]).margin(1e-12));
  }
  static_assert(ember::velocity_verlet::gradients_per_step == 1);
  static_assert(ember::mclachlan::gradients_per_step == 2);
  static_assert(ember::yoshida::gradients_per_step == 3);
}
