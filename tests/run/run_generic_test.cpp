// The generic run checks (tests/generic/run_checks.hpp) on backend::cpu, SIMD and scalar paths.
#include "generic/run_checks.hpp"

TEST_CASE("a run in pieces with warm-up and a checkpoint equals the run in one piece", "[run][generic]") {
  ember_test::check_run_in_pieces(ember::backend::cpu{});
  ember_test::check_run_in_pieces(ember::backend::scalar{});
}

TEST_CASE("progress counters agree with the result's", "[run][generic]") {
  ember_test::check_progress_counters(ember::backend::cpu{});
  ember_test::check_progress_counters(ember::backend::scalar{});
}

TEST_CASE("draws after warm-up have the target's moments", "[run][generic][statistics]") {
  ember_test::check_moments_after_warmup(ember::backend::cpu{});
  ember_test::check_moments_after_warmup(ember::backend::scalar{});
}

TEST_CASE("a statistic written outside the library is tracked as the built-in ones are", "[run][generic][track]") {
  ember_test::check_user_statistic(ember::backend::cpu{});
  ember_test::check_user_statistic(ember::backend::scalar{});
}
