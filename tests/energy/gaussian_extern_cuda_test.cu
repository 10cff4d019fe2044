// A .cu unit of a program that defines EMBER_EXTERN_HOST_TEMPLATES (as every unit of a benchmark
// matrix does, the .cpp beside this file holding the one instance: gaussian_extern_instances.cpp)
// parses neither Eigen nor xsimd, and still constructs full-covariance gaussians: ember's own
// factorisation (detail/dense.hpp) needs neither. Before, such a unit parsed both (1.2–1.8 s of
// nvcc's front ends, bench/results/2026-11-26-matrix-compile-time-rounds.md). Cases tagged
// [nogpu]: nothing here needs a device.
#include <ember/cuda.cuh>  // ember/library.hpp and the CUDA backend
#include <ember/targets/rotated_gaussian.hpp>

#if defined(EIGEN_WORLD_VERSION)
#error "ember: a .cu unit parsed Eigen, which only the opt-in ember/eigen.hpp includes"
#endif
#if defined(XSIMD_VERSION_MAJOR)
#error "ember: a .cu unit parsed xsimd, which nvcc never uses (core/simd.hpp, detail/xsimd.hpp)"
#endif

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

TEST_CASE("a .cu unit without Eigen constructs a full gaussian",
          "[energy][gaussian][nogpu]") {
  // Σ = [[4, 2], [2, 3]]: det 8, Σ⁻¹ = [[3, −2], [−2, 4]] / 8.
  std::array<std::array<double, 2>, 2> cov{{{4, 2}, {2, 3}}};
  ember::gaussian<double, 2> U(ember::vec<double, 2>{{1, -1}}, cov);
  double const ulp = 8 * std::numeric_limits<double>::epsilon();
  CHECK(std::fabs(U.precision[0][0] - 3.0 / 8) <= ulp);
  CHECK(std::fabs(U.precision[0][1] + 2.0 / 8) <= ulp);
  CHECK(std::fabs(U.precision[1][1] - 4.0 / 8) <= ulp);
  CHECK(std::fabs(U.log_normalizer() - 0.5 * (2 * std::log(2 * std::numbers::pi) + std::log(8.0))) <= ulp * 4);
  // The rotated gaussian target builds its Σ without Eigen too.
  auto const S = ember::targets::rotated_gaussian<double>::covariance_matrix();
  // Σ = Q diag(σ²) Qᵀ with Q orthogonal: its trace is Σ σᵢ², to rounding.
  REQUIRE(S.rows() == 100);
  double trace = 0, variances = 0;
  for (int i = 0; i < 100; ++i)
    trace += S(i, i), variances += ember::targets::ill_conditioned_gaussian<double>::variance(i);
  CHECK(std::fabs(trace - variances) <= 1e-12 * variances);
}

TEST_CASE("the factorisation's errors reach a .cu unit unchanged", "[energy][gaussian][nogpu]") {
  std::array<std::array<float, 2>, 2> singular{{{1, 1}, {1, 1}}};
  try {
    ember::gaussian<float, 2> U(ember::vec<float, 2>{}, singular);
    FAIL("a singular covariance was accepted");
  } catch (std::invalid_argument const& e) {
    CHECK(std::string(e.what()).find("not positive definite (Cholesky pivot 1") != std::string::npos);
  }
}
