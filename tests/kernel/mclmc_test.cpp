// Unadjusted MCLMC (kernel/mclmc.hpp): a biased kernel, so its law is checked at two step sizes
// on a correlated Gaussian from exact draws: small enough that its O(ε²) bias is far below the
// Monte-Carlo error (moments within it, under the scalar, a diagonal and a dense metric), and
// large enough that the bias shows (the same check must then fail: there is no hidden accept
// step); `mclmc(U) | mams_warmup(n)` end to end against the eight schools reference; the
// step size's target; the counters; what it refuses.
#include "generic/sampler_checks.hpp"
#include "support/counted_energy.hpp"
#include <ember/ember.hpp>
#include <ember/targets/eight_schools.hpp>

#include <array>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace {

using namespace ember;
using ember_test::gaussian10;

// 40,000 chains from exact draws, `transitions` transitions of the kernel: the final states.
template <class Kernel, class Backend = backend::cpu>
auto from_exact_draws(Kernel const& k, std::int64_t transitions, std::uint64_t seed, Backend const& backend = {}) {
  gaussian10 g;
  std::int64_t const chains = 40'000;
  return sample(k | burn_in(transitions - 1),
                {.chains = chains, .steps = 1, .seed = seed, .init = g.exact_draws(chains, seed)}, backend);
}

}  // namespace

TEST_CASE("mclmc at a small step size keeps a correlated gaussian (scalar, diagonal and dense metrics)",
          "[kernel][mclmc][statistics]") {
  // At ε = 0.25 (L = 2.5: 10 steps a transition, 30 transitions) the variance bias, which scales
  // as ε² (−2 to −3 % at the ε ≈ 3.2 its warm-up picks here), is about 2·10⁻⁴, a fortieth of the
  // 0.7 % Monte-Carlo error of 40,000 independent chains.
  gaussian10 g;
  auto const r = from_exact_draws(mclmc(g.energy(), {.step_size = 0.25, .trajectory_length = 2.5}), 30, 41);
  CHECK(r.divergent_transitions() == 0);
  ember_test::check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());

  diagonal_metric<float, 10> diag;
  for (int i = 0; i < 10; ++i) diag.scale[i] = float(std::sqrt(g.sigma[i][i]));
  auto const d = from_exact_draws(mclmc(g.energy(), {.step_size = 0.25, .trajectory_length = 2.5}).with_metric(diag), 30, 42,
                                  backend::scalar{});
  ember_test::check_gaussian_moments<decltype(d), 10>(d, g.mu, g.sigma, gaussian10::pairs());

  auto const l = g.cholesky();
  dense_metric<float, 10> dense{};
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j <= i; ++j) dense.lower[i * (i + 1) / 2 + j] = float(l[i][j]);
  auto const w = from_exact_draws(mclmc(g.energy(), {.step_size = 0.4, .trajectory_length = 4}).with_metric(dense), 30, 43);
  ember_test::check_gaussian_moments<decltype(w), 10>(w, g.mu, g.sigma, gaussian10::pairs());
}

TEST_CASE("mclmc at a large step size is visibly biased: no accept step hides in it", "[kernel][mclmc][statistics]") {
  // ε = 4 on this Gaussian (MAMS's own warm-up picks about 4.1): a variance shrinks by about 8 %,
  // 12 Monte-Carlo errors (z = −11.8 at this seed). The adjusted kernel at the same ε and L is exact.
  gaussian10 g;
  auto const biased = from_exact_draws(mclmc(g.energy(), {.step_size = 4, .trajectory_length = 4}), 30, 44);
  auto const exact = from_exact_draws(adjusted_mclmc(g.energy(), {.step_size = 4, .trajectory_length = 4}), 30, 44);
  ember_test::final_moments<decltype(biased)> m{biased};
  double worst = 0;
  for (int i = 0; i < 10; ++i)
    worst = std::min(worst, ember_test::z_variance(m.cov(i, i), g.sigma[i][i], double(biased.chains())));
  INFO("most negative z of a variance: " << worst);
  CHECK(worst < -ember_test::z_bound);
  ember_test::check_gaussian_moments<decltype(exact), 10>(exact, g.mu, g.sigma, gaussian10::pairs());
}

