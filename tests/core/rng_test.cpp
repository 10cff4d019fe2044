// Philox against Random123 bit for bit, the range of the uniforms, the law of the normals, and
// the independence of streams across purposes, steps and chains.
#include <ember/core/rng.hpp>

#include <Random123/philox.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>

namespace {

// A small deterministic generator of test counters and keys (splitmix64).
std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("philox4x32 equals Random123's Philox4x32-10 bit for bit", "[core][rng]") {
  r123::Philox4x32 ref;
  std::uint64_t s = 1;
  for (int n = 0; n < 100'000; ++n) {
    std::uint64_t a = splitmix(s), b = splitmix(s), k = splitmix(s);
    // Some edge counters and keys as well as random ones.
    if (n == 0) a = b = k = 0;
    if (n == 1) a = b = k = ~0ull;
    r123::Philox4x32::ctr_type c = {{std::uint32_t(a), std::uint32_t(a >> 32), std::uint32_t(b),
                                     std::uint32_t(b >> 32)}};
    r123::Philox4x32::key_type key = {{std::uint32_t(k), std::uint32_t(k >> 32)}};
    auto want = ref(c, key);
    for (auto tag : {0, 1}) {  // float and double lanes share the integer rounds
      auto got = tag == 0 ? ember::philox4x32<float>(c[0], c[1], c[2], c[3], key[0], key[1])
                          : ember::philox4x32<double>(c[0], c[1], c[2], c[3], key[0], key[1]);
      for (int i = 0; i < 4; ++i) REQUIRE(got.w[i] == want[i]);
    }
    // The chain form (rounds 1 and 2 with the lane-uniform words as single products) too.
    auto lanes = ember::philox4x32_lanes<float>(c[0], c[1], c[2], c[3], key[0], key[1]);
    for (int i = 0; i < 4; ++i) REQUIRE(lanes.w[i] == want[i]);
  }
}

TEST_CASE("chain_rng's counter is (chain, step, block, purpose) and its key is the seed", "[core][rng]") {
  std::uint64_t seed = 0x0123456789ABCDEFull;
  auto rng = ember::make_chain_rng<double>(seed, 17, 5);
  auto w = ember::philox4x32<double>(17, 5, 0, std::uint32_t(ember::purpose::accept), std::uint32_t(seed),
                                     std::uint32_t(seed >> 32));
  REQUIRE(rng.uniform(ember::purpose::accept) == ember::rng_traits<double>::uniform(w.w[0]));
}

TEST_CASE("uniforms lie in (0, 1] and are strictly below 1 in double", "[core][rng]") {
  // Extremes of the 32-bit input.
  REQUIRE(ember::rng_traits<float>::uniform(0u) > 0.f);
  REQUIRE(ember::rng_traits<float>::uniform(0xFFFFFFFFu) <= 1.f);
  REQUIRE(ember::rng_traits<double>::uniform(0u) > 0.0);
  REQUIRE(ember::rng_traits<double>::uniform(0xFFFFFFFFu) < 1.0);
  // And many draws through chain_rng: mean 1/2 within 5 standard errors (sd = 1/√12).
  double sf = 0, sd = 0;
  int const n = 200'000;
  for (int c = 0; c < n; ++c) {
    float uf = ember::make_chain_rng<float>(7, std::uint32_t(c), 3).uniform(ember::purpose::accept);
    double ud = ember::make_chain_rng<double>(7, std::uint32_t(c), 3).uniform(ember::purpose::accept);
    REQUIRE(uf > 0.f);
    REQUIRE(uf <= 1.f);
    REQUIRE(ud > 0.0);
    REQUIRE(ud < 1.0);
    sf += uf;
    sd += ud;
  }
  double se = std::sqrt(1.0 / 12.0 / n);
  CHECK(std::abs(sf / n - 0.5) < 5 * se);
  CHECK(std::abs(sd / n - 0.5) < 5 * se);
}

template <class T>
void check_uniform_vectors() {
  // D = 6 spans a partial second Philox block; the first of the vector is the scalar uniform.
  // Each coordinate's mean (1/2, sd 1/√12) and the correlation of coordinates within and across
  // blocks (0, sd 1/(12√n)) within 5 standard errors.
  constexpr int D = 6;
  int const n = 100'000;
  double m[D] = {}, c04 = 0, c12 = 0;
  for (int c = 0; c < n; ++c) {
    auto const rng = ember::make_chain_rng<T>(99, std::uint32_t(c), 5);
    auto const u = rng.template uniform<D>(ember::purpose::user);
    REQUIRE(u[0] == rng.uniform(ember::purpose::user));
    for (int d = 0; d < D; ++d) {
      REQUIRE(u[d] > T(0));
      REQUIRE(u[d] <= T(1));
      m[d] += double(u[d]);
    }
    c04 += (double(u[0]) - 0.5) * (double(u[4]) - 0.5);
    c12 += (double(u[1]) - 0.5) * (double(u[2]) - 0.5);
  }
  for (int d = 0; d < D; ++d) CHECK(std::abs(m[d] / n - 0.5) / std::sqrt(1.0 / 12.0 / n) < 5);
  double const se = 1.0 / 12.0 / std::sqrt(double(n));
  CHECK(std::abs(c04 / n) / se < 5);
  CHECK(std::abs(c12 / n) / se < 5);
}

TEST_CASE("uniform<D> draws D independent uniforms, the first of them uniform()'s", "[core][rng]") {
  check_uniform_vectors<float>();
  check_uniform_vectors<double>();
}

template <class T>
void check_normal_moments() {
  // D = 7 exercises a partial Philox block. One vector per chain, so all draws are independent.
  constexpr int D = 7;
  int const n = 100'000;
  double m[D] = {}, q[D] = {}, c01 = 0, c23 = 0;  // sums of z, z², and products across the 4-block
  for (int c = 0; c < n; ++c) {
    auto z = ember::make_chain_rng<T>(2024, std::uint32_t(c), 11).template normal<D>(ember::purpose::proposal);
    for (int d = 0; d < D; ++d) {
      REQUIRE(std::isfinite(double(z[d])));
      m[d] += double(z[d]);
      q[d] += double(z[d]) * double(z[d]);
    }
    c01 += double(z[0]) * double(z[1]);
    c23 += double(z[2]) * double(z[5]);
  }
  for (int d = 0; d < D; ++d) {
    double mean = m[d] / n;
    double var = (q[d] - n * mean * mean) / (n - 1);
    INFO("dimension " << d << ": mean " << mean << ", variance " << var);
    CHECK(std::abs(mean) / std::sqrt(1.0 / n) < 5);
    CHECK(std::abs(var - 1) / std::sqrt(2.0 / (n - 1)) < 5);  // var SE of a Gaussian
  }
  // The two normals of one Box–Muller pair, and normals of different pairs, are uncorrelated.
  CHECK(std::abs(c01 / n) / std::sqrt(1.0 / n) < 5);
  CHECK(std::abs(c23 / n) / std::sqrt(1.0 / n) < 5);
}

TEST_CASE("normals from chain_rng have mean 0 and variance 1 in float", "[core][rng]") {
  check_normal_moments<float>();
}
TEST_CASE("normals from chain_rng have mean 0 and variance 1 in double", "[core][rng]") {
  check_normal_moments<double>();
}

TEST_CASE("different purposes, steps, chains and seeds give different streams", "[core][rng]") {
  auto draw = [](std::uint64_t seed, std::uint32_t chain, std::uint32_t step, ember::purpose p) {
    return ember::make_chain_rng<double>(seed, chain, step).normal<4>(p)[0];
  };
  std::set<double> seen;
  int n = 0;
  for (std::uint64_t seed : {0ull, 1ull, 1ull << 32})
    for (std::uint32_t chain : {0u, 1u, 1000u})
      for (std::uint32_t step : {0u, 1u, 2u})
        for (auto p : {ember::purpose::init, ember::purpose::proposal, ember::purpose::accept, ember::purpose::user}) {
          seen.insert(draw(seed, chain, step, p));
          ++n;
        }
  // 108 continuous draws: any collision means two (seed, chain, step, purpose) share a stream.
  REQUIRE(int(seen.size()) == n);
  // The high word of the seed is part of the key.
  REQUIRE(draw(5, 0, 0, ember::purpose::proposal) != draw(5 + (1ull << 32), 0, 0, ember::purpose::proposal));
  // Within one D-vector, the Philox blocks differ.
  auto z = ember::make_chain_rng<double>(1, 2, 3).normal<8>(ember::purpose::proposal);
  REQUIRE(z[0] != z[4]);
  REQUIRE(z[1] != z[5]);
}
