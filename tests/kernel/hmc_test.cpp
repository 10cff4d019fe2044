#include "generic/sampler_checks.hpp"

TEST_CASE("hmc leaves a 10-dimensional correlated gaussian invariant", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_gaussian_moments(ember::backend::cpu{});
}


TEST_CASE("hmc on the double well matches quadrature of exp(-U)", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_double_well(ember::backend::cpu{});
}

TEST_CASE("hmc (scalar path) leaves a 10-dimensional correlated gaussian invariant", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_gaussian_moments(ember::backend::cpu{.simd = false});
}

TEST_CASE("hmc (scalar path) on the double well matches quadrature of exp(-U)", "[kernel][hmc][statistics]") {
  ember_test::check_hmc_double_well(ember::backend::cpu{.simd = false});
}
