// The metric adapters' estimates (adapt/covariance.hpp, adapt/mass.hpp): the dense metric from
// draws and gradients is the target's covariance when the draws are too wide (chains on their way
// in), `auto_mass()` takes the dense metric where coordinates correlate and the diagonal one where
// they do not or where it cannot judge (bit for bit `diagonal_mass()` there), and samplers with it
// have the target's means (z-tests against Monte-Carlo standard errors).
#include "generic/sampler_checks.hpp"
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace {

constexpr double z_bound = 5;

// Σ of a D-dimensional Gaussian whose coordinates i and i + 1 correlate at rho, with standard
// deviations 1, 2, 4, 1, 2, 4, …: an AR(1) correlation matrix scaled.
template <int D>
std::array<std::array<double, D>, D> correlated(double rho) {
  std::array<std::array<double, D>, D> S{};
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) S[i][j] = std::pow(rho, std::abs(i - j)) * double(1 << (i % 3)) * double(1 << (j % 3));
  return S;
}

// The sums a dense window accumulates (n, Σx, the upper triangle of Σxxᵀ) over n draws.
template <int D>
std::vector<double> window_sums(std::vector<std::array<double, D>> const& xs) {
  std::vector<double> s(std::size_t(ember::pooled_covariance<D, true>::sums), 0.0);
  for (auto const& x : xs) {
    s[0] += 1;
    int q = 1 + D;
    for (int i = 0; i < D; ++i) {
      s[std::size_t(1 + i)] += x[std::size_t(i)];
      for (int j = i; j < D; ++j) s[std::size_t(q++)] += x[std::size_t(i)] * x[std::size_t(j)];
    }
  }
  return s;
}

// Draws x = μ + c L z (c = 1: the target; c = 3: three times too wide) and their gradients
// ∇U = Σ⁻¹(x − μ) = c L⁻ᵀ z, as one window; gk ≠ 1 scales the gradients as a target whose draws
// and gradients disagree with any one Gaussian would (a window that does not look Gaussian).
template <int D>
void gaussian_window(std::array<std::array<double, D>, D> const& S, double c, int n, std::uint32_t seed,
                     ember::pooled_covariance<D, true>& x, ember::pooled_covariance<D, true>& g, double gk = 1) {
  auto const L = ember_test::cholesky<D>(S);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<std::array<double, D>> xs, gs;
  for (int k = 0; k < n; ++k) {
    std::array<double, D> z{}, xv{}, gv{};
    for (auto& v : z) v = normal(rng);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j <= i; ++j) xv[std::size_t(i)] += c * L[i][j] * z[std::size_t(j)];
    for (int i = D - 1; i >= 0; --i) {  // Lᵀ w = gk c z
      double a = gk * c * z[std::size_t(i)];
      for (int j = i + 1; j < D; ++j) a -= L[j][i] * gv[std::size_t(j)];
      gv[std::size_t(i)] = a / L[i][i];
    }
    for (int i = 0; i < D; ++i) xv[std::size_t(i)] += 0.5 * i;
    xs.push_back(xv);
    gs.push_back(gv);
  }
  x.reset();
  g.reset();
  x.add(window_sums<D>(xs).data());
  g.add(window_sums<D>(gs).data());
}

}  // namespace

TEST_CASE("the symmetric eigendecomposition reconstructs its matrix", "[adapt][metric]") {
  constexpr int D = 7;
  auto const S = correlated<D>(0.8);
  std::vector<double> a(D * D), vecs, vals;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) a[std::size_t(i * D + j)] = S[i][j];
  ember::detail::symmetric_eigen(a, D, vecs, vals);
  auto const back = ember::detail::eigen_function(vecs, vals, D, [](double v) { return v; });
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) CHECK(back[std::size_t(i * D + j)] == Approx(S[i][j]).margin(1e-12 * 16));
  for (double v : vals) CHECK(v > 0);
}

