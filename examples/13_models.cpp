// 13_models: three posteriors as a Bayesian user states them, each in a few lines of named
// parameters and log-densities, sampled with the defaults and reported in the model's terms.
//  - varying_intercepts: targets::hier_logit, a three-level hierarchical logistic regression
//    (radon-style varying intercepts, 60 parameters; its body is in
//    include/ember/targets/hier_logit.hpp), on 500 simulated rows;
//  - robust_regression: children's test scores (data/kidiq.csv: posteriordb's kidiq, from
//    Gelman & Hill 2006) on the mother's high-school degree and IQ, with a Student-t likelihood
//    whose degrees of freedom are a parameter;
//  - poisson_glm: counts with an exposure offset (data/poisson_counts.csv, simulated by
//    tests/models/numpyro_reference.py).
//
//   13_models MODEL [run.npz [chees|nuts|mams]]  sample MODEL (ChEES-HMC, NUTS or MAMS), print its summary, write run.npz
//   13_models export DIR           write varying_intercepts' data as .npy files (for the reference)
//
// tests/models/check_reference.py compares run.npz with tests/models/reference/MODEL.json, a long
// NumPyro run of the same model (the command that made it is inside).
#include <ember/ember.hpp>
#include <ember/io/npy.hpp>
#include <ember/targets/hier_logit.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#ifndef EMBER_DATA_DIR
#define EMBER_DATA_DIR "data"
#endif

struct robust_regression {
  static constexpr auto alpha = ember::param<"alpha">();
  static constexpr auto beta = ember::param<"beta", 2>();
  static constexpr auto sigma = ember::param<"sigma">(ember::positive);
  static constexpr auto nu = ember::param<"nu">(ember::positive);
  static constexpr auto params = ember::params(alpha, beta, sigma, nu);
  ember::data_view<double> X, y;  // X: mom_hs, (mom_iq − 100)/15; y: kid_score

  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[alpha], 80.0, 20.0));
    m.add(ember::normal_lpdf(m[beta], 0.0, 20.0));
    m.add(ember::normal_lpdf(m[sigma], 0.0, 30.0));  // half-normal, up to log 2
    m.add(ember::gamma_lpdf(m[nu], 2.0, 0.1));
    m.add_rows(y.rows, [&](std::int64_t i) {
      return ember::student_t_lpdf(y.data[i], m[nu], m[alpha] + ember::dot(X.row(i), m[beta]), m[sigma]);
    });
  }
  template <class F>
  void for_each_view(F&& f) {
    f(X);
    f(y);
  }
};

struct poisson_glm {
  static constexpr auto alpha = ember::param<"alpha">();
  static constexpr auto beta = ember::param<"beta", 3>();
  static constexpr auto params = ember::params(alpha, beta);
  ember::data_view<double> X, y, log_exposure;

  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[alpha], 0.0, 2.0));
    m.add(ember::normal_lpdf(m[beta], 0.0, 1.0));
    m.add_rows(y.rows, [&](std::int64_t i) {
      return ember::poisson_log_lpmf(y.data[i], log_exposure.data[i] + m[alpha] + ember::dot(X.row(i), m[beta]));
    });
  }
  template <class F>
  void for_each_view(F&& f) {
    f(X);
    f(y);
    f(log_exposure);
  }
};

namespace {

template <class U>
auto draw(U const& energy, std::string const& sampler) {
  ember::sample_options<double, U::dim> const o{.chains = 16, .steps = 2'000, .seed = 13};
  if (sampler == "nuts") return ember::sample(ember::nuts(energy) | ember::warmup(1'000) | ember::record(), o);
  if (sampler == "mams") return ember::sample(ember::mams(energy) | ember::record(), o);
  return ember::sample(ember::chees_hmc(energy) | ember::record(), o);
}

template <class U>
int run(U const& energy, char const* out, std::string const& sampler) {
  auto res = draw(energy, sampler);
  auto post = ember::posterior(res, energy);
  std::cout << post.summary();
  if (out) ember::save_npz(post, out);
  return res.divergent_chains() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string const what = argc > 1 ? argv[1] : "";
  char const* out = argc > 2 ? argv[2] : nullptr;
  std::string const sampler = argc > 3 ? argv[3] : "chees";  // the sampler: chees, nuts or mams
  std::string const data = EMBER_DATA_DIR;
  auto const hier = ember::targets::hier_logit<double>::simulated(1, 500);
  if (what == "varying_intercepts") return run(hier.energy(), out, sampler);
  if (what == "export" && out) return hier.save_npy(out), 0;
  if (what == "robust_regression") {
    auto const kid = ember::dataset<double>::from_csv(data + "/kidiq.csv");  // kid_score, mom_hs, mom_iq
    std::vector<double> x;
    for (std::int64_t i = 0; i < kid.rows(); ++i) x.insert(x.end(), {kid(i, 1), (kid(i, 2) - 100) / 15});
    ember::dataset<double> const X(std::move(x), kid.rows(), 2);
    auto const y = kid.column(0);
    return run(ember::model<double>(robust_regression{X.view(), y.view()}), out, sampler);
  }
  if (what == "poisson_glm") {
    auto const d = ember::dataset<double>::from_csv(data + "/poisson_counts.csv");  // y, log_exposure, x1, x2, x3
    auto const X = d.columns(2, 5), y = d.column(0), off = d.column(1);
    return run(ember::model<double>(poisson_glm{X.view(), y.view(), off.view()}), out, sampler);
  }
  std::fprintf(stderr, "usage: 13_models varying_intercepts|robust_regression|poisson_glm [run.npz [chees|nuts|mams]] | export DIR\n");
  return 2;
}
