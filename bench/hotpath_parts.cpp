// P1's hot path taken apart, one SIMD batch of chains at a time, each part in its own noinline
// function so that callgrind (or objdump) attributes instructions to it: Philox, Box–Muller,
// gradient, update, the whole ULA step; and the whole pipeline, whose difference from the step is
// the fused loop's bookkeeping. Also the measured leftovers of issue 12: ember's log against
// xsimd's, c·(c'·U) folded or nested, and gaussian_mixture's gradient recomputing x − μₖ or not.
//
// usage: ember_hotpath_parts parts <n>        each part n times (run under callgrind; see
//                                              docs/performance.md for the command)
//        ember_hotpath_parts pipeline <steps> [chains]   P1's pipeline, 1024 chains, one thread
//        (pipeline-hmc: P2's, HMC with L = 10 on the same Gaussian; pipeline-scalar: P1 on the scalar path)
//        ember_hotpath_parts time              wall time of the leftovers, one thread
//        ember_hotpath_parts count <steps>     P1's pipeline, 64 chains, one thread, between two
//                                              SIGUSR1 for bench/stepcount.c (AVX-512 counts)
#include <ember/ember.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace ember;

// noipa (GCC): no inlining, cloning or merging of identical bodies, so each part keeps its own name.
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif

namespace {

using B = simd_batch<float>;
using U32 = rng_traits<B>::u32;
constexpr int D = 10;
using V = vec<B, D>;

gaussian<float, D> p1_energy() {
  vec<float, D> mu;
  std::array<std::array<float, D>, D> cov{};
  for (int i = 0; i < D; ++i) {
    mu[i] = -1.f + 2.f * float(i) / float(D - 1);
    cov[i][i] = 0.5f + float(i) / float(D - 1);
  }
  return gaussian<float, D>(mu, cov);
}

template <class T>
void keep(T const& x) {
  asm volatile("" : : "r"(&x) : "memory");
}

// Box–Muller with xsimd's log for the radius, as ember had it before log_positive.
void box_muller_xsimd_log(B u1, U32 b, B& z0, B& z1) {
  B r = sqrt(B(-2.f) * xsimd::log(u1));
  B s, c;
  sincos_turn<B>(b, s, c);
  z0 = r * c;
  z1 = r * s;
}

NOINLINE void part_philox(chain_rng<B> const& r, philox_block<U32>* w) {
  for (int b = 0; b < 3; ++b) w[b] = philox4x32<B>(r.chain, U32(r.step), U32(std::uint32_t(b)), U32(1u), r.key0, r.key1);
}

template <bool Own>
void normals_from(philox_block<U32> const* w, V& z) {
  for (int b = 0; b < 3; ++b) {
    B n[4];
    auto bm = [](B a, U32 c, B& x, B& y) {
      if constexpr (Own) box_muller(a, c, x, y);
      else box_muller_xsimd_log(a, c, x, y);
    };
    bm(rng_traits<B>::uniform(w[b].w[0]), w[b].w[1], n[0], n[1]);
    if (4 * b + 2 < D) bm(rng_traits<B>::uniform(w[b].w[2]), w[b].w[3], n[2], n[3]);
    for (int i = 0; i < 4 && 4 * b + i < D; ++i) z[4 * b + i] = n[i];
  }
}
NOINLINE void part_box_muller(philox_block<U32> const* w, V& z) { normals_from<true>(w, z); }
NOINLINE void part_box_muller_xsimd_log(philox_block<U32> const* w, V& z) { normals_from<false>(w, z); }

NOINLINE void part_gradient(gaussian<float, D> const& U, V const& x, V& g, B& e) { e = U.value_and_grad(x, g); }

NOINLINE void part_update(V const& x, V const& g, V const& xi, float eta, float scale, V& out) {
  out = euler_maruyama(x, g, xi, eta, scale);
}

template <class K>
NOINLINE void part_ula_step(K const& k, chain_state<B, D>& s, chain_rng<B> const& r) {
  auto info = k.step(s, r);
  keep(info);
}

NOINLINE void part_log_own(B* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = log_positive(x[i]);
}
NOINLINE void part_log_xsimd(B* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = xsimd::log(x[i]);
}

// c·(c'·U): the nested node (what expression.hpp built before folding) and the folded one.
using nested_t = scaled_energy<scaled_energy<gaussian<float, D>>>;
using folded_t = scaled_energy<gaussian<float, D>>;
NOINLINE void part_grad_nested(nested_t const& U, V const& x, V& g, B& e) { e = U.value_and_grad(x, g); }
NOINLINE void part_grad_folded(folded_t const& U, V const& x, V& g, B& e) { e = U.value_and_grad(x, g); }

// gaussian_mixture's gradient: the library's, and by hand recomputing x − μₖ (the form before
// the residuals were kept) or keeping them, to compare the two on the same data.
constexpr int K = 4;
using mixture_t = gaussian_mixture<float, D, K>;
template <bool Keep>
B mixture_grad(mixture_t const& M, V const& x, V& g) {
  B a[K];
  B sr[Keep ? K : 1][D];  // inv_var·(x − μ) per component when kept
  for (int k = 0; k < K; ++k) {
    B q = B(0.f);
    for (int i = 0; i < D; ++i) {
      B r = x[i] - B(M.mean[k][i]);
      B s = B(M.inv_var[k][i]) * r;
      if constexpr (Keep) sr[k][i] = s;
      q = q + s * r;
    }
    a[k] = B(M.log_weight[k]) - B(0.5f) * q;
  }
  B m = a[0];
  for (int k = 1; k < K; ++k) m = max(m, a[k]);
  B total = B(0.f);
  for (int k = 0; k < K; ++k) {
    a[k] = exp(a[k] - m);
    total = total + a[k];
  }
  B inv_total = B(1.f) / total;
  for (int i = 0; i < D; ++i) g[i] = B(0.f);
  for (int k = 0; k < K; ++k) {
    B r = a[k] * inv_total;
    for (int i = 0; i < D; ++i) {
      if constexpr (Keep) g[i] = g[i] + r * sr[k][i];
      else g[i] = g[i] + r * B(M.inv_var[k][i]) * (x[i] - B(M.mean[k][i]));
    }
  }
  return -(m + log(total));
}
NOINLINE void part_mixture_library(mixture_t const& M, V const& x, V& g, B& e) { e = M.value_and_grad(x, g); }
NOINLINE void part_mixture_recompute(mixture_t const& M, V const& x, V& g, B& e) { e = mixture_grad<false>(M, x, g); }
NOINLINE void part_mixture_keep(mixture_t const& M, V const& x, V& g, B& e) { e = mixture_grad<true>(M, x, g); }

mixture_t make_mixture() {
  std::array<float, K> w{0.1f, 0.2f, 0.3f, 0.4f};
  std::array<vec<float, D>, K> mu;
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < D; ++i) mu[std::size_t(k)][i] = float(k) - 1.5f + 0.1f * float(i);
  return mixture_t(w, mu, {0.5f, 0.8f, 1.f, 1.3f});
}

