#pragma once
/// \file
/// Target `rotated_gaussian`: the ill-conditioned gaussian turned by a dense rotation,
/// x ~ N(0, Σ) with Σ = Q diag(σ²) Qᵀ, σᵢ² = 10^{−1 + 2i/99} (condition number 100, d = 100),
/// Q the orthogonal factor of the QR decomposition of a fixed matrix of uniform(−1, 1) entries
/// (splitmix64 from seed 2026, so every build gets the same Q). Every Σᵢⱼ is non-zero: a
/// sampler that preconditions coordinate-wise gains nothing. Reference exact: E xᵢ = 0,
/// E xᵢ² = Σᵢᵢ (computed in double).

#include <ember/core/vec.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>
#include <ember/targets/reference.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>

namespace ember::targets {

template <class T = float>
struct rotated_gaussian {
  static constexpr int dim = 100;

  /// Σ = Q diag(σ²) Qᵀ in double.
  static detail::square_matrix covariance_matrix() {
    detail::square_matrix A(dim);
    std::uint64_t s = 2026;
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        A(i, j) = -1 + 2 * double(z >> 11) * 0x1p-53;
      }
    // Q = A's columns orthonormalised (Gram–Schmidt, twice, so orthogonal to rounding): the Q of
    // A = QR. Plain loops: Eigen's HouseholderQR and matrix product took 5 s of g++ in every unit
    // that uses this target (each of its benchmark-matrix configurations); these take 0.1 s.
    detail::square_matrix Q = A;
    for (int k = 0; k < dim; ++k)
      for (int pass = 0; pass < 2; ++pass) {
        for (int j = 0; j < k; ++j) {
          double d = 0;
          for (int i = 0; i < dim; ++i) d += Q(i, j) * Q(i, k);
          for (int i = 0; i < dim; ++i) Q(i, k) -= d * Q(i, j);
        }
        double n = 0;
        for (int i = 0; i < dim; ++i) n += Q(i, k) * Q(i, k);
        for (int i = 0; i < dim; ++i) Q(i, k) /= std::sqrt(n);
      }
    std::array<double, dim> var;
    for (int i = 0; i < dim; ++i) var[std::size_t(i)] = ill_conditioned_gaussian<T>::variance(i);
    detail::square_matrix S(dim);
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = 0;
        for (int k = 0; k < dim; ++k) s += Q(i, k) * var[std::size_t(k)] * Q(j, k);
        S(i, j) = S(j, i) = s;  // exactly symmetric
      }
    return S;
  }
  /// U(x) = ½ xᵀΣ⁻¹x (full-covariance gaussian; its precision lives on the heap at d = 100).
  /// Σ goes in as a std::array (on the heap: 40 KB in float): gaussian's Eigen constructors are
  /// host-only, and nvcc's device pass still reads this host function in a .cu unit.
  auto energy() const {
    detail::square_matrix const S = covariance_matrix();
    auto cov = std::make_unique<std::array<std::array<T, dim>, dim>>();
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) (*cov)[std::size_t(i)][std::size_t(j)] = T(S(i, j));
    return gaussian<T, dim, covariance::full>(vec<T, dim>{}, *cov);
  }
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    detail::square_matrix const S = covariance_matrix();
    for (int i = 0; i < dim; ++i) m.second[std::size_t(i)] = S(i, i);
    m.method = "exact (diagonal of Σ in double)";
    return m;
  }
};

}  // namespace ember::targets