TEST_CASE("mclmc with mams_warmup matches the eight schools quadrature reference", "[kernel][mclmc][statistics]") {
  targets::eight_schools<double> t;
  auto r = sample(mclmc(t.energy()) | mams_warmup(1000) | record(), {.chains = 8, .steps = 2000, .seed = 37});
  auto const s = r.summary();
  auto const ref = t.reference();
  CHECK(r.divergent_chains() == 0);
  CHECK(r.warmup_gradients() > 0);
  CHECK(std::isnan(r.target_acceptance()));  // unadjusted: no acceptance to hold against a target
  CHECK(r.acceptance_rate() == 1);
  double const z = (s.dims[0].mean - ref.mean[0]) / s.dims[0].mcse;
  INFO("mu: mean " << s.dims[0].mean << ", reference " << ref.mean[0] << ", z = " << z);
  CHECK(std::abs(z) < ember_test::z_bound);
  for (auto const& row : s.dims) CHECK(row.rhat < 1.01);
  // Its per-step target is stricter than MAMS's 0.9 over a trajectory: a smaller step.
  auto m = sample(mams(t.energy()) | record(), {.chains = 8, .steps = 200, .seed = 37});
  CHECK(r.adapted().step_size < m.adapted().step_size);
  CHECK(r.adapted().trajectory_length > r.adapted().step_size);
}

TEST_CASE("mclmc's step-size target is 2Φ(−√(5·10⁻⁴ d)/2)", "[kernel][mclmc]") {
  for (int d : {2, 10, 100, 1000})
    CHECK(detail::mclmc_target_acceptance(d) == Approx(std::erfc(std::sqrt(5e-4 * d) / 2 / std::sqrt(2.0))).epsilon(1e-12));
  CHECK(mclmc_kernel<gaussian<double, 10, covariance::isotropic>>::target_acceptance ==
        Approx(0.971796).epsilon(1e-5));
}

TEST_CASE("mclmc counts what it did: gradients, the cap, divergences", "[kernel][mclmc]") {
  gaussian<float, 4, covariance::isotropic> U(vec<float, 4>{}, 1.0f);
  std::int64_t const chains = 37, steps = 64;  // a partial last SIMD batch
  SECTION("⌈L/ε⌉ McLachlan steps of two gradients each, every transition kept") {
    auto r = sample(mclmc(U, {.step_size = 0.3, .trajectory_length = 1.0}) | record(), {.chains = chains, .steps = steps, .seed = 1});
    CHECK(r.gradients() == 2 * 4 * chains * steps);
    CHECK(r.acceptance_rate() == 1);
    CHECK(r.divergent_transitions() == 0);
    CHECK(r.truncated_transitions() == 0);
    // The energy's own count agrees: 64 transitions more cost 2·4 evaluations a chain each
    // (the difference of two runs leaves out the start's evaluations).
    std::int64_t n64 = 0, n128 = 0;
    sample(mclmc(ember_test::counted_energy<decltype(U)>{U, &n64}, {.step_size = 0.3, .trajectory_length = 1.0}),
           {.chains = chains, .steps = steps, .seed = 1}, backend::scalar{.threads = 1});
    sample(mclmc(ember_test::counted_energy<decltype(U)>{U, &n128}, {.step_size = 0.3, .trajectory_length = 1.0}),
           {.chains = chains, .steps = 2 * steps, .seed = 1}, backend::scalar{.threads = 1});
    CHECK(n128 - n64 == 2 * 4 * chains * steps);
  }
  SECTION("the cap bounds the steps of a transition, and a run counts the transitions it cut") {
    auto r = sample(mclmc(U, {.step_size = 0.01, .trajectory_length = 1, .max_integrator_steps = 20}) | record(),
                    {.chains = chains, .steps = steps, .seed = 3});
    CHECK(r.gradients() == 2 * 20 * chains * steps);
    CHECK(r.truncated_transitions() == chains * steps);
  }
  SECTION("a step past float's range diverges, counted") {
    auto r = sample(mclmc(U, {.step_size = 1e30, .trajectory_length = 1e30}) | record(), {.chains = chains, .steps = steps, .seed = 4});
    CHECK(r.divergent_chains() == chains);
  }
}