V start_point(int j) {
  V x;
  for (int i = 0; i < D; ++i) x[i] = B(0.1f * float(i) - 0.3f) + B(0.001f * float(j));
  return x;
}

void run_parts(int n) {
  auto U = p1_energy();
  auto k = ula(U, {.step_size = 0.1});
  auto M = make_mixture();
  nested_t nested{2.f, {0.5f, U}};
  folded_t folded{1.f, U};
  V x = start_point(0), g, z, out;
  B e;
  philox_block<U32> w[3];
  auto s = k.init(x);
  std::vector<B> logs(64);
  for (int j = 0; j < n; ++j) {
    auto r = make_chain_rng<B>(7, 0, std::uint32_t(j));
    part_philox(r, w);
    part_box_muller(w, z);
    part_box_muller_xsimd_log(w, z);
    part_gradient(U, x, g, e);
    part_update(x, g, z, 0.1f, 0.4472136f, out);
    part_ula_step(k, s, r);
    for (int i = 0; i < 64; ++i) logs[std::size_t(i)] = B(0.001f + 0.015f * float(i));
    part_log_own(logs.data(), 64);
    for (int i = 0; i < 64; ++i) logs[std::size_t(i)] = B(0.001f + 0.015f * float(i));
    part_log_xsimd(logs.data(), 64);
    part_grad_nested(nested, x, g, e);
    part_grad_folded(folded, x, g, e);
    part_mixture_library(M, x, g, e);
    part_mixture_recompute(M, x, g, e);
    part_mixture_keep(M, x, g, e);
    keep(out);
    keep(e);
  }
}

// P1's pipeline (or P2's with hmc = true: HMC, L = 10, on the same Gaussian), one thread, on the
// SIMD path (backend::cpu) or, with simd false, the scalar one (backend::scalar).
template <class Backend>
void run_pipeline_on(int steps, long chains, bool hmc_case, Backend const& be) {
  double x0;
  if (hmc_case)
    x0 = sample(hmc(p1_energy(), {.step_size = 0.1, .integrator_steps = 10}), {.chains = chains, .steps = steps, .seed = 7}, be)
             .final_state(0)[0];
  else
    x0 = sample(ula(p1_energy(), {.step_size = 0.1}), {.chains = chains, .steps = steps, .seed = 7}, be).final_state(0)[0];
  std::printf("%a\n", x0);
}
void run_pipeline(int steps, long chains, bool hmc_case, bool simd) {
  if (simd)
    run_pipeline_on(steps, chains, hmc_case, backend::cpu{.threads = 1});
  else
    run_pipeline_on(steps, chains, hmc_case, backend::scalar{.threads = 1});
}

