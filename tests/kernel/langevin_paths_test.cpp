// The underdamped Langevin kernels on backend::cpu (SIMD) and backend::scalar: the same draws to
// rounding (the tolerance argument of tests/backend/cpu_simd_test.cpp), and a chain's draws
// independent of the chains beside it, momentum included (init draws it from the chain's stream).
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>

using namespace ember;

namespace {

// Every kept draw of every chain on both paths, 1e-3·(1 + |x|) apart at most; an adjusted kernel
// may flip one Metropolis decision in a run (log-ratio within rounding of log u), so one chain
// may differ.
template <class K>
void compare_paths(K const& kernel) {
  constexpr int D = K::dim;
  std::int64_t const chains = 16 * 12 + 7;
  auto pipe = kernel | record();
  auto a = sample(pipe, {.chains = chains, .steps = 20, .seed = 5}, backend::cpu{.threads = 2});
  auto b = sample(pipe, {.chains = chains, .steps = 20, .seed = 5}, backend::scalar{.threads = 2});
  int differing_chains = 0;
  for (std::int64_t c = 0; c < chains; ++c) {
    bool same = a.divergent(c) == b.divergent(c);
    for (std::int64_t k = 0; k < a.kept(); ++k)
      for (int d = 0; d < D; ++d) {
        double x = a.samples()(k, c, d), y = b.samples()(k, c, d);
        same = same && std::fabs(x - y) <= 1e-3 * (1 + std::fabs(y));
      }
    differing_chains += !same;
  }
  CHECK(differing_chains <= 1);
}

template <class E>
void compare_langevin_kernels(E const& U, double h) {
  compare_paths(underdamped_langevin(U, {.step_size = h, .friction = 1.0, .mass = 1.5}));
  compare_paths(underdamped_langevin_with<obabo>(U, {.step_size = h, .friction = 0.5}));
  compare_paths(underdamped_langevin_with<aboba>(U, {.step_size = h, .friction = 2.0}));
  compare_paths(adjusted_underdamped_langevin(U, {.step_size = h, .friction = 0.5, .mass = 0.8}));
}

}  // namespace

TEST_CASE("underdamped langevin kernels give the same draws on the SIMD and scalar paths",
          "[kernel][underdamped_langevin][simd]") {
  constexpr int D = 3;
  vec<float, D> mu{{0.5f, -1.f, 0.25f}};
  std::array<std::array<float, D>, D> cov{{{1.f, 0.3f, 0.f}, {0.3f, 2.f, 0.2f}, {0.f, 0.2f, 0.5f}}};
  SECTION("gaussian, full") { compare_langevin_kernels(gaussian<float, D>(mu, cov), 0.2); }
  SECTION("double well") { compare_langevin_kernels(double_well<float, D>{}, 0.05); }
  SECTION("gaussian mixture") {
    gaussian_mixture<float, D, 2> mix({0.4f, 0.6f}, {vec<float, D>{{-1.f, 0.f, 0.f}}, vec<float, D>{{1.f, 1.f, 0.f}}},
                                      {0.5f, 0.8f});
    compare_langevin_kernels(mix, 0.2);
  }
  SECTION("gaussian, full, double precision") {
    vec<double, D> mud{{0.5, -1., 0.25}};
    std::array<std::array<double, D>, D> covd{{{1., 0.3, 0.}, {0.3, 2., 0.2}, {0., 0.2, 0.5}}};
    compare_langevin_kernels(gaussian<double, D>(mud, covd), 0.2);
  }
}

TEST_CASE("an underdamped chain's draws do not depend on how many chains run beside it",
          "[kernel][underdamped_langevin][simd]") {
  vec<float, 2> mu{{0.5f, -1.f}};
  auto run = [&](auto const& k, std::int64_t n) {
    return sample(k | thin(3) | record(), {.chains = n, .steps = 30, .seed = 9}, backend::cpu{});
  };
  auto check = [&](auto const& k) {
    auto a = run(k, 37);
    for (std::int64_t n : {48, 300}) {
      auto b = run(k, n);
      for (std::int64_t c = 0; c < 37; ++c)
        for (std::int64_t t = 0; t < a.kept(); ++t)
          for (int d = 0; d < 2; ++d) REQUIRE(a.samples()(t, c, d) == b.samples()(t, c, d));
    }
  };
  check(underdamped_langevin(gaussian(mu, 0.8f), {.step_size = 0.3}));
  check(adjusted_underdamped_langevin(gaussian(mu, 0.8f), {.step_size = 0.3}));
}
