// regression_cost: the logistic-regression gradient (n = 1,000 rows, d = 25) against its floor.
//
// Floor, per chain and gradient: 2·n·d multiply-adds (η = Xβ and ∇ = Xᵀ(σ(η) − y)) plus per row
// one exp, one ln(1 + e) and one division. It is measured here rather than assumed: the FMA rate
// of independent xsimd FMAs (as bench/simd_peak.cpp does), and the rate of the per-row
// transcendental bundle (exp, ember's log1p_unit, division on independent batches: what the
// likelihood computes). floor time per chain =
// n·(2d / FMA lanes per s + 1 / bundle lanes per s). On one thread, SIMD path (16 chains per
// float batch) and scalar path (one chain in float), analytic and custom_energy (dual numbers)
// forms of the same energy; median of 5 repeats, interleaved.
#include <ember/data/dataset.hpp>
#include <ember/ember.hpp>
#include <ember/energy/regression.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int D = 25;
constexpr int N = 1000;
using B = ember::simd_batch<float>;
constexpr int W = int(B::size);

template <class F>
double median_seconds(F f) {
  std::array<double, 5> t;
  for (auto& s : t) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

// The same energy as a generic callable: custom_energy differentiates it with dual numbers.
struct logistic_lambda {
  ember::data_view<float> x, y;
  float inv_var;
  template <class V>
  auto operator()(V const& b) const {
    using S = std::decay_t<decltype(b[0])>;
    S u = S(0.f);
    for (int j = 0; j < D; ++j) u = u + 0.5f * inv_var * b[j] * b[j];
    for (std::int64_t i = 0; i < x.rows; ++i) {
      S eta = S(0.f);
      for (int j = 0; j < D; ++j) eta = eta + x(i, j) * b[j];
      u = u + ember::softplus(eta) - y.data[i] * eta;
    }
    return u;
  }
};

template <class S, class E>
[[gnu::noinline]] float run(E const& U, std::vector<ember::vec<S, D>> const& xs, int evals) {
  S acc = S(0.f);
  for (int k = 0; k < evals; ++k) {
    ember::vec<S, D> g;
    acc = acc + U.value_and_grad(xs[std::size_t(k) % xs.size()], g) + g[k % D];
  }
  if constexpr (ember::scalar_traits<S>::width == 1)
    return acc;
  else
    return xsimd::hadd(acc);
}

}  // namespace

int main() {
  std::mt19937 gen(42);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> xv, yv;
  for (int i = 0; i < N; ++i) {
    float eta = 0;
    for (int j = 0; j < D; ++j) {
      float v = j == 0 ? 1.f : nd(gen);
      xv.push_back(v);
      eta += 0.2f * v;
    }
    yv.push_back(std::uniform_real_distribution<float>(0, 1)(gen) < 1 / (1 + std::exp(-eta)) ? 1.f : 0.f);
  }
  ember::dataset<float> X(xv, N, D), y(yv, N, 1);
  auto U = ember::logistic_regression<D>(X.view(), y.view(), ember::normal_prior{1.0});
  auto V = ember::custom_energy<D>(logistic_lambda{X.view(), y.view(), 1.f});

  std::vector<ember::vec<float, D>> xs(64);
  std::vector<ember::vec<B, D>> xb(4);
  for (auto& x : xs)
    for (int j = 0; j < D; ++j) x[j] = 0.2f * nd(gen);
  for (auto& x : xb)
    for (int j = 0; j < D; ++j) {
      alignas(64) float l[W];
      for (auto& v : l) v = 0.2f * nd(gen);
      x[j] = B::load_aligned(l);
    }

  // The machine's rates: independent FMAs, and the per-row bundle exp + log1p_unit + division.
  constexpr int K = 12;
  long const reps = 20'000'000;
  volatile float sink = 0;
  double t_fma = median_seconds([&] {
    B a[K];
    for (int k = 0; k < K; ++k) a[k] = B(float(k) * 1e-3f);
    B m(0.999999f), c(1e-7f);
    for (long i = 0; i < reps; ++i)
      for (int k = 0; k < K; ++k) a[k] = xsimd::fma(a[k], m, c);
    B s(0.f);
    for (int k = 0; k < K; ++k) s += a[k];
    sink = sink + xsimd::hadd(s);
  });
  double fma_lanes = double(reps) * K * W / t_fma;
  long const treps = 2'000'000;
  double t_bundle = median_seconds([&] {
    B a[8], s(0.f);
    for (int k = 0; k < 8; ++k) a[k] = B(-0.5f + 0.1f * float(k));
    for (long i = 0; i < treps; ++i)
      for (int k = 0; k < 8; ++k) {
        B e = xsimd::exp(-xsimd::abs(a[k]));
        s += ember::log1p_unit(e) + B(1.f) / (B(1.f) + e);
        a[k] = a[k] + B(1e-7f);
      }
    sink = sink + xsimd::hadd(s);
  });
  double bundle_lanes = double(treps) * 8 * W / t_bundle;
  double floor_ns = N * (2.0 * D / fma_lanes + 1.0 / bundle_lanes) * 1e9;
  std::printf("machine: %.2f G FMA lanes/s, %.3f G (exp+log1p_unit+div) lanes/s on one thread\n", fma_lanes * 1e-9,
              bundle_lanes * 1e-9);
  std::printf("floor per chain-gradient (n = %d, d = %d): %.0f ns (FMAs %.0f ns + transcendentals %.0f ns)\n", N, D,
              floor_ns, N * 2.0 * D / fma_lanes * 1e9, N / bundle_lanes * 1e9);

  int const ev_simd = 20000, ev_scalar = 20000, ev_dual_simd = 500, ev_dual_scalar = 2000;
  double a_simd = median_seconds([&] { sink = sink + run<B>(U, xb, ev_simd); }) / (double(ev_simd) * W) * 1e9;
  double a_scal = median_seconds([&] { sink = sink + run<float>(U, xs, ev_scalar); }) / ev_scalar * 1e9;
  double d_simd = median_seconds([&] { sink = sink + run<B>(V, xb, ev_dual_simd); }) / (double(ev_dual_simd) * W) * 1e9;
  double d_scal = median_seconds([&] { sink = sink + run<float>(V, xs, ev_dual_scalar); }) / ev_dual_scalar * 1e9;
  std::printf("%-28s %12s %12s\n", "form", "ns/chain", "% of floor");
  std::printf("%-28s %12.0f %11.1f%%\n", "analytic, SIMD (16 chains)", a_simd, 100 * floor_ns / a_simd);
  std::printf("%-28s %12.0f %11.1f%%\n", "analytic, scalar", a_scal, 100 * floor_ns / a_scal);
  std::printf("%-28s %12.0f %11.1f%%\n", "dual (custom_energy), SIMD", d_simd, 100 * floor_ns / d_simd);
  std::printf("%-28s %12.0f %11.1f%%\n", "dual (custom_energy), scalar", d_scal, 100 * floor_ns / d_scal);
  return 0;
}
