#pragma once
/// \file
/// SIMD batches of chains as a scalar type: `xsimd::batch<float>` and `xsimd::batch<double>`
/// (width from the target flags: 16 floats per AVX-512 register). Energies, kernels and the
/// fused loop instantiate with a batch unchanged: arithmetic through xsimd's operators, math
/// through xsimd's functions (found by argument-dependent lookup), comparisons give lane masks
/// and `select` picks lane by lane.
///
/// What a batch needs besides that is here: its `scalar_traits`, and its `rng_traits` so that
/// Philox runs one chain per lane, bit-identical to the scalar stream of the same chain.

#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>

// nvcc never compiles a CPU backend (a .cu unit includes ember/cuda.cuh, which brings none), so
// under nvcc this header is empty and xsimd is not parsed: 0.4 s less in every .cu unit's front ends (bench/results/2026-11-26-matrix-compile-time-rounds.md).
#if !defined(__CUDACC__)
#include <ember/detail/xsimd.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ember {

template <class T, class A>
struct scalar_traits<xsimd::batch<T, A>> {
  using element_type = T;
  using mask_type = xsimd::batch_bool<T, A>;
  static constexpr int width = int(xsimd::batch<T, A>::size);
};

/// The SIMD batch of `T` for the compilation target (AVX-512: 16 floats or 8 doubles).
template <class T>
using simd_batch = xsimd::batch<T>;

namespace detail {
template <class A, class Base>
inline constexpr bool has_arch = std::is_base_of_v<Base, A>;
}  // namespace detail

/// `ember::exp(x)`, `ember::select(m, a, b)`, … called qualified on the batches ember runs: the
/// same functions as xsimd's, which unqualified calls find by argument-dependent lookup. These are
/// non-templates for `simd_batch<float>` and `simd_batch<double>`, so that an unqualified call,
/// which sees both, prefers them and stays unambiguous. Without them a qualified `ember::select`
/// on a batch took the one-chain `select(bool, a, b)` on AVX-512 (the mask converts to an integer):
/// "any lane" for every lane.
#define EMBER_BATCH_MATH(name)                                                                 \
  inline simd_batch<float> name(simd_batch<float> const& x) { return xsimd::name(x); }       \
  inline simd_batch<double> name(simd_batch<double> const& x) { return xsimd::name(x); }
EMBER_BATCH_MATH(exp)
EMBER_BATCH_MATH(log)
EMBER_BATCH_MATH(log1p)
EMBER_BATCH_MATH(expm1)
EMBER_BATCH_MATH(sqrt)
EMBER_BATCH_MATH(sin)
EMBER_BATCH_MATH(cos)
EMBER_BATCH_MATH(tanh)
EMBER_BATCH_MATH(erf)
EMBER_BATCH_MATH(abs)
EMBER_BATCH_MATH(floor)
#undef EMBER_BATCH_MATH
inline simd_batch<float> pow(simd_batch<float> const& x, simd_batch<float> const& y) { return xsimd::pow(x, y); }
inline simd_batch<double> pow(simd_batch<double> const& x, simd_batch<double> const& y) { return xsimd::pow(x, y); }
inline simd_batch<float> select(simd_batch<float>::batch_bool_type const& m, simd_batch<float> const& a,
                                simd_batch<float> const& b) {
  return xsimd::select(m, a, b);
}
inline simd_batch<double> select(simd_batch<double>::batch_bool_type const& m, simd_batch<double> const& a,
                                 simd_batch<double> const& b) {
  return xsimd::select(m, a, b);
}

/// The batch (0, 1, 2, …) of lane indices, loaded from a constant table.
template <class B>
EMBER_INLINE B lane_index() {
  using V = typename B::value_type;
  alignas(64) static constexpr auto idx = [] {
    std::array<V, B::size> a{};
    for (std::size_t i = 0; i < B::size; ++i) a[i] = V(i);
    return a;
  }();
  return B::load_aligned(idx.data());
}

