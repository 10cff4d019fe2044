#pragma once
// Statistical checks of the samplers, written once over the backend type and instantiated per
// backend (Kokkos-style): tests/kernel/*_test.cpp and backend/cuda_test_cpu.cpp with
// backend::cpu{}, backend/cuda_*.cu with backend::cuda{}. One framework: the z bound, the exact
// finite-step law of ULA on a Gaussian and the z-scores of means and variances are defined once.
//
// Checks of final states use ONE draw per chain, so the draws are independent and the
// Monte-Carlo standard errors are exact: SE(mean) = σ/√n, SE(variance) = σ²√(2/(n−1)) for a
// Gaussian coordinate, and for other statistics the sample variance of the statistic's terms
// over n. Checks through track(moments) use the same formulas at each kept step (over chains,
// which are independent). A check passes when |z| < 5: P(|z| > 5) = 5.7·10⁻⁷ per z-score, so with
// the ≤ 80 z-scores of one check a false failure is rarer than 5·10⁻⁵ per run (and the seeds are
// fixed, so a run is reproducible).
//
// Only host code here: the sampled code is the library's, built from plain energies and kernels.
// Shared by .cpp tests (backend::cpu, backend::scalar) and .cu tests (backend::cuda): each unit
// brings the backends its compiler can build.
#if defined(__CUDACC__)
#include <ember/cuda.cuh>
#else
#include <ember/ember.hpp>
#endif

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ember_test {

using namespace ember;

inline constexpr double z_bound = 5;

// z-scores of a sample mean and a sample variance of n independent Gaussian draws of variance v.
inline double z_mean(double got, double mean, double v, double n) { return (got - mean) / std::sqrt(v / n); }
inline double z_variance(double got, double v, double n) { return (got - v) / (v * std::sqrt(2 / (n - 1))); }

// ULA on a Gaussian coordinate of mean μ and variance σ² from the default start x₀ ~ uniform(−2, 2)
// (mean 0, variance 4/3). With a = 1 − η/σ²: x_{n+1} − μ = a (x_n − μ) + √(2η) ξ, so
//   mean_n = μ(1 − aⁿ),   var_n = (4/3) a^{2n} + 2η (1 − a^{2n}) / (1 − a²).
// The law is not Gaussian while the uniform part lasts, but the checks below only use its mean
// and variance; the z of a sample variance assumes a Gaussian's fourth moment, which a uniform
// part lowers, so it errs on the safe side.
struct gaussian_law {
  double mean, var;
};
inline gaussian_law ula_law(double mu, double sigma2, double eta, int n) {
  double a = 1 - eta / sigma2, a2n = std::pow(a * a, n);
  return {mu * (1 - std::pow(a, n)), a2n * 4.0 / 3.0 + 2 * eta * (1 - a2n) / (1 - a * a)};
}

// Mean, variance and covariances over chains of the final states.
template <class R>
struct final_moments {
  R const& r;
  double mean(int d) const {
    double m = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) m += double(r.final_state(c)[d]);
    return m / double(r.chains());
  }
  double cov(int d, int e) const {
    double md = mean(d), me = mean(e), s = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) {
      auto x = r.final_state(c);
      s += (double(x[d]) - md) * (double(x[e]) - me);
    }
    return s / double(r.chains() - 1);
  }
};

// z-score of a sample mean of f over the chains' final states against `truth`, with the standard
// error from the sample variance of f.
template <class R, class F>
double z_of_mean(R const& r, F f, double truth) {
  double n = double(r.chains()), s = 0, q = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) s += f(r.final_state(c));
  double m = s / n;
  for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(f(r.final_state(c)) - m, 2);
  return (m - truth) / std::sqrt(q / (n - 1) / n);
}

// Checks mean, variance and the covariances `pairs` of a Gaussian law against (mu, Sigma).
template <class R, int D>
void check_gaussian_moments(R const& r, std::array<double, D> const& mu,
                            std::array<std::array<double, D>, D> const& sigma,
                            std::vector<std::array<int, 2>> const& pairs) {
  REQUIRE(r.divergent_chains() == 0);
  final_moments<R> m{r};
  double n = double(r.chains());
  for (int d = 0; d < D; ++d) {
    double s2 = sigma[d][d];
    double zm = z_mean(m.mean(d), mu[d], s2, n);
    double zv = z_variance(m.cov(d, d), s2, n);
    INFO("dimension " << d << ": mean " << m.mean(d) << " (truth " << mu[d] << ", z = " << zm << "), variance "
                      << m.cov(d, d) << " (truth " << s2 << ", z = " << zv << ")");
    CHECK(std::abs(zm) < z_bound);
    CHECK(std::abs(zv) < z_bound);
  }
  for (auto [d, e] : pairs) {
    // Var of a sample covariance of a Gaussian: (σ_de² + σ_dd σ_ee) / n.
    double se = std::sqrt((sigma[d][e] * sigma[d][e] + sigma[d][d] * sigma[e][e]) / n);
    double z = (m.cov(d, e) - sigma[d][e]) / se;
    INFO("covariance (" << d << ", " << e << "): " << m.cov(d, e) << " (truth " << sigma[d][e] << ", z = " << z << ")");
    CHECK(std::abs(z) < z_bound);
  }
}

