#pragma once
/// \file
/// The functions energies and kernels compute with, written once for every scalar type.
///
/// Energies call these unqualified from inside namespace `ember` (`exp(x)`, `select(m, a, b)`):
/// for `float` and `double` ordinary lookup finds the overloads below; for a SIMD batch and a
/// dual number argument-dependent lookup finds the overloads next to those types
/// (`xsimd::exp`, `ember::exp(dual)`). So one energy body serves every scalar type.

#include <ember/core/config.hpp>

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace ember {

/// What ember needs to know about a scalar type `S`: the plain floating-point type of one lane
/// (`element_type`), the type of a comparison (`mask_type`: `bool`, or a SIMD mask) and how many
/// chains one value carries (`width`). Specialised for SIMD batches and dual numbers.
template <class S>
struct scalar_traits {
  using element_type = S;
  using mask_type = bool;
  static constexpr int width = 1;
};

template <class S>
using element_t = typename scalar_traits<S>::element_type;

namespace detail {
/// A number (data, a constant) as S, through S's element type (a double constant meets a float batch).
template <class S, class T>
EMBER_HD EMBER_INLINE S data_as(T const& t) {
  return S(element_t<S>(t));
}
}  // namespace detail
template <class S>
using mask_t = typename scalar_traits<S>::mask_type;

// Plain floating point: forward to <cmath>. Constrained so these never compete with the
// overloads for batches and duals.
#define EMBER_UNARY_MATH(name, stdname) \
  template <std::floating_point T>      \
  EMBER_HD EMBER_INLINE T name(T x) {   \
    return std::stdname(x);             \
  }
EMBER_UNARY_MATH(exp, exp)
EMBER_UNARY_MATH(log, log)
EMBER_UNARY_MATH(log1p, log1p)
EMBER_UNARY_MATH(expm1, expm1)
EMBER_UNARY_MATH(sqrt, sqrt)
EMBER_UNARY_MATH(sin, sin)
EMBER_UNARY_MATH(cos, cos)
EMBER_UNARY_MATH(tanh, tanh)
EMBER_UNARY_MATH(erf, erf)
EMBER_UNARY_MATH(abs, fabs)
EMBER_UNARY_MATH(floor, floor)
#undef EMBER_UNARY_MATH

template <std::floating_point T>
EMBER_HD EMBER_INLINE T pow(T x, T y) {
  return std::pow(x, y);
}
/// xᶜ for a constant exponent of another arithmetic type (`pow(x, 2.5)` with a float x), as duals
/// and model parameters take it.
template <std::floating_point T, class U>
  requires std::is_arithmetic_v<U> && (!std::same_as<T, U>)
EMBER_HD EMBER_INLINE T pow(T x, U y) {
  return std::pow(x, T(y));
}

/// a·b + c with one rounding where the target has FMA hardware and two (a multiply, then an add)
/// where it has none, for one chain (here) and for SIMD batches (`core/simd.hpp`) alike. Code
/// that must give the same bits on one chain and on a batch (Box–Muller) writes every a·b + c
/// through `fmadd`, so that no compiler's choice of contraction (`-ffp-contract`) can differ
/// between the paths. (`xsimd::fma` will not do: on AVX-512 xsimd 8 computes it as x·y + z,
/// which GCC contracts and clang does not.) Specialised for batches in `core/simd.hpp`.
template <class S>
struct fma_traits {
  EMBER_HD static EMBER_INLINE S fmadd(S a, S b, S c) {
#if defined(__CUDA_ARCH__) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
    return std::fma(a, b, c);
#else
    return a * b + c;  // no FMA instruction, so no compiler contracts this either
#endif
  }
};

/// a·b + c through `fma_traits` (see there): identical bits on every path of one target.
template <class S>
EMBER_HD EMBER_INLINE S fmadd(S const& a, S const& b, S const& c) {
  return fma_traits<S>::fmadd(a, b, c);
}

/// The IEEE-754 bit pattern of a scalar type as a signed integer of the same width and lane
/// count (`int_type`), and back: what ember's own `log_positive` splits exponent and mantissa
/// with. Specialised here for `float` and `double` and in `core/simd.hpp` for batches.
template <class S>
struct bits_traits;

template <>
struct bits_traits<float> {
  using int_type = std::int32_t;
  EMBER_HD static EMBER_INLINE int_type to_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_int(x);
#else
    return std::bit_cast<int_type>(x);
#endif
  }
  EMBER_HD static EMBER_INLINE float from_bits(int_type i) {
#if defined(__CUDA_ARCH__)
    return __int_as_float(i);
#else
    return std::bit_cast<float>(i);
#endif
  }
  EMBER_HD static EMBER_INLINE float to_float(int_type i) { return float(i); }
};

