#pragma once
/// \file
/// Counter-based random numbers: Philox4x32-10 and the library's own Box–Muller.
///
/// A draw is a pure function of (seed, chain, step, draw block, purpose): the key is the 64-bit
/// seed and the counter is (chain, step, block, purpose). Nothing depends on the thread, the SIMD
/// lane, the block of chains or the device, so a chain's path is the same however the chains are
/// partitioned. The rounds are Random123's Philox4x32-10 (Salmon et al., SC'11), rewritten here
/// generically so that the same code runs on one chain (`uint32_t`) and on a SIMD batch of chains
/// (one chain per 32-bit lane); tests check it against Random123 bit for bit.

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

/// What a random draw is for. Part of the Philox counter, so draws for different purposes at the
/// same (chain, step) are independent. Values from `purpose::user` on are free for user kernels.
/// `derived`: quantities computed from kept draws after a run (posterior.hpp); `tree` and `leaf`:
/// NUTS's draw per doubling and per leaf (kernel/nuts.hpp); `refresh`: MCLMC's partial velocity
/// refresh after each integrator step (kernel/mclmc.hpp).
enum class purpose : std::uint32_t {
  init = 0, proposal = 1, accept = 2, derived = 3, tree = 4, leaf = 5, refresh = 6, user = 16
};

/// How a scalar type draws random numbers: the unsigned 32-bit type with the same number of
/// lanes (`u32`), Philox's 32×32→64 multiply, and the conversion of 32 random bits to a uniform
/// in (0, 1]. Specialised for `float` and `double` here and for SIMD batches in `core/simd.hpp`.
template <class S>
struct rng_traits;

template <>
struct rng_traits<float> {
  using u32 = std::uint32_t;
  EMBER_HD static EMBER_INLINE void mulhilo(std::uint32_t a, u32 b, u32& hi, u32& lo) {
    std::uint64_t p = std::uint64_t(a) * b;
    hi = std::uint32_t(p >> 32);
    lo = std::uint32_t(p);
  }
  // The top 24 bits, centred in their cell: uniform on (0, 1], never 0; the top cell's centre
  // 1 − 2⁻²⁵ rounds to 1 in float, which Box–Muller maps harmlessly to a radius of 0.
  EMBER_HD static EMBER_INLINE float uniform(u32 x) {
    return float(x >> 8) * 0x1p-24f + 0x1p-25f;
  }
  EMBER_HD static EMBER_INLINE u32 lanes_from(std::uint32_t first) { return first; }
  // (int32)(b << 2): the low 30 bits of a word as a signed number, converted (rounded) to float.
  EMBER_HD static EMBER_INLINE float low30(u32 b) { return float(std::int32_t(b << 2)); }
  EMBER_HD static EMBER_INLINE bool bit(u32 v, std::uint32_t m) { return (v & m) != 0; }
  // x with its sign bit flipped where bit 31 of v is set (−0 from +0: every path alike).
  EMBER_HD static EMBER_INLINE float flip_sign(float x, u32 v) {
    return bits_traits<float>::from_bits(bits_traits<float>::to_bits(x) ^ std::int32_t(v & 0x80000000u));
  }
};

template <>
struct rng_traits<double> {
  using u32 = std::uint32_t;
  EMBER_HD static EMBER_INLINE void mulhilo(std::uint32_t a, u32 b, u32& hi, u32& lo) {
    rng_traits<float>::mulhilo(a, b, hi, lo);
  }
  // All 32 bits, centred: uniform on (0, 1), exact in double.
  EMBER_HD static EMBER_INLINE double uniform(u32 x) { return double(x) * 0x1p-32 + 0x1p-33; }
  EMBER_HD static EMBER_INLINE u32 lanes_from(std::uint32_t first) { return first; }
  EMBER_HD static EMBER_INLINE double low30(u32 b) { return double(std::int32_t(b << 2)); }
  EMBER_HD static EMBER_INLINE bool bit(u32 v, std::uint32_t m) { return (v & m) != 0; }
  // x with its sign bit (bit 63) flipped where bit 31 of v is set.
  EMBER_HD static EMBER_INLINE double flip_sign(double x, u32 v) {
    return bits_traits<double>::from_bits(bits_traits<double>::to_bits(x) ^ (std::int64_t(v & 0x80000000u) << 32));
  }
};

