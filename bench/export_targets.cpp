// export_targets: writes, for each target in include/ember/targets/, a JSON file <dir>/<name>.json
// with what the Python peers of bench/compare_matrix.sh need to sample the same density:
//   dim, the parameters that define it ("params"), what is sampled and what is reported,
//   the reference E[x], E[x²] of the reported coordinates with their standard errors, and
//   "checks": U(x), ∇U(x) and reported(x) at three fixed points x in sampled coordinates
//   (computed by ember in double), which the peers compare with their own log-density.
// So a change in an ember target reaches the peers, or makes them fail loudly.
//
//   export_targets OUT_DIR [DATA_DIR]      (DATA_DIR defaults to the repository's data/)

#include <ember/targets/banana.hpp>
#include <ember/targets/breast_cancer_logistic.hpp>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/neal_funnel_noncentred.hpp>
#include <ember/targets/rosenbrock_pairs.hpp>
#include <ember/targets/rotated_gaussian.hpp>
#include <ember/targets/standard_normal.hpp>
#include <ember/targets/two_mode_mixture.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace ember;
using namespace ember::targets;

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

template <class Range>
std::string list(Range const& r) {
  std::string s = "[";
  bool first = true;
  for (double x : r) {
    s += (first ? "" : ", ") + num(x);
    first = false;
  }
  return s + "]";
}

