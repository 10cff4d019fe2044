// 11_custom_adapter: a warm-up adapter of one's own (examples/11_custom_adapter.hpp, a
// Robbins–Monro step size), next to ember's dual averaging, both with the built-in diagonal
// metric adaptation, on a Gaussian whose scales span a factor of 10.
#include "11_custom_adapter.hpp"

#include <ember/ember.hpp>

#include <cstdio>

int main() {
  using namespace ember;
  vec<float, 4> mu{}, sigma{{0.3f, 1.f, 2.f, 3.f}};
  auto U = gaussian(mu, sigma);
  sample_options<float, 4> opt{.chains = 1'024, .steps = 1'000, .seed = 5};
  auto mine = sample(mala(U) | warmup(1'000, robbins_monro{}, diagonal_mass()) | record(), opt);
  auto dual = sample(mala(U) | warmup(1'000, step_size(), diagonal_mass()) | record(), opt);
  for (auto const* r : {&mine, &dual}) {
    auto const s = r->summary();
    std::printf("%-16s step size %.3f, acceptance %.3f (target %.3f), sd of x3 %.3f (truth 3), R-hat of x3 %.4f\n",
                r == &mine ? "robbins_monro:" : "dual averaging:", r->adapted().step_size, r->acceptance_rate(),
                r->target_acceptance(), s.dims[3].sd, s.dims[3].rhat);
  }
  return mine.divergent_chains() == 0 && mine.summary().warnings().empty() ? 0 : 1;
}