/// Four 32-bit words of Philox output.
template <class U>
struct philox_block {
  U w[4];
};

inline constexpr std::uint32_t philox_m0 = 0xD2511F53u, philox_m1 = 0xCD9E8D57u;  // multipliers
inline constexpr std::uint32_t philox_w0 = 0x9E3779B9u, philox_w1 = 0xBB67AE85u;  // key increments

/// Philox4x32-10 of counter (c0, c1, c2, c3) under key (k0, k1), for scalar type `S`'s lanes;
/// `first` > 0 continues from that round (the caller did the earlier ones, with the key advanced).
template <class S>
EMBER_HD EMBER_INLINE philox_block<typename rng_traits<S>::u32> philox4x32(
    typename rng_traits<S>::u32 c0, typename rng_traits<S>::u32 c1,
    typename rng_traits<S>::u32 c2, typename rng_traits<S>::u32 c3, std::uint32_t k0,
    std::uint32_t k1, int first = 0) {
  using U = typename rng_traits<S>::u32;
  EMBER_UNROLL
  for (int r = first; r < 10; ++r) {
    U hi0, lo0, hi1, lo1;
    rng_traits<S>::mulhilo(philox_m0, c0, hi0, lo0);
    rng_traits<S>::mulhilo(philox_m1, c2, hi1, lo1);
    U n0 = hi1 ^ c1 ^ U(k0);
    U n2 = hi0 ^ c3 ^ U(k1);
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += philox_w0;
    k1 += philox_w1;
  }
  return {{c0, c1, c2, c3}};
}

/// The same Philox4x32-10 block (the same bits) for a counter whose words c1, c2, c3 are equal
/// in every lane, as a chain's (step, block, purpose) are across a SIMD batch: in round 1 the
/// product of c2 and in round 2 that of the new c0 are then single 32-bit products instead of one
/// per lane, which saves two of the twenty lane-wise multiplies of a block.
template <class S>
EMBER_HD EMBER_INLINE philox_block<typename rng_traits<S>::u32> philox4x32_lanes(
    typename rng_traits<S>::u32 c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
    std::uint32_t k1) {
  using U = typename rng_traits<S>::u32;
  // Round 1: the lanes differ in c0 only.
  U hi0, lo0;
  rng_traits<S>::mulhilo(philox_m0, c0, hi0, lo0);
  std::uint32_t hi1, lo1;
  rng_traits<float>::mulhilo(philox_m1, c2, hi1, lo1);
  std::uint32_t const a0 = hi1 ^ c1 ^ k0, a1 = lo1;  // the same in every lane
  U const a2 = hi0 ^ U(c3 ^ k1), a3 = lo0;
  k0 += philox_w0;
  k1 += philox_w1;
  // Round 2: a0 is still the same in every lane.
  std::uint32_t h0, l0;
  rng_traits<float>::mulhilo(philox_m0, a0, h0, l0);
  U h1, l1;
  rng_traits<S>::mulhilo(philox_m1, a2, h1, l1);
  return philox4x32<S>(h1 ^ U(a1 ^ k0), l1, a3 ^ U(h0 ^ k1), U(l0), k0 + philox_w0, k1 + philox_w1, 2);
}

