#pragma once
/// \file
/// The functions energies and kernels compute with, written once for every scalar type.
///
/// Energies call these unqualified from inside namespace `ember` (`exp(x)`, `select(m, a, b)`):
/// for `float` and `double` ordinary lookup finds the overloads below; for a SIMD batch and a
/// dual number argument-dependent lookup finds the overloads next to those types
/// (`xsimd::exp`, `ember::exp(dual)`). So one energy body serves every scalar type.

#include <ember/core/config.hpp>

#include <cmath>
#include <concepts>

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
EMBER_UNARY_MATH(abs, fabs)
EMBER_UNARY_MATH(floor, floor)
#undef EMBER_UNARY_MATH

template <std::floating_point T>
EMBER_HD EMBER_INLINE T pow(T x, T y) {
  return std::pow(x, y);
}

/// `m ? a : b` for one chain; SIMD batches use `xsimd::select`, which picks lane by lane.
template <class T>
EMBER_HD EMBER_INLINE T select(bool m, T const& a, T const& b) {
  return m ? a : b;
}

/// True for a plain `true`; for a SIMD mask, true when any lane is set.
EMBER_HD EMBER_INLINE bool any(bool m) { return m; }

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

/// The logistic function 1 / (1 + e^-x).
template <class S>
EMBER_HD EMBER_INLINE S sigmoid(S const& x) {
  return S(1) / (S(1) + exp(-x));
}

/// log(1 + e^x), without overflow for large x: max(x, 0) + log1p(e^-|x|).
template <class S>
EMBER_HD EMBER_INLINE S softplus(S const& x) {
  return max(x, S(0)) + log1p(exp(-abs(x)));
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

/// 2π in the precision of `T`.
template <class T>
inline constexpr T two_pi = T(6.283185307179586476925286766559);

}  // namespace ember
