// A kernel written outside the library (examples/07_custom_kernel.hpp: random-walk Metropolis)
// on energies that have value(x) only: it models TransitionKernel, runs on the SIMD and the
// scalar paths, and its final states have the target's moments (z-scores from
// generic/sampler_checks.hpp). Gradient-based kernels still refuse such energies.
#include "../../examples/07_custom_kernel.hpp"
#include "generic/sampler_checks.hpp"

namespace {

// E with its gradient hidden: only value(x) is left.
template <class E>
struct value_only {
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  E e;
  template <class S>
  EMBER_HD S value(ember::vec<S, dim> const& x) const {
    return e.value(x);
  }
};

using laplace_rwm = rwm_kernel<laplace_energy>;
static_assert(ember::Energy<laplace_energy> && !ember::DifferentiableEnergy<laplace_energy>);
static_assert(ember::TransitionKernel<laplace_rwm>);
static_assert(ember::position_state<float, 2>::slots == 3, "a gradient-free state stores x and U only");
// A kernel whose state keeps a gradient is not a transition kernel on a value-only energy.
static_assert(!ember::TransitionKernel<ember::mala_kernel<laplace_energy>>);
static_assert(ember::TransitionKernel<ember::mala_kernel<ember::harmonic<float, 2>>>);

// RWM (σ = 0.45) on gaussian10 without its gradient, from x₀ ~ N(0, I). Along an eigendirection
// of variance λ a random walk of acceptance α ≈ 0.4 relaxes in about λ / (α σ²) transitions
// times the dimension, at most ≈ 4.3 / 0.08 × 10 ≈ 530 for λ = 4.3: 6,000 transitions relax the
// start's bias by e^{-11}, far below the standard errors.
template <class Backend>
void check_rwm_gaussian_moments(Backend const& backend, std::int64_t chains) {
  ember_test::gaussian10 g;
  using E = decltype(g.energy());
  auto k = rwm_kernel<value_only<E>>{{g.energy()}, 0.45f};
  auto r = ember::sample(k | ember::burn_in(6'000), {.chains = chains, .steps = 1, .seed = 11}, backend);
  CHECK(r.acceptance_rate() > 0.2);
  ember_test::check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, ember_test::gaussian10::pairs());
}

}  // namespace

TEST_CASE("random-walk Metropolis on a value-only gaussian leaves it invariant", "[kernel][custom][statistics]") {
  check_rwm_gaussian_moments(ember::backend::cpu{}, 20'000);
}

TEST_CASE("random-walk Metropolis (scalar path) on a value-only gaussian leaves it invariant",
          "[kernel][custom][statistics]") {
  check_rwm_gaussian_moments(ember::backend::scalar{}, 4'000);
}

TEST_CASE("the example's random-walk Metropolis, tuned by a warm-up, samples its Laplace energy",
          "[kernel][custom][statistics]") {
  // Per coordinate E|x| = 1 and E x² = 2. The warm-up tunes σ from 1 towards acceptance 0.234
  // (σ ≈ 3); 500 transitions at that σ relax the N(0, I) start far below the standard errors.
  auto pipe = laplace_rwm{{}, 1.0f} | ember::warmup(500, ember::step_size()) | ember::burn_in(500);
  auto r = ember::sample(pipe, {.chains = 20'000, .steps = 1, .seed = 12});
  REQUIRE(r.divergent_chains() == 0);
  INFO("tuned step size " << r.adapted().step_size);
  CHECK(r.adapted().step_size > 2);
  for (int d = 0; d < 2; ++d) {
    double const z_abs = ember_test::z_of_mean(r, [d](auto x) { return std::abs(double(x[d])); }, 1.0);
    double const z_sq = ember_test::z_of_mean(r, [d](auto x) { return double(x[d]) * double(x[d]); }, 2.0);
    double const z_mean = ember_test::z_of_mean(r, [d](auto x) { return double(x[d]); }, 0.0);
    INFO("dimension " << d << ": z of E|x| " << z_abs << ", of E x^2 " << z_sq << ", of E x " << z_mean);
    CHECK(std::abs(z_abs) < ember_test::z_bound);
    CHECK(std::abs(z_sq) < ember_test::z_bound);
    CHECK(std::abs(z_mean) < ember_test::z_bound);
  }
}