/// sin θ and cos θ of the angle θ = 2π·b/2³² of a 32-bit random word `b` (a turn in 2³² steps),
/// without a general argument reduction, on integers: the quadrant q = ⌊b/2³⁰ + ½⌋ mod 4 is bits
/// 31–30 of b + 2²⁹, and the rest, θ − qπ/2 = 2π·(b − q·2³⁰)/2³² ∈ [−π/4, π/4), is the low 30 bits
/// of b as a signed number: t = (int32)(b << 2) · 2π/2³⁴ (the conversion rounds to T's precision,
/// then one product). Polynomials give t's sine and cosine; the quadrant swaps them and flips
/// their sign bits (an integer xor with bit 31 of b + 2²⁹ or b + 3·2²⁹, not a subtraction and a
/// select: 1 % of P1's time, docs/performance.md). Float: sin of degree 7 fitted by the Remez exchange (2.3·10⁻⁹ with its coefficients rounded
/// to float, against 1.1·10⁻⁹ for the Taylor polynomial of degree 9 it replaced; scripts/remez_sincos.py), cos
/// the Taylor polynomial of degree 8 (2.4·10⁻⁸); double: Taylor, degrees 17 and 16,
/// truncation below 10⁻¹⁷. Every a·b + c is an explicit `fmadd`, so one chain, a SIMD batch and a
/// GPU thread give the same bits whatever the compiler contracts. Checked against `std::sin` and
/// `std::cos` of 2π·b/2³² in long double (tests/core/box_muller_test.cpp) on 2²⁴ words, one in
/// each cell of the top 24 bits with random low bits, and the quadrant edges: float within
/// 1.2·10⁻⁷, double within 2·10⁻¹⁶. Branch-free. (It replaced a form that took the float uniform
/// u = (b + ½)·2⁻³² and found the quadrant as ⌊4u + ½⌋ with float compares: six more floating-point
/// operations per pair of normals, 8 % of P1's time on AVX-512.)
template <class S>
EMBER_HD EMBER_INLINE void sincos_turn(typename rng_traits<S>::u32 b, S& s, S& c) {
  using T = element_t<S>;
  using R = rng_traits<S>;
  using U = typename R::u32;
  S t = R::low30(b) * S(two_pi<T> * T(0x1p-34));
  S t2 = t * t;
  S ps, pc;  // sin t = t + t³·ps(t²), cos t = 1 + t²·pc(t²)
  if constexpr (sizeof(T) == 4) {
    // sin: minimax on t ∈ [−π/4, π/4] (scripts/remez_sincos.py), absolute error 2.3·10⁻⁹; cos: Taylor.
    ps = fmadd(fmadd(S(T(-0.000194956359337084f)), t2, S(T(0.00833197869360447f))), t2, S(T(-0.16666650772094727f)));
    pc = fmadd(fmadd(fmadd(S(T(1.0 / 40320)), t2, S(T(-1.0 / 720))), t2, S(T(1.0 / 24))), t2, S(T(-0.5)));
  } else {
    // 1/n! for odd n from 17 down to 3 (sin) and even n from 16 down to 2 (cos).
    constexpr double fs[] = {1.0 / 355687428096000, -1.0 / 1307674368000, 1.0 / 6227020800, -1.0 / 39916800,
                             1.0 / 362880,          -1.0 / 5040,          1.0 / 120,         -1.0 / 6};
    constexpr double fc[] = {1.0 / 20922789888000, -1.0 / 87178291200, 1.0 / 479001600, -1.0 / 3628800,
                             1.0 / 40320,          -1.0 / 720,         1.0 / 24,         -0.5};
    ps = S(T(fs[0]));
    pc = S(T(fc[0]));
    for (int i = 1; i < 8; ++i) {
      ps = fmadd(ps, t2, S(T(fs[i])));
      pc = fmadd(pc, t2, S(T(fc[i])));
    }
  }
  S st = fmadd(t * t2, ps, t);
  S ct = fmadd(t2, pc, S(T(1)));
  U const v = b + U(0x20000000u);  // bits 31–30: q
  U const w = b + U(0x60000000u);  // bit 31: q ∈ {1, 2}, where the cosine is negative
  auto odd = R::bit(v, 0x40000000u);
  S sw = select(odd, ct, st);
  S cw = select(odd, st, ct);
  s = R::flip_sign(sw, v);
  c = R::flip_sign(cw, w);
}

