#pragma once
/// \file
/// ember's host-side dense linear algebra, in double and in plain loops: `square_matrix`, the
/// Cholesky factor of a symmetric positive-definite matrix, the inverse and log-determinant it
/// gives, and a symmetric eigendecomposition with the matrix functions and products built on it
/// (a dense metric's geometric mean, adapt/covariance.hpp). Used once per energy (gaussian's
/// precision) or per warm-up window (a dense metric), never in a chain's step. No Eigen: no header of ember's energies, adapters or backends parses
/// it (only the opt-in ember/eigen.hpp does), so a user's own Eigen keeps its own configuration.

#include <cmath>
#include <cstddef>
#include <vector>

namespace ember::detail {

/// A row-major n × n matrix of doubles: a covariance on its way to the factorisation (and what
/// targets that build one return). Any Eigen matrix or expression works where this does.
struct square_matrix {
  int n = 0;
  std::vector<double> a;
  explicit square_matrix(int size = 0) : n(size), a(std::size_t(size) * std::size_t(size), 0.0) {}
  int rows() const { return n; }
  int cols() const { return n; }
  double& operator()(int i, int j) { return a[std::size_t(i) * std::size_t(n) + std::size_t(j)]; }
  double operator()(int i, int j) const { return a[std::size_t(i) * std::size_t(n) + std::size_t(j)]; }
};

/// Where a Cholesky factorisation stopped: the first pivot Lⱼⱼ² that failed and its value.
struct cholesky_failure {
  int index = -1;  ///< -1: every pivot passed
  double pivot = 0;
  explicit operator bool() const { return index >= 0; }
};

/// The lower Cholesky factor L of the symmetric n × n matrix S (row-major; its lower triangle
/// is read), L Lᵀ = S, into L (row-major, upper triangle zero): Cholesky–Banachiewicz, row by
/// row, each sum in the order of k. Pivot j passes where Lⱼⱼ² > floor · Sⱼⱼ (floor 0: where it
/// is positive). Returns the first pivot that failed (pivot j depends only on S's leading
/// j + 1 rows, so it is the same in any order of factorisation).
inline cholesky_failure cholesky_lower(double const* S, int n, std::vector<double>& L, double floor = 0) {
  L.assign(std::size_t(n) * std::size_t(n), 0.0);
  auto at = [n](int i, int j) { return std::size_t(i) * std::size_t(n) + std::size_t(j); };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double a = S[at(i, j)];
      for (int k = 0; k < j; ++k) a -= L[at(i, k)] * L[at(j, k)];
      if (i == j) {
        if (!(a > (floor > 0 ? floor * S[at(i, i)] : 0.0))) return {i, a};
        L[at(i, i)] = std::sqrt(a);
      } else {
        L[at(i, j)] = a / L[at(j, j)];
      }
    }
  return {};
}

/// S⁻¹ = L⁻ᵀ L⁻¹ from S's Cholesky factor L (as `cholesky_lower` leaves it), exactly symmetric:
/// W = L⁻¹ by forward substitution, then (S⁻¹)ᵢⱼ = Σ_{k ≥ max(i, j)} Wₖᵢ Wₖⱼ. About n³/3
/// multiply-adds.
inline square_matrix inverse_from_cholesky(std::vector<double> const& L, int n) {
  auto at = [n](int i, int j) { return std::size_t(i) * std::size_t(n) + std::size_t(j); };
  // Both loops run over rows, so every access is contiguous; each entry's sum still runs in
  // increasing k.
  std::vector<double> W(std::size_t(n) * std::size_t(n), 0.0);
  std::vector<double> acc(std::size_t(n), 0.0);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < i; ++c) acc[std::size_t(c)] = 0;
    for (int k = 0; k < i; ++k)
      for (int c = 0; c <= k; ++c) acc[std::size_t(c)] += L[at(i, k)] * W[at(k, c)];
    for (int c = 0; c < i; ++c) W[at(i, c)] = -acc[std::size_t(c)] / L[at(i, i)];
    W[at(i, i)] = 1 / L[at(i, i)];
  }
  square_matrix P(n);
  for (int k = 0; k < n; ++k)
    for (int i = 0; i <= k; ++i)
      for (int j = i; j <= k; ++j) P(i, j) += W[at(k, i)] * W[at(k, j)];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) P(i, j) = P(j, i);
  return P;
}

