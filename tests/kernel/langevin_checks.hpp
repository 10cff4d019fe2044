#pragma once
// Statistical checks of the underdamped Langevin kernels, written once over the backend type and
// instantiated per backend (tests/kernel/*underdamped_langevin_test.cpp with backend::cpu, the
// .cu test with backend::cuda). One draw per chain (the final state), |z| < 5, as in
// generic/sampler_checks.hpp, whose helpers these reuse.
#include "generic/sampler_checks.hpp"

#include <random>
#include <utility>

namespace ember_test {

// The exact law of a splitting on a Gaussian, per coordinate. With U = (x − μ)²/2σ², mass m,
// z = (x − μ, p), every operator is affine in z:
//   A(w): z ← [[1, wh/m], [0, 1]] z;   B(w): z ← [[1, 0], [−wh/σ², 1]] z;
//   O(w): z ← [[1, 0], [0, a]] z + (0, √(m(1 − a²)) ξ),  a = e^{−γwh};
// so from a Gaussian start z stays Gaussian, with mean ← M mean and Σ ← M Σ Mᵀ + Q per operator.
struct law2 {
  double mx, mp, xx, xp, pp;  // mean of x − μ and p, covariance
};

template <class Split>
law2 splitting_law(law2 z, double h, double gamma, double m, double s2, int n) {
  for (int step = 0; step < n; ++step)
    [&]<int... J>(std::integer_sequence<int, J...>) {
      (
          [&] {
            constexpr ember::flow k = Split::template kind<J>;
            double const w = Split::template weight<J>;
            if constexpr (k == ember::flow::drift) {
              double c = w * h / m;  // x ← x + c p
              z = {z.mx + c * z.mp, z.mp, z.xx + 2 * c * z.xp + c * c * z.pp, z.xp + c * z.pp, z.pp};
            } else if constexpr (k == ember::flow::kick) {
              double c = -w * h / s2;  // p ← p + c x
              z = {z.mx, z.mp + c * z.mx, z.xx, z.xp + c * z.xx, z.pp + 2 * c * z.xp + c * c * z.xx};
            } else {
              double a = std::exp(-gamma * w * h);
              z = {z.mx, a * z.mp, z.xx, a * z.xp, a * a * z.pp + m * (1 - a * a)};
            }
          }(),
          ...);
    }(std::make_integer_sequence<int, Split::size>{});
  return z;
}

// A diagonal Gaussian with scales 0.5, 1, 2 and mass 1.5: the stiffest coordinate has
// hω = h/(σ√m) = 0.33 at h = 0.4, well inside the leapfrog's stability limit 2.
struct langevin_gaussian3 {
  static constexpr int D = 3;
  double mu[D] = {1.0, -2.0, 0.5}, sd[D] = {0.5, 1.0, 2.0};
  double mass = 1.5;
  auto energy() const {
    return ember::gaussian(ember::vec<float, D>{{float(mu[0]), float(mu[1]), float(mu[2])}},
                           ember::vec<float, D>{{float(sd[0]), float(sd[1]), float(sd[2])}});
  }
};

// An unadjusted splitting kernel from x₀ ~ uniform(−2, 2)^D (the default start: variance 4/3; the
// checks use only means and variances, see sampler_checks.hpp's ula_law) and p₀ ~ N(0, m) (init)
// follows the exact Gaussian law above after n transitions; checked at n = 1, 5, 40 (transient)
// and 400 (stationary to rounding at the friction used).
template <class Split, class Backend>
void check_splitting_exact_law(Backend const& backend, double h, double gamma, std::uint64_t seed) {
  langevin_gaussian3 g;
  constexpr int D = 3;
  auto k = ember::underdamped_langevin_with<Split>(g.energy(), {.step_size = h, .friction = gamma, .mass = g.mass});
  for (int n : {1, 5, 40, 400}) {
    auto r = ember::sample(k, {.chains = 100'000, .steps = n, .seed = seed + std::uint64_t(n)}, backend);
    std::array<double, D> mean{};
    std::array<std::array<double, D>, D> cov{};
    for (int d = 0; d < D; ++d) {
      auto z = splitting_law<Split>({-g.mu[d], 0, 4.0 / 3.0, 0, g.mass}, h, gamma, g.mass, g.sd[d] * g.sd[d], n);
      mean[d] = g.mu[d] + z.mx;
      cov[d][d] = z.xx;
    }
    INFO("after " << n << " transitions");
    check_gaussian_moments<decltype(r), D>(r, mean, cov, {{0, 1}, {1, 2}});
  }
}

// Exact draws from the 10-d target of gaussian10 (x = μ + Lz, L the Cholesky factor of Σ, in
// double), to test invariance directly: started there, a kernel that keeps π must stay at π.
inline std::vector<ember::vec<float, 10>> gaussian10_exact_starts(std::int64_t chains, std::uint64_t seed) {
  gaussian10 g;
  constexpr int D = 10;
  double L[D][D] = {};
  for (int i = 0; i < D; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = g.sigma[i][j];
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      L[i][j] = i == j ? std::sqrt(s) : s / L[j][j];
    }
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<ember::vec<float, 10>> x(static_cast<std::size_t>(chains));
  for (auto& v : x) {
    double z[D];
    for (double& zi : z) zi = normal(gen);
    for (int i = 0; i < D; ++i) {
      double s = g.mu[i];
      for (int j = 0; j <= i; ++j) s += L[i][j] * z[j];
      v[i] = float(s);
    }
  }
  return x;
}

// Exact draws from the double well ∝ exp(−2(x² − 1)²) per coordinate, by rejection from the
// uniform law on [−3, 3] (the density is below e^{−100} beyond; acceptance exp(−2(x² − 1)²) ≤ 1).
inline std::vector<ember::vec<float, 2>> double_well_exact_starts(std::int64_t chains, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-3, 3), v(0, 1);
  std::vector<ember::vec<float, 2>> x(static_cast<std::size_t>(chains));
  for (auto& p : x)
    for (int d = 0; d < 2; ++d)
      for (;;) {
        double c = u(gen);
        if (v(gen) < std::exp(-2 * (c * c - 1) * (c * c - 1))) {
          p[d] = float(c);
          break;
        }
      }
  return x;
}

// The adjusted kernel (OBABO, h = 0.25, γ = 1) on the correlated 10-d Gaussian. Relaxation: each
// direction of variance λ is a damped oscillator with ω² = 1/λ; at γ = 1 the slowest (λ = 4.3)
// relaxes like e^{−t/(γλ)} ≈ e^{−t/4.3} in the overdamped limit, and rejections (a few %) only
// reverse momenta; 3000 transitions are t = 750, hundreds of relaxation times.
template <class Backend>
void check_adjusted_gaussian_from_normal(Backend const& backend) {
  gaussian10 g;
  auto r = ember::sample(ember::adjusted_underdamped_langevin(g.energy(), {.step_size = 0.25, .friction = 1.0}) |
                             ember::burn_in(3000),
                         {.chains = 20'000, .steps = 1, .seed = 21}, backend);
  CHECK(r.acceptance_rate() > 0.9);
  check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

// From exact draws, 20 transitions at a large step (h = 0.6, acceptance ~0.7) and small friction:
// any bias of the accept step or of the momentum flip would show at once, without the long
// burn-in hiding it behind the target's own moments.
template <class Backend>
void check_adjusted_gaussian_from_exact(Backend const& backend) {
  gaussian10 g;
  auto starts = gaussian10_exact_starts(20'000, 99);
  auto r = ember::sample(ember::adjusted_underdamped_langevin(g.energy(), {.step_size = 0.6, .friction = 0.3}),
                         {.chains = 20'000, .steps = 20, .seed = 22, .init = starts}, backend);
  CHECK(r.acceptance_rate() < 0.95);  // the step is large enough for rejections to matter
  check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
}

// Double well from the right-hand well (tests barrier crossing; see right_well_starts): h = 0.1,
// γ = 1, 3000 transitions are t = 300 ≫ 20, the time after which the wells balance.
template <class Backend>
void check_adjusted_double_well_from_right_well(Backend const& backend) {
  auto starts = right_well_starts(20'000);
  auto r = ember::sample(ember::adjusted_underdamped_langevin(ember::double_well<float, 2>{},
                                                              {.step_size = 0.1, .friction = 1.0}) |
                             ember::burn_in(3000),
                         {.chains = 20'000, .steps = 1, .seed = 23, .init = starts}, backend);
  check_double_well_moments(r);
}

template <class Backend>
void check_adjusted_double_well_from_normal(Backend const& backend) {
  auto r = ember::sample(ember::adjusted_underdamped_langevin(ember::double_well<float, 2>{},
                                                              {.step_size = 0.1, .friction = 1.0}) |
                             ember::burn_in(3000),
                         {.chains = 20'000, .steps = 1, .seed = 24}, backend);
  check_double_well_moments(r);
}

// From exact draws, 30 transitions at h = 0.3 (acceptance well below 1 in the quartic walls).
template <class Backend>
void check_adjusted_double_well_from_exact(Backend const& backend) {
  auto starts = double_well_exact_starts(20'000, 5);
  auto r = ember::sample(ember::adjusted_underdamped_langevin(ember::double_well<float, 2>{},
                                                              {.step_size = 0.3, .friction = 0.5}),
                         {.chains = 20'000, .steps = 30, .seed = 25, .init = starts}, backend);
  CHECK(r.acceptance_rate() < 0.98);
  check_double_well_moments(r);
}

}  // namespace ember_test