/// Box–Muller: a uniform u in (0, 1] and a random 32-bit word b to two independent standard
/// normals, r·cos θ and r·sin θ with r = √(−2 ln u) and θ = 2π·b/2³². Every function in it is
/// ember's own (`log_positive`, `sincos_turn`) or correctly rounded by IEEE-754 (`sqrt`, ×), so a
/// chain draws the same normals bit for bit on one chain, in a SIMD batch and on a GPU thread, in
/// float and in double (tests/core/box_muller_test.cpp checks the first two).
template <class S>
EMBER_HD EMBER_INLINE void box_muller(S u, typename rng_traits<S>::u32 b, S& z0, S& z1) {
  S r = sqrt(log_positive<S, -2>(u));
  S s, c;
  sincos_turn<S>(b, s, c);
  z0 = r * c;
  z1 = r * s;
}

/// Normals 4b … 4b + 3 of a vector (those below D) into z from one Philox block's words: Box–Muller
/// on words 0, 1 and (when 4b + 2 < D) 2, 3. `chain_rng` and `lane_rng` draw their normals with it.
template <int D, class S>
EMBER_HD EMBER_INLINE void normals_of_block(philox_block<typename rng_traits<S>::u32> const& w, int b, vec<S, D>& z) {
  S n[4];
  box_muller(rng_traits<S>::uniform(w.w[0]), w.w[1], n[0], n[1]);
  if (4 * b + 2 < D) box_muller(rng_traits<S>::uniform(w.w[2]), w.w[3], n[2], n[3]);
  for (int i = 0; i < 4 && 4 * b + i < D; ++i) z[4 * b + i] = n[i];
}

/// The random numbers of one chain (or one SIMD batch of chains) at one step.
/// A trivially copyable value: kernels receive it by reference and ask for what they need.
template <class S>
struct chain_rng {
  using u32 = typename rng_traits<S>::u32;

  std::uint32_t key0, key1;  // the seed
  u32 chain;                 // chain index of each lane
  std::uint32_t step;        // transition index, burn-in included

  /// `D` independent standard normals for purpose `p`; ⌈D/4⌉ Philox blocks. `Unroll` false keeps
  /// the blocks a loop everywhere (the same values): for draws made once per run, where unrolled
  /// code would only cost compile time.
  template <int D, bool Unroll = true>
  EMBER_HD EMBER_INLINE vec<S, D> normal(purpose p) const {
    vec<S, D> z;
#if defined(__CUDA_ARCH__)
    // On a GPU every block unrolled, except for vectors over 256 bytes (in local memory anyway):
    // a loop of four blocks per iteration, which an H200 ran 7 % faster in sampling and 3 % in
    // warm-up than every block unrolled, and which compiles faster
    // (docs/decisions/2026-11-26-device-normals-unrolled.md, update of 2026-11-28).
    if constexpr (Unroll && D * sizeof(S) > 256) {
#pragma unroll 4
      for (int b = 0; b < (D + 3) / 4; ++b) normal_block<D>(p, b, z);
      return z;
    }
    constexpr bool unroll = Unroll;
#else
    constexpr bool unroll = Unroll && D <= 16;
#endif
    if constexpr (!unroll) {
      // On the host, normals beyond 16 live in memory anyway: unrolling ⌈D/4⌉ blocks of Philox,
      // log and sincos only multiplied compile time (D = 100: most of a configuration's).
      for (int b = 0; b < (D + 3) / 4; ++b) normal_block<D>(p, b, z);
    } else {
      EMBER_UNROLL
      for (int b = 0; b < (D + 3) / 4; ++b) normal_block<D>(p, b, z);
    }
    return z;
  }
  /// Philox block b of `normal<D>`: normals 4b … 4b + 3 (those below D) into z.
  template <int D>
  EMBER_HD EMBER_INLINE void normal_block(purpose p, int b, vec<S, D>& z, std::uint32_t first_block = 0) const {
    normals_of_block<D, S>(philox4x32_lanes<S>(chain, step, first_block + std::uint32_t(b), std::uint32_t(p), key0, key1), b, z);
  }

