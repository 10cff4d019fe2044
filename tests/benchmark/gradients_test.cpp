// Gradient evaluations are counted exactly: L per HMC transition (jitter changes ε, not L), and
// ⌈uₜT/ε⌉ with a trajectory length (ChEES), uₜ the base-2 Halton sequence at t + 1.
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