/// A batch's bit pattern as a batch of signed integers of the same width, for `log_positive`.
template <class T, class A>
struct bits_traits<xsimd::batch<T, A>> {
  using S = xsimd::batch<T, A>;
  using int_type = xsimd::batch<std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>, A>;
  static EMBER_INLINE int_type to_bits(S x) { return xsimd::bitwise_cast<int_type>(x); }
  static EMBER_INLINE S from_bits(int_type i) { return xsimd::bitwise_cast<S>(i); }
  static EMBER_INLINE S to_float(int_type i) { return xsimd::to_float(i); }
};

/// a·b + c on batches with one rounding where the target has FMA (the same bits as the scalar
/// `fmadd` on each lane): the FMA intrinsics directly, since xsimd 8's `fma` on AVX-512 is the
/// generic x·y + z, left to the compiler's contraction.
template <class T, class A>
struct fma_traits<xsimd::batch<T, A>> {
  using S = xsimd::batch<T, A>;
  static EMBER_INLINE S fmadd(S const& a, S const& b, S const& c) {
#if defined(__AVX512F__)
    if constexpr (detail::has_arch<A, xsimd::avx512f>) {
      if constexpr (sizeof(T) == 4) return _mm512_fmadd_ps(a, b, c);
      else return _mm512_fmadd_pd(a, b, c);
    } else
#endif
#if defined(__FMA__)
    if constexpr (detail::has_arch<A, xsimd::avx>) {
      if constexpr (sizeof(T) == 4) return _mm256_fmadd_ps(a, b, c);
      else return _mm256_fmadd_pd(a, b, c);
    } else if constexpr (detail::has_arch<A, xsimd::sse2>) {
      if constexpr (sizeof(T) == 4) return _mm_fmadd_ps(a, b, c);
      else return _mm_fmadd_pd(a, b, c);
    } else
#endif
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
    {
      // Any other target with FMA: lane by lane, so the bits still equal the scalar path's.
      alignas(64) T x[S::size], y[S::size], z[S::size];
      a.store_aligned(x);
      b.store_aligned(y);
      c.store_aligned(z);
      for (std::size_t i = 0; i < S::size; ++i) x[i] = fma_traits<T>::fmadd(x[i], y[i], z[i]);
      return S::load_aligned(x);
    }
#else
    {
      return a * b + c;  // no FMA instruction: a multiply and an add, like the scalar path
    }
#endif
  }
};

/// float batches: one chain per 32-bit lane. Philox's 32×32→64 multiply uses the even/odd
/// `mul_epu32` trick on x86 (two multiplies and two masked shuffles per 16 lanes); other targets fall
/// back to a lane loop.
template <class A>
struct rng_traits<xsimd::batch<float, A>> {
  using S = xsimd::batch<float, A>;
  using u32 = xsimd::batch<std::uint32_t, A>;
  static constexpr int W = int(u32::size);

