// The underdamped Langevin checks of tests/kernel/langevin_checks.hpp (run with backend::cpu by
// the kernel tests) instantiated for backend::cuda: BAOAB's exact law, the adjusted kernel on
// the 10-d Gaussian and the double well. Skipped (code 77) without a GPU; always compiled.
#include <ember/backend/cuda.cuh>

#include "kernel/langevin_checks.hpp"

TEST_CASE("baoab follows its exact finite-step law on the GPU", "[cuda][underdamped_langevin][statistics]") {
  ember_test::check_splitting_exact_law<ember::baoab>(ember::backend::cuda{}, 0.4, 1.5, 100);
}

TEST_CASE("obabo follows its exact finite-step law on the GPU", "[cuda][underdamped_langevin][statistics]") {
  ember_test::check_splitting_exact_law<ember::obabo>(ember::backend::cuda{}, 0.4, 0.5, 300);
}

TEST_CASE("adjusted underdamped langevin keeps a correlated 10-d gaussian on the GPU",
          "[cuda][adjusted_underdamped_langevin][statistics]") {
  ember_test::check_adjusted_gaussian_from_exact(ember::backend::cuda{});
  ember_test::check_adjusted_gaussian_from_normal(ember::backend::cuda{});
}

TEST_CASE("adjusted underdamped langevin samples the double well on the GPU",
          "[cuda][adjusted_underdamped_langevin][statistics]") {
  ember_test::check_adjusted_double_well_from_right_well(ember::backend::cuda{});
  ember_test::check_adjusted_double_well_from_exact(ember::backend::cuda{});
}
