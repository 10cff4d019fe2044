// backend::cpu compiled without its one-chain-at-a-time path (EMBER_CPU_SCALAR_PATH=0 for this
// whole binary, as bench/matrix builds): SIMD runs still follow their laws, a last partial batch
// included, and `.simd = false` is refused before any work with a sentence naming the option.
#include "generic/sampler_checks.hpp"

using namespace ember;

static_assert(EMBER_CPU_SCALAR_PATH == 0, "this test is built with EMBER_CPU_SCALAR_PATH=0");

TEST_CASE("without the scalar path ULA follows its exact finite-step law", "[simd][cpu_scalar_path]") {
  ember_test::check_ula_exact_law(backend::cpu{});
}

TEST_CASE("without the scalar path MALA leaves a correlated 10-d gaussian invariant", "[simd][cpu_scalar_path]") {
  ember_test::check_mala_gaussian_moments(backend::cpu{});
}

TEST_CASE("without the scalar path a last partial batch gives each chain its own draws", "[simd][cpu_scalar_path]") {
  // A chain's draws depend on the seed and its index only: chains 0..1002 of a 1003-chain run
  // (62 full batches of 16 and one of 11 lanes) are those chains of a 1024-chain run, bit for bit.
  ember_test::gaussian10 g;
  auto const k = mala(g.energy(), {.step_size = 0.08});
  auto const a = sample(k, {.chains = 1003, .steps = 50, .seed = 11}, backend::cpu{});
  auto const b = sample(k, {.chains = 1024, .steps = 50, .seed = 11}, backend::cpu{});
  for (std::int64_t c = 0; c < a.chains(); ++c) {
    auto const x = a.final_state(c), y = b.final_state(c);
    for (int d = 0; d < 10; ++d) REQUIRE(x[d] == y[d]);
    REQUIRE(a.accepted(c) == b.accepted(c));
  }
}

TEST_CASE("without the scalar path .simd = false is refused before any work", "[cpu_scalar_path]") {
  ember_test::gaussian10 g;
  REQUIRE_THROWS_WITH(sample(ula(g.energy(), {.step_size = 0.1}), {.chains = 8, .steps = 1}, backend::cpu{.simd = false}),
                      Catch::Contains("EMBER_CPU_SCALAR_PATH=0") && Catch::Contains(".simd = false"));
}
