// 12_model: a Bayesian model in ember's terms. Eight schools (Rubin 1981), non-centred, as Stan
// and posteriordb write it: named parameters with their constraints, log-densities from
// ember/distributions.hpp added to a context `m`, gradients by reverse mode. `ember::model<double>`
// makes its energy −log p (the dimension, 10, comes from the parameters); `ember::posterior`
// reports the run in the model's terms, with θ = μ + τ θ̃ and replicated data derived per draw;
// `save_npz` writes it for ArviZ (python/ember_arviz). With no argument the example checks μ
// against the quadrature reference of targets::eight_schools and exits 1 if it is off;
// `12_model run.npz` also writes the file (tests/models/check_reference.py compares every
// variable with posteriordb's reference draws).
#include <ember/ember.hpp>
#include <ember/targets/eight_schools.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <span>

struct eight_schools {
  static constexpr auto mu = ember::param<"mu">();
  static constexpr auto tau = ember::param<"tau">(ember::positive);
  static constexpr auto theta_trans = ember::param<"theta_trans", 8>();
  static constexpr auto params = ember::params(theta_trans, mu, tau);

  double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};

  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[mu], 0.0, 5.0));
    m.add(ember::cauchy_lpdf(m[tau], 0.0, 5.0));  // half-Cauchy (τ > 0), up to the constant log 2
    for (int j = 0; j < 8; ++j) {
      m.add(ember::normal_lpdf(m[theta_trans][j], 0.0, 1.0));
      m.add(ember::normal_lpdf(y[j], m[mu] + m[tau] * m[theta_trans][j], sigma[j]));
    }
  }
};

int main(int argc, char** argv) {
  eight_schools const model;
  auto U = ember::model<double>(model);
  auto res = ember::sample(ember::chees_hmc(U) | ember::record() | ember::record_stats(), {.chains = 16, .steps = 2'000, .seed = 7});

  using E = eight_schools;
  auto theta = ember::generated<"theta", 8>([](auto const& p, ember::draw_rng&, std::span<double> out) {
    for (int j = 0; j < 8; ++j) out[j] = p[E::mu] + p[E::tau] * p[E::theta_trans][j];
  });
  auto y_rep = ember::predictive<"y_rep", 8>([&](auto const& p, ember::draw_rng& rng, std::span<double> out) {
    for (int j = 0; j < 8; ++j) out[j] = rng.normal(p[E::mu] + p[E::tau] * p[E::theta_trans][j], model.sigma[j]);
  });
  auto post = ember::posterior(res, U, {.seed = 1}, theta, y_rep);
  std::cout << post.summary();
  if (argc > 1) ember::save_npz(post, argv[1]);

  auto const s = post.summary();
  auto const ref = ember::targets::eight_schools<double>{}.reference();
  double const z = (s.dims[8].mean - ref.mean[0]) / s.dims[8].mcse;  // column 8: mu
  std::printf("%s: mean %.3f (reference %.3f, z = %.2f); divergent transitions %lld\n", post.column_name(8).c_str(),
              s.dims[8].mean, ref.mean[0], z, (long long)res.divergent_transitions());
  return std::fabs(z) < 5 ? 0 : 1;
}
