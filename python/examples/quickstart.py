"""ember from Python, first steps: a model of the fixed set, its fit in ArviZ's layout, and a model
of your own compiled on demand (docs/python.md). Run: python quickstart.py"""
import numpy as np

import ember

# Eight schools (non-centred), compiled into ember._core: no compiler needed.
model = ember.models.eight_schools(y=[28, 8, -3, 7, -1, 1, 18, 12], sigma=[15, 10, 16, 11, 9, 11, 10, 18])
fit = ember.sample(model, chains=4, warmup=1000, draws=1000, seed=1)
print(fit)
print(fit.summary().loc[["mu", "tau"]])
tau = fit.posterior["tau"]  # (chain, draw): tau itself, not log tau
print(f"P(tau > 5) = {np.mean(tau > 5):.3f}; {fit.stats['divergent_transitions']} divergent transitions")

# Your own model: C++ in ember's vocabulary, compiled once (later calls load it from the cache).
source = r"""
struct linear_regression {
  static constexpr auto alpha = ember::param<"alpha">();
  static constexpr auto beta = ember::param<"beta">();
  static constexpr auto sigma = ember::param<"sigma">(ember::positive);
  static constexpr auto params = ember::params(alpha, beta, sigma);
  std::span<double const> x, y;

  explicit linear_regression(ember::python::data const& d)
      : x(d.vector("x")), y(d.vector("y", std::int64_t(x.size()))) {}

  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[alpha], 0.0, 10.0) + ember::normal_lpdf(m[beta], 0.0, 10.0));
    m.add(ember::normal_lpdf(m[sigma], 0.0, 5.0));  // half-normal: sigma > 0
    m.add_rows(std::int64_t(x.size()), [&](std::int64_t i) {
      return ember::normal_lpdf(y[i], m[alpha] + m[beta] * x[i], m[sigma]);
    });
  }
};
"""
regression = ember.compile(source, samplers=["chees_hmc", "nuts"])
rng = np.random.default_rng(0)
x = rng.normal(size=200)
y = 1.0 + 2.0 * x + 0.5 * rng.normal(size=200)
fit = ember.sample(regression(x=x, y=y), sampler="nuts", chains=4, seed=2)
print(fit.summary())
idata = fit.to_inference_data()  # an arviz.InferenceData: posterior alpha, beta, sigma; sample_stats lp, diverging, energy, ...
