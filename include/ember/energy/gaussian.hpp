#pragma once
/// \file
/// `gaussian`: the energy of a normal distribution, U(x) = ½ (x − μ)ᵀ Σ⁻¹ (x − μ), in three
/// forms chosen by the covariance argument of its constructor:
/// isotropic (Σ = σ²I), diagonal (Σ = diag(σ²)) and full (any symmetric positive definite Σ).
/// Models `DifferentiableEnergy`. Like TorchEBM's Gaussian energy it omits the normalising
/// constant ½ log det(2πΣ), which `log_normalizer()` returns.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/detail/check.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

// Eigen factorises covariances in host-only constructors; it never enters device code. Under
// nvcc, Eigen (when ember includes it first) is told so, or it marks itself __host__ __device__
// and nvcc warns on every defaulted member.
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
#if !defined(__CUDA_ARCH__)
#include <Eigen/Cholesky>
#include <Eigen/Core>
#endif

namespace ember {

/// Covariance forms of `gaussian` and `gaussian_mixture`.
namespace covariance {
struct isotropic {};
struct diagonal {};
struct full {};
}  // namespace covariance

template <class T, int D, class Form = covariance::full>
struct gaussian;

/// Σ = σ²I. Stored as 1/σ² so the hot loop never divides.
template <class T, int D>
struct gaussian<T, D, covariance::isotropic> {
  using value_type = T;
  static constexpr int dim = D;

  vec<T, D> mean;
  T inv_var;
  T log_norm;

  gaussian(vec<T, D> const& mu, T sigma) : mean(mu) {
    detail::require_positive(sigma, "ember::gaussian", "sigma");
    inv_var = T(1) / (sigma * sigma);
    log_norm = T(0.5 * D * std::log(two_pi<double> * double(sigma) * double(sigma)));
  }

  /// ½ log det(2πΣ): add it to U for the exact negative log density.
  T log_normalizer() const { return log_norm; }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      q = q + r * r;
    }
    return S(T(0.5) * inv_var) * q;
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      g[i] = S(inv_var) * r;
      q = q + r * g[i];
    }
    return S(T(0.5)) * q;
  }
};

/// Σ = diag(σ₁², …, σ_D²). Stored as 1/σᵢ².
template <class T, int D>
struct gaussian<T, D, covariance::diagonal> {
  using value_type = T;
  static constexpr int dim = D;

  vec<T, D> mean;
  vec<T, D> inv_var;
  T log_norm;

  gaussian(vec<T, D> const& mu, vec<T, D> const& sigma) : mean(mu) {
    double ln = 0;
    for (int i = 0; i < D; ++i) {
      detail::require_positive(sigma[i], "ember::gaussian", "every sigma");
      inv_var[i] = T(1) / (sigma[i] * sigma[i]);
      ln += 0.5 * std::log(two_pi<double> * double(sigma[i]) * double(sigma[i]));
    }
    log_norm = T(ln);
  }

  T log_normalizer() const { return log_norm; }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      q = q + S(inv_var[i]) * r * r;
    }
    return S(T(0.5)) * q;
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      g[i] = S(inv_var[i]) * r;
      q = q + r * g[i];
    }
    return S(T(0.5)) * q;
  }
};

namespace detail {

/// Precision matrices up to this many bytes live inside the energy (a `vec` of rows: registers
/// and the kernel-parameter block on a GPU); larger ones on the heap, so that a D = 784 energy
/// is not 2.4 MB of stack.
inline constexpr std::size_t inline_matrix_bytes = 16384;

template <class T, int D, bool Heap = (std::size_t(D) * std::size_t(D) * sizeof(T) > inline_matrix_bytes)>
struct precision_storage {
  vec<vec<T, D>, D> rows;
  EMBER_HD EMBER_INLINE vec<T, D> const& operator[](int i) const { return rows[i]; }
  void set(int i, int j, T v) { rows[i][j] = v; }
};

/// Heap storage, shared between copies of the energy (copies are cheap; the matrix is never
/// written after construction). Host only: a CUDA kernel refuses it as not trivially copyable.
template <class T, int D>
struct precision_storage<T, D, true> {
  std::shared_ptr<T[]> owner = std::shared_ptr<T[]>(new T[std::size_t(D) * std::size_t(D)]);
  T* p = owner.get();
  EMBER_HD EMBER_INLINE T const* operator[](int i) const { return p + std::size_t(i) * D; }
  void set(int i, int j, T v) { p[std::size_t(i) * D + std::size_t(j)] = v; }
};

#if !defined(__CUDA_ARCH__)
// Checks Σ (finite, symmetric, positive definite) and factorises it with Eigen's LLT in double:
// returns P = Σ⁻¹ and log det Σ. Positive definite means every Cholesky pivot Lⱼⱼ² is above
// rounding: Lⱼⱼ² > 4·D·ε·Σⱼⱼ, relative to the pivot's own diagonal entry, so a badly scaled
// SPD matrix (diag(1, 1e-12)) passes and a rank-deficient one (pivot ~ ε·Σⱼⱼ) does not.
inline void factor_covariance(Eigen::MatrixXd const& C, Eigen::MatrixXd& P, double& logdet) {
  Eigen::Index const n = C.rows();
  double scale = 0;
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!std::isfinite(C(i, j)))
        throw std::invalid_argument("ember::gaussian: the covariance has a non-finite entry");
      scale = std::fmax(scale, std::fabs(C(i, j)));
    }
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
  P = llt.solve(Eigen::MatrixXd::Identity(n, n));
}
#endif

}  // namespace detail

