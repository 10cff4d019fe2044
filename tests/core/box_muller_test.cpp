// Box–Muller's own functions against long-double references: log_positive exhaustively over every
// float uniform the generator can produce, sincos_turn on one word in each of the 2²⁴ cells of the
// top 24 bits; and the same normals bit for bit on one chain and on a SIMD batch, in float and double.
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
  std::int64_t differ = 0, scaled_differ = 0;
  for (std::uint32_t m = 0; m < (1u << 24); m += std::uint32_t(B::size)) {
    B u = float_uniforms(m);
    auto ul = lanes(u), lb = lanes(log_positive(u)), lk = lanes(log_positive<B, -2>(u));
    for (std::size_t l = 0; l < B::size; ++l) {
      float x = ul[l], y = log_positive(x);
      differ += bits(y) != bits(lb[l]);
      // −2 folded into the constants: the bits of −2·ln, on one chain and on a batch (at x = 1 a
      // zero, whose sign may differ: a radius ±0 gives normals ±0, which add alike).
      auto same = [&](float v) { return x == 1.f ? v == 0.f : bits(v) == bits(-2.f * y); };
      scaled_differ += !same(log_positive<float, -2>(x)) + !same(lk[l]);
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
  CHECK(scaled_differ == 0);
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
  std::int64_t differ = 0, scaled_differ = 0;
  for (std::size_t i = 0; i < xs.size(); i += BD::size) {
    auto lb = lanes(log_positive(BD::load_unaligned(&xs[i])));
    auto lk = lanes(log_positive<BD, -2>(BD::load_unaligned(&xs[i])));
    for (std::size_t l = 0; l < BD::size; ++l) {
      double x = xs[i + l], y = log_positive(x);
      differ += bits(y) != bits(lb[l]);
      auto same = [&](double v) { return x == 1.0 ? v == 0.0 : bits(v) == bits(-2.0 * y); };
      scaled_differ += !same(log_positive<double, -2>(x)) + !same(lk[l]);
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
  CHECK(scaled_differ == 0);
}

TEST_CASE("sincos_turn is within 1.2e-7 of sin and cos of 2 pi b / 2^32 in float and 2e-16 in double, the same "
          "bits on a batch",
          "[core][rng][sincos]") {
  long double const turn = 6.283185307179586476925286766559L / 4294967296.0L;  // 2π/2³²
  // 2²⁴ words, one in each cell of the top 24 bits with random low bits, and the quadrant edges
  // b = k·2²⁹ + j where the reduction switches quadrant (k odd) or passes through an axis (k even).
  std::vector<std::uint32_t> words;
  std::uint64_t s = 3;
  for (std::uint32_t m = 0; m < (1u << 24); ++m) words.push_back((m << 8) | std::uint32_t(splitmix(s) & 0xffu));
  for (std::uint32_t k = 0; k < 8; ++k)
    for (int j = -8; j <= 8; ++j) words.push_back(k * 0x20000000u + std::uint32_t(j));
  while (words.size() % B::size) words.push_back(0);
  double es = 0, ec = 0, ds = 0, dc = 0;
  std::int64_t differ = 0;
  using UB = rng_traits<B>::u32;
  using UD = rng_traits<BD>::u32;
  for (std::size_t i = 0; i < words.size(); i += B::size) {
    B sb, cb;
    sincos_turn<B>(UB::load_unaligned(&words[i]), sb, cb);
    auto sl = lanes(sb), cl = lanes(cb);
    for (std::size_t l = 0; l < B::size; ++l) {
      float sn, cs;
      sincos_turn<float>(words[i + l], sn, cs);
      differ += (bits(sn) != bits(sl[l])) + (bits(cs) != bits(cl[l]));
      long double th = turn * words[i + l];
      es = std::fmax(es, double(std::fabs(sn - std::sin(th))));
      ec = std::fmax(ec, double(std::fabs(cs - std::cos(th))));
    }
  }
  for (std::size_t i = 0; i < words.size(); i += BD::size) {
    std::array<std::uint64_t, BD::size> w64;
    for (std::size_t l = 0; l < BD::size; ++l) w64[l] = words[i + l];
    BD sb, cb;
    sincos_turn<BD>(UD::load_unaligned(w64.data()), sb, cb);
    auto sl = lanes(sb), cl = lanes(cb);
    for (std::size_t l = 0; l < BD::size; ++l) {
      double sn, cs;
      sincos_turn<double>(words[i + l], sn, cs);
      differ += (bits(sn) != bits(sl[l])) + (bits(cs) != bits(cl[l]));
      long double th = turn * words[i + l];
      ds = std::fmax(ds, double(std::fabs(sn - std::sin(th))));
      dc = std::fmax(dc, double(std::fabs(cs - std::cos(th))));
    }
  }
  INFO("float: sin " << es << ", cos " << ec << "; double: sin " << ds << ", cos " << dc);
  CHECK(es < 1.2e-7);
  CHECK(ec < 1.2e-7);
  CHECK(ds < 2e-16);
  CHECK(dc < 2e-16);
  CHECK(differ == 0);
}

TEST_CASE("sqrt of a batch is the scalar sqrt bit for bit on Box-Muller's radii", "[core][rng][sqrt]") {
  // IEEE-754 sqrt is correctly rounded, so vsqrtps and sqrtss must agree; checked on every −2 ln u.
  std::int64_t differ = 0;
  for (std::uint32_t m = 0; m < (1u << 24); m += std::uint32_t(B::size)) {
    B v = log_positive<B, -2>(float_uniforms(m));
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
