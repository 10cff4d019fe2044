// The SIMD path of backend::cpu against its scalar path: the same random streams bit for bit, and
// the same draws for every kernel and built-in energy within a justified tolerance.
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>

using namespace ember;

TEST_CASE("Philox on a SIMD batch gives every lane the scalar stream of its chain bit for bit", "[simd][rng]") {
  using B = simd_batch<float>;
  using BD = simd_batch<double>;
  constexpr int W = int(B::size), WD = int(BD::size);
  for (std::uint32_t chain : {0u, 13u, 1000u, 4294967000u})
    for (std::uint32_t step : {0u, 1u, 77u}) {
      auto rb = make_chain_rng<B>(0xfeedbeefcafeull, chain, step);
      auto rd = make_chain_rng<BD>(0xfeedbeefcafeull, chain, step);
      auto wb = philox4x32<B>(rb.chain, rng_traits<B>::u32(step), rng_traits<B>::u32(2u),
                              rng_traits<B>::u32(1u), rb.key0, rb.key1);
      auto wd = philox4x32<BD>(rd.chain, rng_traits<BD>::u32(step), rng_traits<BD>::u32(2u),
                               rng_traits<BD>::u32(1u), rd.key0, rd.key1);
      auto lb = philox4x32_lanes<B>(rb.chain, step, 2u, 1u, rb.key0, rb.key1);
      auto ld = philox4x32_lanes<BD>(rd.chain, step, 2u, 1u, rd.key0, rd.key1);
      auto ub = rb.uniform(purpose::accept);
      for (int l = 0; l < W; ++l) {
        auto r = make_chain_rng<float>(0xfeedbeefcafeull, chain + std::uint32_t(l), step);
        auto w = philox4x32<float>(r.chain, step, 2u, 1u, r.key0, r.key1);
        for (int i = 0; i < 4; ++i) REQUIRE(wb.w[i].get(std::size_t(l)) == w.w[i]);
        for (int i = 0; i < 4; ++i) REQUIRE(lb.w[i].get(std::size_t(l)) == w.w[i]);
        REQUIRE(ub.get(std::size_t(l)) == r.uniform(purpose::accept));
        if (l < WD)
          for (int i = 0; i < 4; ++i) {
            REQUIRE(wd.w[i].get(std::size_t(l)) == std::uint64_t(w.w[i]));
            REQUIRE(ld.w[i].get(std::size_t(l)) == std::uint64_t(w.w[i]));
          }
      }
    }
}

TEST_CASE("lane_rng gives each lane, at its own step and block, its chain's scalar stream bit for bit", "[simd][rng]") {
  auto check = []<class B>(B) {
    using T = typename B::value_type;
    constexpr int W = int(B::size);
    constexpr std::uint64_t seed = 0x5eed0123456789ull;
    std::uint32_t const chain = 4000;
    std::uint32_t steps[W], blocks[W];
    for (int l = 0; l < W; ++l) steps[l] = std::uint32_t(7 + 3 * l * l), blocks[l] = std::uint32_t(5 * l);
    auto lanes = make_lane_rng(make_chain_rng<B>(seed, chain, 0));
    lanes.step = words_from_lanes<B>(steps);
    auto const z = lanes.template normal<13>(purpose::proposal);
    auto const u = lanes.template uniform_at<3>(purpose::leaf, words_from_lanes<B>(blocks));
    for (int l = 0; l < W; ++l) {
      auto r = make_chain_rng<T>(seed, chain + std::uint32_t(l), steps[l]);
      auto const zs = r.template normal<13>(purpose::proposal);
      auto const us = r.template uniform_from<3>(purpose::leaf, blocks[l]);
      for (int i = 0; i < 13; ++i) REQUIRE(z[i].get(std::size_t(l)) == zs[i]);
      for (int i = 0; i < 3; ++i) REQUIRE(u[i].get(std::size_t(l)) == us[i]);
    }
  };
  check(simd_batch<float>{});
  check(simd_batch<double>{});
}

namespace {

// Runs `kernel | record()` on both paths over a chain count that is not a multiple of the batch
// width and compares every kept draw. The two paths differ only in rounding: xsimd's log and
// sqrt versus libm's (within 2 ulp), and where the compiler contracts a·b + c into an FMA. Over
// n steps of a contracting map those differences stay of order n·ulp·scale; we allow
// 1e-3 · (1 + |x|) per coordinate, far below any sampling difference (a different stream gives
// O(1) differences). A Metropolis decision whose log-ratio lands within rounding of log u can
// flip and separate a chain; with 200 chains × 20 steps such a flip has probability ~1e-4, so
// at most one chain per run may differ, and every other must agree.
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
void compare_all_kernels(E const& U, double eta) {
  compare_paths(ula(U, {.step_size = eta}));
  compare_paths(mala(U, {.step_size = eta}));
  compare_paths(hmc(U, {.step_size = eta, .integrator_steps = 5}));
}

}  // namespace

