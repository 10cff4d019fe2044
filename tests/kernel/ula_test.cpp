#include "generic/sampler_checks.hpp"

TEST_CASE("ula on a diagonal gaussian follows its exact finite-step law", "[kernel][ula][statistics]") {
  ember_test::check_ula_exact_law(ember::backend::cpu{});
}
