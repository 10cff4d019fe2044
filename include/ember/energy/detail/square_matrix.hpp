#pragma once
/// \file
/// What energy/gaussian.hpp and energy/detail/factor_covariance.hpp share, so that neither
/// includes the other: Eigen's configuration, `square_matrix` and the declaration of
/// `factor_covariance` (defined in factor_covariance.hpp, the one header of ember's energies that
/// includes Eigen).

#include <cstddef>
#include <vector>

// Eigen's configuration, here although this header does not include Eigen, so that it holds in
// every unit that includes ember before Eigen (energy/detail/factor_covariance.hpp, ember/eigen.hpp
// or the user's own). Under nvcc, Eigen is told that it never enters device code, or it marks
// itself __host__ __device__ and nvcc warns on every defaulted member.
#if defined(__CUDACC__) && !defined(EIGEN_WORLD_VERSION) && !defined(EIGEN_NO_CUDA)
#define EIGEN_NO_CUDA
#endif
// Eigen must be configured alike in every translation unit of a program: its vectorisation and
// alignment follow -march, and .cpp files built with -march=native and .cu files without it
// otherwise link mismatched instances of the same templates. ember's CMake target defines these
// for every consumer; this is the fallback for builds without it (include ember before Eigen).
#if !defined(EIGEN_WORLD_VERSION) && !defined(EIGEN_DONT_VECTORIZE)
#define EIGEN_DONT_VECTORIZE
#endif
#if !defined(EIGEN_WORLD_VERSION) && !defined(EIGEN_MAX_ALIGN_BYTES)
#define EIGEN_MAX_ALIGN_BYTES 16
#endif
#if !defined(EIGEN_WORLD_VERSION) && !defined(EIGEN_MAX_STATIC_ALIGN_BYTES)
#define EIGEN_MAX_STATIC_ALIGN_BYTES 16
#endif

namespace ember::detail {

// A row-major n × n matrix of doubles: a covariance on its way to the factorisation (and what
// targets that build one return). Any Eigen matrix or expression works where this does.
struct square_matrix {
  int n = 0;
  std::vector<double> a;
  explicit square_matrix(int size = 0) : n(size), a(std::size_t(size) * std::size_t(size), 0.0) {}
  int rows() const { return n; }
  int cols() const { return n; }
  double& operator()(int i, int j) { return a[std::size_t(i) * std::size_t(n) + std::size_t(j)]; }
  double operator()(int i, int j) const { return a[std::size_t(i) * std::size_t(n) + std::size_t(j)]; }
};

// Checks Σ (finite, symmetric, positive definite) and factorises it with Eigen's LLT in double:
// P = Σ⁻¹ and log det Σ. Declared here, defined in energy/detail/factor_covariance.hpp, the one
// header of ember's energies that includes Eigen. energy/gaussian.hpp includes it at its end
// unless EMBER_EXTERN_HOST_TEMPLATES says that one unit of the program instantiates it
// (host_templates.hpp): such a program's .cu units never parse Eigen.
// A template so that it can be declared without being defined, and so that a unit without a
// full-covariance gaussian instantiates nothing of Eigen.
template <class Matrix = square_matrix>
void factor_covariance(Matrix const& C, Matrix& P, double& logdet);

}  // namespace ember::detail
