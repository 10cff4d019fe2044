// The CPU half of backend_cuda_test, compiled by the host compiler: the generic sampler checks
// instantiated for backend::cpu, and the CPU runs the GPU's draws are compared with.
#include "generic/sampler_checks.hpp"

#include <ember/backend/cpu.hpp>

namespace ember_test {
ula_result cpu_compare_ula() { return sample(compare_ula_pipe(), compare_ula_opt, backend::cpu{}); }
mala_result cpu_compare_mala() { return sample(compare_mala_pipe(), compare_mala_opt, backend::cpu{}); }
diverging_result cpu_diverging() { return sample(diverging_pipe(), diverging_opt, backend::cpu{}); }
}  // namespace ember_test

TEST_CASE("ula on a Gaussian follows its exact finite-step law on the CPU", "[backend][cpu][ula][nogpu]") {
  ember_test::ula_follows_exact_law(ember::backend::cpu{});
}

TEST_CASE("mala leaves a Gaussian invariant on the CPU", "[backend][cpu][mala][nogpu]") {
  ember_test::mala_leaves_gaussian_invariant(ember::backend::cpu{});
}
