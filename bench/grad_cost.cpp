// grad_cost: what a model's gradient costs (issue 35). For each model, in float, for a SIMD batch
// of chains (one chain per lane) and for one chain: nanoseconds per call of
//   value       U(x) alone (the model body in value_ctx),
//   reverse     value_and_grad of model<D>(body) (ad/model.hpp),
//   duals       value_and_grad of model_duals(model) (forward mode, ⌈D/16⌉ passes),
//   hand        a gradient written out by hand (or ember's built-in energy),
// each the median of 5 repeats, the four interleaved in every repeat so that drifts of a shared
// machine hit them alike, and the ratios the targets are about: reverse / value (≤ 3)
// and reverse / hand (≤ 1.5). Positions cycle through 64 random points. The gradients of reverse,
// duals and hand are compared at one point first (the largest difference is printed). The timed
// loop is `noipa`: as a mere `noinline` pure function GCC moved its call past the clock reads.
//   usage: ember_grad_cost [model ...]   (hier_logit, logistic10, gauss_mix, varying500; default all)
#include <ember/ember.hpp>
#include <ember/targets/hier_logit.hpp>

#include "posteriordb/posteriors.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using ember::vec;
using batch = ember::simd_batch<float>;
constexpr int W = int(batch::size);
constexpr int points = 64;
constexpr int repeats = 5;

template <class S, int D>
std::vector<vec<S, D>> random_points(unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> n(0.f, scale);
  std::vector<vec<S, D>> xs(points);
  for (auto& x : xs)
    for (int i = 0; i < D; ++i) {
      if constexpr (std::is_same_v<S, float>) {
        x[i] = n(gen);
      } else {
        alignas(64) float lane[W];
        for (float& l : lane) l = n(gen);
        x[i] = batch::load_aligned(lane);
      }
    }
  return xs;
}

struct kind_value {};
struct kind_grad {};

#if defined(__clang__)
#define GRAD_COST_OPAQUE __attribute__((noinline))  // clang has no noipa
#else
#define GRAD_COST_OPAQUE __attribute__((noipa))
#endif

template <class Kind, class E, class S, int D>
GRAD_COST_OPAQUE float run(E const& e, std::vector<vec<S, D>> const& xs, long evaluations) {
  S acc = S(0.f);
  vec<S, D> g;
  for (long k = 0; k < evaluations; ++k) {
    auto const& x = xs[std::size_t(k % points)];
    if constexpr (std::is_same_v<Kind, kind_value>) {
      acc = acc + e.value(x);
    } else {
      acc = acc + e.value_and_grad(x, g);
      acc = acc + g[int(k % D)];
    }
  }
  if constexpr (std::is_same_v<S, float>)
    return acc;
  else
  {
    alignas(64) float lane[W];
    acc.store_aligned(lane);
    float r = 0;
    for (float l : lane) r += l;
    return r;
  }
}

