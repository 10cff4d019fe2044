#pragma once
/// \file
/// Host templates that many translation units of one program instantiate alike, compiled once.
///
/// ember is header-only, so every unit that constructs a full-covariance `gaussian` compiles
/// Eigen's LLT and solve again (`detail::factor_covariance`, about 1.9 s of g++ -O3), and every
/// unit that reads a data set compiles the CSV and .npy readers of `dataset<float>` and
/// `dataset<double>` again (0.3 s). A program with many such units (a benchmark matrix: one unit
/// per configuration) can compile them once:
///  - define `EMBER_EXTERN_HOST_TEMPLATES` in every unit, which makes the declarations below
///    `extern template` (the units then call the one instance instead of compiling their own);
///  - in exactly one unit compiled by the host compiler (a .cpp), include this header and write
///    `EMBER_INSTANTIATE_HOST_TEMPLATES` at namespace scope (that unit may define the macro too).
/// With the macro, a .cu unit parses no Eigen at all (energy/gaussian.hpp).
/// `ember_add_benchmark_matrix` does both (cmake/ember_benchmark_matrix.cmake). Without the macro
/// nothing changes. Host code only: the device pass of a CUDA unit sees none of it.

#if !defined(__CUDA_ARCH__)
#include <ember/data/dataset.hpp>
#include <ember/energy/gaussian.hpp>
// The factorisation's definition, for the unit that instantiates it: every unit compiled by the
// host compiler sees it (the extern declaration below keeps them from compiling it), and no .cu
// unit does, so with the macro a .cu unit never parses Eigen (1.2 s of its front ends).
#if !defined(__CUDACC__)
#include <ember/energy/detail/factor_covariance.hpp>
#endif

#if defined(EMBER_EXTERN_HOST_TEMPLATES)
namespace ember {
extern template class dataset<float>;
extern template class dataset<double>;
namespace detail {
extern template void factor_covariance<square_matrix>(square_matrix const&, square_matrix&, double&);
}  // namespace detail
}  // namespace ember
#endif

#if defined(__CUDACC__) && defined(EMBER_EXTERN_HOST_TEMPLATES)
// A .cu unit with the macro has only the declarations (it parses no Eigen): it cannot be the one.
#define EMBER_INSTANTIATE_HOST_TEMPLATES                                                                   \
  static_assert(false, "ember: EMBER_INSTANTIATE_HOST_TEMPLATES belongs in a .cpp unit: a .cu unit with "   \
                       "EMBER_EXTERN_HOST_TEMPLATES does not see the definitions it would instantiate");
#else
#define EMBER_INSTANTIATE_HOST_TEMPLATES                                                                   \
  template class ember::dataset<float>;                                                                   \
  template class ember::dataset<double>;                                                                  \
  template void ember::detail::factor_covariance<ember::detail::square_matrix>(                              \
      ember::detail::square_matrix const&, ember::detail::square_matrix&, double&);
#endif
#endif