// ULA on a diagonal Gaussian from the default start follows `ula_law` per
// dimension; checked on the final states after 1, 5 and 40 steps.
template <class Backend>
void check_ula_exact_law(Backend const& backend) {
  constexpr int D = 3;
  double const mu[D] = {1.0, -2.0, 0.5}, sd[D] = {0.5, 1.0, 2.0}, eta = 0.1;
  ember::gaussian U(ember::vec<float, D>{{float(mu[0]), float(mu[1]), float(mu[2])}},
                    ember::vec<float, D>{{float(sd[0]), float(sd[1]), float(sd[2])}});
  auto k = ember::ula(U, {.step_size = eta});
  for (int n : {1, 5, 40}) {
    auto r = ember::sample(k, {.chains = 100'000, .steps = n, .seed = 1234 + std::uint64_t(n)}, backend);
    REQUIRE(r.divergent_chains() == 0);
    std::array<double, D> mean{};
    std::array<std::array<double, D>, D> cov{};
    for (int d = 0; d < D; ++d) {
      auto law = ula_law(mu[d], sd[d] * sd[d], eta, n);
      mean[d] = law.mean;
      cov[d][d] = law.var;
    }
    INFO("after " << n << " ULA steps");
    // Coordinates are independent: covariances 0, with standard error √(σ_dd σ_ee / n).
    check_gaussian_moments<decltype(r), D>(r, mean, cov, {{0, 1}, {1, 2}});
  }
}

// The Cholesky factor (lower, row-major) of a symmetric positive-definite S.
template <int D>
std::array<std::array<double, D>, D> cholesky(std::array<std::array<double, D>, D> const& S) {
  std::array<std::array<double, D>, D> L{};
  for (int i = 0; i < D; ++i)
    for (int j = 0; j <= i; ++j) {
      double a = S[i][j];
      for (int k = 0; k < j; ++k) a -= L[i][k] * L[j][k];
      L[i][j] = i == j ? std::sqrt(a) : a / L[j][j];
    }
  return L;
}

// A 10-dimensional Gaussian with non-diagonal covariance Σ_ij = s_i s_j ρ^{|i−j|} (ρ = 0.5,
// s from 0.8 to 1.2): eigenvalues between about 0.2 and 4.3.
struct gaussian10 {
  static constexpr int D = 10;
  std::array<double, D> mu{};
  std::array<std::array<double, D>, D> sigma{};
  gaussian10() {
    for (int i = 0; i < D; ++i) mu[i] = 0.5 - 0.15 * i;
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j)
        sigma[i][j] = (0.8 + 0.4 * i / 9.0) * (0.8 + 0.4 * j / 9.0) * std::pow(0.5, std::abs(i - j));
  }
  auto energy() const {
    ember::vec<float, D> m;
    std::array<std::array<float, D>, D> s;
    for (int i = 0; i < D; ++i) {
      m[i] = float(mu[i]);
      for (int j = 0; j < D; ++j) s[i][j] = float(sigma[i][j]);
    }
    return ember::gaussian(m, s);
  }
  // Covariances checked: neighbours (ρ = 0.5), next neighbours and a distant pair (≈ 0).
  static std::vector<std::array<int, 2>> pairs() { return {{0, 1}, {4, 5}, {3, 5}, {0, 9}}; }
  // Σ's Cholesky factor (lower).
  std::array<std::array<double, D>, D> cholesky() const { return ember_test::cholesky<D>(sigma); }
  // n independent draws of N(μ, Σ): chains that start in the target stay in it under an exact
  // kernel, so an error in a kernel's sampling law shows in the moments after a few transitions.
  std::vector<ember::vec<float, D>> exact_draws(std::int64_t n, std::uint64_t seed) const {
    auto const l = cholesky();
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z;
    std::vector<ember::vec<float, D>> out(static_cast<std::size_t>(n));
    for (auto& x : out) {
      double e[D];
      for (double& v : e) v = z(rng);
      for (int i = 0; i < D; ++i) {
        double s = mu[i];
        for (int k = 0; k <= i; ++k) s += l[i][k] * e[k];
        x[i] = float(s);
      }
    }
    return out;
  }
};

// MALA leaves the Gaussian invariant: after a burn-in of many relaxation times (λ_max/η ≈ 54
// steps per e-fold, 1200 steps), the final states have the target's moments.
template <class Backend>
void check_mala_gaussian_moments(Backend const& backend) {
  gaussian10 g;
  auto r = ember::sample(ember::mala(g.energy(), {.step_size = 0.08}) | ember::burn_in(1200),
                         {.chains = 20'000, .steps = 1, .seed = 7}, backend);
  CHECK(r.acceptance_rate() > 0.5);
  check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

// HMC (velocity Verlet, ε = 0.25, L = 4) likewise. With a fixed trajectory length T = Lε each
// eigendirection of variance λ turns by φ ≈ T/√λ per transition and relaxes like cos φ; T must
// keep φ away from π for every λ (T = 2 puts λ ≈ 0.4 at φ ≈ π: it barely relaxes). T = 1 gives
// φ between 0.48 (λ = 4.3, cos φ = 0.89) and 2.2 (λ = 0.2): 300 transitions relax by e^{-35}.
template <class Backend>
void check_hmc_gaussian_moments(Backend const& backend) {
  gaussian10 g;
  auto r = ember::sample(ember::hmc(g.energy(), {.step_size = 0.25, .integrator_steps = 4}) | ember::burn_in(300),
                         {.chains = 20'000, .steps = 1, .seed = 8}, backend);
  CHECK(r.acceptance_rate() > 0.6);
  check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

// E[x^p] under the one-dimensional law ∝ exp(−h (x² − b²)²), by Simpson's rule on [−5, 5] with
// 20,000 intervals (the density is below e^{−1000} at the ends; the rule's error is far below
// the Monte-Carlo errors it is compared with).
inline double double_well_moment(int p, double h = 2, double b = 1) {
  int const n = 20'000;
  double const lo = -5, hi = 5, dx = (hi - lo) / n;
  double z = 0, m = 0;
  for (int i = 0; i <= n; ++i) {
    double x = lo + i * dx, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    double f = w * std::exp(-h * (x * x - b * b) * (x * x - b * b));
    z += f;
    m += f * std::pow(x, p);
  }
  return m / z;
}

// E[x], E[x²], E[x⁴] per coordinate of a sampler on double_well<float, 2> against quadrature.
// The coordinates are independent under the target, so each is checked on its own; standard
// errors come from the sample variances of x, x², x⁴.
template <class R>
void check_double_well_moments(R const& r) {
  REQUIRE(r.divergent_chains() == 0);
  for (int d = 0; d < 2; ++d)
    for (int p : {1, 2, 4}) {
      double truth = p == 1 ? 0.0 : double_well_moment(p);
      double z = z_of_mean(r, [&](auto const& x) { return std::pow(double(x[d]), p); }, truth);
      INFO("dimension " << d << ", E[x^" << p << "] (truth " << truth << "): z = " << z);
      CHECK(std::abs(z) < z_bound);
    }
}

// Every chain starts in the right-hand well, x = (+1, +1): with a symmetric start a sampler that
// never crossed the barrier would still show the symmetric target's moments, so only this start
// tests crossing. The wells balance at the Kramers rate k ≈ √(U''(±1)·|U''(0)|)/2π · e^{−2} ≈ 0.24
// per unit of Langevin time; after time t the imbalance of E[x] is e^{−2kt}, below 1e-4 (a
// hundredth of the mean's standard error at 20,000 chains) for t ≥ 20.
inline std::vector<ember::vec<float, 2>> right_well_starts(std::int64_t chains) {
  return std::vector<ember::vec<float, 2>>(std::size_t(chains), ember::vec<float, 2>{{1.f, 1.f}});
}

// MALA is not geometrically ergodic on quartic tails: with η = 0.03 a chain out at |x| ≳ 1.7
// proposes a jump across the well whose reverse proposal is so unlikely that it is rejected for
// thousands of steps. η = 0.005 is safe; 5000 steps are t = 25 of Langevin time.
template <class Backend>
void check_mala_double_well(Backend const& backend) {
  auto starts = right_well_starts(20'000);
  auto r = ember::sample(ember::mala(ember::double_well<float, 2>{}, {.step_size = 0.005}) | ember::burn_in(5000),
                         {.chains = 20'000, .steps = 1, .seed = 9, .init = starts}, backend);
  check_double_well_moments(r);
}

// HMC with trajectories of length εL = 1 crosses far faster than diffusion; 1000 transitions
// leave no measurable imbalance.
template <class Backend>
void check_hmc_double_well(Backend const& backend) {
  auto starts = right_well_starts(20'000);
  auto r = ember::sample(ember::hmc(ember::double_well<float, 2>{}, {.step_size = 0.1, .integrator_steps = 10}) |
                             ember::burn_in(1000),
                         {.chains = 20'000, .steps = 1, .seed = 10, .init = starts}, backend);
  check_double_well_moments(r);
}

// P1 of docs/performance.md: mean linspace(−1, 1, 10), Σ = diag(linspace(0.5, 1.5, 10)), given
// as a dense covariance. The GPU-vs-CPU comparisons (backend/cuda_test.cu) run on it.
inline constexpr int p1_dim = 10;
inline gaussian<float, p1_dim> p1_energy() {
  constexpr int D = p1_dim;
  vec<float, D> mu;
  std::array<std::array<float, D>, D> cov{};
  for (int i = 0; i < D; ++i) {
    mu[i] = -1.f + 2.f * float(i) / float(D - 1);
    cov[i][i] = 0.5f + float(i) / float(D - 1);
  }
  return gaussian<float, D>(mu, cov);
}
inline double p1_mean(int i) { return -1.0 + 2.0 * i / (p1_dim - 1); }
inline double p1_var(int i) { return 0.5 + double(i) / (p1_dim - 1); }

// ULA on the P1 Gaussian from the default start follows `ula_law` at every kept step, checked through
// track(moments) over 200,000 chains.
template <class Backend>
void ula_follows_exact_law(Backend const& backend) {
  auto const U = p1_energy();
  float const eta = 0.1f;
  std::int64_t const C = 200'000, steps = 40;
  auto res = sample(ula(U, {.step_size = eta}) | thin(10) | track(moments), {.chains = C, .steps = steps, .seed = 7},
                    backend);
  REQUIRE(res.trace().mean.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    int n = int(10 * (k + 1));
    REQUIRE(res.trace().live_chains[k] == C);
    for (int i = 0; i < p1_dim; ++i) {
      auto law = ula_law(p1_mean(i), p1_var(i), double(eta), n);
      INFO("kept step " << k << ", dimension " << i);
      CHECK(std::abs(z_mean(res.trace().mean[k][i], law.mean, law.var, double(C))) < z_bound);
      CHECK(std::abs(z_variance(res.trace().variance[k][i], law.var, double(C))) < z_bound);
    }
  }
}

// MALA started in the target law (init = exact draws) keeps the target's moments at every kept step.
template <class Backend>
void mala_leaves_gaussian_invariant(Backend const& backend) {
  auto const U = p1_energy();
  std::int64_t const C = 100'000;
  std::vector<vec<float, p1_dim>> x0(C);
  for (std::int64_t c = 0; c < C; ++c) {
    auto z = make_chain_rng<float>(99, std::uint32_t(c), 0).template normal<p1_dim>(purpose::init);
    for (int i = 0; i < p1_dim; ++i) x0[c][i] = float(p1_mean(i) + std::sqrt(p1_var(i)) * z[i]);
  }
  auto res = sample(mala(U, {.step_size = 0.2f}) | thin(25) | track(moments, acceptance),
                    {.chains = C, .steps = 100, .seed = 11, .init = x0}, backend);
  REQUIRE(res.trace().mean.size() == 4);
  CHECK(res.acceptance_rate() > 0.5);
  CHECK(res.divergent_chains() == 0);
  for (std::size_t k = 0; k < 4; ++k)
    for (int i = 0; i < p1_dim; ++i) {
      INFO("kept step " << k << ", dimension " << i);
      CHECK(std::abs(z_mean(res.trace().mean[k][i], p1_mean(i), p1_var(i), double(C))) < z_bound);
      CHECK(std::abs(z_variance(res.trace().variance[k][i], p1_var(i), double(C))) < z_bound);
    }
}

// The pipelines the GPU-vs-CPU comparisons run; defined once so both backends run the same ones.
inline auto compare_ula_pipe() {
  return ula(p1_energy(), {.step_size = 0.1f}) | burn_in(20) | thin(3) | record() | track(moments, mean_energy);
}
inline auto compare_mala_pipe() { return mala(p1_energy(), {.step_size = 0.3f}) | record() | track(acceptance); }
inline auto diverging_pipe() { return ula(p1_energy(), {.step_size = 3.0f}) | record() | track(moments); }
inline sample_options<float, p1_dim> const compare_ula_opt{.chains = 3000, .steps = 60, .seed = 1234};
inline sample_options<float, p1_dim> const compare_mala_opt{.chains = 2000, .steps = 50, .seed = 5};
inline sample_options<float, p1_dim> const diverging_opt{.chains = 500, .steps = 400, .seed = 3};

using ula_result = result<float, p1_dim>;
using mala_result = result<float, p1_dim>;
using diverging_result = result<float, p1_dim>;

// The CPU side of the comparisons, compiled by the host compiler (backend/cuda_test_cpu.cpp): the
// CPU backends are host code, which a .cu unit never includes.
ula_result cpu_compare_ula();
mala_result cpu_compare_mala();
diverging_result cpu_diverging();

}  // namespace ember_test
