// NUTS (kernel/nuts.hpp): exact invariance on a correlated Gaussian from exact draws, under the
// scalar, a diagonal and a dense metric, on a SIMD batch and one chain at a time; a non-Gaussian
// target against quadrature; the counters (gradients, truncated trees, divergences) on cases
// built to give known values; the warm-up end to end against a quadrature reference.
#include "generic/sampler_checks.hpp"
#include <ember/ember.hpp>
#include <ember/targets/eight_schools.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace {

using namespace ember;
using ember_test::gaussian10;

template <class Kernel, class Backend>
void check_invariance(Kernel const& k, Backend const& backend, std::uint64_t seed) {
  gaussian10 g;
  std::int64_t const chains = 40'000;
  auto r = sample(k | burn_in(2), {.chains = chains, .steps = 1, .seed = seed, .init = g.exact_draws(chains, seed)}, backend);
  CHECK(r.divergent_transitions() == 0);
  CHECK(r.truncated_transitions() == 0);
  // Gradients: at least one leaf per transition, at most 2^10 − 1.
  CHECK(r.gradients() >= 3 * chains);
  CHECK(r.gradients() <= 3 * chains * 1023);
  ember_test::check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

}  // namespace

TEST_CASE("nuts leaves a correlated gaussian invariant (scalar metric; SIMD batch and one chain at a time)",
          "[kernel][nuts][statistics]") {
  gaussian10 g;
  // A small step (deep trees, many sub-tree U-turn checks) and a large one (shallow trees,
  // rejections within the tree's weights).
  check_invariance(nuts(g.energy(), {.step_size = 0.15}), backend::cpu{}, 21);
  check_invariance(nuts(g.energy(), {.step_size = 0.7}), backend::cpu{}, 22);
  check_invariance(nuts(g.energy(), {.step_size = 0.4}), backend::scalar{}, 23);
}

TEST_CASE("nuts leaves a correlated gaussian invariant under a diagonal and a dense metric", "[kernel][nuts][statistics]") {
  gaussian10 g;
  auto const k = nuts(g.energy(), {.step_size = 0.5});
  diagonal_metric<float, 10> diag;
  for (int i = 0; i < 10; ++i) diag.scale[i] = float(std::sqrt(g.sigma[i][i]));
  check_invariance(k.with_metric(diag), backend::cpu{}, 24);
  // The whitened U-turn criterion (Σv)·v is exact for any factor L of M⁻¹: Σ's own here, so the
  // target looks like N(0, I) to the dynamics.
  auto const l = g.cholesky();
  dense_metric<float, 10> dense{};
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j <= i; ++j) dense.lower[i * (i + 1) / 2 + j] = float(l[i][j]);
  check_invariance(nuts(g.energy(), {.step_size = 0.9}).with_metric(dense), backend::cpu{}, 25);
}

