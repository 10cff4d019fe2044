// Box–Muller's own functions (log_positive, sincos_2pi) against long-double references, exhaustively
// over every float uniform the generator can produce, and the same normals bit for bit on one
// chain and on a SIMD batch, in float and double.
#include <ember/core/rng.hpp>
#include <ember/core/simd.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace ember;

namespace {

// |got − want| in units of the last place of `want` in T (the spacing of T's numbers at |want|).
template <class T>
double ulps(T got, long double want) {
  int e = std::ilogb(T(want));
  return double(std::fabs((long double)got - want) / std::ldexp(1.0L, e - std::numeric_limits<T>::digits + 1));
}

// Bits of a float or double, so equality is on the representation (−0 ≠ +0, NaN == NaN).
template <class T>
auto bits(T x) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<std::uint32_t>(x);
  else return std::bit_cast<std::uint64_t>(x);
}

// A batch's lanes in an array (one store, where .get(l) per lane is slow under some compilers).
template <class Bt>
std::array<typename Bt::value_type, Bt::size> lanes(Bt const& b) {
  std::array<typename Bt::value_type, Bt::size> a;
  b.store_unaligned(a.data());
  return a;
}

// The 2²⁴ float uniforms, (m + ½)·2⁻²⁴, as batches: batch i holds m = W·i … W·i + W − 1.
using B = simd_batch<float>;
using BD = simd_batch<double>;
B float_uniforms(std::uint32_t first) { return rng_traits<B>::uniform(rng_traits<B>::lanes_from(first) << 8); }

// A deterministic generator of test inputs (splitmix64).
std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("log_positive is within 0.9 ulp of ln on every float uniform, the same bits on a batch",
          "[core][rng][log]") {
  // The polynomial's own error is 4·10⁻⁹ relative (0.07 ulp); the rest is the last two roundings.
  double worst = 0, radius = 0;
  std::int64_t differ = 0;
  for (std::uint32_t m = 0; m < (1u << 24); m += std::uint32_t(B::size)) {
    B u = float_uniforms(m);
    auto ul = lanes(u), lb = lanes(log_positive(u));
    for (std::size_t l = 0; l < B::size; ++l) {
      float x = ul[l], y = log_positive(x);
      differ += bits(y) != bits(lb[l]);
      long double want = std::log((long double)x);
      if (x == 1.f) {
        REQUIRE(bits(y) == 0u);  // ln 1 = +0 exactly: the top uniform gives a radius of 0
        continue;
      }
      worst = std::fmax(worst, ulps(y, want));
      // The radius of Box–Muller, √(−2 ln u): relative error half the log's, plus sqrt's rounding.
      radius = std::fmax(radius, double(std::fabs(std::sqrt(-2.f * y) / std::sqrt(-2 * want) - 1)));
    }
  }
  INFO("largest error " << worst << " ulp, radius " << radius << " relative");
  CHECK(worst < 0.9);
  CHECK(radius < 1e-7);
  CHECK(differ == 0);
}

TEST_CASE("log_positive is within 0.9 ulp of ln in double, the same bits on a batch", "[core][rng][log]") {
  // 2²² inputs: half double uniforms as drawn, half over the whole normal range (every exponent),
  // and the edges of the reduction: powers of two, √½ and √2 and their neighbours, the extremes.
  std::vector<double> xs;
  std::uint64_t s = 3;
  for (int n = 0; n < (1 << 21); ++n) {
    std::uint64_t z = splitmix(s);
    xs.push_back(rng_traits<double>::uniform(std::uint32_t(z)));
    xs.push_back(std::ldexp(1.0 + double(z >> 12) * 0x1p-52, int(z % 2044) - 1021));
  }
  for (double e : {std::sqrt(0.5), std::sqrt(2.0), 1.0, 2.0, 0.5, 0x1p-33, 1 - 0x1p-33})
  {
    double lo = e, hi = e;
    for (int k = 0; k < 64; ++k, lo = std::nextafter(lo, 0.0), hi = std::nextafter(hi, 4.0)) {
      xs.push_back(lo);
      xs.push_back(hi);
    }
  }
  xs.push_back(std::numeric_limits<double>::min());
  xs.push_back(std::numeric_limits<double>::max());
  while (xs.size() % BD::size) xs.push_back(1.0);
  double worst = 0;
  std::int64_t differ = 0;
  for (std::size_t i = 0; i < xs.size(); i += BD::size) {
    auto lb = lanes(log_positive(BD::load_unaligned(&xs[i])));
    for (std::size_t l = 0; l < BD::size; ++l) {
      double x = xs[i + l], y = log_positive(x);
      differ += bits(y) != bits(lb[l]);
      if (x == 1.0) {
        REQUIRE(y == 0.0);
        continue;
      }
      worst = std::fmax(worst, ulps(y, std::log((long double)x)));
    }
  }
  INFO("largest error " << worst << " ulp");
  CHECK(worst < 0.9);
  CHECK(differ == 0);
}