/// log det S from S's Cholesky factor: 2 Σ log Lⱼⱼ.
inline double log_det_from_cholesky(std::vector<double> const& L, int n) {
  double s = 0;
  for (int j = 0; j < n; ++j) s += 2 * std::log(L[std::size_t(j) * std::size_t(n) + std::size_t(j)]);
  return s;
}

// Cyclic Jacobi eigendecomposition of the symmetric n × n matrix a (row-major, destroyed):
// eigenvalues in `values`, eigenvectors in the columns of `vectors`. n ≤ 64, at a window's close.
inline void symmetric_eigen(std::vector<double>& a, int n, std::vector<double>& vectors, std::vector<double>& values) {
  vectors.assign(std::size_t(n * n), 0.0);
  for (int i = 0; i < n; ++i) vectors[std::size_t(i * n + i)] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, diag = 0;
    for (int i = 0; i < n; ++i) {
      diag += a[std::size_t(i * n + i)] * a[std::size_t(i * n + i)];
      for (int j = i + 1; j < n; ++j) off += a[std::size_t(i * n + j)] * a[std::size_t(i * n + j)];
    }
    if (!(off > 1e-26 * diag)) break;  // off-diagonal entries at 10⁻¹³ of the diagonal's
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        double const apq = a[std::size_t(p * n + q)];
        double const app = a[std::size_t(p * n + p)], aqq = a[std::size_t(q * n + q)];
        // An entry at rounding level beside its diagonal is set to 0, not rotated: a matrix near
        // a multiple of I (what a good metric whitens to) would otherwise turn by 45° for ever.
        if (std::fabs(apq) <= 1e-15 * std::sqrt(std::fabs(app * aqq))) {
          a[std::size_t(p * n + q)] = a[std::size_t(q * n + p)] = 0;
          continue;
        }
        double const theta = (aqq - app) / (2 * apq);
        double const t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        double const c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {  // columns p and q
          double const akp = a[std::size_t(k * n + p)], akq = a[std::size_t(k * n + q)];
          a[std::size_t(k * n + p)] = c * akp - s * akq;
          a[std::size_t(k * n + q)] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {  // rows p and q
          double const apk = a[std::size_t(p * n + k)], aqk = a[std::size_t(q * n + k)];
          a[std::size_t(p * n + k)] = c * apk - s * aqk;
          a[std::size_t(q * n + k)] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {
          double const vkp = vectors[std::size_t(k * n + p)], vkq = vectors[std::size_t(k * n + q)];
          vectors[std::size_t(k * n + p)] = c * vkp - s * vkq;
          vectors[std::size_t(k * n + q)] = s * vkp + c * vkq;
        }
        a[std::size_t(p * n + q)] = a[std::size_t(q * n + p)] = 0;  // what the rotation made it, to rounding
      }
  }
  values.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) values[std::size_t(i)] = a[std::size_t(i * n + i)];
}

// U f(Λ) Uᵀ for a symmetric matrix given by its eigendecomposition.
template <class F>
std::vector<double> eigen_function(std::vector<double> const& vectors, std::vector<double> const& values, int n, F f) {
  std::vector<double> r(std::size_t(n * n), 0.0);
  for (int k = 0; k < n; ++k) {
    double const fk = f(values[std::size_t(k)]);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) r[std::size_t(i * n + j)] += vectors[std::size_t(i * n + k)] * fk * vectors[std::size_t(j * n + k)];
  }
  return r;
}

inline std::vector<double> multiply(std::vector<double> const& a, std::vector<double> const& b, int n) {
  std::vector<double> r(std::size_t(n * n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) r[std::size_t(i * n + j)] += a[std::size_t(i * n + k)] * b[std::size_t(k * n + j)];
  return r;
}

}  // namespace ember::detail