template <class Kind, class E, class S, int D>
double seconds(E const& e, std::vector<vec<S, D>> const& xs, long evaluations, float& sink) {
  auto const t0 = std::chrono::steady_clock::now();
  sink += run<Kind>(e, xs, evaluations);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Evaluations for about `target` seconds per timing, from one calibration call.
template <class Kind, class E, class S, int D>
long calibrate(E const& e, std::vector<vec<S, D>> const& xs, double target) {
  float sink = 0;
  long n = 1;
  for (;;) {
    double const t = seconds<Kind>(e, xs, n, sink);
    if (t > 0.01 || n > (1L << 30)) return std::max(1L, long(double(n) * target / t));
    n *= 4;
  }
}

template <class E1, class E2, int D>
double max_gradient_difference(E1 const& a, E2 const& b, vec<float, D> const& x) {
  vec<float, D> ga, gb;
  a.value_and_grad(x, ga);
  b.value_and_grad(x, gb);
  double m = 0, scale = 0;
  for (int i = 0; i < D; ++i) {
    m = std::max(m, std::abs(double(ga[i]) - double(gb[i])));
    scale = std::max(scale, std::abs(double(gb[i])));
  }
  return m / std::max(scale, 1.0);
}

// One line per (model, setting): ns per call of the four variants, ns per chain, ratios.
template <class S, class M, class H>
void measure(char const* model, M const& U, H const& hand, unsigned seed, char const* hand_is = "by hand") {
  constexpr int D = M::dim;
  auto const xs = random_points<S, D>(seed, 0.5f);
  auto const V = ember::model_duals(U);
  double const target = 0.05;
  long const nv = calibrate<kind_value>(U, xs, target), nr = calibrate<kind_grad>(U, xs, target),
             nd = calibrate<kind_grad>(V, xs, target), nh = calibrate<kind_grad>(hand, xs, target);
  float sink = 0;
  std::array<double, repeats> tv, tr, td, th;
  for (int r = 0; r < repeats; ++r) {
    tv[std::size_t(r)] = seconds<kind_value>(U, xs, nv, sink) / double(nv);
    tr[std::size_t(r)] = seconds<kind_grad>(U, xs, nr, sink) / double(nr);
    td[std::size_t(r)] = seconds<kind_grad>(V, xs, nd, sink) / double(nd);
    th[std::size_t(r)] = seconds<kind_grad>(hand, xs, nh, sink) / double(nh);
  }
  for (auto* t : {&tv, &tr, &td, &th}) std::sort(t->begin(), t->end());
  double const v = tv[repeats / 2] * 1e9, rv = tr[repeats / 2] * 1e9, du = td[repeats / 2] * 1e9,
               ha = th[repeats / 2] * 1e9;
  int const chains = std::is_same_v<S, float> ? 1 : W;
  std::printf(
      "{\"model\": \"%s\", \"D\": %d, \"chains_per_call\": %d, \"ns_per_call\": {\"value\": %.0f, \"reverse\": %.0f, "
      "\"duals\": %.0f, \"hand\": %.0f}, \"ns_per_chain_gradient\": {\"reverse\": %.0f, \"duals\": %.0f, \"hand\": %.0f}, "
      "\"reverse_over_value\": %.2f, \"reverse_over_hand\": %.2f, \"duals_over_reverse\": %.2f, \"hand\": \"%s\"}%s\n",
      model, D, chains, v, rv, du, ha, rv / chains, du / chains, ha / chains, rv / v, rv / ha, du / rv, hand_is,
      sink == 12345.f ? " " : "");
}

// --- hier_logit written by index (block<O, N>, m.positive), as before named parameters: the
// named vocabulary (ad/params.hpp) against the same terms without it ------------------------------
struct hier_logit_by_index {
  ember::data_view<float> X, y, county, state;
  template <class M>
  void operator()(M& m) const {
    using namespace ember;
    constexpr block<3, 3> beta;
    constexpr block<6, 6> u;
    constexpr block<12, 48> z;
    auto const s_state = m.positive(m[1]);
    auto const s_county = m.positive(m[2]);
    m.add(normal_lpdf(m[0], 0.0, 2.5));
    m.add(normal_lpdf(s_state, 0.0, 1.0) + normal_lpdf(s_county, 0.0, 1.0));
    m.add(normal_lpdf(m[beta], 0.0, 1.0) + normal_lpdf(m[u], 0.0, 1.0) + normal_lpdf(m[z], 0.0, 1.0));
    auto const alpha = let<48>(m, [&](int j) { return m[0] + s_state * m[u][int(state.data[j])] + s_county * m[z][j]; });
    m.add_rows(X.rows, [&](std::int64_t i) { return bernoulli_logit_lpmf(y.data[i], alpha[int(county.data[i])] + dot(X.row(i), m[beta])); });
  }
};

// --- hier_logit: the hand-written gradient of the same posterior -----------------------------------

struct hier_logit_hand {
  using value_type = float;
  static constexpr int dim = 60;
  ember::data_view<float> X, y, county, state;

  template <class S>
  S value(vec<S, 60> const& x) const {
    vec<S, 60> g;
    return value_and_grad(x, g);
  }
  template <class S>
  S value_and_grad(vec<S, 60> const& x, vec<S, 60>& g) const {
    using ember::exp;
    S const mu = x[0], s1 = exp(x[1]), s2 = exp(x[2]);
    S u = mu * mu * S(0.08f) + S(0.5f) * (s1 * s1 + s2 * s2) - x[1] - x[2];
    g[0] = mu * S(0.16f);
    g[1] = s1 * s1 - S(1.f);
    g[2] = s2 * s2 - S(1.f);
    for (int i = 3; i < 60; ++i) {
      u = u + S(0.5f) * x[i] * x[i];
      g[i] = x[i];
    }
    S alpha[48], ga[48];
    for (int j = 0; j < 48; ++j) {
      alpha[j] = mu + s1 * x[6 + int(state.data[j])] + s2 * x[12 + j];
      ga[j] = S(0.f);
    }
    S gb0 = S(0.f), gb1 = S(0.f), gb2 = S(0.f), rows = S(0.f);
    for (std::int64_t i = 0; i < X.rows; ++i) {
      float const* r = X.row(i);
      int const c = int(county.data[i]);
      S const yy = S(y.data[i]);
      S const eta = alpha[c] + x[3] * S(r[0]) + x[4] * S(r[1]) + x[5] * S(r[2]);
      S const e = exp(-abs(eta)), inv = S(1.f) / (S(1.f) + e);
      rows = rows + ember::max(eta, S(0.f)) + log1p(e) - yy * eta;
      S const d = ember::select(eta >= S(0.f), inv, S(e * inv)) - yy;
      ga[c] = ga[c] + d;
      gb0 = gb0 + d * S(r[0]);
      gb1 = gb1 + d * S(r[1]);
      gb2 = gb2 + d * S(r[2]);
    }
    g[3] = g[3] + gb0;
    g[4] = g[4] + gb1;
    g[5] = g[5] + gb2;
    for (int j = 0; j < 48; ++j) {
      int const s = int(state.data[j]);
      g[0] = g[0] + ga[j];
      g[1] = g[1] + ga[j] * s1 * x[6 + s];
      g[6 + s] = g[6 + s] + ga[j] * s1;
      g[2] = g[2] + ga[j] * s2 * x[12 + j];
      g[12 + j] = g[12 + j] + ga[j] * s2;
    }
    return u + rows;
  }
};

// --- logistic regression, D = 10, n = 1,000: against the built-in energy/regression.hpp ---------

struct logistic_body {
  ember::data_view<float> X, y;
  template <class M>
  void operator()(M& m) const {
    constexpr ember::block<0, 10> beta;
    for (int k = 0; k < 10; ++k) m.add(ember::normal_lpdf(m[beta][k], 0.0, 1.0));
    m.add_rows(X.rows, [&](std::int64_t i) { return ember::bernoulli_logit_lpmf(y.data[i], dot(X.row(i), m[beta])); });
  }
};

// --- varying intercepts, D = 500: μ, log τ, log σ, z (497 groups), n = 5,000 normal rows --------

struct varying_body {
  static constexpr int groups = 497;
  ember::data_view<float> y, group;
  template <class M>
  void operator()(M& m) const {
    constexpr ember::block<3, groups> z;
    auto const tau = ember::let(m, m.positive(m[1]));  // used by every row: one adjoint of its own
    auto const sigma = ember::let(m, m.positive(m[2]));
    m.add(ember::normal_lpdf(m[0], 0.0, 5.0));
    m.add(ember::normal_lpdf(tau, 0.0, 1.0));
    m.add(ember::normal_lpdf(sigma, 0.0, 1.0));
    for (int j = 0; j < groups; ++j) m.add(ember::normal_lpdf(m[z][j], 0.0, 1.0));
    m.add_rows(y.rows, [&](std::int64_t i) { return ember::normal_lpdf(y.data[i], m[0] + tau * m[z][int(group.data[i])], sigma); });
  }
};

struct varying_hand {
  using value_type = float;
  static constexpr int dim = 500;
  ember::data_view<float> y, group;
  template <class S>
  S value(vec<S, 500> const& x) const {
    vec<S, 500> g;
    return value_and_grad(x, g);
  }
  template <class S>
  S value_and_grad(vec<S, 500> const& x, vec<S, 500>& g) const {
    using ember::exp;
    S const mu = x[0], tau = exp(x[1]), sigma = exp(x[2]), inv2 = S(1.f) / (sigma * sigma);
    S u = mu * mu * S(0.02f) + S(0.5f) * (tau * tau + sigma * sigma) - x[1] - x[2];
    g[0] = mu * S(0.04f);
    g[1] = tau * tau - S(1.f);
    S gs = sigma * sigma - S(1.f);
    for (int j = 3; j < 500; ++j) {
      u = u + S(0.5f) * x[j] * x[j];
      g[j] = x[j];
    }
    S ss = S(0.f), gt = S(0.f);
    for (std::int64_t i = 0; i < y.rows; ++i) {
      int const j = 3 + int(group.data[i]);
      S const r = mu + tau * x[j] - S(y.data[i]);
      ss = ss + r * r;
      S const d = r * inv2;
      g[0] = g[0] + d;
      gt = gt + d * x[j];
      g[j] = g[j] + d * tau;
    }
    u = u + S(0.5f) * ss * inv2 + S(float(y.rows)) * x[2];
    g[1] = g[1] + gt * tau;
    g[2] = gs + S(float(y.rows)) - ss * inv2;
    return u;
  }
};

bool wanted(int argc, char** argv, char const* name) {
  if (argc < 2) return true;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("# ember_grad_cost: float, one thread; ns per call (a batch call advances %d chains)\n", W);
  if (wanted(argc, argv, "hier_logit")) {
    auto const t = ember::targets::hier_logit<float>::simulated(1, 2000);
    auto const b = t.body();
    auto const U = t.energy();
    hier_logit_hand const H{b.X, b.y, b.county, b.state};
    auto const x = random_points<float, 60>(99, 0.5f)[0];
    std::printf("# hier_logit: largest gradient difference / largest |g|: reverse-hand %.1e, duals-hand %.1e\n",
                max_gradient_difference(U, H, x), max_gradient_difference(ember::model_duals(U), H, x));
    measure<batch>("hier_logit", U, H, 1);
    measure<float>("hier_logit", U, H, 2);
    auto const I = ember::model<60>(hier_logit_by_index{b.X, b.y, b.county, b.state});
    std::printf("# hier_logit: named against by index, largest gradient difference / largest |g| %.1e\n",
                max_gradient_difference(U, I, x));
    measure<batch>("hier_logit", U, I, 1, "the same body by index");
    measure<float>("hier_logit", U, I, 2, "the same body by index");
  }
  if (wanted(argc, argv, "logistic10")) {
    std::mt19937 gen(5);
    std::normal_distribution<float> n;
    std::vector<float> X(10'000), y(1'000);
    for (auto& v : X) v = n(gen);
    for (auto& v : y) v = n(gen) > 0 ? 1.f : 0.f;
    ember::dataset<float> dX(X, 1000, 10), dy(y, 1000, 1);
    auto const U = ember::model<10>(logistic_body{dX.view(), dy.view()});
    auto const H = ember::logistic_regression<10>(dX.view(), dy.view(), ember::normal_prior{1.0});
    auto const x = random_points<float, 10>(98, 0.5f)[0];
    std::printf("# logistic10: largest gradient difference / largest |g|: reverse-built-in %.1e\n",
                max_gradient_difference(U, H, x));
    measure<batch>("logistic10", U, H, 3, "built-in logistic_regression");
    measure<float>("logistic10", U, H, 4, "built-in logistic_regression");
  }
  if (wanted(argc, argv, "gauss_mix")) {
    // posteriordb's low_dim_gauss_mix (D = 5, 1,000 rows, log_sum_exp per row) as a model body,
    // against the same posterior's custom_energy lambda (duals, written independently).
    ember::posteriordb::low_dim_gauss_mix<float> const p(std::string(EMBER_POSTERIORDB_DIR) + "/data");
    auto const U = p.model();
    auto const L = p.energy();
    measure<batch>("gauss_mix5", U, L, 7, "the posterior's dual lambda");
    measure<float>("gauss_mix5", U, L, 8, "the posterior's dual lambda");
  }
  if (wanted(argc, argv, "varying500")) {
    std::mt19937 gen(6);
    std::normal_distribution<float> n;
    std::vector<float> y(5'000), group(5'000);
    for (std::size_t i = 0; i < y.size(); ++i) {
      group[i] = float(gen() % varying_body::groups);
      y[i] = 1.f + 0.5f * std::sin(group[i]) + n(gen);
    }
    ember::dataset<float> dy(y, 5000, 1), dg(group, 5000, 1);
    auto const U = ember::model<500>(varying_body{dy.view(), dg.view()});
    varying_hand const H{dy.view(), dg.view()};
    auto const x = random_points<float, 500>(97, 0.5f)[0];
    std::printf("# varying500: largest gradient difference / largest |g|: reverse-hand %.1e\n",
                max_gradient_difference(U, H, x));
    measure<batch>("varying500", U, H, 5);
    measure<float>("varying500", U, H, 6);
  }
}