TEST_CASE("the dense metric from draws and gradients is the covariance even from draws three times too wide",
          "[adapt][metric]") {
  // Draws three times too wide (chains on their way in) with the target's gradients there. The
  // gradients are Σ⁻¹(x − μ), linear in the draws, so over the window Σg = Σ⁻¹ Σx Σ⁻¹ exactly and
  // Σx # Σg⁻¹ = Σ whatever the draws' sample covariance Σx: the estimate is Σ to rounding, then
  // regularised, w Σ + 10⁻³(1 − w) I with w = n/(n + 5). The draws alone give about 9Σ.
  constexpr int D = 6;
  auto const S = correlated<D>(0.9);
  ember::pooled_covariance<D, true> x, g;
  gaussian_window<D>(S, 3.0, 20'000, 5, x, g);
  auto const from_both = ember::dense_metric_from_gradients<double>(x, g);
  auto const from_draws = x.metric<double>();
  for (int i = 0; i < D; ++i)
    for (int j = 0; j <= i; ++j) {
      double both = 0, draws = 0;
      for (int k = 0; k <= j; ++k) {
        both += from_both(i, k) * from_both(j, k);
        draws += from_draws(i, k) * from_draws(j, k);
      }
      double const w = 20'000.0 / 20'005.0, want = w * S[i][j] + (i == j ? 1e-3 * (1 - w) : 0.0);
      INFO("entry (" << i << ", " << j << "): both " << both << ", draws " << draws << ", target " << want);
      CHECK(std::abs(both - want) < 1e-9 * std::sqrt(S[i][i] * S[j][j]));
      if (i == j) CHECK(draws > 8 * S[i][j]);
    }
}

TEST_CASE("a window whose gradients do not vary in some direction gets the diagonal rule's metric", "[adapt][metric]") {
  // Chains far out in the first windows have gradients of 10⁶ that barely vary, so their
  // covariance is singular to rounding; the geometric mean would divide by its zero eigenvalue.
  // Here the gradients of coordinates 0 and 1 add up to `offset` within 10⁻⁶: Σg is singular
  // along (1, 1) but for an eigenvalue 10⁻¹² of the others (offset 0), or to rounding (10⁶).
  constexpr int D = 4;
  for (double offset : {0.0, 1e6}) {
    INFO("offset " << offset);
    ember::pooled_covariance<D, true> x, g;
    gaussian_window<D>(correlated<D>(0.9), 1.0, 2'000, 9, x, g);
    std::mt19937_64 rng(10);
    std::normal_distribution<double> normal;
    std::vector<std::array<double, D>> gs;
    for (int k = 0; k < 2'000; ++k) {
      double const a = normal(rng);
      gs.push_back({offset + a, -a + 1e-6 * normal(rng), normal(rng), normal(rng)});
    }
    g.reset();
    g.add(window_sums<D>(gs).data());
    auto const m = ember::dense_metric_from_gradients<double>(x, g);
    auto const d = ember::diagonal_metric_from_gradients<double>(ember::diagonal_of(x), ember::diagonal_of(g));
    for (int i = 0; i < D; ++i)
      for (int j = 0; j <= i; ++j) CHECK(m(i, j) == (i == j ? d.scale[i] : 0.0));
  }
}

TEST_CASE("auto_mass's choice: dense where coordinates correlate, diagonal where they do not", "[adapt][metric]") {
  constexpr int D = 8;
  ember::pooled_covariance<D, true> x, g;
  double costs[2];
  // Correlated at 0.95 between neighbours: the diagonal metric leaves the correlation matrix's
  // condition number, 246 in 8 dimensions, so √246 ≈ 16 steps against the dense metric's 1.
  gaussian_window<D>(correlated<D>(0.95), 1.0, 4'000, 6, x, g);
  auto const m = ember::auto_metric_from_gradients<float>(x, g, costs);
  {
    INFO("costs: diagonal " << costs[0] << ", dense " << costs[1]);
    CHECK(m.dense);
    CHECK(costs[0] > 4 * costs[1]);
  }
  // Independent coordinates of different scales: both whiten it, and the diagonal is kept.
  gaussian_window<D>(correlated<D>(0.0), 1.0, 4'000, 7, x, g);
  auto const d = ember::auto_metric_from_gradients<float>(x, g, costs);
  {
    INFO("costs: diagonal " << costs[0] << ", dense " << costs[1]);
    CHECK_FALSE(d.dense);
  }
  // Weak correlation (0.3): a dense metric would save under half the steps; diagonal kept.
  gaussian_window<D>(correlated<D>(0.3), 1.0, 4'000, 8, x, g);
  CHECK_FALSE(ember::auto_metric_from_gradients<float>(x, g, costs).dense);
  // Draws and gradients that do not fit one Gaussian (the gradients three times too large: both
  // costs triple, the dense one to about 3): the dense metric must then promise a twentieth of
  // the diagonal's steps. At correlation 0.8 (a promise of about 6) it is not kept; at 0.99 it is.
  gaussian_window<D>(correlated<D>(0.8), 1.0, 4'000, 11, x, g);
  bool const at_08 = ember::auto_metric_from_gradients<float>(x, g, costs).dense != 0;
  {
    INFO("costs at 0.8: diagonal " << costs[0] << ", dense " << costs[1]);
    CHECK(at_08);
    CHECK(costs[0] < 10 * costs[1]);
  }
  gaussian_window<D>(correlated<D>(0.8), 1.0, 4'000, 11, x, g, 3.0);
  bool const at_08_x3 = ember::auto_metric_from_gradients<float>(x, g, costs).dense != 0;
  {
    INFO("costs at 0.8, gradients ×3: diagonal " << costs[0] << ", dense " << costs[1]);
    CHECK_FALSE(at_08_x3);
    CHECK(costs[1] > 2);
  }
  gaussian_window<D>(correlated<D>(0.99), 1.0, 4'000, 12, x, g, 3.0);
  bool const at_099_x3 = ember::auto_metric_from_gradients<float>(x, g, costs).dense != 0;
  {
    INFO("costs at 0.99, gradients ×3: diagonal " << costs[0] << ", dense " << costs[1]);
    CHECK(at_099_x3);
    CHECK(costs[0] > 20 * costs[1]);
  }
  // The two members agree with the separate estimates, bit for bit.
  auto const diag = ember::diagonal_metric_from_gradients<float>(ember::diagonal_of(x), ember::diagonal_of(g));
  auto const full = ember::dense_metric_from_gradients<float>(x, g);
  auto const both = ember::auto_metric_from_gradients<float>(x, g);
  for (int i = 0; i < D; ++i) CHECK(both.diagonal.scale[i] == diag.scale[i]);
  for (int k = 0; k < D * (D + 1) / 2; ++k) CHECK(both.full.lower[k] == full.lower[k]);
}

TEST_CASE("ChEES-HMC and NUTS with auto_mass() take a dense metric on a correlated Gaussian and sample it",
          "[adapt][metric][statistics]") {
  constexpr int D = 6;
  auto const S = correlated<D>(0.95);
  std::array<std::array<float, D>, D> Sf{};
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) Sf[i][j] = float(S[i][j]);
  ember::vec<float, D> mu;
  for (int i = 0; i < D; ++i) mu[i] = 0.5f * float(i);
  ember::gaussian<float, D, ember::covariance::full> U(mu, Sf);
  auto check = [&](auto const& r, char const* what) {
    INFO(what);
    CHECK(r.adapted().dense_metric);
    CHECK(r.adapted().metric_scale.size() == std::size_t(D * (D + 1) / 2));
    auto const s = r.summary();
    for (int i = 0; i < D; ++i) {
      auto const& d = s.dims[std::size_t(i)];
      INFO("coordinate " << i << ": mean " << d.mean << " (mcse " << d.mcse << "), sd " << d.sd);
      CHECK(std::abs(d.mean - 0.5 * i) < z_bound * d.mcse);
      CHECK(d.rhat < 1.01);
    }
  };
  ember::sample_options<float, D> const o{.chains = 16, .steps = 2000, .seed = 3, .progress = false};
  check(ember::sample(ember::hmc(U, {}) | ember::warmup(1000, ember::step_size(), ember::auto_mass(), ember::chees()) | ember::record(), o),
        "ChEES-HMC");
  check(ember::sample(ember::nuts(U) | ember::warmup(1000, ember::step_size(), ember::auto_mass()) | ember::record(), o), "NUTS");
  check(ember::sample(ember::chees_hmc(U, {.warmup = 1000}) | ember::record(), o), "chees_hmc's default");
  // The metric's kind fixed: chees_hmc's third argument.
  auto const diagonal = ember::sample(ember::chees_hmc(U, {.warmup = 1000}, ember::diagonal_mass()) | ember::record(), o);
  CHECK_FALSE(diagonal.adapted().dense_metric);
  CHECK(diagonal.adapted().metric_scale.size() == std::size_t(D));
  // The same target with its coordinates independent keeps the diagonal metric.
  ember::gaussian<float, D, ember::covariance::full> V(mu, [&] {
    auto I = Sf;
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j)
        if (i != j) I[i][j] = 0;
    return I;
  }());
  auto const r = ember::sample(ember::nuts(V) | ember::warmup(1000, ember::step_size(), ember::auto_mass()) | ember::record(), o);
  CHECK_FALSE(r.adapted().dense_metric);
  CHECK(r.adapted().metric_scale.size() == std::size_t(D));
}

TEST_CASE("auto_mass() is diagonal_mass(), bit for bit, where it cannot judge or cannot hold a dense metric",
          "[adapt][metric]") {
  // Above 64 dimensions (dense_metric's bound) and for the underdamped Langevin kernels (a metric
  // that is diagonal only) the adapter's state and the kernel's metric are diagonal ones: the same
  // draws as diagonal_mass(). Without gradients ({.gradients = false}) the metric stays diagonal.
  constexpr int D = 70;
  ember::vec<float, D> mu, sd;
  for (int i = 0; i < D; ++i) {
    mu[i] = 0.1f * float(i % 7);
    sd[i] = 0.5f + 0.05f * float(i % 11);
  }
  ember::gaussian<float, D, ember::covariance::diagonal> U(mu, sd);
  ember::sample_options<float, D> const o{.chains = 16, .steps = 300, .seed = 5, .progress = false};
  auto const a = ember::sample(ember::mala(U, {}) | ember::warmup(200) | ember::record(), o);
  auto const b = ember::sample(ember::mala(U, {}) | ember::warmup(200, ember::step_size(), ember::diagonal_mass()) | ember::record(), o);
  using tuned = typename decltype(ember::mala(U, {}) | ember::warmup(200))::kernel_type;
  static_assert(std::is_same_v<typename tuned::metric_type, ember::diagonal_metric<float, D>>,
                "above 64 dimensions auto_mass() adapts a diagonal_metric");
  auto same = [](auto const& x, auto const& y) {
    auto const u = x.samples().data(), v = y.samples().data();
    return u.size() == v.size() && std::equal(u.begin(), u.end(), v.begin());
  };
  CHECK(same(a, b));
  constexpr int d = 4;
  ember::gaussian<float, d, ember::covariance::diagonal> V(ember::vec<float, d>{{0.f, 1.f, 2.f, 3.f}},
                                                            ember::vec<float, d>{{1.f, 2.f, 0.5f, 1.f}});
  ember::sample_options<float, d> const p{.chains = 16, .steps = 300, .seed = 6, .progress = false};
  auto const l1 = ember::sample(ember::underdamped_langevin(V, {}) | ember::warmup(200) | ember::record(), p);
  auto const l2 = ember::sample(ember::underdamped_langevin(V, {}) | ember::warmup(200, ember::step_size(), ember::diagonal_mass()) | ember::record(), p);
  CHECK(same(l1, l2));
  // No gradients to judge by: diagonal, though the coordinates correlate.
  constexpr int c = 6;
  auto const S = correlated<c>(0.95);
  std::array<std::array<float, c>, c> Sf{};
  for (int i = 0; i < c; ++i)
    for (int j = 0; j < c; ++j) Sf[i][j] = float(S[i][j]);
  ember::gaussian<float, c, ember::covariance::full> W(ember::vec<float, c>{}, Sf);
  auto const r = ember::sample(ember::nuts(W) | ember::warmup(400, ember::step_size(), ember::auto_mass({.gradients = false})) | ember::record(),
                               ember::sample_options<float, c>{.chains = 16, .steps = 500, .seed = 7, .progress = false});
  CHECK_FALSE(r.adapted().dense_metric);
  CHECK(r.adapted().metric_scale.size() == std::size_t(c));
}
