// 12_model: a Bayesian model in ember's terms, with gradients by reverse mode. Eight schools
// (Rubin 1981), non-centred: the body adds log-densities from ember/distributions.hpp to a
// context `m`; `ember::model<10>(body)` is its energy −log p, whose gradient costs about as much
// as the hand-written one (bench/grad_cost.cpp), and the default sampler needs nothing else.
// The posterior mean of μ is compared with the quadrature reference of targets::eight_schools.
#include <ember/ember.hpp>
#include <ember/targets/eight_schools.hpp>

#include <cmath>
#include <cstdio>

// x = (μ, log τ, θ̃₁ … θ̃₈): θ_j = μ + τ θ̃_j.
struct eight_schools {
  double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};

  template <class M>
  void operator()(M& m) const {
    auto tau = m.positive(m[1]);  // τ = e^x₁, with the log-Jacobian x₁ added
    m.add(ember::normal_lpdf(m[0], 0.0, 5.0));
    m.add(ember::cauchy_lpdf(tau, 0.0, 5.0));  // half-Cauchy, up to the constant log 2
    for (int j = 0; j < 8; ++j) {
      m.add(ember::normal_lpdf(m[2 + j], 0.0, 1.0));
      m.add(ember::normal_lpdf(y[j], m[0] + tau * m[2 + j], sigma[j]));
    }
  }
};

int main() {
  auto U = ember::model<10, double>(eight_schools{});
  auto res = ember::sample(ember::chees_hmc(U) | ember::record(), {.chains = 16, .steps = 2'000, .seed = 7});

  auto s = res.summary();
  auto const ref = ember::targets::eight_schools<double>{}.reference();
  double const z = (s.dims[0].mean - ref.mean[0]) / s.dims[0].mcse;
  double rhat = 0;
  for (auto const& d : s.dims) rhat = std::fmax(rhat, d.rhat);
  std::printf("mu: mean %.3f (reference %.3f, z = %.2f), ESS %.0f; max R-hat %.3f; divergent transitions %lld\n",
              s.dims[0].mean, ref.mean[0], z, s.dims[0].ess, rhat, (long long)res.divergent_transitions());
  return std::fabs(z) < 5 ? 0 : 1;
}
