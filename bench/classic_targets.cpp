// The classic hard targets with ember's default sampler and nothing tuned (issue 26, point 6):
// `chees_hmc(U) | record()`, 16 chains, 1,000 warm-up transitions and 1,000 kept draws, double,
// one thread. Per target and seed: the largest |z| of the means and of the second moments against
// the exact values, z = (m − exact)/MCSE with the MCSE from the summary's ESS (bulk ESS for the
// mean, the ESS of (x − x̄)² for the second moment), the largest R̂, the smallest bulk ESS,
// divergent transitions, seconds, the verdict (CORRECT: every |z| < 5 and R̂ < 1.01) and the
// summary's WARNING lines, which must say in words what a default sampler cannot get right
// (the centred funnel's neck, a mixture's mode weights).
//
//   centred funnel    Neal's funnel, d = 10, in its centred coordinates (targets/neal_funnel.hpp)
//   banana            targets/banana.hpp, d = 2
//   diagonal 1e3      N(0, diag σ²), d = 50, σᵢ² log-spaced over 10^{−1.5} … 10^{1.5} (κ = 10³)
//   rotated 1e3       the same variances turned by a random rotation Q (dense Σ = Q diag σ² Qᵀ)
//   mixture 0.9/0.1   0.1 N(−c 1, I) + 0.9 N(c 1, I), d = 10, c = a/√10: modes 2a sds apart,
//                     a = 3 (chains cross, slowly) and a = 6 (they do not)
//
// usage: ember_classic_targets [SEED...]   (default: 1 2)
#include <ember/ember.hpp>
#include <ember/targets/banana.hpp>
#include <ember/targets/neal_funnel.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

template <int D>
struct exact_moments {
  std::array<double, D> mean{}, second{};
};

template <int D, class Pipe>
void report(char const* name, Pipe const& pipe, exact_moments<D> const& ref, std::uint64_t seed) {
  auto r = ember::sample(pipe, {.chains = 16, .steps = 1000, .seed = seed, .progress = false}, ember::backend::cpu{.threads = 1});
  auto s = r.summary();
  auto draws = r.samples();
  double zm = 0, z2 = 0, rhat = 0, ess = INFINITY;
  for (int d = 0; d < D; ++d) {
    auto const& row = s.dims[d];
    double m2 = 0, q = 0, n = 0;
    for (std::int64_t k = 0; k < r.kept(); ++k)
      for (std::int64_t c = 0; c < r.chains(); ++c) {
        if (r.divergent(c)) continue;
        double const x = double(draws(k, c, d));
        m2 += x * x;
        n += 1;
      }
    m2 /= n;
    for (std::int64_t k = 0; k < r.kept(); ++k)
      for (std::int64_t c = 0; c < r.chains(); ++c)
        if (!r.divergent(c)) q += std::pow(double(draws(k, c, d)) * double(draws(k, c, d)) - m2, 2);
    double const se2 = std::sqrt(q / (n - 1) / row.ess_sq);
    zm = std::max(zm, std::fabs(row.mean - ref.mean[std::size_t(d)]) / row.mcse);
    z2 = std::max(z2, std::fabs(m2 - ref.second[std::size_t(d)]) / se2);
    rhat = std::max(rhat, row.rhat);
    ess = std::min(ess, row.ess);
  }
  bool const correct = zm < 5 && z2 < 5 && rhat < 1.01 && r.divergent_chains() == 0;
  std::printf("| %s | %llu | %s | %.3g | %.3g | %.3f | %.0f | %lld | %.2f |\n", name, (unsigned long long)seed,
              correct ? "CORRECT" : "wrong", zm, z2, rhat, ess, (long long)r.divergent_transitions(), r.seconds());
  for (auto const& w : s.warnings()) std::printf("    %s\n", w.c_str());
  std::fflush(stdout);
}

constexpr int DG = 50;
double variance_of(int i) { return std::pow(10.0, -1.5 + 3.0 * i / (DG - 1)); }

