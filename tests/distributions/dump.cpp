// Prints each log-density of ember/distributions.hpp at a grid of points, one JSON line each
// ({"f": name, "args": [...], "value": v}), for scipy_compare.py.
#include <ember/distributions.hpp>

#include <cstdio>
#include <string>

namespace {
void line(char const* f, double a, double b, double c, double v) {
  std::printf("{\"f\": \"%s\", \"args\": [%.17g, %.17g, %.17g], \"value\": %.17g}\n", f, a, b, c, v);
}
void line4(char const* f, double a, double b, double c, double d, double v) {
  std::printf("{\"f\": \"%s\", \"args\": [%.17g, %.17g, %.17g, %.17g], \"value\": %.17g}\n", f, a, b, c, d, v);
}
// A line whose arguments are JSON values written by the caller (numbers or arrays).
void linej(char const* f, std::string const& args, double v) {
  std::printf("{\"f\": \"%s\", \"args\": [%s], \"value\": %.17g}\n", f, args.c_str(), v);
}
template <int N>
std::string json(double const (&a)[N]) {
  std::string s = "[";
  char b[32];
  for (int i = 0; i < N; ++i) {
    std::snprintf(b, sizeof b, "%s%.17g", i ? ", " : "", a[i]);
    s += b;
  }
  return s + "]";
}
}  // namespace

int main() {
  double const xs[] = {-3.5, -0.7, 0.05, 0.6, 2.2, 9.0}, locs[] = {-1.3, 0.0, 0.4}, scales[] = {0.3, 1.0, 2.7};
  for (double x : xs)
    for (double m : locs)
      for (double s : scales) {
        line("normal", x, m, s, ember::normal_lpdf(x, m, s));
        line("cauchy", x, m, s, ember::cauchy_lpdf(x, m, s));
        line("laplace", x, m, s, ember::laplace_lpdf(x, m, s));
        line("logistic", x, m, s, ember::logistic_lpdf(x, m, s));
        if (x > 0) line("lognormal", x, m, s, ember::lognormal_lpdf(x, m, s));
        for (double nu : {0.8, 4.0, 30.0}) line4("student_t", x, nu, m, s, ember::student_t_lpdf(x, nu, m, s));
      }
  for (double x : {0.02, 0.4, 1.3, 5.0, 20.0})
    for (double a : {0.5, 2.0, 7.5})
      for (double b : {0.3, 1.0, 4.0}) {
        line("gamma", x, a, b, ember::gamma_lpdf(x, a, b));
        line("inv_gamma", x, a, b, ember::inv_gamma_lpdf(x, a, b));
        line("weibull", x, a, b, ember::weibull_lpdf(x, a, b));
      }
  for (double x : {-1.2, 0.01, 0.3, 2.9})
    for (double a : {-1.5, 0.0})
      for (double b : {1.0, 3.0})
        if (a < x && x < b) line("uniform", x, a, b, ember::uniform_lpdf(x, a, b));
  for (double x : {0.01, 0.3, 0.5, 0.92})
    for (double a : {0.5, 2.0, 7.5})
      for (double b : {0.3, 1.0, 4.0}) line("beta", x, a, b, ember::beta_lpdf(x, a, b));
  for (double x : {1e-3, 0.2, 0.5, 1.0, 3.3, 9.9, 10.0, 17.5, 250.0}) {
    line("log_gamma", x, 0, 0, ember::log_gamma(x));
    line("digamma", x, 0, 0, ember::digamma(x));
  }
  for (double x : xs)
    for (double l : {0.2, 1.0, 3.5})
      if (x >= 0) line("exponential", x, l, 0, ember::exponential_lpdf(x, l));
  for (double eta : {-4.0, -0.8, 0.0, 0.3, 2.5}) {
    for (int y : {0, 1}) line("bernoulli_logit", y, eta, 0, ember::bernoulli_logit_lpmf(y, eta));
    for (int y : {0, 1, 3, 12}) line("poisson_log", y, eta, 0, ember::poisson_log_lpmf(y, eta));
    for (int k : {0, 2, 7}) line("binomial_logit", k, 7, eta, ember::binomial_logit_lpmf(k, 7, eta));
    for (int y : {0, 1, 6, 30})
      for (double phi : {0.4, 2.0, 50.0}) line("neg_binomial_2_log", y, eta, phi, ember::neg_binomial_2_log_lpmf(y, eta, phi));
  }
  // Vector arguments: categorical logits, ordered cutpoints, a mean and a Cholesky factor.
  double eta[4] = {0.1, -0.5, 1.2, 0.3}, cut[3] = {-1.0, 0.5, 2.0};
  ember::block_values<double, 4> const eb{eta};
  ember::block_values<double, 3> const cb{cut};
  for (int y = 0; y < 4; ++y) linej("categorical_logit", std::to_string(y) + ", " + json(eta), ember::categorical_logit_lpmf(y, eb));
  for (double e : {-2.0, 0.7, 3.5})
    for (int y = 0; y < 4; ++y) {
      char b[64];
      std::snprintf(b, sizeof b, "%d, %.17g, ", y, e);
      linej("ordered_logistic", b + json(cut), ember::ordered_logistic_lpmf(y, e, cb));
    }
  double mu[3] = {0.1, 0.2, -0.3}, L[9] = {1.5, 0, 0, 0.3, 0.8, 0, -0.2, 0.4, 1.1};
  ember::block_values<double, 3> const mb{mu};
  auto const Lm = ember::as_matrix<3, 3>(ember::block_values<double, 9>{L});
  double ys[3][3] = {{0.4, -1.0, 2.0}, {0.0, 0.0, 0.0}, {-3.0, 1.5, 0.2}};
  for (auto const& y : ys)
    linej("multi_normal_cholesky", json(y) + ", " + json(mu) + ", " + json(L), ember::multi_normal_cholesky_lpdf(y, mb, Lm));
}
