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
enum class purpose : std::uint32_t { init = 0, proposal = 1, accept = 2, user = 16 };

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
};

/// Four 32-bit words of Philox output.
template <class U>
struct philox_block {
  U w[4];
};

/// Philox4x32-10 of counter (c0, c1, c2, c3) under key (k0, k1), for scalar type `S`'s lanes.
template <class S>
EMBER_HD EMBER_INLINE philox_block<typename rng_traits<S>::u32> philox4x32(
    typename rng_traits<S>::u32 c0, typename rng_traits<S>::u32 c1,
    typename rng_traits<S>::u32 c2, typename rng_traits<S>::u32 c3, std::uint32_t k0,
    std::uint32_t k1) {
  using U = typename rng_traits<S>::u32;
  constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    U hi0, lo0, hi1, lo1;
    rng_traits<S>::mulhilo(m0, c0, hi0, lo0);
    rng_traits<S>::mulhilo(m1, c2, hi1, lo1);
    U n0 = hi1 ^ c1 ^ U(k0);
    U n2 = hi0 ^ c3 ^ U(k1);
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += w0;
    k1 += w1;
  }
  return {{c0, c1, c2, c3}};
}

/// sin 2πu and cos 2πu for u in [0, 1], in single precision, without a general argument
/// reduction: q = ⌊4u + ½⌋ picks the quadrant, θ = 2π(u − q/4) ∈ [−π/4, π/4] is exact to
/// rounding, and Taylor polynomials of degree 9 (sin) and 8 (cos) give θ's sine and cosine to
/// 2·10⁻⁸; the quadrant then swaps and negates. Checked against double precision on all 2²⁴
/// uniforms ember draws (tests/core/box_muller_test.cpp): error below 1.2·10⁻⁷ absolute.
/// Branch-free and the same code for one chain, a SIMD batch and a GPU thread.
template <class S>
EMBER_HD EMBER_INLINE void sincos_2pi(S u, S& s, S& c) {
  using T = element_t<S>;
  S q = floor(S(T(4)) * u + S(T(0.5)));
  S t = S(two_pi<T>) * (u - S(T(0.25)) * q);
  S t2 = t * t;
  S st = t * (S(T(1)) + t2 * (S(T(-1.0 / 6)) + t2 * (S(T(1.0 / 120)) + t2 * (S(T(-1.0 / 5040)) + t2 * S(T(1.0 / 362880))))));
  S ct = S(T(1)) + t2 * (S(T(-0.5)) + t2 * (S(T(1.0 / 24)) + t2 * (S(T(-1.0 / 720)) + t2 * S(T(1.0 / 40320)))));
  auto odd = (q == S(T(1))) || (q == S(T(3)));
  auto neg_sin = (q > S(T(1.5))) && (q < S(T(3.5)));
  auto neg_cos = (q > S(T(0.5))) && (q < S(T(2.5)));
  S sw = select(odd, ct, st);
  S cw = select(odd, st, ct);
  s = select(neg_sin, -sw, sw);
  c = select(neg_cos, -cw, cw);
}

/// Box–Muller: two uniforms in (0, 1] to two independent standard normals,
/// r·cos(2πu₂) and r·sin(2πu₂) with r = √(−2 ln u₁). In single precision the angle goes through
/// `sincos_2pi` (identical on every backend and much cheaper than a general sin/cos); double
/// precision uses the library sin/cos.
template <class S>
EMBER_HD EMBER_INLINE void box_muller(S u1, S u2, S& z0, S& z1) {
  using T = element_t<S>;
  S r = sqrt(S(T(-2)) * log(u1));
  if constexpr (std::is_same_v<T, float>) {
    S s, c;
    sincos_2pi(u2, s, c);
    z0 = r * c;
    z1 = r * s;
  } else {
#if defined(__CUDA_ARCH__)
    // On the device, sincospi(2u₂): no large-argument reduction (whose local array costs every
    // kernel a stack frame) and one call for both.
    if constexpr (std::is_same_v<S, double>) {
      S s, c;
      sincospi(2.0 * u2, &s, &c);
      z0 = r * c;
      z1 = r * s;
      return;
    }
#endif
    S a = S(two_pi<T>) * u2;
    z0 = r * cos(a);
    z1 = r * sin(a);
  }
}

/// The random numbers of one chain (or one SIMD batch of chains) at one step.
/// A trivially copyable value: kernels receive it by reference and ask for what they need.
template <class S>
struct chain_rng {
  using u32 = typename rng_traits<S>::u32;

  std::uint32_t key0, key1;  // the seed
  u32 chain;                 // chain index of each lane
  std::uint32_t step;        // transition index, burn-in included

  /// `D` independent standard normals for purpose `p`; ⌈D/4⌉ Philox blocks.
  template <int D>
  EMBER_HD EMBER_INLINE vec<S, D> normal(purpose p) const {
    vec<S, D> z;
    for (int b = 0; b < (D + 3) / 4; ++b) {
      auto w = philox4x32<S>(chain, u32(step), u32(std::uint32_t(b)), u32(std::uint32_t(p)), key0,
                             key1);
      S n[4];
      box_muller(rng_traits<S>::uniform(w.w[0]), rng_traits<S>::uniform(w.w[1]), n[0], n[1]);
      if (4 * b + 2 < D)
        box_muller(rng_traits<S>::uniform(w.w[2]), rng_traits<S>::uniform(w.w[3]), n[2], n[3]);
      for (int i = 0; i < 4 && 4 * b + i < D; ++i) z[4 * b + i] = n[i];
    }
    return z;
  }

  /// One uniform in (0, 1] for purpose `p` (never 0, so log u is finite).
  EMBER_HD EMBER_INLINE S uniform(purpose p) const {
    auto w = philox4x32<S>(chain, u32(step), u32(0u), u32(std::uint32_t(p)), key0, key1);
    return rng_traits<S>::uniform(w.w[0]);
  }
};

/// The generator of `chain` (or of a batch of chains starting at `chain`) at `step` under `seed`.
template <class S>
EMBER_HD EMBER_INLINE chain_rng<S> make_chain_rng(std::uint64_t seed, std::uint32_t chain,
                                                  std::uint32_t step) {
  return {std::uint32_t(seed), std::uint32_t(seed >> 32), rng_traits<S>::lanes_from(chain), step};
}

}  // namespace ember
