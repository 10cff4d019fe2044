#pragma once
// Statistical checks of the samplers, written once over the backend type and instantiated per
// backend: tests/kernel/*_test.cpp with backend::cpu{}, a .cu test with backend::cuda{}.
//
// Every check uses ONE draw per chain (the final state), so the draws are independent and the
// Monte-Carlo standard errors are exact: SE(mean) = σ/√n, SE(variance) = σ²√(2/(n−1)) for a
// Gaussian coordinate, and for other statistics the sample variance of the statistic's terms
// over n. A check passes when |z| < 5: with the ~20–40 z-scores of one check that is a false
// failure rate below 1e-5 per run (and the seeds are fixed, so a run is reproducible).
//
// Only host code here: the sampled code is the library's, built from plain energies and kernels.
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ember_test {

inline constexpr double z_bound = 5;

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
    double zm = (m.mean(d) - mu[d]) / std::sqrt(s2 / n);
    double zv = (m.cov(d, d) - s2) / (s2 * std::sqrt(2 / (n - 1)));
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

// ULA on a diagonal Gaussian from x₀ ~ N(0, I) (the default start) has a Gaussian law at every
// step n. Per dimension, with a = 1 − η/σ²:
//   x_{n+1} − μ = a (x_n − μ) + √(2η) ξ  ⇒  mean_n = μ(1 − aⁿ),
//   var_n = a^{2n} + 2η (1 − a^{2n}) / (1 − a²).
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
      double a = 1 - eta / (sd[d] * sd[d]), an = std::pow(a, n);
      mean[d] = mu[d] * (1 - an);
      cov[d][d] = an * an + 2 * eta * (1 - an * an) / (1 - a * a);
    }
    INFO("after " << n << " ULA steps");
    // Coordinates are independent: covariances 0, with standard error √(σ_dd σ_ee / n).
    check_gaussian_moments<decltype(r), D>(r, mean, cov, {{0, 1}, {1, 2}});
  }
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
  auto r = ember::sample(ember::hmc(g.energy(), {.step_size = 0.25, .steps = 4}) | ember::burn_in(300),
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
  auto r = ember::sample(ember::hmc(ember::double_well<float, 2>{}, {.step_size = 0.1, .steps = 10}) |
                             ember::burn_in(1000),
                         {.chains = 20'000, .steps = 1, .seed = 10, .init = starts}, backend);
  check_double_well_moments(r);
}

}  // namespace ember_test
