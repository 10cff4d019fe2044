// A user's program built against ember with no flags of its own (tests/consumer/CMakeLists.txt):
// ULA's stationary mean on a standard normal, an adapted MALA run summarised, and the SIMD width
// the build got, which must be the widest this machine runs (issue 11.3: full speed by default).
#include <ember/ember.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace ember;
  auto res = sample(ula(harmonic<double, 1>{}, {.step_size = 0.01}) | burn_in(1000),
                    {.chains = 4000, .steps = 1, .seed = 1}, backend::cpu{});
  double m = 0;
  for (long c = 0; c < res.chains(); ++c) m += res.final_state(c)[0] / double(res.chains());
  std::printf("consumer: ULA mean %.4f over %ld chains\n", m, long(res.chains()));
  // The stationary law of ULA on N(0, 1) has mean 0 and sd ≈ 1: |mean| < 5 standard errors.
  bool ok = std::fabs(m) < 5.0 / std::sqrt(double(res.chains()));

  auto adapted = sample(mala(harmonic<float, 4>{}, {}) | warmup(200), {.chains = 64, .steps = 200, .seed = 2},
                        backend::cpu{});
  auto s = adapted.summary();
  std::printf("consumer: adapted MALA step size %.3g, acceptance %.3f\n", adapted.adapted().step_size,
              s.acceptance);

  // The batch width this unit was compiled for against the best the CPU offers.
  unsigned built = xsimd::default_arch::version(), best = xsimd::available_architectures().best;
  std::printf("consumer: compiled for %s (version %u), the CPU's best is version %u\n",
              xsimd::default_arch::name(), built, best);
  if (built < best) {
    std::printf("consumer: FAILED: ember::ember compiled this program below the machine's instruction set\n");
    ok = false;
  }
  return ok ? 0 : 1;
}
