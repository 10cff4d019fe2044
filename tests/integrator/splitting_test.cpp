// Splittings as operator sequences: their compile-time properties, the Hamiltonian ones against
// the palindromic coefficient lists they generalise (bit for bit), and the lazy gradient rule.
#include <ember/ember.hpp>

#include "generic/sampler_checks.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ember;

namespace {

// A Gaussian that counts its evaluations (host only), to pin how many gradients a step costs.
struct counting_gaussian {
  using value_type = double;
  static constexpr int dim = 2;
  int* grads;
  int* values;
  gaussian<double, 2, covariance::diagonal> g{vec<double, 2>{{0.5, -1.0}}, vec<double, 2>{{1.0, 0.7}}};
  template <class S>
  S value(vec<S, 2> const& x) const {
    ++*values;
    return g.value(x);
  }
  template <class S>
  S value_and_grad(vec<S, 2> const& x, vec<S, 2>& out) const {
    ++*grads;
    return g.value_and_grad(x, out);
  }
};

template <class Split>
std::pair<int, int> evaluations_in(int steps) {
  int grads = 0, values = 0;
  counting_gaussian U{&grads, &values};
  chain_state<double, 2> s;
  s.x = vec<double, 2>{{1.0, 0.3}};
  s.energy = U.g.value_and_grad(s.x, s.grad);
  vec<double, 2> p{{0.2, -0.4}};
  auto ou = Split::template ou_coefficients_for<double>(0.1, 1.0, 1.0);
  auto noise = [](auto) { return vec<double, 2>{{0.3, -0.1}}; };
  for (int l = 0; l < steps; ++l) Split::step(U, s, p, 0.1, 1.0, ou, noise);
  // Whatever was evaluated, the state's energy is U at its position.
  CHECK(s.energy == Approx(U.g.value(s.x)).epsilon(1e-14));
  return {grads, values};
}

template <class Palindromic, class Split>
void same_trajectory_bit_for_bit() {
  gaussian<double, 3, covariance::diagonal> U(vec<double, 3>{{0.1, 0.2, -0.3}}, vec<double, 3>{{0.5, 1.0, 2.0}});
  chain_state<double, 3> a, b;
  a.x = b.x = vec<double, 3>{{1.0, -0.5, 0.25}};
  a.energy = U.value_and_grad(a.x, a.grad);
  b.energy = U.value_and_grad(b.x, b.grad);
  vec<double, 3> pa{{0.3, 0.1, -0.7}}, pb = pa;
  Palindromic::steps(U, a, pa, 0.13, 0.8, 25);
  Split::steps(U, b, pb, 0.13, 0.8, 25);
  for (int i = 0; i < 3; ++i) {
    CHECK(a.x[i] == b.x[i]);
    CHECK(pa[i] == pb[i]);
    CHECK(a.grad[i] == b.grad[i]);
  }
  CHECK(a.energy == b.energy);
}

constexpr double b1 = coefficients::mclachlan::b1;
constexpr double w0 = coefficients::yoshida::w0, w1 = coefficients::yoshida::w1;

}  // namespace

TEST_CASE("splittings know their operators, weights and costs at compile time", "[integrator][splitting]") {
  static_assert(baoab::size == 5 && baoab::drifts == 2 && baoab::kicks == 2 && baoab::noises == 1);
  static_assert(baoab::kind<0> == flow::kick && baoab::kind<2> == flow::friction);
  static_assert(baoab::weight<0> == 0.5 && baoab::weight<1> == 0.5 && baoab::weight<2> == 1.0);
  static_assert(obabo::weight<0> == 0.5 && obabo::weight<2> == 1.0);
  static_assert(splitting<B(1, 2), A, O, A, B(1, 2)>::weight<1> == 0.5);
  static_assert(splitting<B(1, 3), A, B(2, 3)>::weight<2> == 2.0 / 3);
  // One gradient per step for all of these in a run; ABOBA adds one energy-only evaluation.
  static_assert(baoab::gradients_per_step == 1 && baoab::values_per_step == 0);
  static_assert(obabo::gradients_per_step == 1 && obabo::values_per_step == 0);
  static_assert(aboba::gradients_per_step == 1 && aboba::values_per_step == 1);
  static_assert(splitting<B(b1), A(1, 2), B(1 - 2 * b1), A(1, 2), B(b1)>::gradients_per_step == 2);
  // Only O(w) core O(w) with a palindromic core can be Metropolis-adjusted.
  static_assert(obabo::adjustable && obabo::palindromic);
  static_assert(baoab::palindromic && !baoab::adjustable);
  static_assert(!splitting<O(1, 2), B(1, 3), A, B(2, 3), O(1, 2)>::adjustable);
  static_assert(!splitting<O(1, 4), B, A, B, O(3, 4)>::adjustable);
  SUCCEED();
}

TEST_CASE("a step evaluates a gradient only where a drift moved x since the last one", "[integrator][splitting]") {
  // BAOAB: the first half kick reuses the gradient the previous step left; 10 steps, 10 gradients.
  CHECK(evaluations_in<baoab>(10) == std::pair{10, 0});
  CHECK(evaluations_in<obabo>(10) == std::pair{10, 0});
  // ABOBA: the first kick follows a drift (a gradient), the second reuses it; the step ends on a
  // drift, and the next step drifts again before any kick reads a gradient: energy only.
  CHECK(evaluations_in<aboba>(10) == std::pair{10, 10});
  // Two kicks in a row, then a drift and a kick, then a drift: the cyclic count says 2 per step.
  using odd = splitting<B(1, 4), B(1, 4), A(1, 2), B(1, 2), A(1, 2), O>;
  static_assert(odd::gradients_per_step == 2);
  CHECK(evaluations_in<odd>(10).first == 20);
}

