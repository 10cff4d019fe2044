// ember's side of the CPU comparison (bench/compare_cpu.sh): cases P1–P6 of docs/performance.md,
// each for ember-simd (backend::cpu{}) and ember-scalar (backend::scalar{}), printed as
// one JSON line per (case, implementation). Every line carries a `check` of the sample moments
// against the truth, so a speed is never shown without its correctness.
//
// usage: ember_cpu_bench [--quick] [--case P1] [--repeats 5]
#include <ember/ember.hpp>

#include "moment_checks.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace ember;
using namespace ember_bench;

namespace {

int repeats = 5;
bool quick = false;

template <class F, class G = void (*)()>
double median_seconds(F&& run, G&& reset = [] {}) {
  run();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    reset();
    auto t0 = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Threads for every case: EMBER_BENCH_THREADS (compare_cpu.sh sets it from the cores it pins), else 2.
int const threads = [] {
  char const* e = std::getenv("EMBER_BENCH_THREADS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 2;
}();

bool all_ok = true;  // any check with "ok": false makes main return 1

void line(char const* cs, char const* impl, int dim, long chains, long steps, double sec, std::string const& check) {
  if (check.find("\"ok\": false") != std::string::npos) all_ok = false;
  std::printf(
      "{\"case\": \"%s\", \"impl\": \"%s\", \"dim\": %d, \"chains\": %ld, \"steps\": %ld, \"seconds\": %.6g, "
      "\"chain_steps_per_s\": %.6g, \"check\": %s}\n",
      cs, impl, dim, chains, steps, sec, double(chains) * double(steps) / sec, check.c_str());
  std::fflush(stdout);
}

template <class Pipe>
void run_case(char const* cs, Pipe const& pipe, long chains, long steps, bool scalar_too,
              auto const& check) {
  auto one = [&](auto const& be, char const* who) {
    decltype(sample(pipe, {.chains = 1, .steps = 1}, be)) res;
    // The timer covers one sample() call (start draws, allocation and the run) but not freeing
    // the previous result, which is swapped out after the clock stops.
    double sec = median_seconds([&] { res = sample(pipe, {.chains = chains, .steps = steps, .seed = 7}, be); },
                                [&] { res = {}; });
    line(cs, who, Pipe::dim, chains, steps, sec, check(res));
  };
  one(backend::cpu{.threads = threads}, "ember-simd");
  if (scalar_too) one(backend::scalar{.threads = threads}, "ember-scalar");
}

// P5: the gradient alone at many points, points laid out [dim][point].
template <bool Simd>
double gradient_seconds(gaussian<float, 100> const& U, std::vector<float>& x, std::vector<float>& g, long n) {
  constexpr int D = 100;
  return median_seconds([&] {
    using S = std::conditional_t<Simd, simd_batch<float>, float>;
    constexpr long W = scalar_traits<S>::width;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long p = 0; p < n / W; ++p) {
      vec<S, D> xv, gv;
      for (int d = 0; d < D; ++d) {
        if constexpr (Simd) xv[d] = S::load_unaligned(&x[std::size_t(d * n + p * W)]);
        else xv[d] = x[std::size_t(d * n + p)];
      }
      U.value_and_grad(xv, gv);
      for (int d = 0; d < D; ++d) {
        if constexpr (Simd) gv[d].store_unaligned(&g[std::size_t(d * n + p * W)]);
        else g[std::size_t(d * n + p)] = gv[d];
      }
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::atoi(argv[++i]);
  }
  auto want = [&](char const* c) { return only.empty() || only == c; };
  long const scale = quick ? 10 : 1;

  auto U10 = bench_gaussian<10>();
  if (want("P1")) {
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    auto const law = ula_law(10, 0.1, 100);
    auto const &m = law.first, &v = law.second;
    run_case("P1", ula(U10, {.step_size = 0.1}), 10'000 / scale, 100, true,
             [&](auto const& r) { return check_moments(r, m, v); });
  }
  if (want("P2")) {
    std::vector<double> m, v;
    for (int i = 0; i < 10; ++i) {
      m.push_back(-1 + 2.0 * i / 9);
      v.push_back(0.5 + i / 9.0);
    }
    run_case("P2", hmc(U10, {.step_size = 0.1, .integrator_steps = 10}), 1'000 / std::min(scale, 2L), 100, true,
             [&](auto const& r) { return check_moments(r, m, v); });
  }
  if (want("P3"))
    // The exact 100-step law by grid quadrature (computed by bench/peers/common.py): mean 0,
    // variance 0.84119.
    run_case("P3", ula(double_well<float, 2>{}, {.step_size = 0.01}), 10'000 / scale, 100, true, [](auto const& r) {
      return check_reference(r, {0, 0}, {0.84119, 0.84119}, 0, 0, "grid quadrature of the 100-step ULA law");
    });
  if (want("P4"))
    // The 100-step law from a float64 Monte-Carlo reference of 10^6 chains (computed by
    // bench/peers/common.py; its standard errors are about 6e-4 and 5e-4).
    run_case("P4", ula(rosenbrock<float, 2>{}, {.step_size = 1e-4}), 10'000 / scale, 100, true, [](auto const& r) {
      return check_reference(r, {0.0120, 0.3391}, {0.3790, 0.2802}, 6e-4, 5e-4, "float64 Monte-Carlo reference");
    });
  if (want("P5")) {
    auto U = bench_gaussian<100>();
    long n = 10'000;
    std::vector<float> x(std::size_t(100 * n)), g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i)));
    for (bool simd : {true, false}) {
      double sec = simd ? gradient_seconds<true>(U, x, g, n) : gradient_seconds<false>(U, x, g, n);
      // Check: every point's gradient against P (x − μ) in double, within the float rounding
      // bound of a d-term dot product, γ_d · Σⱼ |Pᵢⱼ| (|xⱼ| + |μⱼ|) with γ_d = d·2⁻²⁴/(1 − d·2⁻²⁴),
      // reported as the worst ratio of error to bound (≤ 1 passes).
      double err = 0, gamma = 100 * 0x1p-24 / (1 - 100 * 0x1p-24);
      for (long p = 0; p < n; ++p)
        for (int i = 0; i < 100; ++i) {
          double gi = 0, bound = 0;
          for (int j = 0; j < 100; ++j) {
            double xj = x[std::size_t(j * n + p)], pij = U.precision[i][j];
            gi += pij * (xj - U.mean[j]);
            bound += std::fabs(pij) * (std::fabs(xj) + std::fabs(U.mean[j]));
          }
          err = std::max(err, std::fabs(gi - g[std::size_t(i * n + p)]) / (gamma * bound + 1e-30));
        }
      char chk[120];
      std::snprintf(chk, sizeof chk, "{\"max_err_over_bound\": %.3f, \"ok\": %s}", err, err <= 1 ? "true" : "false");
      line("P5", simd ? "ember-simd" : "ember-scalar", 100, n, 1, sec, chk);
    }
  }
  if (want("P6")) {
    auto const law = ula_law(10, 0.1, 1000 / int(scale));
    auto const &m = law.first, &v = law.second;
    run_case("P6", ula(U10, {.step_size = 0.1}), 1'000'000 / scale / scale, 1000 / scale, false,
             [&](auto const& r) { return check_moments(r, m, v); });
  }
  return all_ok ? 0 : 1;
}
