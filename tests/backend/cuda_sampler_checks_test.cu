// The generic sampler checks of tests/generic/sampler_checks.hpp (written once over the backend,
// run with backend::cpu by tests/kernel/*_test.cpp) instantiated for backend::cuda.
#include <ember/backend/cuda.cuh>

#include "generic/sampler_checks.hpp"

TEST_CASE("ula on a diagonal gaussian follows its exact finite-step law on the GPU", "[cuda][ula][statistics]") {
  ember_test::check_ula_exact_law(ember::backend::cuda{});
}

TEST_CASE("mala leaves a correlated 10-d gaussian invariant on the GPU", "[cuda][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::cuda{});
}

TEST_CASE("hmc leaves a correlated 10-d gaussian invariant on the GPU", "[cuda][hmc][statistics]") {
  ember_test::check_hmc_gaussian_moments(ember::backend::cuda{});
}

TEST_CASE("mala samples the double well on the GPU", "[cuda][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::cuda{});
}

TEST_CASE("hmc samples the double well on the GPU", "[cuda][hmc][statistics]") {
  ember_test::check_hmc_double_well(ember::backend::cuda{});
}

#include "generic/run_checks.hpp"

TEST_CASE("a run in pieces with warm-up and a checkpoint equals the run in one piece on the GPU", "[cuda][run]") {
  ember_test::check_run_in_pieces(ember::backend::cuda{});
}

TEST_CASE("progress counters agree with the result's on the GPU", "[cuda][run]") {
  ember_test::check_progress_counters(ember::backend::cuda{});
}

TEST_CASE("draws after warm-up have the target's moments on the GPU", "[cuda][run][statistics]") {
  ember_test::check_moments_after_warmup(ember::backend::cuda{});
}

TEST_CASE("a statistic written outside the library is tracked on the GPU as on the CPU", "[cuda][run][track]") {
  ember_test::check_user_statistic(ember::backend::cuda{});
}
