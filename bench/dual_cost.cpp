// dual_cost: the price of a gradient by forward-mode dual numbers (custom_energy) against the
// analytic gradient of the same built-in energy, one chain at a time in float. For each energy:
// nanoseconds per value_and_grad over 1e6 evaluations cycling through 1024 random points,
// median of 5 repeats, both timed in the same run (interleaved), and the ratio dual / analytic.
#include <ember/ember.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int points = 1024;
constexpr long evaluations = 1'000'000;
constexpr int repeats = 5;

// Sums value and gradient so that nothing can be dropped; noinline keeps each energy's loop
// separate in the generated code (inspect with objdump -d --no-show-raw-insn).
template <class E, int D>
[[gnu::noinline]] float run(E const& e, std::vector<ember::vec<float, D>> const& xs) {
  // One accumulator per component: no dependency chain from one evaluation to the next.
  float acc_u = 0;
  ember::vec<float, D> acc = ember::filled<float, D>(0.f);
  for (long k = 0; k < evaluations; ++k) {
    ember::vec<float, D> g;
    acc_u += e.value_and_grad(xs[std::size_t(k & (points - 1))], g);
    for (int i = 0; i < D; ++i) acc[i] += g[i];
  }
  for (int i = 0; i < D; ++i) acc_u += acc[i];
  return acc_u;
}

template <class E, int D>
double seconds(E const& e, std::vector<ember::vec<float, D>> const& xs, float& sink) {
  auto t0 = std::chrono::steady_clock::now();
  sink += run(e, xs);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <int D>
std::vector<ember::vec<float, D>> random_points(unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> n(0.f, scale);
  std::vector<ember::vec<float, D>> xs(points);
  for (auto& x : xs)
    for (int i = 0; i < D; ++i) x[i] = n(gen);
  return xs;
}

template <class A, class B, int D>
void compare(char const* name, A const& analytic, B const& dual, std::vector<ember::vec<float, D>> const& xs) {
  float sink = 0;
  std::array<double, repeats> ta, td;
  for (int r = 0; r < repeats; ++r) {
    ta[std::size_t(r)] = seconds(analytic, xs, sink);
    td[std::size_t(r)] = seconds(dual, xs, sink);
  }
  std::sort(ta.begin(), ta.end());
  std::sort(td.begin(), td.end());
  double a = ta[repeats / 2] / evaluations * 1e9, d = td[repeats / 2] / evaluations * 1e9;
  std::printf("%-26s %3d  %10.2f  %10.2f  %6.2f   (%g)\n", name, D, a, d, d / a, double(sink) * 0);
}

template <int D>
void gaussian_full() {
  std::array<std::array<float, D>, D> cov{};
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) cov[std::size_t(i)][std::size_t(j)] = (i == j) ? 1.f : 0.5f / float(1 + std::abs(i - j));
  ember::vec<float, D> mu;
  for (int i = 0; i < D; ++i) mu[i] = 0.1f * float(i);
  ember::gaussian<float, D, ember::covariance::full> g(mu, cov);
  auto v = ember::custom_energy<D>([p = g.precision, mu](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    ember::vec<S, D> r;
    for (int i = 0; i < D; ++i) r[i] = x[i] - mu[i];
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S pr = p[i][0] * r[0];
      for (int j = 1; j < D; ++j) pr = pr + p[i][j] * r[j];
      q = q + r[i] * pr;
    }
    return 0.5f * q;
  });
  compare("gaussian (full covariance)", g, v, random_points<D>(D, 1.f));
}

template <int D>
void rosenbrock() {
  ember::rosenbrock<float, D> e;
  auto v = ember::custom_energy<D>([](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    S s = S(0);
    for (int i = 0; i + 1 < D; ++i) {
      S u = 1.f - x[i];
      S w = x[i + 1] - x[i] * x[i];
      s = s + u * u + 100.f * w * w;
    }
    return s;
  });
  compare("rosenbrock", e, v, random_points<D>(100 + D, 1.f));
}

}  // namespace

// The cost that reaches a user: a whole ULA run (P1: d = 10 full-covariance Gaussian, 10,000
// chains, 100 steps, SIMD path, 2 threads) with the built-in energy against the same energy as a
// lambda differentiated by duals; the Philox draws and the update are shared, so the ratio is
// smaller than the bare gradient's.
void ula_in_sampler() {
  using namespace ember;
  constexpr int D = 10;
  vec<float, D> mu;
  std::array<std::array<float, D>, D> cov{};
  for (int i = 0; i < D; ++i) {
    mu[i] = -1 + 2.f * float(i) / 9;
    cov[i][i] = 0.5f + float(i) / 9;
  }
  gaussian<float, D> G(mu, cov);
  auto V = custom_energy<D>([G](auto const& x) { return G.value(x); });
  // Analytic and dual runs interleaved, after one warm-up of each, so drifts of the shared
  // machine hit both alike; medians of 7.
  auto run = [](auto const& pipe) {
    return sample(pipe, {.chains = 10'000, .steps = 100, .seed = 1}, backend::cpu{.threads = 2}).seconds();
  };
  auto pa = ula(G, {.step_size = 0.1});
  auto pd = ula(V, {.step_size = 0.1});
  run(pa);
  run(pd);
  std::vector<double> ta, td;
  for (int r = 0; r < 7; ++r) {
    ta.push_back(run(pa));
    td.push_back(run(pd));
  }
  std::sort(ta.begin(), ta.end());
  std::sort(td.begin(), td.end());
  double a = ta[3], d = td[3];
  std::printf("ULA run, gaussian full d=10, SIMD: analytic %.2f ms, dual %.2f ms, ratio %.2f\n", a * 1e3, d * 1e3, d / a);
}

int main() {
  std::printf("ns per value_and_grad, float, one chain at a time, median of %d x %ld evaluations\n", repeats,
              evaluations);
  std::printf("%-26s %3s  %10s  %10s  %6s\n", "energy", "d", "analytic", "dual", "ratio");
  gaussian_full<2>();
  gaussian_full<10>();
  gaussian_full<32>();
  rosenbrock<2>();
  rosenbrock<10>();
  ula_in_sampler();
}