std::string quoted(std::string const& s) {
  std::string q = "\"";
  for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

/// Check point k of a target, in sampled coordinates: center + spread ∘ (a fixed pattern in (−1, 1)).
template <int D>
vec<double, D> check_point(int k, std::array<double, D> const& center, std::array<double, D> const& spread) {
  vec<double, D> x;
  for (int i = 0; i < D; ++i) x[i] = center[std::size_t(i)] + spread[std::size_t(i)] * std::sin(0.9 * i + 1.7 * k + 0.3);
  return x;
}

template <int D>
std::array<double, D> filled_array(double v) {
  std::array<double, D> a;
  a.fill(v);
  return a;
}

/// Writes <dir>/<name>.json. `params` is a JSON object's text; `sampled` and `reported` say in
/// words what the coordinates are. `Target<double>` gives U and ∇U in double at the check points.
template <class Target>
void write_target(std::filesystem::path const& dir, std::string const& name, Target const& target,
                  std::string const& params, std::string const& sampled, std::string const& reported,
                  std::array<double, Target::dim> const& center, std::array<double, Target::dim> const& spread) {
  constexpr int D = Target::dim;
  auto const ref = target.reference();
  auto const energy = target.energy();
  std::ostringstream o;
  o << "{\n  \"target\": " << quoted(name) << ",\n  \"dim\": " << D << ",\n  \"params\": " << params
    << ",\n  \"sampled\": " << quoted(sampled) << ",\n  \"reported\": " << quoted(reported)
    << ",\n  \"reference\": {\"mean\": " << list(ref.mean) << ",\n                \"second\": " << list(ref.second)
    << ",\n                \"mean_se\": " << list(ref.mean_se)
    << ",\n                \"second_se\": " << list(ref.second_se) << ",\n                \"method\": "
    << quoted(ref.method) << "},\n  \"checks\": [";
  for (int k = 0; k < 3; ++k) {
    vec<double, D> x = check_point<D>(k, center, spread), g;
    double u = energy.value_and_grad(x, g);
    auto r = target.reported(x);
    std::vector<double> xs(D), gs(D), rs(D);
    for (int i = 0; i < D; ++i) xs[std::size_t(i)] = x[i], gs[std::size_t(i)] = g[i], rs[std::size_t(i)] = r[i];
    o << (k ? ",\n    " : "\n    ") << "{\"x\": " << list(xs) << ",\n     \"U\": " << num(u)
      << ",\n     \"grad\": " << list(gs) << ",\n     \"reported\": " << list(rs) << "}";
  }
  o << "\n  ]\n}\n";
  std::ofstream f(dir / (name + ".json"));
  f << o.str();
  if (!f) throw std::runtime_error("export_targets: cannot write " + (dir / (name + ".json")).string());
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: export_targets OUT_DIR [DATA_DIR]\n");
    return 2;
  }
  std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::string data = argc == 3 ? argv[2] : EMBER_SOURCE_DATA_DIR;
  std::string const identity = "the sampled coordinates";

  {
    standard_normal<double> t;
    write_target(dir, "standard_normal", t, "{\"mean\": 0, \"variance\": 1}", "x", identity,
                 filled_array<100>(0), filled_array<100>(1));
  }
  {
    ill_conditioned_gaussian<double> t;
    std::array<double, 100> var, sd;
    for (int i = 0; i < 100; ++i) var[std::size_t(i)] = t.variance(i), sd[std::size_t(i)] = std::sqrt(t.variance(i));
    write_target(dir, "ill_conditioned_gaussian", t, "{\"mean\": 0, \"variances\": " + list(var) + "}", "x",
                 identity, filled_array<100>(0), sd);
  }
  {
    rotated_gaussian<double> t;
    auto const S = t.covariance_matrix();
    std::string rows = "[";
    for (int i = 0; i < 100; ++i) {
      std::vector<double> row(100);
      for (int j = 0; j < 100; ++j) row[std::size_t(j)] = S(i, j);
      rows += (i ? ",\n    " : "\n    ") + list(row);
    }
    write_target(dir, "rotated_gaussian", t, "{\"mean\": 0, \"covariance\": " + rows + "]}", "x", identity,
                 filled_array<100>(0), filled_array<100>(1));
  }
  {
    neal_funnel<double> t;
    write_target(dir, "neal_funnel", t, "{\"v_sd\": 3}", "(v, x1..x9), centred", identity, filled_array<10>(0),
                 filled_array<10>(1));
  }
  {
    neal_funnel_noncentred<double> t;
    write_target(dir, "neal_funnel_noncentred", t, "{\"v_sd\": 3}", "z ~ N(0, I10)",
                 "(v, x1..x9) = (3 z0, exp(3 z0 / 2) z1, ...)", filled_array<10>(0), filled_array<10>(1));
  }
  {
    banana<double> t;
    write_target(dir, "banana", t, "{\"b\": " + num(t.b) + ", \"x1_variance\": 100}", "x", identity,
                 filled_array<2>(0), {10.0, 1.0});
  }
  {
    rosenbrock_pairs<double> t;
    auto e = t.energy();
    write_target(dir, "rosenbrock_pairs", t,
                 "{\"pairs\": " + std::to_string(t.pairs) + ", \"a\": " + num(e.a) + ", \"b\": " + num(e.b) + "}", "x",
                 identity, filled_array<36>(1), filled_array<36>(1));
  }
  {
    two_mode_mixture<double> t;
    double c = t.a / std::sqrt(double(t.dim));
    write_target(dir, "two_mode_mixture", t,
                 "{\"weights\": [0.3, 0.7], \"means\": [" + list(filled_array<50>(-c)) + ", " + list(filled_array<50>(c)) +
                     "], \"sigmas\": [1, 1]}",
                 "x", identity, filled_array<50>(0), filled_array<50>(1));
  }
  {
    eight_schools<double> t;
    auto e = t.energy();
    std::array<double, 8> y, sigma;
    for (int j = 0; j < 8; ++j) y[std::size_t(j)] = e.y[j], sigma[std::size_t(j)] = 1 / std::sqrt(e.inv_var[j]);
    std::array<double, 10> spread = filled_array<10>(1);
    spread[0] = 5;
    write_target(dir, "eight_schools", t,
                 "{\"y\": " + list(y) + ", \"sigma\": " + list(sigma) + ", \"mu_sd\": 5, \"tau_cauchy_scale\": 5}",
                 "(mu, log tau, theta_tilde1..8), non-centred", "(mu, tau, theta_j = mu + tau theta_tilde_j)",
                 filled_array<10>(0), spread);
  }
  {
    std::string csv = data + "/breast_cancer.csv";
    breast_cancer_logistic<double> t(csv);
    auto const& s = t.scaling();
    std::array<double, 31> mode;
    for (int i = 0; i < 31; ++i) mode[std::size_t(i)] = t.mode()[i];
    write_target(dir, "breast_cancer_logistic", t,
                 "{\"csv\": " + quoted(std::filesystem::absolute(csv).string()) +
                     ", \"preprocessing\": \"columns 0..29 are features, column 30 is y; features standardised "
                     "(mean 0, sd 1 with n - 1), then a column of ones put in front\", \"prior_sd\": 1"
                     ", \"feature_mean\": " + list(s.mean) + ", \"feature_sd\": " + list(s.sd) + "}",
                 "beta (intercept first)", identity, mode, filled_array<31>(0.1));
  }
  std::printf("export_targets: 10 targets written to %s\n", dir.string().c_str());
  return 0;
} catch (std::exception const& e) {
  std::fprintf(stderr, "export_targets: %s\n", e.what());
  return 1;
}
