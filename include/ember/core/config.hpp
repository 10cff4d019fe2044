#pragma once
/// \file
/// The only macros in ember: host/device annotations, the exec-check pragma, inlining and
/// unrolling hints, and the benchmark build's optimisation attributes (EMBER_HOT, below).
/// Outside nvcc the annotations are empty, so the same headers are plain C++20 on the host.

#if defined(__CUDACC__)
/// Marks a function usable on the host and on the device.
#define EMBER_HD __host__ __device__
/// Placed before generic wrappers that may call host-only user code (a lambda without
/// `__device__`): nvcc then checks the call only where it is instantiated for the device.
#define EMBER_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define EMBER_HD
#define EMBER_EXEC_CHECK_DISABLE
#endif

#if defined(__CUDACC__) || defined(__GNUC__) || defined(__clang__)
/// Forces inlining of the small pieces the fused per-chain loop is built from.
#define EMBER_INLINE inline __attribute__((always_inline))
#else
#define EMBER_INLINE inline
#endif

/// Placed before a loop with a small compile-time trip count in the fused loop (Philox rounds and
/// blocks, the D rows of a gradient): fully unrolled, its indices become constants, so uniform
/// parts of Philox fold or leave the step loop and every value can stay in a register.
#if defined(__CUDACC__) || defined(__clang__)
#define EMBER_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define EMBER_UNROLL _Pragma("GCC unroll 64")
#else
#define EMBER_UNROLL
#endif

/// EMBER_HOT marks the code a run spends its time in: the fused loops (pipeline/fused_loop.hpp)
/// and the CPU backend's warm-up reductions. Where EMBER_HOT_O3 is defined (bench/matrix's
/// configurations, whose units are built at -O1 to compile in about two thirds of the time),
/// on GCC's host pass, it is `optimize("O3"), flatten`: the function is compiled at -O3 with
/// everything it calls inlined into it (the kernel's step, the energy, the RNG), so it is
/// optimised as in a -O3 unit (not always to the same bits: in double GCC contracts a few
/// multiply-adds differently); sampling and warm-up times measured level (docs/decisions/2026-11-23-benchmark-units-at-o1.md).
/// Elsewhere it is nothing.
#if defined(EMBER_HOT_O3) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)
#define EMBER_HOT __attribute__((optimize("O3"), flatten))
#else
#define EMBER_HOT
#endif
/// EMBER_HOT_CALLEE marks a hot function too large to gain from being inlined: a regression's
/// pass over its data (hundreds of rows of multiply-adds and transcendentals per call, beside
/// which a call costs nothing). On the host it is compiled once per scalar type and called,
/// instead of once inside every fused loop that reaches it (a run has three: the start, the
/// warm-up chunk and the sampling chunk); under EMBER_HOT_O3 at -O3 like the loops. Under nvcc
/// it is nothing: a device call would spill the chain's registers. Measured in
/// bench/results/2026-11-23-matrix-compile-time-rounds.md (compile time and sampling time).
#if defined(__CUDACC__)
#define EMBER_HOT_CALLEE
#elif defined(EMBER_HOT_O3) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_HOT_CALLEE __attribute__((noinline, optimize("O3"), flatten))
#elif defined(__GNUC__) || defined(__clang__)
#define EMBER_HOT_CALLEE __attribute__((noinline))
#else
#define EMBER_HOT_CALLEE
#endif