template <>
struct bits_traits<double> {
  using int_type = std::int64_t;
  EMBER_HD static EMBER_INLINE int_type to_bits(double x) {
#if defined(__CUDA_ARCH__)
    return __double_as_longlong(x);
#else
    return std::bit_cast<int_type>(x);
#endif
  }
  EMBER_HD static EMBER_INLINE double from_bits(int_type i) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(i);
#else
    return std::bit_cast<double>(i);
#endif
  }
  EMBER_HD static EMBER_INLINE double to_float(int_type i) { return double(i); }
};

/// ln x for a positive, finite, normal x (no special cases: 0, subnormals, infinities, NaN and
/// negative numbers give meaningless values), the same operations on one chain, a SIMD batch
/// and a GPU thread, so the three give the same bits wherever the target has FMA hardware.
/// Branch-free: x = 2ᵉ·m with m ∈ [√½, √2) by integer arithmetic on the bits (subtracting √½'s
/// bits first makes the exponent field of the difference e), f = m − 1 exactly (Sterbenz), and
/// ln x = e·ln 2 + ln(1 + f), with ln 2 split in two floats so e·ln 2 is exact to rounding.
/// ln(1 + f), f ∈ [−0.293, 0.415]:
///  - float: f + f²·P(f), P of degree 8 fitted by the Remez exchange (minimax relative error of
///    the whole ln(1 + f), 4.1·10⁻⁹ before rounding); no division.
///  - double: 2 atanh(s) with s = f / (2 + f), |s| ≤ 0.1716, written f − s·(f − s²·Q(s²)) (since
///    2s = f − s·f) so that the rounding of s only reaches a term 5× smaller than the result; Q
///    of degree 6 by Remez, 3·10⁻¹⁶ absolute on Q, below 5·10⁻¹⁸ relative on the result.
/// The coefficients come from scripts/remez_log.py (mpmath, 60 digits), rounded to T.
/// `log_positive<S, -2>(x)` is −2 ln x, Box–Muller's r², with the −2 folded into the constants
/// (in float one multiply less per pair of normals; in double K·f takes the multiply's place);
/// scaling by a power of two is exact, so its bits are those of −2·log_positive(x) except at
/// x = 1, where it gives +0 and −2·(+0) is −0 (tested; a radius ±0 gives normals ±0 alike).
/// Checked in tests/core/box_muller_test.cpp against long double: within 0.9 ulp in float on all
/// 2²⁴ float uniforms ember draws (measured 0.89), and within 0.9 ulp in double on 2²² inputs
/// over the whole normal range plus the reduction's edges (measured 0.83).
template <class S, int Scale = 1>
EMBER_HD EMBER_INLINE S log_positive(S x) {
  using T = element_t<S>;
  using B = bits_traits<S>;
  using I = typename B::int_type;
  static_assert(Scale == 1 || Scale == -2, "log_positive: Scale is 1 (ln x) or -2 (Box-Muller's -2 ln x)");
  constexpr T K = T(Scale);  // a power of two: every scaled constant and product below is exact
  if constexpr (sizeof(T) == 4) {
    constexpr std::int32_t sqrt_half = 0x3f3504f3;  // bits of √½ rounded to float
    auto k = B::to_bits(x) - I(sqrt_half);
    S e = B::to_float(k >> 23);                                // the exponent, arithmetic shift
    S m = B::from_bits((k & I(0x7fffff)) + I(sqrt_half));      // in [√½, √2)
    S f = m - S(T(1));
    S p = S(K * T(-0.07621777802705765f));
    p = fmadd(p, f, S(K * T(0.1290443241596222f)));
    p = fmadd(p, f, S(K * T(-0.13242988288402557f)));
    p = fmadd(p, f, S(K * T(0.14181825518608093f)));
    p = fmadd(p, f, S(K * T(-0.16609083116054535f)));
    p = fmadd(p, f, S(K * T(0.2000197321176529f)));
    p = fmadd(p, f, S(K * T(-0.25001582503318787f)));
    p = fmadd(p, f, S(K * T(0.33333325386047363f)));
    p = fmadd(p, f, S(K * T(-0.49999988079071045f)));
    S f2 = f * f;
    // Smallest terms first: e·ln2_lo, f²·P(f), then f, then the exact-to-rounding e·ln2_hi.
    S r = fmadd(e, S(K * T(-1.9046542121259336e-09f)), f2 * p);
    if constexpr (Scale == 1)
      r = r + f;
    else
      r = fmadd(f, S(K), r);  // K·f is exact, so this rounds K·(r + f) as r + f would round
    return fmadd(e, S(K * T(0.6931471824645996f)), r);
  } else {
    constexpr std::int64_t sqrt_half = 0x3fe6a09e667f3bcd;  // bits of √½ rounded to double
    auto k = B::to_bits(x) - I(sqrt_half);
    S e = B::to_float(k >> 52);
    S m = B::from_bits((k & I(0xfffffffffffff)) + I(sqrt_half));
    S f = m - S(T(1));
    S s = f / (S(T(2)) + f);
    S z = s * s;
    S fk = f;  // K·f, exact
    if constexpr (Scale != 1) fk = f * S(K);
    S q = S(K * T(0.14617736819453644));
    q = fmadd(q, z, S(K * T(0.1533160796381572)));
    q = fmadd(q, z, S(K * T(0.18182892887251093)));
    q = fmadd(q, z, S(K * T(0.22222211077397896)));
    q = fmadd(q, z, S(K * T(0.2857142862637127)));
    q = fmadd(q, z, S(K * T(0.39999999999898506)));
    q = fmadd(q, z, S(K * T(0.666666666666667)));
    S t = fmadd(-z, q, fk);                                        // K(f − s²Q)
    S r = fmadd(e, S(K * T(2.3190468138462996e-17)), -(s * t));  // K(e·ln2_lo − s(f − s²Q))
    r = r + fk;
    return fmadd(e, S(K * T(0.6931471805599453)), r);
  }
}

