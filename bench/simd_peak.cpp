// The machine's SIMD peak, measured: throughput of independent FMA, integer add/xor and Philox's
// 32×32→64 multiply on the widest registers the build targets, on 1 and on all threads; then the
// P1 chain-step's parts in isolation (ten normals; the d = 10 full-covariance gradient), whose
// sum is a measured floor for P1. docs/performance.md compares ember's P1 with these.
#include <ember/core/simd.hpp>
#include <ember/energy/gaussian.hpp>

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

using F = ember::simd_batch<float>;
using U = xsimd::batch<std::uint32_t>;

template <class Body>
double giga_per_s(int threads, long reps, int ops_per_rep, Body body) {
  auto t0 = std::chrono::steady_clock::now();
  double sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  sink += body(reps);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 12345.678) std::puts("");
  return double(threads) * double(reps) * ops_per_rep / s * 1e-9;
}

int main() {
  constexpr int K = 12;  // independent accumulators: more than latency × issue width
  long const reps = 50'000'000;
  auto fma = [](long n) {
    F a[K];
    for (int k = 0; k < K; ++k) a[k] = F(float(k) * 1e-3f);
    F m(0.999999f), c(1e-7f);
    for (long i = 0; i < n; ++i)
      for (int k = 0; k < K; ++k) a[k] = xsimd::fma(a[k], m, c);
    F s(0.f);
    for (int k = 0; k < K; ++k) s += a[k];
    return double(xsimd::hadd(s));
  };
  auto intops = [](long n) {
    U a[K];
    for (int k = 0; k < K; ++k) a[k] = U(std::uint32_t(k));
    U m(0x9E3779B9u);
    for (long i = 0; i < n; ++i)
      for (int k = 0; k < K; ++k) a[k] = (a[k] ^ m) + m;
    U s(0u);
    for (int k = 0; k < K; ++k) s = s ^ a[k];
    return double(s.get(0));
  };
  auto mul = [](long n) {
    U a[K];
    for (int k = 0; k < K; ++k) a[k] = U(std::uint32_t(k + 3));
    U hi, lo;
    for (long i = 0; i < n; ++i)
      for (int k = 0; k < K; ++k) {
        ember::rng_traits<F>::mulhilo(0xD2511F53u, a[k], hi, lo);
        a[k] = hi ^ lo;
      }
    U s(0u);
    for (int k = 0; k < K; ++k) s = s ^ a[k];
    return double(s.get(0));
  };
  // P1's parts, per batch of chains: the normals of one step, and one gradient.
  auto normals = [](long n) {
    F acc(0.f);
    for (long t = 0; t < n; ++t) {
      auto z = ember::make_chain_rng<F>(7, std::uint32_t(t & 1023) * 16, std::uint32_t(t)).normal<10>(ember::purpose::proposal);
      for (int i = 0; i < 10; ++i) acc += z[i];
    }
    return double(xsimd::hadd(acc));
  };
  ember::vec<float, 10> mu;
  std::array<std::array<float, 10>, 10> cov{};
  for (int i = 0; i < 10; ++i) {
    mu[i] = -1 + 2.f * float(i) / 9;
    cov[i][i] = 0.5f + float(i) / 9;
  }
  ember::gaussian<float, 10> G(mu, cov);
  auto gradient = [&](long n) {
    constexpr int C = 4;  // independent chains of work, as the OoO core sees several batches
    ember::vec<F, 10> x[C], g;
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < 10; ++i) x[c][i] = F(float(i + c));
    F acc(0.f);
    for (long t = 0; t < n; t += C)
      for (int c = 0; c < C; ++c) {
        acc += G.value_and_grad(x[c], g);
        for (int i = 0; i < 10; ++i) x[c][i] = x[c][i] - F(0.01f) * g[i];
      }
    return double(xsimd::hadd(acc));
  };
  int const T = omp_get_max_threads();
  std::printf("SIMD width %d floats\n", int(F::size));
  giga_per_s(T, reps / 10, K, fma);  // warm-up: thread creation and clock ramp-up, discarded
  for (int t : {1, T}) {
    double f = giga_per_s(t, reps, K, fma);
    std::printf("%d thread(s): %.2f G FMA instr/s (%.1f GFLOP/s), %.2f G int add+xor instr/s, %.3f G Philox mulhilo/s\n", t,
                f, f * 2 * F::size,
                giga_per_s(t, reps, 2 * K, intops), giga_per_s(t, reps / 4, K, mul));
    double zn = giga_per_s(t, 2'000'000, 1, normals), gr = giga_per_s(t, 4'000'000, 1, gradient);
    std::printf("  P1 parts: %.1f ns per batch for 10 normals, %.1f ns per batch for gradient + update: "
                "floor %.0f M chain-steps/s\n",
                1 / zn, 1 / gr, double(F::size) / (1 / zn + 1 / gr) * 1e3);
  }
}
