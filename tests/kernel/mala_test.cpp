#include "generic/sampler_checks.hpp"

TEST_CASE("mala leaves a 10-dimensional correlated gaussian invariant", "[kernel][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::cpu{});
}


TEST_CASE("mala on the double well matches quadrature of exp(-U)", "[kernel][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::cpu{});
}

TEST_CASE("mala (scalar path) leaves a 10-dimensional correlated gaussian invariant", "[kernel][mala][statistics]") {
  ember_test::check_mala_gaussian_moments(ember::backend::cpu{.simd = false});
}

TEST_CASE("mala (scalar path) on the double well matches quadrature of exp(-U)", "[kernel][mala][statistics]") {
  ember_test::check_mala_double_well(ember::backend::cpu{.simd = false});
}