/// `m ? a : b` for one chain; SIMD batches use `xsimd::select` (core/simd.hpp), which picks lane
/// by lane. Only for a `bool` itself: a SIMD mask that converts to an integer must never get here.
template <class M, class T>
  requires std::same_as<M, bool>
EMBER_HD EMBER_INLINE T select(M m, T const& a, T const& b) {
  return m ? a : b;
}

/// True for a plain `true`; for a SIMD mask, true when any lane is set.
EMBER_HD EMBER_INLINE bool any(bool m) { return m; }
EMBER_HD EMBER_INLINE bool all(bool m) { return m; }

/// Mask of lanes whose value is neither infinite nor NaN. `x - x` is 0 exactly for finite x and
/// NaN otherwise, which works unchanged for every scalar type (do not build with -ffast-math).
template <class S>
EMBER_HD EMBER_INLINE auto is_finite(S const& x) {
  return (x - x) == S(0);
}

/// Minimum and maximum through `select`, so they never branch on a per-chain value.
template <class S>
EMBER_HD EMBER_INLINE S min(S const& a, S const& b) {
  return select(b < a, b, a);
}
template <class S>
EMBER_HD EMBER_INLINE S max(S const& a, S const& b) {
  return select(a < b, b, a);
}

namespace detail {
/// True for the reverse-mode nodes of ad/node.hpp, which have min and max of their own.
template <class S>
inline constexpr bool is_expression_node = false;
template <class S, class C>
concept scalar_and_constant = std::is_arithmetic_v<C> && !std::is_same_v<S, C> && !is_expression_node<S>;
}  // namespace detail

/// With a constant on one side (`max(x, 0.3)` for a float, a SIMD batch or a dual x).
template <class S, class C>
  requires detail::scalar_and_constant<S, C>
EMBER_HD EMBER_INLINE S min(S const& a, C c) {
  return min(a, S(element_t<S>(c)));
}
template <class S, class C>
  requires detail::scalar_and_constant<S, C>
EMBER_HD EMBER_INLINE S min(C c, S const& a) {
  return min(S(element_t<S>(c)), a);
}
template <class S, class C>
  requires detail::scalar_and_constant<S, C>
