#pragma once
/// \file
/// xsimd, included once for all of ember. GCC 12's AVX-512 intrinsics headers initialise their
/// "undefined" vectors from themselves (`__m512i __Y = __Y;`, GCC bug 105593, fixed in GCC 13),
/// and after inlining every translation unit that uses a 512-bit batch got dozens of
/// -Wuninitialized warnings located in those headers. The pragmas cover only the lines of the
/// headers included here, so a user's own uninitialised variables are still reported. The raw
/// AVX-512 intrinsics that ember uses outside xsimd (diagnostics/detail/rank_normalizer.hpp) come
/// from here too, under the same pragmas. nvcc sees only those: xsimd is host-compiler code.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Without optimisation (-O0, a Debug build) GCC 12 defines some AVX-512BW intrinsics as macros
// that cast their operands straight to __v64qi or __v32hi, and an xsimd batch converts only to
// __m512i: with AVX-512BW enabled (-march=native on such a CPU), xsimd's `select`, reached by
// `log`, did not compile. Those two macros again, through __m512i, as GCC's inline versions take them.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__) && defined(__AVX512BW__) && !defined(__CUDACC__)
#include <immintrin.h>
#if defined(_mm512_mask_blend_epi8)
#undef _mm512_mask_blend_epi8
#define _mm512_mask_blend_epi8(U, A, W) \
  ((__m512i)__builtin_ia32_blendmb_512_mask((__v64qi)(__m512i)(A), (__v64qi)(__m512i)(W), (__mmask64)(U)))
#endif
#if defined(_mm512_mask_blend_epi16)
#undef _mm512_mask_blend_epi16
#define _mm512_mask_blend_epi16(U, A, W) \
  ((__m512i)__builtin_ia32_blendmw_512_mask((__v32hi)(__m512i)(A), (__v32hi)(__m512i)(W), (__mmask32)(U)))
#endif
#endif
// Not under nvcc, which never instantiates a batch (core/simd.hpp); the intrinsics still are.
#if !defined(__CUDACC__)
#include <xsimd/xsimd.hpp>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
