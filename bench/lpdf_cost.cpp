// lpdf_cost: what a log-density of ember/distributions.hpp costs inside a custom energy, against
// the same log-density written out on dual numbers. A regression y_i ~ normal(x·t_i, e^{x_{D−1}})
// and a logistic regression y_i ~ bernoulli_logit(x·t_i), n = 200 rows, D = 8 and 16 parameters,
// double, one chain: nanoseconds per value_and_grad, median of 5 repeats of 2,000 evaluations
// interleaved, and the ratio written-out / lifted (above 1: the lifted form is faster). The
// floor is the linear predictor's D-wide dual arithmetic per row, which both forms pay.
#include <ember/distributions.hpp>
#include <ember/ember.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int n = 200, evaluations = 2000, repeats = 5;

template <int D>
struct data {
  std::array<std::array<double, D>, n> t;
  std::array<double, n> y, b;
};

template <int D>
data<D> make() {
  data<D> d;
  std::mt19937_64 g(7);
  std::normal_distribution<double> z;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < D; ++k) d.t[i][k] = z(g);
    d.y[i] = z(g);
    d.b[i] = z(g) > 0;
  }
  return d;
}

template <class E, int D>
double ns(E const& e, ember::vec<double, D> x, double& sink) {
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < evaluations; ++k) {
    ember::vec<double, D> g;
    x[0] += 1e-9;
    sink += e.value_and_grad(x, g) + g[D - 1];
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / evaluations;
}

template <class A, class B, int D>
void compare(char const* what, A const& lifted, B const& written) {
  ember::vec<double, D> x;
  for (int k = 0; k < D; ++k) x[k] = 0.1 * (k % 3) - 0.05;
  double sink = 0;
  std::vector<double> a, b;
  for (int r = 0; r < repeats; ++r) {
    a.push_back(ns(lifted, x, sink));
    b.push_back(ns(written, x, sink));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double ga[D], gb[D];
  {
    ember::vec<double, D> g1, g2;
    lifted.value_and_grad(x, g1);
    written.value_and_grad(x, g2);
    for (int k = 0; k < D; ++k) ga[k] = g1[k], gb[k] = g2[k];
  }
  double diff = 0;
  for (int k = 0; k < D; ++k) diff = std::max(diff, std::abs(ga[k] - gb[k]) / (1 + std::abs(gb[k])));
  std::printf("{\"model\": \"%s\", \"D\": %d, \"rows\": %d, \"lifted_ns\": %.0f, \"written_ns\": %.0f, "
              "\"written_over_lifted\": %.2f, \"gradient_difference\": %.1e, \"sink\": %.3g}\n",
              what, D, n, a[repeats / 2], b[repeats / 2], b[repeats / 2] / a[repeats / 2], diff, sink);
}

template <int D>
void run() {
  static data<D> const d = make<D>();
  auto dot = [](auto const& x, std::array<double, D> const& t) {
    auto s = x[0] * t[0];
    for (int k = 1; k < D - 1; ++k) s = s + x[k] * t[k];
    return s;
  };
  auto lifted = ember::custom_energy<D, double>([dot](auto const& x) {
    auto const sigma = exp(x[D - 1]);
    auto u = x[0] * 0.0;
    for (int i = 0; i < n; ++i) u = u - ember::normal_lpdf(d.y[i], dot(x, d.t[i]), sigma);
    return u;
  });
  auto written = ember::custom_energy<D, double>([dot](auto const& x) {
    auto const ls = x[D - 1], inv = exp(-ls);
    auto u = x[0] * 0.0;
    for (int i = 0; i < n; ++i) {
      auto const z = (d.y[i] - dot(x, d.t[i])) * inv;
      u = u + 0.5 * z * z + ls + 0.91893853320467274178;
    }
    return u;
  });
  compare<decltype(lifted), decltype(written), D>("normal", lifted, written);
  auto lifted_b = ember::custom_energy<D, double>([dot](auto const& x) {
    auto u = x[0] * 0.0;
    for (int i = 0; i < n; ++i) u = u - ember::bernoulli_logit_lpmf(d.b[i], dot(x, d.t[i]) + x[D - 1]);
    return u;
  });
  auto written_b = ember::custom_energy<D, double>([dot](auto const& x) {
    auto u = x[0] * 0.0;
    for (int i = 0; i < n; ++i) {
      auto const eta = dot(x, d.t[i]) + x[D - 1];
      u = u + softplus(eta) - d.b[i] * eta;
    }
    return u;
  });
  compare<decltype(lifted_b), decltype(written_b), D>("bernoulli_logit", lifted_b, written_b);
}

}  // namespace

int main() {
  run<8>();
  run<16>();
}