  /// `D` uniforms in (0, 1] for purpose `p`, four per Philox block, from block `first_block` on
  /// (a default start and its retries).
  template <int D>
  EMBER_HD EMBER_INLINE vec<S, D> uniform_from(purpose p, std::uint32_t first_block) const {
    vec<S, D> u;
    for (int b = 0; b < (D + 3) / 4; ++b) {
      auto w = philox4x32_lanes<S>(chain, step, first_block + std::uint32_t(b), std::uint32_t(p), key0, key1);
      for (int i = 0; i < 4 && 4 * b + i < D; ++i) u[4 * b + i] = rng_traits<S>::uniform(w.w[i]);
    }
    return u;
  }

  /// `D` independent uniforms in (0, 1] for purpose `p`, four per Philox block, as `normal<D>`
  /// gives normals; the first is `uniform(p)`.
  template <int D>
  EMBER_HD EMBER_INLINE vec<S, D> uniform(purpose p) const {
    return uniform_from<D>(p, 0);
  }
  /// One uniform in (0, 1] for purpose `p` (never 0, so log u is finite).
  EMBER_HD EMBER_INLINE S uniform(purpose p) const {
    auto w = philox4x32_lanes<S>(chain, step, 0u, std::uint32_t(p), key0, key1);
    return rng_traits<S>::uniform(w.w[0]);
  }
};

/// The generator of `chain` (or of a batch of chains starting at `chain`) at `step` under `seed`.
template <class S>
EMBER_HD EMBER_INLINE chain_rng<S> make_chain_rng(std::uint64_t seed, std::uint32_t chain,
                                                  std::uint32_t step) {
  return {std::uint32_t(seed), std::uint32_t(seed >> 32), rng_traits<S>::lanes_from(chain), step};
}

/// The streams of a batch whose lanes are at different transitions (NUTS trees grown lane by
/// lane, kernel/nuts.hpp): `chain_rng` with the step index, and a Philox block, per lane. Each
/// lane draws exactly what `chain_rng` draws for its chain at its step (tests/backend/cpu_simd_test.cpp).
template <class S>
struct lane_rng {
  using u32 = typename rng_traits<S>::u32;

  std::uint32_t key0, key1;
  u32 chain;  // chain index of each lane
  u32 step;   // transition index of each lane

  /// `N` ≤ 4 uniforms in (0, 1] of Philox block `block` (per lane) for purpose `p`: the first `N`
  /// of `chain_rng::uniform_from<4>(p, block)`.
  template <int N>
  EMBER_HD EMBER_INLINE vec<S, N> uniform_at(purpose p, u32 block) const {
    static_assert(N >= 1 && N <= 4, "ember::lane_rng::uniform_at draws one Philox block: 1 to 4 uniforms");
    auto w = philox4x32<S>(chain, step, block, u32(std::uint32_t(p)), key0, key1);
    vec<S, N> u;
    for (int i = 0; i < N; ++i) u[i] = rng_traits<S>::uniform(w.w[i]);
    return u;
  }
  /// `D` standard normals for purpose `p`: `chain_rng::normal<D>(p)` of each lane's step.
  template <int D>
  EMBER_HD EMBER_INLINE vec<S, D> normal(purpose p) const {
    vec<S, D> z;
    for (int b = 0; b < (D + 3) / 4; ++b)
      normals_of_block<D, S>(philox4x32<S>(chain, step, u32(std::uint32_t(b)), u32(std::uint32_t(p)), key0, key1), b, z);
    return z;
  }
};

/// The streams of `rng`'s lanes, every lane at `rng`'s step.
template <class S>
EMBER_HD EMBER_INLINE lane_rng<S> make_lane_rng(chain_rng<S> const& rng) {
  using u32 = typename rng_traits<S>::u32;
  return {rng.key0, rng.key1, rng.chain, u32(rng.step)};
}

}  // namespace ember