// A random rotation (Gram–Schmidt on Gaussian columns, fixed seed) and Σ = Q diag σ² Qᵀ.
std::vector<double> rotated_covariance() {
  std::mt19937_64 g(20261127);
  std::normal_distribution<double> n;
  std::vector<double> Q(DG * DG);
  for (double& q : Q) q = n(g);
  for (int k = 0; k < DG; ++k) {
    for (int j = 0; j < k; ++j) {
      double d = 0;
      for (int i = 0; i < DG; ++i) d += Q[i * DG + j] * Q[i * DG + k];
      for (int i = 0; i < DG; ++i) Q[i * DG + k] -= d * Q[i * DG + j];
    }
    double s = 0;
    for (int i = 0; i < DG; ++i) s += Q[i * DG + k] * Q[i * DG + k];
    for (int i = 0; i < DG; ++i) Q[i * DG + k] /= std::sqrt(s);
  }
  std::vector<double> S(DG * DG);
  for (int i = 0; i < DG; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int k = 0; k < DG; ++k) s += Q[i * DG + k] * variance_of(k) * Q[j * DG + k];
      S[i * DG + j] = S[j * DG + i] = s;
    }
  return S;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint64_t> seeds;
  for (int i = 1; i < argc; ++i) seeds.push_back(std::strtoull(argv[i], nullptr, 10));
  if (seeds.empty()) seeds = {1, 2};
  std::printf("| target | seed | verdict | max \\|z\\| mean | max \\|z\\| E x² | max R̂ | min ESS bulk | divergent transitions | s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (auto seed : seeds) {
    {
      ember::targets::neal_funnel<double> t;
      auto m = t.reference();
      report<10>("centred funnel d=10", ember::chees_hmc(t.energy()) | ember::record(), {m.mean, m.second}, seed);
    }
    {
      ember::targets::banana<double> t;
      auto m = t.reference();
      report<2>("banana", ember::chees_hmc(t.energy()) | ember::record(), {m.mean, m.second}, seed);
    }
    exact_moments<DG> gref;
    for (int i = 0; i < DG; ++i) gref.second[std::size_t(i)] = variance_of(i);
    {
      ember::vec<double, DG> sd;
      for (int i = 0; i < DG; ++i) sd[i] = std::sqrt(variance_of(i));
      auto U = ember::gaussian<double, DG, ember::covariance::diagonal>(ember::vec<double, DG>{}, sd);
      report<DG>("diagonal gaussian kappa=1e3 d=50", ember::chees_hmc(U) | ember::record(), gref, seed);
    }
    {
      auto const S = rotated_covariance();
      auto cov = std::make_unique<std::array<std::array<double, DG>, DG>>();
      exact_moments<DG> rref;
      for (int i = 0; i < DG; ++i) {
        for (int j = 0; j < DG; ++j) (*cov)[std::size_t(i)][std::size_t(j)] = S[std::size_t(i * DG + j)];
        rref.second[std::size_t(i)] = S[std::size_t(i * DG + i)];
      }
      auto U = ember::gaussian<double, DG, ember::covariance::full>(ember::vec<double, DG>{}, *cov);
      report<DG>("rotated gaussian kappa=1e3 d=50", ember::chees_hmc(U) | ember::record(), rref, seed);
    }
    for (double a : {3.0, 6.0}) {
      constexpr int DM = 10;
      double const c = a / std::sqrt(double(DM));
      auto U = ember::gaussian_mixture<double, DM, 2>({0.1, 0.9}, {ember::filled<double, DM>(-c), ember::filled<double, DM>(c)},
                                                      {1.0, 1.0});
      exact_moments<DM> mref;
      mref.mean.fill(0.8 * c);
      mref.second.fill(1 + c * c);
      report<DM>(a == 3 ? "mixture 0.9/0.1 d=10, modes 6 sds apart" : "mixture 0.9/0.1 d=10, modes 12 sds apart",
                 ember::chees_hmc(U) | ember::record(), mref, seed);
    }
  }
}