TEST_CASE("sincos_2pi is within 8e-8 of sin and cos on every float uniform, and 2e-16 in double",
          "[core][rng][sincos]") {
  long double const two_pi_l = 6.283185307179586476925286766559L;
  double es = 0, ec = 0;
  std::int64_t differ = 0;
  for (std::uint32_t m = 0; m < (1u << 24); m += std::uint32_t(B::size)) {
    B u = float_uniforms(m);
    B sb, cb;
    sincos_2pi(u, sb, cb);
    auto ul = lanes(u), sl = lanes(sb), cl = lanes(cb);
    for (std::size_t l = 0; l < B::size; ++l) {
      float x = ul[l], sn, cs;
      sincos_2pi(x, sn, cs);
      differ += (bits(sn) != bits(sl[l])) + (bits(cs) != bits(cl[l]));
      es = std::fmax(es, double(std::fabs(sn - std::sin(two_pi_l * x))));
      ec = std::fmax(ec, double(std::fabs(cs - std::cos(two_pi_l * x))));
    }
  }
  CHECK(es < 8e-8);
  CHECK(ec < 8e-8);
  CHECK(differ == 0);
  // Double: 2²⁴ drawn uniforms, and the quadrant boundaries q/8 where ⌊4u + ½⌋ changes.
  std::vector<double> us;
  std::uint64_t s = 5;
  for (int n = 0; n < (1 << 24); ++n) us.push_back(rng_traits<double>::uniform(std::uint32_t(splitmix(s))));
  for (int q = 0; q <= 8; ++q)
    for (int k = -8; k <= 8; ++k) us.push_back(std::clamp(q / 8.0 + k * 0x1p-33, 0x1p-33, 1.0));
  while (us.size() % BD::size) us.push_back(0.5);
  double ds = 0, dc = 0;
  differ = 0;
  for (std::size_t i = 0; i < us.size(); i += BD::size) {
    BD sb, cb;
    sincos_2pi(BD::load_unaligned(&us[i]), sb, cb);
    auto sl = lanes(sb), cl = lanes(cb);
    for (std::size_t l = 0; l < BD::size; ++l) {
      double x = us[i + l], sn, cs;
      sincos_2pi(x, sn, cs);
      differ += (bits(sn) != bits(sl[l])) + (bits(cs) != bits(cl[l]));
      ds = std::fmax(ds, double(std::fabs(sn - std::sin(two_pi_l * x))));
      dc = std::fmax(dc, double(std::fabs(cs - std::cos(two_pi_l * x))));
    }
  }
  CHECK(ds < 2e-16);
  CHECK(dc < 2e-16);
  CHECK(differ == 0);
}

TEST_CASE("sqrt of a batch is the scalar sqrt bit for bit on Box-Muller's radii", "[core][rng][sqrt]") {
  // IEEE-754 sqrt is correctly rounded, so vsqrtps and sqrtss must agree; checked on every −2 ln u.
  std::int64_t differ = 0;
  for (std::uint32_t m = 0; m < (1u << 24); m += std::uint32_t(B::size)) {
    B v = B(-2.f) * log_positive(float_uniforms(m));
    auto vl = lanes(v), rl = lanes(sqrt(v));
    for (std::size_t l = 0; l < B::size; ++l) differ += bits(std::sqrt(vl[l])) != bits(rl[l]);
  }
  CHECK(differ == 0);
}

namespace {

// normal<D>() of every lane of a batch generator against the scalar generator of that lane's chain.
template <class T, int D>
std::int64_t batch_normals_differing(std::uint64_t seed, std::uint32_t first_chain, std::uint32_t step) {
  using BT = simd_batch<T>;
  std::int64_t differ = 0;
  for (auto p : {purpose::init, purpose::proposal, purpose::user}) {
    auto zb = make_chain_rng<BT>(seed, first_chain, step).template normal<D>(p);
    for (std::size_t l = 0; l < BT::size; ++l) {
      auto z = make_chain_rng<T>(seed, first_chain + std::uint32_t(l), step).template normal<D>(p);
      for (int d = 0; d < D; ++d) differ += bits(z[d]) != bits(lanes(zb[d])[l]);
    }
  }
  return differ;
}

}  // namespace

TEST_CASE("a batch draws the same normals as one chain, bit for bit, in float and double", "[core][rng][simd]") {
  std::int64_t differ = 0, checked = 0;
  std::uint64_t s = 11;
  for (int n = 0; n < 4000; ++n) {
    std::uint64_t seed = splitmix(s);
    auto chain = std::uint32_t(splitmix(s)), step = std::uint32_t(splitmix(s) % 100000);
    differ += batch_normals_differing<float, 10>(seed, chain, step);
    differ += batch_normals_differing<float, 3>(seed, chain, step);
    differ += batch_normals_differing<double, 10>(seed, chain, step);
    differ += batch_normals_differing<double, 3>(seed, chain, step);
    checked += 3 * (13 * std::int64_t(B::size) + 13 * std::int64_t(BD::size));
  }
  INFO(differ << " of " << checked << " normals differ");
  CHECK(differ == 0);
}