EMBER_HD EMBER_INLINE S max(S const& a, C c) {
  return max(a, S(element_t<S>(c)));
}
template <class S, class C>
  requires detail::scalar_and_constant<S, C>
EMBER_HD EMBER_INLINE S max(C c, S const& a) {
  return max(S(element_t<S>(c)), a);
}

/// x², for every scalar type (a model's parameters have their own, ad/node.hpp).
template <class S>
EMBER_HD EMBER_INLINE S square(S const& x) {
  return x * x;
}

/// The logistic function 1 / (1 + e^-x).
template <class S>
EMBER_HD EMBER_INLINE S sigmoid(S const& x) {
  return S(1) / (S(1) + exp(-x));
}

/// Whether `S` is plain floats: `float`, or a SIMD batch of floats (an `xsimd::batch<float, A>` of
/// any width: a type with an `arch_type` and float values; a dual has no `arch_type`). Decided by
/// the type alone, not by a specialisation that a header might not have included, so every unit
/// compiles `log1p_unit` alike. `log1p_unit` takes its own polynomial on these; doubles keep `log1p`.
template <class S>
inline constexpr bool is_float_lanes =
    std::is_same_v<S, float> || requires {
      typename S::arch_type;
      requires std::is_same_v<typename S::value_type, float>;
    };

/// ln(1 + e) for e ∈ [0, 1]: the tail of softplus and of log-add-exp, where e = e^{−|x|}. On
/// floats (`is_float_lanes`) a polynomial, e + e²·R(e) with R of degree 8 fitted by the Remez
/// exchange (scripts/remez_log.py; relative error 5.1·10⁻⁹ before rounding): 9 multiply-adds and
/// a multiply, no division and no exponent split, where xsimd's and libm's `log1p` take a general
/// argument. Within 1.4 ulp of ln(1 + e) where the target has FMA hardware and 1.75 where it has
/// none (measured 1.39 and 1.71 over every float in [¼, 1]; tests/core/math_test.cpp checks every
/// float in [½, 1], every 7th in [¼, ½), every 61st below down to 2⁻⁴⁰ and every power of two);
/// the same bits on one chain and on a batch. Doubles
/// call `log1p`; a dual (core/dual.hpp) takes this on its value and 1/(1 + e) as its slope; an e
/// outside [0, 1] gives a meaningless value.
template <class S>
EMBER_HD EMBER_INLINE S log1p_unit(S const& e) {
  if constexpr (is_float_lanes<S>) {
    S p = S(-0.003318474628031254f);
    p = fmadd(p, e, S(0.020204594358801842f));
    p = fmadd(p, e, S(-0.05766446143388748f));
    p = fmadd(p, e, S(0.10680557042360306f));
    p = fmadd(p, e, S(-0.15355397760868073f));
    p = fmadd(p, e, S(0.19695401191711426f));
    p = fmadd(p, e, S(-0.24958588182926178f));
    p = fmadd(p, e, S(0.33330512046813965f));
    p = fmadd(p, e, S(-0.4999993145465851f));
    return fmadd(e * e, p, e);
  } else {
    return log1p(e);
  }
}

/// log(1 + e^x), without overflow for large x: max(x, 0) + log1p(e^-|x|).
template <class S>
EMBER_HD EMBER_INLINE S softplus(S const& x) {
  return max(x, S(0)) + log1p_unit(exp(-abs(x)));
}

/// log Σ_k e^{a_k} over a fixed-size set, shifted by the maximum so no term overflows.
template <class S, int K>
EMBER_HD EMBER_INLINE S log_sum_exp(S const (&a)[K]) {
  S m = a[0];
  for (int k = 1; k < K; ++k) m = max(m, a[k]);
  S s = exp(a[0] - m);
  for (int k = 1; k < K; ++k) s = s + exp(a[k] - m);
  return m + log(s);
}

/// log(eᵃ + eᵇ) = max(a, b) + log(1 + e^{−|a − b|}), without overflow (a model's parameters have
/// their own, ad/node.hpp).
template <class S>
  requires(!detail::is_expression_node<S>)
EMBER_HD EMBER_INLINE S log_sum_exp(S const& a, S const& b) {
  return max(a, b) + log1p_unit(exp(-abs(a - b)));
}

/// 2π in the precision of `T`.
template <class T>
inline constexpr T two_pi = T(6.283185307179586476925286766559);

}  // namespace ember
