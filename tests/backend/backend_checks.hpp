#pragma once
// Sampler checks written once and instantiated per backend (Kokkos-style): cuda_test.cu calls them
// with backend::cuda, cuda_test_cpu.cpp with backend::cpu. Only host code: it calls sample().
#include <ember/energy/gaussian.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/sample.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace backend_checks {

using namespace ember;
constexpr int D = 10;

// P1 of docs/performance.md: mean linspace(−1, 1, 10), Σ = diag(linspace(0.5, 1.5, 10)), given
// as a dense covariance.
inline gaussian<float, D> p1_energy() {
  vec<float, D> mu;
  std::array<std::array<float, D>, D> cov{};
  for (int i = 0; i < D; ++i) {
    mu[i] = -1.f + 2.f * float(i) / float(D - 1);
    cov[i][i] = 0.5f + float(i) / float(D - 1);
  }
  return gaussian<float, D>(mu, cov);
}
inline double p1_mean(int i) { return -1.0 + 2.0 * i / (D - 1); }
inline double p1_var(int i) { return 0.5 + double(i) / (D - 1); }

// A z-score bound that a correct sampler exceeds less than once in ~10^8 checks.
constexpr double z_max = 5.7;

// ULA on the P1 Gaussian from x₀ ~ N(0, I): after n steps x_i is normal with mean μ + aⁿ(0 − μ)
// and variance a²ⁿ + v∞(1 − a²ⁿ), a = 1 − η/σ², v∞ = 2η / (1 − a²). Checked per kept step through
// track(moments), over 200,000 chains.
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
    for (int i = 0; i < D; ++i) {
      double a = 1 - double(eta) / p1_var(i), a2n = std::pow(a * a, n), vinf = 2 * double(eta) / (1 - a * a);
      double m = p1_mean(i) * (1 - std::pow(a, n)), v = a2n + vinf * (1 - a2n);
      double zm = (res.trace().mean[k][i] - m) / std::sqrt(v / C);
      double zv = (res.trace().variance[k][i] - v) / (v * std::sqrt(2.0 / (C - 1)));
      INFO("kept step " << k << ", dimension " << i);
      CHECK(std::abs(zm) < z_max);
      CHECK(std::abs(zv) < z_max);
    }
  }
}


// MALA started in the target law (init = exact draws) keeps the target's moments at every kept step.
template <class Backend>
void mala_leaves_gaussian_invariant(Backend const& backend) {
  auto const U = p1_energy();
  std::int64_t const C = 100'000;
  std::vector<vec<float, D>> x0(C);
  for (std::int64_t c = 0; c < C; ++c) {
    auto z = default_start<float, D>(99, std::uint32_t(c));
    for (int i = 0; i < D; ++i) x0[c][i] = float(p1_mean(i) + std::sqrt(p1_var(i)) * z[i]);
  }
  auto res = sample(mala(U, {.step_size = 0.2f}) | thin(25) | track(moments, acceptance),
                    {.chains = C, .steps = 100, .seed = 11, .init = x0}, backend);
  REQUIRE(res.trace().mean.size() == 4);
  CHECK(res.acceptance_rate() > 0.5);
  CHECK(res.divergent_chains() == 0);
  for (std::size_t k = 0; k < 4; ++k)
    for (int i = 0; i < D; ++i) {
      double v = p1_var(i);
      INFO("kept step " << k << ", dimension " << i);
      CHECK(std::abs((res.trace().mean[k][i] - p1_mean(i)) / std::sqrt(v / C)) < z_max);
      CHECK(std::abs((res.trace().variance[k][i] - v) / (v * std::sqrt(2.0 / (C - 1)))) < z_max);
    }
}


// The pipelines the GPU-vs-CPU comparisons run; defined once so both backends run the same ones.
inline auto compare_ula_pipe() {
  return ula(p1_energy(), {.step_size = 0.1f}) | burn_in(20) | thin(3) | record() | track(moments, mean_energy);
}
inline auto compare_mala_pipe() { return mala(p1_energy(), {.step_size = 0.3f}) | record() | track(acceptance); }
inline auto diverging_pipe() { return ula(p1_energy(), {.step_size = 3.0f}) | record() | track(moments); }
inline sample_options<float, D> const compare_ula_opt{.chains = 3000, .steps = 60, .seed = 1234};
inline sample_options<float, D> const compare_mala_opt{.chains = 2000, .steps = 50, .seed = 5};
inline sample_options<float, D> const diverging_opt{.chains = 500, .steps = 400, .seed = 3};

using ula_result = result<float, D>;
using mala_result = result<float, D>;
using diverging_result = result<float, D>;

// The CPU side of the comparisons, compiled by the host compiler (cuda_test_cpu.cpp): nvcc cannot
// instantiate backend::cpu's SIMD path (vector types in __host__ __device__ functions).
ula_result cpu_compare_ula();
mala_result cpu_compare_mala();
diverging_result cpu_diverging();

}  // namespace backend_checks