TEST_CASE("the SIMD and scalar paths give the same draws for every kernel and energy", "[simd][cpu]") {
  constexpr int D = 3;
  vec<float, D> mu{{0.5f, -1.f, 0.25f}};
  std::array<std::array<float, D>, D> cov{{{1.f, 0.3f, 0.f}, {0.3f, 2.f, 0.2f}, {0.f, 0.2f, 0.5f}}};
  SECTION("gaussian, isotropic") { compare_all_kernels(gaussian(mu, 0.7f), 0.05); }
  SECTION("gaussian, diagonal") { compare_all_kernels(gaussian(mu, vec<float, D>{{1.f, 0.5f, 2.f}}), 0.05); }
  SECTION("gaussian, full") { compare_all_kernels(gaussian<float, D>(mu, cov), 0.05); }
  SECTION("double well") { compare_all_kernels(double_well<float, D>{}, 0.01); }
  SECTION("harmonic") { compare_all_kernels(harmonic<float, D>{}, 0.05); }
  SECTION("rosenbrock") { compare_all_kernels(rosenbrock<float, D>{}, 1e-3); }
  SECTION("rastrigin") { compare_all_kernels(rastrigin<float, D>{}, 1e-3); }
  SECTION("ackley") { compare_all_kernels(ackley<float, D>{}, 1e-2); }
  SECTION("gaussian mixture") {
    gaussian_mixture<float, D, 2> mix({0.4f, 0.6f}, {vec<float, D>{{-1.f, 0.f, 0.f}}, vec<float, D>{{1.f, 1.f, 0.f}}},
                                      {0.5f, 0.8f});
    compare_all_kernels(mix, 0.05);
  }
  SECTION("an expression") { compare_all_kernels(gaussian(mu, 0.7f) + 0.5f * double_well<float, D>{}, 0.02); }
}

TEST_CASE("the SIMD path of double-precision energies (8 chains per AVX-512 batch) matches the scalar path",
          "[simd][cpu][double]") {
  constexpr int D = 3;
  vec<double, D> mu{{0.5, -1., 0.25}};
  std::array<std::array<double, D>, D> cov{{{1., 0.3, 0.}, {0.3, 2., 0.2}, {0., 0.2, 0.5}}};
  SECTION("gaussian, full") { compare_all_kernels(gaussian<double, D>(mu, cov), 0.05); }
  SECTION("rastrigin + ackley") { compare_all_kernels(rastrigin<double, D>{} + 0.5 * ackley<double, D>{}, 1e-3); }
  SECTION("gaussian mixture") {
    gaussian_mixture<double, D, 2> mix({0.4, 0.6}, {vec<double, D>{{-1., 0., 0.}}, vec<double, D>{{1., 1., 0.}}},
                                       {0.5, 0.8});
    compare_all_kernels(mix, 0.05);
  }
}

TEST_CASE("a chain's draws do not depend on how many chains run beside it", "[simd][cpu]") {
  // The last batch is partial when the chain count is not a multiple of the width; its extra
  // lanes run ghost chains. Chain c must come out bit for bit the same with 37, 48 or 300 chains.
  vec<float, 2> mu{{0.5f, -1.f}};
  auto pipe = mala(gaussian(mu, 0.8f), {.step_size = 0.1}) | thin(3) | record() | track(moments);
  auto a = sample(pipe, {.chains = 37, .steps = 30, .seed = 9}, backend::cpu{});
  for (std::int64_t n : {48, 300}) {
    auto b = sample(pipe, {.chains = n, .steps = 30, .seed = 9}, backend::cpu{});
    for (std::int64_t c = 0; c < 37; ++c)
      for (std::int64_t k = 0; k < a.kept(); ++k)
        for (int d = 0; d < 2; ++d) REQUIRE(a.samples()(k, c, d) == b.samples()(k, c, d));
  }
  // Ghost lanes add nothing to the trace: 37 live chains at every kept step.
  for (auto live : a.trace().live_chains) CHECK(live == 37);
}

TEST_CASE("tracked variance stays exact when the mean is large against the spread", "[simd][cpu][track]") {
  // Σx² − n·mean² cancels: at mean 2·10⁴ and sd 1 a float lane sum would lose the variance
  // entirely. The tracked variance must equal the variance of the recorded draws (both in double,
  // from the same float draws) to double rounding of that cancellation (~1e-8·mean²/var).
  vec<float, 3> mu{{2e4f, -2e4f, 1e4f}};
  auto pipe = ula(gaussian(mu, 1.f), {.step_size = 0.1}) | burn_in(200) | record() | track(moments);
  auto r = sample(pipe, {.chains = 1000, .steps = 5, .seed = 3, .init = {}}, backend::cpu{});
  for (std::int64_t k = 0; k < r.kept(); ++k)
    for (int d = 0; d < 3; ++d) {
      double m = 0, q = 0;
      for (std::int64_t c = 0; c < r.chains(); ++c) m += r.samples()(k, c, d);
      m /= double(r.chains());
      for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(r.samples()(k, c, d) - m, 2);
      q /= double(r.chains() - 1);
      CHECK(r.trace().mean[std::size_t(k)][d] == Approx(m).epsilon(1e-12));
      CHECK(std::fabs(r.trace().variance[std::size_t(k)][d] - q) < 1e-8 * m * m / q + 1e-12);
    }
}
