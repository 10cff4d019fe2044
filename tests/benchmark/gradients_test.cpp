// Gradient evaluations are counted exactly: L per HMC transition (jitter changes ε, not L),
// ⌈uₜT/ε⌉ with a trajectory length (ChEES), uₜ the base-2 Halton sequence at t + 1, and MAMS's
// ⌈uₜs⌉ steps of two gradients, unadjusted MCLMC's ⌈L/ε⌉.
#include <ember/benchmark/measure.hpp>
#include <ember/targets/standard_normal.hpp>

#include <catch2/catch.hpp>

#include "benchmark/test_targets.hpp"

namespace bm = ember::benchmark;
namespace hana = boost::hana;

TEST_CASE("HMC with a trajectory length takes ceil(u_t T / eps) gradients at transition t", "[benchmark]") {
  auto const U = ember_test::normal2<double>{}.energy();
  auto const k = ember::hmc(U, {.step_size = 0.1, .trajectory_length = 1.0});
  // u = 1/2, 1/4, 3/4, 1/8 → 5, 2.5, 7.5, 1.25 steps, rounded up.
  CHECK(bm::gradients_of_transition(k, 0) == 5);
  CHECK(bm::gradients_of_transition(k, 1) == 3);
  CHECK(bm::gradients_of_transition(k, 2) == 8);
  CHECK(bm::gradients_of_transition(k, 3) == 2);
  CHECK(bm::gradients_of_transition(ember::mala(U, {.step_size = 0.1}), 3) == 1);
}

TEST_CASE("a matrix row counts L gradients per adapted-HMC transition and ChEES's varying ones", "[benchmark]") {
  bm::report out(nullptr);
  bm::run_axes const axes{.chains = {32}, .warmup = 200, .draws = 100, .seed = 5};
  bm::target<ember_test::normal2> const normal2{"normal2"};
  bm::measure(out, normal2, bm::adapted_hmc{.integrator_steps = 5, .jitter = 0.2}, hana::type_c<double>,
              hana::type_c<ember::backend::cpu>, axes);
  // In d = 100 the adapted ε is well below the adapted T, so ChEES takes several steps.
  bm::measure(out, bm::target<ember::targets::standard_normal>{"standard_normal"}, bm::chees_hmc{},
              hana::type_c<double>, hana::type_c<ember::backend::cpu>, axes);
  REQUIRE(out.rows().size() == 2);
  CHECK(out.rows()[0].grads_warmup == 5 * 200);
  CHECK(out.rows()[0].grads_sampling == 5 * 100);
  auto const& chees = out.rows()[1];
  CHECK(chees.grads_sampling == std::floor(chees.grads_sampling));
  CHECK(chees.grads_sampling > 2 * 100);  // ⌈uₜT/ε⌉ per transition, not one
  CHECK(chees.grads_warmup > 200);  // T starts at ε: one step at first, more as T grows
}

TEST_CASE("a matrix row counts MAMS's Halton step counts, two gradients a step, as its run does", "[benchmark]") {
  auto const U = ember_test::normal2<double>{}.energy();
  // L/ε = 5: k = ⌊2·5 − 1⌋ = 9, s = 9·10/(2·(10 − 5)) = 9 (⌈u·9⌉ averages 5) → ⌈9/2⌉ = 5 steps at
  // t = 0 (u = 1/2), ⌈9/4⌉ = 3 at t = 1, ⌈27/4⌉ = 7 at t = 2.
  auto const k = ember::adjusted_mclmc(U, {.step_size = 0.1, .trajectory_length = 0.5});
  CHECK(bm::gradients_of_transition(k, 0) == 2 * 5);
  CHECK(bm::gradients_of_transition(k, 1) == 2 * 3);
  CHECK(bm::gradients_of_transition(k, 2) == 2 * 7);
  // In its approach form (adapt/approach.hpp) the same steps, at most 16, of one gradient each.
  CHECK(bm::gradients_of_transition(k.with_approach(true), 2) == 7);
  CHECK(bm::gradients_of_transition(k.with_trajectory_length(3.0).with_approach(true), 0) == 16);
  bm::report out(nullptr);
  bm::run_axes const axes{.chains = {32}, .warmup = 200, .draws = 100, .seed = 5};
  bm::measure(out, bm::target<ember::targets::standard_normal>{"standard_normal"}, bm::mams{}, hana::type_c<double>,
              hana::type_c<ember::backend::cpu>, axes);
  REQUIRE(out.rows().size() == 1);
  auto const& r = out.rows()[0];
  // The matrix's count, transition by transition from the kernel, is the run's own (sampled the same way).
  auto run = ember::start(ember::mams(ember::targets::standard_normal<double>{}.energy(), {.warmup = 200}, ember::diagonal_mass()),
                          {.chains = 32, .seed = 5, .progress = false}, ember::backend::cpu{});
  run.advance(300);
  auto const res = run.result();
  CHECK(r.grads_warmup * 32 == double(res.warmup_gradients()));
  CHECK(r.grads_sampling * 32 == double(res.gradients()));
}

TEST_CASE("a matrix row counts unadjusted MCLMC's ⌈L/ε⌉ steps, and its warm-up's approach, as its run does", "[benchmark]") {
  auto const U = ember_test::normal2<double>{}.energy();
  auto const k = ember::mclmc(U, {.step_size = 0.1, .trajectory_length = 0.55});
  CHECK(bm::gradients_of_transition(k, 0) == 2 * 6);
  CHECK(bm::gradients_of_transition(k, 1) == 2 * 6);
  // The approach form is adjusted MCLMC's: its Halton steps, at most 16 of one gradient each.
  CHECK(bm::gradients_of_transition(k.with_approach(true), 0) == bm::gradients_of_transition(
                                                                      ember::adjusted_mclmc(U, {.step_size = 0.1, .trajectory_length = 0.55}).with_approach(true), 0));
  bm::report out(nullptr);
  bm::run_axes const axes{.chains = {32}, .warmup = 200, .draws = 100, .seed = 5};
  bm::measure(out, bm::target<ember::targets::standard_normal>{"standard_normal"}, bm::mclmc{}, hana::type_c<double>,
              hana::type_c<ember::backend::cpu>, axes);
  REQUIRE(out.rows().size() == 1);
  auto const& r = out.rows()[0];
  auto run = ember::start(ember::mclmc(ember::targets::standard_normal<double>{}.energy()) |
                              ember::mams_warmup(200, 0, ember::diagonal_mass()),
                          {.chains = 32, .seed = 5, .progress = false}, ember::backend::cpu{});
  run.advance(300);
  auto const res = run.result();
  CHECK(r.grads_warmup * 32 == double(res.warmup_gradients()));
  CHECK(r.grads_sampling * 32 == double(res.gradients()));
}
