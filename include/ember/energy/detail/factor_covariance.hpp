#pragma once
/// \file
/// The definition of `detail::factor_covariance` (declared in energy/detail/square_matrix.hpp): a
/// covariance checked and factorised by Eigen's LLT. Host only. gaussian.hpp includes this
/// header unless `EMBER_EXTERN_HOST_TEMPLATES` is defined; host_templates.hpp includes it for the
/// unit that instantiates it. It is the only place where ember's energies include Eigen (its
/// configuration is set in square_matrix.hpp).

#include <ember/energy/detail/square_matrix.hpp>

#if !defined(__CUDA_ARCH__)
#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ember::detail {

// Positive definite means every Cholesky pivot Lⱼⱼ² is above rounding: Lⱼⱼ² > 4·D·ε·Σⱼⱼ,
// relative to the pivot's own diagonal entry, so a badly scaled SPD matrix (diag(1, 1e-12))
// passes and a rank-deficient one (pivot ~ ε·Σⱼⱼ) does not.
template <class Matrix>
void factor_covariance(Matrix const& C_in, Matrix& P_out, double& logdet) {
  Eigen::Index const n = C_in.rows();
  using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<row_major const> const C(C_in.a.data(), n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      if (!std::isfinite(C(i, j)))
        throw std::invalid_argument("ember::gaussian: the covariance has a non-finite entry");
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < i; ++j)
      if (std::fabs(C(i, j) - C(j, i)) > 1e-6 * std::fmax(std::sqrt(std::fabs(C(i, i) * C(j, j))), 1e-300))
        throw std::invalid_argument("ember::gaussian: the covariance is not symmetric (entry (" + std::to_string(i) +
                                    ", " + std::to_string(j) + "))");
  double const tiny = 4 * double(n) * std::numeric_limits<double>::epsilon();
  Eigen::LLT<Eigen::MatrixXd> llt(C);
  bool ok = llt.info() == Eigen::Success;
  if (ok) {
    auto const& L = llt.matrixLLT();
    for (Eigen::Index j = 0; j < n; ++j) ok = ok && L(j, j) * L(j, j) > tiny * C(j, j);
  }
  if (!ok) {
    // Find the first bad pivot, for the message: an unblocked Cholesky (only on this error path).
    Eigen::MatrixXd L = Eigen::MatrixXd::Zero(n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      double d = C(j, j) - L.row(j).head(j).squaredNorm();
      if (!(d > tiny * C(j, j)))
        throw std::invalid_argument("ember::gaussian: the covariance is not positive definite (Cholesky pivot " +
                                    std::to_string(j) + " is " + number_g(d) + ")");
      L(j, j) = std::sqrt(d);
      for (Eigen::Index i = j + 1; i < n; ++i) L(i, j) = (C(i, j) - L.row(i).head(j).dot(L.row(j).head(j))) / L(j, j);
    }
    throw std::invalid_argument("ember::gaussian: the covariance is not positive definite");
  }
  logdet = 0;
  for (Eigen::Index j = 0; j < n; ++j) logdet += 2 * std::log(llt.matrixLLT()(j, j));
  // Solved into column-major storage, as before the move to square_matrix: a row-major
  // destination makes Eigen solve the transposed problem, summing in another order.
  Eigen::MatrixXd const P = llt.solve(Eigen::MatrixXd::Identity(n, n));
  P_out = Matrix(int(n));
  Eigen::Map<row_major>(P_out.a.data(), n, n) = P;
}

}  // namespace ember::detail
#endif
