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