TEST_CASE("nuts on the double well matches quadrature of exp(-U), crossing the barrier", "[kernel][nuts][statistics]") {
  auto starts = ember_test::right_well_starts(20'000);
  auto r = sample(nuts(double_well<float, 2>{}, {.step_size = 0.1}) | burn_in(300),
                  {.chains = 20'000, .steps = 1, .seed = 26, .init = starts});
  ember_test::check_double_well_moments(r);
}

TEST_CASE("nuts counts what its trees did: gradients, trees stopped at the maximum depth, divergences",
          "[kernel][nuts]") {
  gaussian<float, 4, covariance::isotropic> U(vec<float, 4>{}, 1.0f);
  std::int64_t const chains = 37, steps = 50;  // a partial last SIMD batch
  SECTION("a tiny step cannot turn within 2^3 − 1 steps: every tree stops at depth 3") {
    auto r = sample(nuts(U, {.step_size = 1e-3, .max_tree_depth = 3}) | record(), {.chains = chains, .steps = steps, .seed = 1});
    CHECK(r.gradients() == 7 * chains * steps);
    CHECK(r.truncated_transitions() == chains * steps);
    CHECK(r.divergent_transitions() == 0);
    auto const s = r.summary();
    bool warned = false;
    for (auto const& w : s.warnings()) warned = warned || w.find("trajectory cap") != std::string::npos;
    CHECK(warned);
  }
  SECTION("a huge step diverges at the first leaf: one gradient, the chain stays") {
    auto const starts = std::vector<vec<float, 4>>(std::size_t(chains), vec<float, 4>{{0.5f, -0.5f, 1.f, 0.f}});
    auto r = sample(nuts(U, {.step_size = 40}) | record(), {.chains = chains, .steps = steps, .seed = 2, .init = starts});
    CHECK(r.gradients() == chains * steps);
    CHECK(r.divergent_transitions() == chains * steps);
    CHECK(r.acceptance_rate() == 0);
    CHECK(r.final_state(5)[2] == 1.f);
  }
  SECTION("a well-sized step: trees turn on their own, none truncated, no divergence") {
    auto r = sample(nuts(U, {.step_size = 0.5}) | record(), {.chains = chains, .steps = steps, .seed = 3});
    CHECK(r.truncated_transitions() == 0);
    CHECK(r.divergent_transitions() == 0);
    double const per = double(r.gradients()) / double(chains * steps);
    // Half a period of the unit oscillator is π, about 6 steps of 0.5: trees of depth 2 to 4.
    CHECK(per > 3);
    CHECK(per < 15);
    CHECK(r.acceptance_rate() > 0.9);  // chains that moved
  }
}

TEST_CASE("nuts's lanes at their own pace (asked, or chosen by timing) give the lock-step draws and counts bit for bit, in pieces and beside any chains",
          "[kernel][nuts][simd]") {
  // Scales 0.1 to 3 under a scalar metric: trees of 2 to 7 doublings, different in every lane,
  // so that lanes run ahead of each other by many transitions. The energy is not finite below
  // x₂ = −10, where one chain starts: frozen from its start in both loops.
  auto const U = custom_energy<3>([](auto const& x) {
    auto const a = (x[0] - 0.5f) * 10.f, b = x[1] + 1.f, c = (x[2] - 2.f) / 3.f;
    return 0.5f * (a * a + b * b + c * c) + 1e-3f * log(x[2] + 10.f);
  });
  std::int64_t const chains = 37;  // a partial last batch
  std::vector<vec<float, 3>> starts(48, vec<float, 3>{{0.f, 0.f, 0.f}});
  for (std::size_t c = 0; c < starts.size(); ++c) starts[c][0] = 0.01f * float(c);
  starts[5][2] = -20.f;
  auto run = [&](std::optional<bool> own_pace, std::int64_t n, std::vector<std::int64_t> const& pieces,
                 backend::cpu be = {}) {
    auto pipe = nuts(U, {.step_size = 0.04, .own_pace = own_pace}) | burn_in(7) | thin(3) | record() | track(moments);
    auto r = start(pipe, {.chains = n, .seed = 41, .init = std::span(starts.data(), std::size_t(n))}, be);
    for (auto p : pieces) r.advance(p);
    return r.result();
  };
  auto const lock = run(false, chains, {157});
  REQUIRE(lock.divergent(5));
  // In pieces, on 1 to 3 threads, and with blocks of two batches: a run that tracks sums shares
  // each block's chains out over its lanes (blocks of one batch by default here, of two below).
  std::vector<std::vector<std::int64_t>> const piecings = {{157}, {1, 40, 116}, {7, 150}, {157}, {60, 97}};
  std::vector<backend::cpu> const backends = {{}, {}, {}, {.threads = 3, .block = 2 * std::int64_t(simd_batch<float>::size)},
                                              {.threads = 1, .block = 2 * std::int64_t(simd_batch<float>::size)}};
  for (std::size_t p = 0; p < piecings.size(); ++p) {
    auto const lanes = run(true, chains, piecings[p], backends[p]);
    INFO("pieces " << p);
    REQUIRE(lanes.kept() == lock.kept());
    CHECK(lanes.gradients() == lock.gradients());
    CHECK(lanes.acceptance_rate() == lock.acceptance_rate());
    // (A NUTS chain freezes only at its start: its draw is always a point of the trajectory whose
    // energy was finite, a leaf that is not finite having weight 0.)
    for (std::int64_t c = 0; c < chains; ++c) {
      CHECK(lanes.accepted(c) == lock.accepted(c));
      CHECK(lanes.divergent(c) == lock.divergent(c));
    }
    CHECK(lanes.truncated_transitions() == lock.truncated_transitions());
    CHECK(lanes.divergent_transitions() == lock.divergent_transitions());
    for (std::int64_t c = 0; c < chains; ++c)
      for (std::int64_t k = 0; k < lock.kept(); ++k)
        for (int d = 0; d < 3; ++d) REQUIRE(std::bit_cast<std::uint32_t>(lanes.samples()(k, c, d)) ==
                                            std::bit_cast<std::uint32_t>(lock.samples()(k, c, d)));
    // Tracked sums: the same n terms (one a live chain) added in double in another grouping of
    // lanes, so each sum differs by at most 2(n − 1)·u·Σ|xᵢ| (u the double unit roundoff, both
    // orders counted), and a mean by 2(n − 1)·u·mean|x| ≤ 2(n − 1)·u·√(mean x²).
    auto const& a = lanes.trace();
    auto const& b = lock.trace();
    REQUIRE(a.mean.size() == b.mean.size());
    double const u = std::numeric_limits<double>::epsilon() / 2;
    for (std::size_t k = 0; k < a.mean.size(); ++k) {
      REQUIRE(a.live_chains[k] == b.live_chains[k]);
      double const n = double(b.live_chains[k]);
      for (int d = 0; d < 3; ++d) {
        double const rms = std::sqrt(b.variance[k][d] + b.mean[k][d] * b.mean[k][d]);
        CHECK(std::abs(a.mean[k][d] - b.mean[k][d]) <= 2 * (n - 1) * u * rms);
      }
    }
  }
  // Left to choose, a run that tracks nothing times up to 64 transitions in each loop at the start
  // of its first sampling chunk of at least 64, and keeps the faster: the same draws either way.
  {
    auto pipe = nuts(U, {.step_size = 0.04}) | burn_in(7) | thin(3) | record();
    auto measured = start(pipe, {.chains = chains, .seed = 41, .init = std::span(starts.data(), std::size_t(chains))});
    auto const kernel_before = measured.kernel();
    CHECK(kernel_before.measure_pace);
    measured.advance(30);   // under 64 transitions: not measured
    measured.advance(127);  // measured: 63 in lock-step, 63 at own pace, the last the faster way
    auto const r = measured.result();
    CHECK(r.gradients() == lock.gradients());
    for (std::int64_t c = 0; c < chains; ++c)
      for (std::int64_t k = 0; k < lock.kept(); ++k)
        for (int d = 0; d < 3; ++d) REQUIRE(std::bit_cast<std::uint32_t>(r.samples()(k, c, d)) ==
                                            std::bit_cast<std::uint32_t>(lock.samples()(k, c, d)));
  }
  // A chain's draws do not depend on the chains beside it (48: whole batches; from the default
  // start, as a run from `.init` mixes the starts into its stream key), nor on the lane or thread
  // that ran it: without tracked sums every thread's lanes take up chains from one pool, in an
  // order that depends on timing.
  auto pipe = nuts(U, {.step_size = 0.04, .own_pace = true}) | burn_in(7) | thin(3) | record();
  auto const few = sample(pipe, {.chains = chains, .steps = 150, .seed = 42});
  auto const more = sample(pipe, {.chains = 48, .steps = 150, .seed = 42});
  auto const locked = sample(nuts(U, {.step_size = 0.04, .own_pace = false}) | burn_in(7) | thin(3) | record(),
                             {.chains = chains, .steps = 150, .seed = 42});
  // 37 chains on one or two threads of 4 to 16 lanes: lanes take up second chains.
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    auto const pooled = sample(pipe, {.chains = chains, .steps = 150, .seed = 42}, backend::cpu{.threads = threads});
    CHECK(pooled.gradients() == locked.gradients());
    for (std::int64_t c = 0; c < chains; ++c) {
      CHECK(pooled.accepted(c) == locked.accepted(c));
      CHECK(pooled.divergent(c) == locked.divergent(c));
      for (std::int64_t k = 0; k < few.kept(); ++k)
        for (int d = 0; d < 3; ++d)
          REQUIRE(std::bit_cast<std::uint32_t>(pooled.samples()(k, c, d)) ==
                  std::bit_cast<std::uint32_t>(locked.samples()(k, c, d)));
    }
  }
  CHECK(few.gradients() == locked.gradients());
  for (std::int64_t c = 0; c < chains; ++c)
    for (std::int64_t k = 0; k < few.kept(); ++k)
      for (int d = 0; d < 3; ++d) {
        REQUIRE(more.samples()(k, c, d) == few.samples()(k, c, d));
        REQUIRE(std::bit_cast<std::uint32_t>(few.samples()(k, c, d)) == std::bit_cast<std::uint32_t>(locked.samples()(k, c, d)));
      }
}

TEST_CASE("nuts with its warm-up matches the eight schools quadrature reference", "[kernel][nuts][statistics]") {
  targets::eight_schools<double> t;
  auto r = sample(nuts(t.energy()) | warmup(1000) | record(), {.chains = 8, .steps = 1500, .seed = 27});
  auto const s = r.summary();
  auto const ref = t.reference();
  CHECK(r.divergent_chains() == 0);
  CHECK(r.truncated_transitions() == 0);
  CHECK(r.warmup_gradients() > 0);
  CHECK(std::isnan(r.target_acceptance()));  // NUTS's acceptance is of transitions that moved
  // μ is sampled directly (coordinate 0): its mean within 5 MCSE of the quadrature.
  double const z = (s.dims[0].mean - ref.mean[0]) / s.dims[0].mcse;
  INFO("mu: mean " << s.dims[0].mean << ", reference " << ref.mean[0] << ", z = " << z);
  CHECK(std::abs(z) < ember_test::z_bound);
  for (auto const& row : s.dims) CHECK(row.rhat < 1.01);
}

TEST_CASE("nuts refuses a tree depth it cannot hold and an integrator that is not palindromic", "[kernel][nuts]") {
  gaussian<double, 2, covariance::isotropic> U(vec<double, 2>{}, 1.0);
  CHECK_THROWS_WITH(nuts(U, {.max_tree_depth = 0}), Catch::StartsWith("ember::nuts: max_tree_depth must be in [1, 14]"));
  CHECK_THROWS_WITH(nuts(U, {.step_size = 0.1, .max_tree_depth = 15}),
                    Catch::StartsWith("ember::nuts: max_tree_depth must be in [1, 14]"));
  CHECK_THROWS_WITH(nuts(U, {.step_size = -1}), Catch::Contains("step size"));
  CHECK_NOTHROW(nuts(U, {.step_size = 0.1, .max_tree_depth = 14}));
}