TEST_CASE("HMC's palindromic integrators are splittings, bit for bit", "[integrator][splitting]") {
  same_trajectory_bit_for_bit<velocity_verlet, splitting<B(1, 2), A, B(1, 2)>>();
  same_trajectory_bit_for_bit<mclachlan, splitting<B(b1), A(1, 2), B(1 - 2 * b1), A(1, 2), B(b1)>>();
  using yoshida_splitting =
      splitting<B(w1 / 2), A(w1), B((w0 + w1) / 2), A(w0), B((w0 + w1) / 2), A(w1), B(w1 / 2)>;
  same_trajectory_bit_for_bit<yoshida, yoshida_splitting>();
}

TEST_CASE("hmc_with a splitting draws what hmc with velocity_verlet draws", "[integrator][splitting][hmc]") {
  gaussian<float, 2, covariance::diagonal> U(vec<float, 2>{{0.f, 1.f}}, vec<float, 2>{{1.f, 2.f}});
  auto a = sample(hmc(U, {.step_size = 0.3, .integrator_steps = 5}) | record(), {.chains = 64, .steps = 20, .seed = 3},
                  backend::cpu{});
  auto b = sample(hmc_with<splitting<B(1, 2), A, B(1, 2)>>(U, {.step_size = 0.3, .integrator_steps = 5}) | record(),
                  {.chains = 64, .steps = 20, .seed = 3}, backend::cpu{});
  auto da = a.samples().data(), db = b.samples().data();
  REQUIRE(da.size() == db.size());
  for (std::size_t i = 0; i < da.size(); ++i) REQUIRE(da[i] == db[i]);
}

TEST_CASE("hmc_with a splitting takes the metric a warm-up adapts, diagonal or dense", "[integrator][splitting][hmc][statistics]") {
  // A correlated 10-dimensional Gaussian (eigenvalues 0.2 to 4.3): after warm-up, 300 more
  // transitions of HMC with an adapted metric relax any start far below the standard errors.
  ember_test::gaussian10 g;
  auto kernel = hmc_with<splitting<B(1, 2), A, B(1, 2)>>(g.energy(), {.integrator_steps = 6});
  auto diagonal = sample(kernel | warmup(400, step_size(), diagonal_mass()) | burn_in(300), {.chains = 10'000, .steps = 1, .seed = 13});
  ember_test::check_gaussian_moments<decltype(diagonal), 10>(diagonal, g.mu, g.sigma, ember_test::gaussian10::pairs());
  auto dense = sample(kernel | warmup(400, step_size(), dense_mass()) | burn_in(300), {.chains = 10'000, .steps = 1, .seed = 14});
  ember_test::check_gaussian_moments<decltype(dense), 10>(dense, g.mu, g.sigma, ember_test::gaussian10::pairs());
}

TEST_CASE("position Verlet (A B A) as a Hamiltonian splitting evaluates the energy once after L steps",
          "[integrator][splitting]") {
  using position_verlet = splitting<A(1, 2), B, A(1, 2)>;
  static_assert(position_verlet::gradients_per_step == 1 && position_verlet::values_per_step == 1);
  int grads = 0, values = 0;
  counting_gaussian U{&grads, &values};
  chain_state<double, 2> s;
  s.x = vec<double, 2>{{1.0, 0.3}};
  s.energy = U.g.value_and_grad(s.x, s.grad);
  vec<double, 2> p{{0.2, -0.4}};
  position_verlet::steps(U, s, p, 0.1, 1.0, 7);
  CHECK(grads == 7);
  CHECK(values == 1);
  CHECK(s.energy == Approx(U.g.value(s.x)).epsilon(1e-14));
  // Harmonic check of the scheme itself: A½ B A½ of the rotation is time reversible.
  for (auto& v : p.v) v = -v;
  position_verlet::steps(U, s, p, 0.1, 1.0, 7);
  CHECK(s.x[0] == Approx(1.0).margin(1e-12));
  CHECK(s.x[1] == Approx(0.3).margin(1e-12));
  CHECK(-p[0] == Approx(0.2).margin(1e-12));
}

TEST_CASE("the O operator's constants are e^{-gamma w h} and sqrt(m (1 - e^{-2 gamma w h}))",
          "[integrator][splitting]") {
  auto c = obabo::ou_coefficients_for<double>(0.2, 3.0, 2.0);
  CHECK(c.decay[0] == Approx(std::exp(-0.3)).epsilon(1e-15));
  CHECK(c.decay[1] == Approx(std::exp(-0.3)).epsilon(1e-15));
  CHECK(c.scale[0] == Approx(std::sqrt(2.0 * (1 - std::exp(-0.6)))).epsilon(1e-15));
  // Tiny γh keeps its precision (1 − e^{−2x} by expm1, not by subtraction).
  auto t = baoab::ou_coefficients_for<double>(1e-9, 1e-9, 1.0);
  CHECK(t.scale[0] == Approx(std::sqrt(2e-18)).epsilon(1e-9));
}
