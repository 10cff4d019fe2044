// Underdamped Langevin against MALA and HMC: ESS per gradient evaluation on P1's 10-d Gaussian
// and on the quickstart's 2-d Gaussian mixture, each kernel at the best of a small grid of its
// parameters (so no kernel is compared at a bad setting), and the throughput (transitions/s) of
// BAOAB against ULA on the SIMD path. One JSON line per measurement.
//
// ESS is Stan's multi-chain ESS (ember::ess) over the recorded draws of each coordinate x_d and
// of x_d², the minimum over all of them; gradients are those of the recorded phase, chains × steps ×
// gradients per transition. Unadjusted kernels are biased, so each line carries the largest
// relative error of a variance against the truth beside its ESS, and the "best" point of a grid
// is the best among points whose variances are all within 5 % of the truth.
//
// usage: ember_langevin_bench [--quick] [--threads N] [--ess-only | --throughput-only]
//        ember_langevin_bench --instructions ula|baoab|adjusted_obabo|mala STEPS   (under callgrind)
#include <ember/ember.hpp>

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

namespace {

int threads = 2;
bool quick = false;
bool ess_only = false, throughput_only = false;

gaussian<float, 10> p1_gaussian() {
  vec<float, 10> mu;
  std::array<std::array<float, 10>, 10> cov{};
  for (int i = 0; i < 10; ++i) {
    mu[i] = -1.f + 2.f * float(i) / 9.f;
    cov[i][i] = 0.5f + float(i) / 9.f;
  }
  return gaussian<float, 10>(mu, cov);
}

gaussian_mixture<float, 2, 2> mixture() {
  return {{0.7f, 0.3f}, {vec<float, 2>{{-1.f, 0.f}}, vec<float, 2>{{1.f, 0.5f}}}, {0.6f, 0.8f}};
}

struct truth {
  std::vector<double> mean, var;
};

struct measured {
  double ess_per_grad = 0, min_ess = 0, min_ess_sq = 0, var_err = 0, acceptance = 0;
};

// Min-over-coordinates ESS per gradient and the largest |var/var_true − 1| of a recorded run.
template <class Pipe>
measured measure(Pipe const& pipe, double grads_per_transition, truth const& t, std::int64_t chains,
                 std::int64_t steps) {
  auto r = sample(pipe, {.chains = chains, .steps = steps, .seed = 11}, backend::cpu{.threads = threads});
  constexpr int D = Pipe::dim;
  auto draws = r.samples();
  measured m;
  m.min_ess = m.min_ess_sq = 1e300;
  m.acceptance = r.acceptance_rate();
  for (int d = 0; d < D; ++d) {
    m.min_ess = std::min(m.min_ess, ess([&](std::int64_t c, std::int64_t i) { return double(draws(i, c, d)); },
                                        chains, r.kept()));
    // x² as well: on a Gaussian, a fixed trajectory length can make x antithetic (ESS above the
    // number of draws) while x² mixes slowly; the smaller of the two is what a user gets.
    m.min_ess_sq = std::min(m.min_ess_sq, ess(
                                              [&](std::int64_t c, std::int64_t i) {
                                                double x = draws(i, c, d);
                                                return x * x;
                                              },
                                              chains, r.kept()));
    double s = 0, q = 0, n = double(chains * r.kept());
    for (std::int64_t c = 0; c < chains; ++c)
      for (std::int64_t i = 0; i < r.kept(); ++i) {
        double x = draws(i, c, d);
        s += x;
        q += x * x;
      }
    double var = q / n - (s / n) * (s / n);
    m.var_err = std::max(m.var_err, std::fabs(var / t.var[std::size_t(d)] - 1));
  }
  if (r.divergent_chains() > 0) m.min_ess = m.min_ess_sq = 0;
  m.ess_per_grad = std::min(m.min_ess, m.min_ess_sq) / (double(chains) * double(steps) * grads_per_transition);
  return m;
}

void line(char const* target, char const* kernel, std::string const& params, measured const& m) {
  std::printf(
      "{\"target\": \"%s\", \"kernel\": \"%s\", \"params\": {%s}, \"min_ess_x\": %.0f, \"min_ess_x2\": %.0f, "
      "\"ess_per_1000_grads\": %.3f, \"max_rel_var_error\": %.4f, \"acceptance\": %.3f}\n",
      target, kernel, params.c_str(), m.min_ess, m.min_ess_sq, 1000 * m.ess_per_grad, m.var_err, m.acceptance);
  std::fflush(stdout);
}

template <class E>
void ess_suite(char const* name, E const& U, truth const& t) {
  std::int64_t const chains = quick ? 64 : 128, steps = quick ? 1000 : 2000, burn = 1000;
  char buf[200];
  // Each kernel's grid; the best point is reported as "best", every point as "grid".
  auto report = [&](char const* kernel, auto&& run_grid) {
    measured best;
    std::string best_params;
    run_grid([&](std::string const& params, measured const& m) {
      if (m.var_err < 0.05 && m.ess_per_grad > best.ess_per_grad) {
        best = m;
        best_params = params;
      }
    });
    std::string tag = std::string(kernel) + " (best)";
    line(name, tag.c_str(), best_params, best);
  };
  report("mala", [&](auto&& keep) {
    for (double eta : {0.2, 0.3, 0.5, 0.8, 1.2}) {
      auto m = measure(mala(U, {.step_size = eta}) | burn_in(burn) | record(), 1, t, chains, steps);
      std::snprintf(buf, sizeof buf, "\"step_size\": %g", eta);
      if (!quick) line(name, "mala", buf, m);
      keep(buf, m);
    }
  });
  report("hmc", [&](auto&& keep) {
    for (double eps : {0.3, 0.5, 0.7, 0.9})
      for (int L : {2, 3, 5, 10}) {
        auto m = measure(hmc(U, {.step_size = eps, .integrator_steps = L}) | burn_in(burn / L + 50) | record(), L, t, chains,
                         steps / L + 10);
        std::snprintf(buf, sizeof buf, "\"step_size\": %g, \"steps\": %d", eps, L);
        if (!quick) line(name, "hmc", buf, m);
        keep(buf, m);
      }
  });
  report("underdamped_langevin", [&](auto&& keep) {
    for (double h : {0.4, 0.6, 0.8, 1.0, 1.2})
      for (double g : {0.1, 0.25, 0.5, 1.0, 2.0}) {
        auto m = measure(underdamped_langevin(U, {.step_size = h, .friction = g}) | burn_in(burn) | record(), 1, t,
                         chains, steps);
        std::snprintf(buf, sizeof buf, "\"step_size\": %g, \"friction\": %g", h, g);
        if (!quick) line(name, "underdamped_langevin", buf, m);
        keep(buf, m);
      }
  });
  report("adjusted_underdamped_langevin", [&](auto&& keep) {
    for (double h : {0.4, 0.6, 0.8, 1.0, 1.2})
      for (double g : {0.1, 0.25, 0.5, 1.0, 2.0}) {
        auto m = measure(adjusted_underdamped_langevin(U, {.step_size = h, .friction = g}) | burn_in(burn) | record(),
                         1, t, chains, steps);
        std::snprintf(buf, sizeof buf, "\"step_size\": %g, \"friction\": %g", h, g);
        if (!quick) line(name, "adjusted_underdamped_langevin", buf, m);
        keep(buf, m);
      }
  });
}

// Seconds of one sample() call without recording.
template <class Pipe>
double seconds_of(Pipe const& pipe, std::int64_t chains, std::int64_t steps, int nthreads) {
  auto t0 = std::chrono::steady_clock::now();
  auto res = sample(pipe, {.chains = chains, .steps = steps, .seed = 7}, backend::cpu{.threads = nthreads});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (res.divergent_chains() > 0) std::printf("# divergent chains!\n");
  return s;
}

// The kernels of the throughput comparison, by name (also for --instructions under callgrind).
template <class F>
void with_kernel(std::string const& name, F&& f) {
  auto U10 = p1_gaussian();
  if (name == "ula") f(ula(U10, {.step_size = 0.1}));
  else if (name == "baoab") f(underdamped_langevin(U10, {.step_size = 0.4, .friction = 1.0}));
  else if (name == "adjusted_obabo") f(adjusted_underdamped_langevin(U10, {.step_size = 0.4, .friction = 1.0}));
  else if (name == "mala") f(mala(U10, {.step_size = 0.3}));
  else std::printf("# unknown kernel %s\n", name.c_str());
}

// Transitions per second of each kernel, runs interleaved (ula, baoab, ..., ula, baoab, ...) so
// that the shared machine's load hits all alike; the fastest of `rounds` runs (the least
// disturbed) and the median are reported.
void throughput(std::int64_t chains, std::int64_t steps, int nthreads, int rounds) {
  std::vector<std::string> names{"ula", "baoab", "adjusted_obabo", "mala"};
  std::vector<std::vector<double>> t(names.size());
  for (int r = 0; r <= rounds; ++r)
    for (std::size_t k = 0; k < names.size(); ++k)
      with_kernel(names[k], [&](auto const& kern) {
        double s = seconds_of(kern, chains, steps, nthreads);
        if (r > 0) t[k].push_back(s);  // round 0 warms up
      });
  std::printf("{\"throughput\": \"P1 10-d gaussian, SIMD path, %d thread(s)\", \"chains\": %lld, \"steps\": %lld",
              nthreads, (long long)chains, (long long)steps);
  double best[4], med[4];
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::sort(t[k].begin(), t[k].end());
    best[k] = double(chains * steps) / t[k].front();
    med[k] = double(chains * steps) / t[k][t[k].size() / 2];
    std::printf(", \"%s\": {\"best\": %.4g, \"median\": %.4g}", names[k].c_str(), best[k], med[k]);
  }
  std::printf(", \"baoab_over_ula_best\": %.3f, \"baoab_over_ula_median\": %.3f}\n", best[1] / best[0],
              med[1] / med[0]);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--ess-only")) ess_only = true;
    else if (!std::strcmp(argv[i], "--throughput-only")) throughput_only = true;
    else if (!std::strcmp(argv[i], "--instructions") && i + 2 < argc) {
      // One run on one thread, for callgrind: instructions per chain-step are the difference
      // between runs of n and 0 steps over chains × n.
      std::string name = argv[++i];
      long n = std::atol(argv[++i]);
      with_kernel(name, [&](auto const& kern) { seconds_of(kern, 512, n, 1); });
      return 0;
    }
  }
  auto U10 = p1_gaussian();
  truth t10;
  for (int i = 0; i < 10; ++i) {
    t10.mean.push_back(-1 + 2.0 * i / 9);
    t10.var.push_back(0.5 + i / 9.0);
  }
  // The mixture's moments: Σ wₖ μₖ and Σ wₖ (σₖ² + μₖ²) − mean².
  truth tm{{-0.4, 0.15}, {0.7 * (0.36 + 1) + 0.3 * (0.64 + 1) - 0.16, 0.7 * 0.36 + 0.3 * (0.64 + 0.25) - 0.0225}};
  if (!throughput_only) {
    ess_suite("P1 10-d gaussian", U10, t10);
    ess_suite("2-d gaussian mixture", mixture(), tm);
  }
  if (ess_only) return 0;

  // Throughput on the SIMD path, P1's shape (10,000 chains × 100 transitions, no recording).
  std::int64_t const chains = quick ? 2'000 : 10'000;
  throughput(chains, 100, 1, quick ? 5 : 15);
  throughput(chains, 100, threads, quick ? 5 : 15);
  return 0;
}