  static EMBER_INLINE void mulhilo(std::uint32_t m, u32 b, u32& hi, u32& lo) {
#if defined(__AVX512F__)
    if constexpr (detail::has_arch<A, xsimd::avx512f>) {
      __m512i a = _mm512_set1_epi32(int(m));
      __m512i x = b;
      __m512i even = _mm512_mul_epu32(a, x);                        // 64-bit products of lanes 0, 2, …
      __m512i odd = _mm512_mul_epu32(a, _mm512_srli_epi64(x, 32));  // and of lanes 1, 3, …
      // Each result lane is one 32-bit half of one of the two: an in-lane dword shuffle of one
      // product, merged under a mask into the other, which already holds its half in place
      // (one instruction per result instead of a shift and a blend).
      hi = u32(_mm512_mask_shuffle_epi32(odd, __mmask16(0x5555), even, _MM_PERM_DDBB));
      lo = u32(_mm512_mask_shuffle_epi32(even, __mmask16(0xAAAA), odd, _MM_PERM_CCAA));
      return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (detail::has_arch<A, xsimd::avx2>) {
      __m256i a = _mm256_set1_epi32(int(m));
      __m256i x = b;
      __m256i even = _mm256_mul_epu32(a, x);
      __m256i odd = _mm256_mul_epu32(a, _mm256_srli_epi64(x, 32));
      lo = u32(_mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA));
      hi = u32(_mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA));
      return;
    }
#endif
    alignas(64) std::uint32_t in[W], h[W], l[W];
    b.store_aligned(in);
    for (int i = 0; i < W; ++i) rng_traits<float>::mulhilo(m, in[i], h[i], l[i]);
    hi = u32::load_aligned(h);
    lo = u32::load_aligned(l);
  }
  static EMBER_INLINE S uniform(u32 x) {
    auto top = xsimd::bitwise_cast<xsimd::batch<std::int32_t, A>>(x >> 8);
    return xsimd::to_float(top) * S(0x1p-24f) + S(0x1p-25f);
  }
  static EMBER_INLINE u32 lanes_from(std::uint32_t first) { return u32(first) + lane_index<u32>(); }
  static EMBER_INLINE S low30(u32 b) {
    return xsimd::to_float(xsimd::bitwise_cast<xsimd::batch<std::int32_t, A>>(b << 2));
  }
  static EMBER_INLINE xsimd::batch_bool<float, A> bit(u32 v, std::uint32_t m) {
    using I = xsimd::batch<std::int32_t, A>;
    return xsimd::bool_cast((xsimd::bitwise_cast<I>(v) & I(std::int32_t(m))) != I(0));
  }
  static EMBER_INLINE S flip_sign(S x, u32 v) {
    return xsimd::bitwise_cast<S>(xsimd::bitwise_cast<u32>(x) ^ (v & u32(0x80000000u)));
  }
};

/// double batches: one chain per 64-bit lane, whose low 32 bits carry the Philox word
/// (`mul_epu32` multiplies exactly those and returns the full 64-bit product).
template <class A>
struct rng_traits<xsimd::batch<double, A>> {
  using S = xsimd::batch<double, A>;
  using u32 = xsimd::batch<std::uint64_t, A>;

  static EMBER_INLINE void mulhilo(std::uint32_t m, u32 b, u32& hi, u32& lo) {
    u32 p;
#if defined(__AVX512F__)
    if constexpr (detail::has_arch<A, xsimd::avx512f>) {
      p = u32(_mm512_mul_epu32(_mm512_set1_epi64(std::int64_t(m)), b));
    } else
#endif
#if defined(__AVX2__)
    if constexpr (detail::has_arch<A, xsimd::avx2>) {
      p = u32(_mm256_mul_epu32(_mm256_set1_epi64x(std::int64_t(m)), b));
    } else
#endif
    {
      p = b * u32(std::uint64_t(m));
    }
    hi = p >> 32;
    lo = p & u32(std::uint64_t(0xFFFFFFFFu));
  }
  static EMBER_INLINE S uniform(u32 x) {
    return xsimd::to_float(xsimd::bitwise_cast<xsimd::batch<std::int64_t, A>>(x)) * S(0x1p-32) + S(0x1p-33);
  }
  static EMBER_INLINE u32 lanes_from(std::uint32_t first) {
    return u32(std::uint64_t(first)) + lane_index<u32>();
  }
  // The word is the low 32 bits of each 64-bit lane: (int32)(b << 2) is (b << 34) >> 32, arithmetic.
  static EMBER_INLINE S low30(u32 b) {
    return xsimd::to_float(xsimd::bitwise_cast<xsimd::batch<std::int64_t, A>>(b << 34) >> 32);
  }
  static EMBER_INLINE xsimd::batch_bool<double, A> bit(u32 v, std::uint32_t m) {
    using I = xsimd::batch<std::int64_t, A>;
    return xsimd::bool_cast((xsimd::bitwise_cast<I>(v) & I(std::int64_t(m))) != I(0));
  }
  static EMBER_INLINE S flip_sign(S x, u32 v) {
    return xsimd::bitwise_cast<S>(xsimd::bitwise_cast<u32>(x) ^ ((v & u32(std::uint64_t(0x80000000u))) << 32));
  }
};

}  // namespace ember
#endif  // !defined(__CUDACC__)