/// Full covariance. The precision P = Σ⁻¹ and log det Σ are computed once on the host by
/// Eigen's Cholesky factorisation (LLT) in double; a Σ that is not symmetric positive definite
/// is rejected with `std::invalid_argument` ("not positive definite (Cholesky pivot j is v)").
/// The gradient is P(x − μ): D² multiply-adds. Σ comes as `std::array<std::array<T, D>, D>` or
/// any Eigen matrix (`Eigen::Matrix3f`, or `Eigen::MatrixXd` checked to be D × D at run time),
/// μ as a `vec` or an Eigen vector. P lives inside the energy up to 16 KiB (float D ≤ 64, double
/// D ≤ 45) and on the heap above (shared by copies, CPU backend only), so `gaussian<float, 784>`
/// and `gaussian<double, 512>` work.
template <class T, int D>
struct gaussian<T, D, covariance::full> {
  using value_type = T;
  static constexpr int dim = D;

  vec<T, D> mean;
  detail::precision_storage<T, D> precision;  ///< precision[i][j] = (Σ⁻¹)ᵢⱼ
  T log_norm;

  gaussian(vec<T, D> const& mu, std::array<std::array<T, D>, D> const& cov) : mean(mu) {
#if !defined(__CUDA_ARCH__)
    Eigen::MatrixXd C(D, D);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) C(i, j) = double(cov[i][j]);
    init(C);
#endif
  }

#if !defined(__CUDA_ARCH__)
  /// μ as a `vec`, Σ as any Eigen matrix expression (fixed or dynamic size; must be D × D).
  template <class DC>
  gaussian(vec<T, D> const& mu, Eigen::MatrixBase<DC> const& cov) : mean(mu) {
    init(to_double(cov));
  }
  /// μ and Σ as Eigen objects: `gaussian(Eigen::Vector3f{...}, Eigen::Matrix3f{...})`, or with
  /// dynamic sizes `gaussian<double, 512>(Eigen::VectorXd, Eigen::MatrixXd)`. Sizes are checked.
  template <class DM, class DC>
  gaussian(Eigen::MatrixBase<DM> const& mu, Eigen::MatrixBase<DC> const& cov) {
    if (mu.size() != D)
      throw std::invalid_argument("ember::gaussian<T, " + std::to_string(D) + ">: the mean has " +
                                  std::to_string(mu.size()) + " entries");
    for (int i = 0; i < D; ++i) mean[i] = T(mu(i));
    init(to_double(cov));
  }
#endif

  T log_normalizer() const { return log_norm; }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    vec<S, D> g;
    return value_and_grad(x, g);
  }

  template <class S>
  EMBER_HD EMBER_INLINE S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    vec<S, D> r;
    for (int i = 0; i < D; ++i) r[i] = x[i] - mean[i];
    S q = S(0);
    EMBER_UNROLL
    for (int i = 0; i < D; ++i) {
      auto const& p = precision[i];
      S gi = S(p[0]) * r[0];
      for (int j = 1; j < D; ++j) gi = gi + S(p[j]) * r[j];
      g[i] = gi;
      q = q + r[i] * gi;
    }
    return S(T(0.5)) * q;
  }

 private:
#if !defined(__CUDA_ARCH__)
  template <class DC>
  static Eigen::MatrixXd to_double(Eigen::MatrixBase<DC> const& cov) {
    if (cov.rows() != D || cov.cols() != D)
      throw std::invalid_argument("ember::gaussian<T, " + std::to_string(D) + ">: the covariance is " +
                                  std::to_string(cov.rows()) + " x " + std::to_string(cov.cols()));
    return cov.template cast<double>();
  }
  void init(Eigen::MatrixXd const& C) {
    Eigen::MatrixXd P;
    double logdet = 0;
    detail::factor_covariance(C, P, logdet);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) precision.set(i, j, T(P(i, j)));
    log_norm = T(0.5 * (D * std::log(two_pi<double>) + logdet));
  }
#endif
};

template <class T, int D>
gaussian(vec<T, D>, T) -> gaussian<T, D, covariance::isotropic>;
template <class T, int D>
gaussian(vec<T, D>, vec<T, D>) -> gaussian<T, D, covariance::diagonal>;
// std::array's size is a std::size_t: an `int D` cannot be deduced from it, hence N.
template <class T, int D, std::size_t N>
  requires(N == std::size_t(D))
gaussian(vec<T, D>, std::array<std::array<T, N>, N>) -> gaussian<T, D, covariance::full>;
#if !defined(__CUDA_ARCH__)
// Fixed-size Eigen inputs give D: gaussian(Eigen::Vector3f, Eigen::Matrix3f) is gaussian<float, 3>.
template <class T, int D, int O1, int R1, int C1, int O2, int R2, int C2>
  requires(D > 0)
gaussian(Eigen::Matrix<T, D, 1, O1, R1, C1>, Eigen::Matrix<T, D, D, O2, R2, C2>) -> gaussian<T, D, covariance::full>;
template <class T, int D, int O2, int R2, int C2>
  requires(D > 0)
gaussian(vec<T, D>, Eigen::Matrix<T, D, D, O2, R2, C2>) -> gaussian<T, D, covariance::full>;
#endif

}  // namespace ember