TEST_CASE("mclmc's refresh forgets the velocity at the rate its ν sets", "[kernel][mclmc][statistics]") {
  // On a nearly flat energy (sd 10⁶: a kick turns u by about 10⁻⁷) the velocity changes by the
  // refresh alone, so after one transition of n = ⌈L/ε⌉ = 5 steps E[u₀·u₅] is that of the
  // recursion u ← normalise(u + νz), ν = √((e^{2ε/L} − 1)/d), with a fresh z each step. It is
  // compared with an independent simulation of the recursion, within both Monte-Carlo errors; two
  // wrong refreshes (twice ν; one z for all five steps) are then as many errors away as they must be.
  constexpr int D = 10;
  constexpr std::int64_t N = 20'000;
  gaussian<double, D, covariance::isotropic> U(vec<double, D>{}, 1e6);
  double const eps = 0.1, L = 0.5, nu = std::sqrt(std::expm1(2 * eps / L) / D);
  auto const k = mclmc(U, {.step_size = eps, .trajectory_length = L});
  REQUIRE(k.steps_per_transition() == 5);
  double m = 0, q = 0;
  for (std::int64_t c = 0; c < N; ++c) {
    auto s = k.init(vec<double, D>{}, make_chain_rng<double>(7, std::uint32_t(c), 0));
    auto const u0 = s.p;
    k.step(s, make_chain_rng<double>(7, std::uint32_t(c), 1));
    double dot = 0;
    for (int i = 0; i < D; ++i) dot += u0[i] * s.p[i];
    m += dot / N;
    q += dot * dot / N;
  }
  auto simulate = [&](double scale, bool one_z, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> z;
    double sm = 0, sq = 0;
    for (std::int64_t c = 0; c < N; ++c) {
      std::array<double, D> u0{}, u{}, w{};
      double n2 = 0;
      for (auto& x : u0) {
        x = z(g);
        n2 += x * x;
      }
      for (auto& x : u0) x /= std::sqrt(n2);
      u = u0;
      for (auto& x : w) x = z(g);
      for (int l = 0; l < 5; ++l) {
        n2 = 0;
        for (int i = 0; i < D; ++i) {
          u[i] += scale * nu * (one_z ? w[i] : z(g));
          n2 += u[i] * u[i];
        }
        for (auto& x : u) x /= std::sqrt(n2);
      }
      double dot = 0;
      for (int i = 0; i < D; ++i) dot += u0[i] * u[i];
      sm += dot / N;
      sq += dot * dot / N;
    }
    return std::pair{sm, sq - sm * sm};
  };
  auto z_against = [&](std::pair<double, double> ref) { return (m - ref.first) / std::sqrt((q - m * m + ref.second) / N); };
  double const right = z_against(simulate(1, false, 8)), wide = z_against(simulate(2, false, 9)),
               same = z_against(simulate(1, true, 10));
  INFO("E[u0.u5] = " << m << "; z against the recursion " << right << ", against 2ν " << wide << ", against one z " << same);
  CHECK(std::abs(right) < ember_test::z_bound);
  CHECK(std::abs(wide) > 4 * ember_test::z_bound);
  CHECK(std::abs(same) > 4 * ember_test::z_bound);
}

TEST_CASE("mclmc refuses what it cannot run", "[kernel][mclmc]") {
  gaussian<double, 2, covariance::isotropic> U(vec<double, 2>{}, 1.0);
  CHECK_THROWS_WITH(mclmc(U, {.step_size = 0.1, .trajectory_length = -1}), Catch::Contains("trajectory length"));
  CHECK_THROWS_WITH(mclmc(U, {.step_size = -1, .trajectory_length = 1}), Catch::Contains("step size"));
  CHECK_THROWS_WITH(mclmc(U, {.mass = 0}), Catch::Contains("mass"));
  CHECK_THROWS_WITH(sample(mclmc(U, {.step_size = 0.1}), {.chains = 4, .steps = 1}), Catch::Contains("mclmc(U) | mams_warmup(n)"));
  CHECK_THROWS_WITH(sample(mclmc(U) | mams_warmup(10), {.chains = 1, .steps = 1}), Catch::Contains("at least 2 chains"));
}