// The pipeline between two SIGUSR1, which bench/stepcount.c counts between: 64 chains (4 batches
// of 16), one thread, so a run of 40 steps minus one of 20 is 80 batch steps.
void run_count(int steps) {
  auto k = ula(p1_energy(), {.step_size = 0.1});
  std::raise(SIGUSR1);
  auto r = sample(k, {.chains = 64, .steps = steps, .seed = 7}, backend::cpu{.threads = 1});
  std::raise(SIGUSR1);
  std::printf("%a\n", double(r.final_state(0)[0]));
}

template <class F>
double ns_per_call(F&& f, int n) {
  std::vector<double> t;
  for (int rep = 0; rep < 7; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int j = 0; j < n; ++j) f(j);
    t.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n);
  }
  // The fastest of 7: on a shared machine, load only ever adds time.
  return *std::min_element(t.begin(), t.end());
}

void run_time() {
  auto U = p1_energy();
  auto M = make_mixture();
  nested_t nested{2.f, {0.5f, U}};
  folded_t folded{1.f, U};
  V g, z;
  B e;
  std::vector<B> logs(1024);
  philox_block<U32> w[3];
  part_philox(make_chain_rng<B>(7, 0, 0), w);
  int const n = 200'000;
  auto fill = [&] {
    for (std::size_t i = 0; i < logs.size(); ++i) logs[i] = B(0.0005f + 0.00097f * float(i));
  };
  // Interleaved pairs so that a change in the machine's load hits both sides alike.
  for (int round = 0; round < 2; ++round) {
    double lo = ns_per_call([&](int) { fill(); part_log_own(logs.data(), 1024); }, 2000);
    double lx = ns_per_call([&](int) { fill(); part_log_xsimd(logs.data(), 1024); }, 2000);
    double fill_only = ns_per_call([&](int) { fill(); keep(logs[0]); }, 2000);
    std::printf("log of a 16-lane batch: ember %.2f ns, xsimd %.2f ns (throughput, 1024 independent)\n",
                (lo - fill_only) / 1024, (lx - fill_only) / 1024);
    double bo = ns_per_call([&](int) { part_box_muller(w, z); keep(z); }, n);
    double bx = ns_per_call([&](int) { part_box_muller_xsimd_log(w, z); keep(z); }, n);
    std::printf("ten normals of a batch (5 Box-Muller pairs): ember log %.2f ns, xsimd log %.2f ns\n", bo, bx);
    double gn = ns_per_call([&](int j) { part_grad_nested(nested, start_point(j & 7), g, e); keep(g); }, n);
    double gf = ns_per_call([&](int j) { part_grad_folded(folded, start_point(j & 7), g, e); keep(g); }, n);
    std::printf("gradient of 2*(0.5*U), d = 10: nested %.2f ns, folded %.2f ns\n", gn, gf);
    double ml = ns_per_call([&](int j) { part_mixture_library(M, start_point(j & 7), g, e); keep(g); }, n);
    double mr = ns_per_call([&](int j) { part_mixture_recompute(M, start_point(j & 7), g, e); keep(g); }, n);
    double mk = ns_per_call([&](int j) { part_mixture_keep(M, start_point(j & 7), g, e); keep(g); }, n);
    std::printf("mixture gradient, d = 10, K = 4: library %.2f ns, recompute x-mu %.2f ns, keep %.2f ns\n", ml, mr,
                mk);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && !std::strcmp(argv[1], "parts")) run_parts(std::atoi(argv[2]));
  else if (argc >= 3 && (!std::strcmp(argv[1], "pipeline") || !std::strcmp(argv[1], "pipeline-hmc") ||
                          !std::strcmp(argv[1], "pipeline-scalar")))
    run_pipeline(std::atoi(argv[2]), argc >= 4 ? std::atol(argv[3]) : 1024, !std::strcmp(argv[1], "pipeline-hmc"),
                 std::strcmp(argv[1], "pipeline-scalar") != 0);
  else if (argc >= 3 && !std::strcmp(argv[1], "count")) run_count(std::atoi(argv[2]));
  else if (argc >= 2 && !std::strcmp(argv[1], "time")) run_time();
  else {
    std::fprintf(stderr, "usage: ember_hotpath_parts parts <n> | pipeline[-hmc|-scalar] <steps> [chains] | count <steps> | time\n");
    return 2;
  }
}
