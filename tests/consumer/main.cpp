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

  // A mixture's energy takes the log of a SIMD batch (xsimd::log, then xsimd::select): with GCC 12
  // at -O0 on an AVX-512BW target that did not compile until detail/xsimd.hpp mended two macros.
  gaussian_mixture<float, 2, 2> mix({0.7f, 0.3f}, {vec<float, 2>{{-1.f, 0.f}}, vec<float, 2>{{1.f, 0.5f}}}, {0.6f, 0.8f});
  auto mixed = sample(mala(mix, {.step_size = 0.5}), {.chains = 64, .steps = 100, .seed = 3}, backend::cpu{});
  std::printf("consumer: MALA on a mixture, acceptance %.3f\n", mixed.acceptance_rate());
  ok = ok && mixed.acceptance_rate() > 0 && mixed.divergent_chains() == 0;

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
