#pragma once
/// \file
/// `gaussian`: the energy of a normal distribution, U(x) = ½ (x − μ)ᵀ Σ⁻¹ (x − μ), in three
/// forms chosen by the covariance argument of its constructor:
/// isotropic (Σ = σ²I), diagonal (Σ = diag(σ²)) and full (any symmetric positive definite Σ).
/// Models `DifferentiableEnergy`. Like TorchEBM's Gaussian energy it omits the normalising
/// constant ½ log det(2πΣ), which `log_normalizer()` returns.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/data/data_view.hpp>
#include <ember/detail/dense.hpp>
#include <ember/energy/detail/check.hpp>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember {

/// Covariance forms of `gaussian` and `gaussian_mixture`.
namespace covariance {
struct isotropic {};
struct diagonal {};
struct full {};
}  // namespace covariance

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

/// Heap storage: the D × D matrix seen through a `data_view` (so `for_each_view` finds it and
/// `to_device` copies it to a GPU like a data set), owned by a `shared_ptr` shared between copies
/// of the energy (the matrix is never written after construction). Host only: on a device the
/// energy carries `precision_view` instead (`gaussian::device_value`).
template <class T, int D>
struct precision_storage<T, D, true> {
  std::shared_ptr<T[]> owner = std::shared_ptr<T[]>(new T[std::size_t(D) * std::size_t(D)]);
  data_view<T> view{owner.get(), D, D, memory_space::host};
  EMBER_HD EMBER_INLINE T const* operator[](int i) const { return view.data + std::size_t(i) * D; }
  void set(int i, int j, T v) { owner[std::size_t(i) * D + std::size_t(j)] = v; }
};

/// A heap-stored precision matrix without its owner: a trivially copyable view, valid while the
/// memory it points to (a `device_copy`'s) lives.
template <class T, int D>
struct precision_view {
  data_view<T> view;
  EMBER_HD EMBER_INLINE T const* operator[](int i) const { return view.data + std::size_t(i) * D; }
};

}  // namespace detail

template <class T, int D, class Form = covariance::full, class Precision = detail::precision_storage<T, D>>
struct gaussian;

/// Σ = σ²I. Stored as 1/σ² so the hot loop never divides.
template <class T, int D>
struct gaussian<T, D, covariance::isotropic> {
  using value_type = T;
  static constexpr int dim = D;
  static constexpr bool finite_value_means_finite_x = true;  // 1/σ² > 0 (fused_loop.hpp)

  vec<T, D> mean;
  T inv_var;
  T log_norm;

  gaussian(vec<T, D> const& mu, T sigma) : mean(mu) {
    detail::require_finite_entries(mu, "ember::gaussian", "mean");
    inv_var = detail::inverse_square<T>(double(sigma), "ember::gaussian", "sigma");
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
  static constexpr bool finite_value_means_finite_x = true;  // 1/σ² > 0 (fused_loop.hpp)

  vec<T, D> mean;
  vec<T, D> inv_var;
  T log_norm;

  gaussian(vec<T, D> const& mu, vec<T, D> const& sigma) : mean(mu) {
    detail::require_finite_entries(mu, "ember::gaussian", "mean");
    double ln = 0;
    for (int i = 0; i < D; ++i) {
      inv_var[i] = detail::inverse_square<T>(double(sigma[i]), "ember::gaussian",
                                                [i] { return "sigma[" + std::to_string(i) + "]"; });
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

// Dense inputs of the full gaussian, matched by their members, so this header needs no Eigen:
// an Eigen matrix or expression (evaluated first), `square_matrix`, or anything with rows(),
// cols() and m(i, j); a vector with size() and v(i). A `vec` is neither (it has v[i]).
template <class M>
concept dense_matrix = requires(M const& m) {
  { m.rows() } -> std::convertible_to<long>;
  { m.cols() } -> std::convertible_to<long>;
  double(m(0, 0));
};
template <class V>
concept dense_vector = requires(V const& v) {
  { v.size() } -> std::convertible_to<long>;
  double(v(0));
};
#if !defined(__CUDA_ARCH__)
// Checks Σ (finite, symmetric, positive definite) and factorises it in double
// (detail/dense.hpp): P = Σ⁻¹ and log det Σ. Positive definite means every Cholesky pivot
// Lⱼⱼ² > 4·D·ε·Σⱼⱼ, relative to the pivot's own diagonal entry, so a badly scaled SPD matrix
// (diag(1, 1e-12)) passes and a rank-deficient one (pivot ~ ε·Σⱼⱼ) does not.
inline void factor_covariance(square_matrix const& C, square_matrix& P, double& logdet) {
  int const n = C.rows();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!std::isfinite(C(i, j))) throw std::invalid_argument("ember::gaussian: the covariance has a non-finite entry");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (std::fabs(C(i, j) - C(j, i)) > 1e-6 * std::fmax(std::sqrt(std::fabs(C(i, i) * C(j, j))), 1e-300))
        throw std::invalid_argument("ember::gaussian: the covariance is not symmetric (entry (" + std::to_string(i) +
                                    ", " + std::to_string(j) + "))");
  std::vector<double> L;
  if (auto const bad = cholesky_lower(C.a.data(), n, L, 4 * double(n) * std::numeric_limits<double>::epsilon()))
    throw std::invalid_argument("ember::gaussian: the covariance is not positive definite (Cholesky pivot " +
                                std::to_string(bad.index) + " is " + number_g(bad.pivot) + ")");
  logdet = log_det_from_cholesky(L, n);
  P = inverse_from_cholesky(L, n);
}
#endif

template <class M>
decltype(auto) evaluated(M const& m) {
  if constexpr (requires { m.eval(); })
    return m.eval();  // an Eigen expression's coefficients, computed once (a plain matrix: itself)
  else
    return (m);
}

}  // namespace detail

/// Full covariance. The precision P = Σ⁻¹ and log det Σ are computed once on the host from
/// Σ's Cholesky factor in double (detail/dense.hpp); a Σ that is not symmetric positive definite
/// is rejected with `std::invalid_argument` ("not positive definite (Cholesky pivot j is v)").
/// The gradient is P(x − μ): D² multiply-adds. Σ comes as `std::array<std::array<T, D>, D>` or
/// any Eigen matrix (`Eigen::Matrix3f`, or `Eigen::MatrixXd` checked to be D × D at run time),
/// μ as a `vec` or an Eigen vector. P lives inside the energy up to 16 KiB (float D ≤ 64, double
/// D ≤ 45) and on the heap above (shared by copies), so `gaussian<float, 784>` and
/// `gaussian<double, 512>` work; on the heap it is a data view, which `to_device(U)` copies to a
/// GPU like a data set, handing backend::cuda a trivially copyable `device_value()`.
/// `Precision` is the storage (chosen by size; `to_device` picks the view form).
template <class T, int D, class Precision>
struct gaussian<T, D, covariance::full, Precision> {
  using value_type = T;
  static constexpr int dim = D;
  // Every (P r)ᵢ has P's positive diagonal on rᵢ: a non-finite rᵢ makes U non-finite (fused_loop.hpp).
  static constexpr bool finite_value_means_finite_x = true;

  vec<T, D> mean;
  Precision precision;  ///< precision[i][j] = (Σ⁻¹)ᵢⱼ
  T log_norm;

  gaussian(vec<T, D> const& mu, std::array<std::array<T, D>, D> const& cov) : mean(mu) {
#if !defined(__CUDA_ARCH__)
    detail::require_finite_entries(mu, "ember::gaussian", "mean");
    detail::square_matrix C(D);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) C(i, j) = double(cov[i][j]);
    init(C);
#endif
  }

#if !defined(__CUDA_ARCH__)
  /// μ as a `vec`, Σ as any Eigen matrix or expression (fixed or dynamic size; must be D × D),
  /// or anything else with rows(), cols() and Σ(i, j).
  template <detail::dense_matrix M>
  gaussian(vec<T, D> const& mu, M const& cov) : mean(mu) {
    detail::require_finite_entries(mu, "ember::gaussian", "mean");
    init(to_double(detail::evaluated(cov)));
  }
  /// μ and Σ as Eigen objects: `gaussian(Eigen::Vector3f{...}, Eigen::Matrix3f{...})`, or with
  /// dynamic sizes `gaussian<double, 512>(Eigen::VectorXd, Eigen::MatrixXd)`. Sizes are checked.
  template <detail::dense_vector V, detail::dense_matrix M>
  gaussian(V const& mu, M const& cov) {
    decltype(auto) m = detail::evaluated(mu);
    if (long(m.size()) != D)
      throw std::invalid_argument("ember::gaussian<T, " + std::to_string(D) + ">: the mean has " +
                                  std::to_string(long(m.size())) + " entries");
    for (int i = 0; i < D; ++i) mean[i] = T(m(i));
    detail::require_finite_entries(mean, "ember::gaussian", "mean");
    init(to_double(detail::evaluated(cov)));
  }
#endif

  T log_normalizer() const { return log_norm; }

  /// A heap-stored precision is a data view: `for_each_view` (energy/for_each_view.hpp) finds it,
  /// so `to_device(U)` copies it to the GPU and the backends check where it points.
  template <class F>
    requires requires(Precision& p) { p.view; }
  void for_each_view(F&& f) {
    f(precision.view);
  }
  /// What a device receives of an energy with a heap-stored precision: the same energy with the
  /// matrix as a bare view (no owner), trivially copyable; `to_device` calls it once the matrix
  /// is on the device (data/device.cuh).
  auto device_value() const
    requires std::is_same_v<Precision, detail::precision_storage<T, D, true>>
  {
    return gaussian<T, D, covariance::full, detail::precision_view<T, D>>(*this);
  }
  /// The view form from the owning form (see `device_value`).
  template <class P>
    requires std::is_same_v<Precision, detail::precision_view<T, D>>
  explicit gaussian(gaussian<T, D, covariance::full, P> const& owner)
      : mean(owner.mean), precision{owner.precision.view}, log_norm(owner.log_norm) {}

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
    if constexpr (D <= 16) {
      EMBER_UNROLL
      for (int i = 0; i < D; ++i) {
        auto const& p = precision[i];
        S gi = S(p[0]) * r[0];
        for (int j = 1; j < D; ++j) gi = gi + S(p[j]) * r[j];
        g[i] = gi;
        q = q + r[i] * gi;
      }
    } else {
      // Four rows at a time, each summed in the same order as above (the same bits up to where
      // the compiler fuses a·b + c): every r[j] loaded once per four multiply-adds, and a loop,
      // not D² unrolled ones (at D = 100, 10⁴ multiply-adds of code per gradient; this is 2.3×
      // faster there, docs/performance.md).
      constexpr int B = 4;
      int i = 0;
      for (; i + B <= D; i += B) {
        S a[B];
        for (int k = 0; k < B; ++k) a[k] = S(precision[i + k][0]) * r[0];
        for (int j = 1; j < D; ++j) {
          S const rj = r[j];
          for (int k = 0; k < B; ++k) a[k] = a[k] + S(precision[i + k][j]) * rj;
        }
        for (int k = 0; k < B; ++k) g[i + k] = a[k];
      }
      for (; i < D; ++i) {
        auto const& p = precision[i];
        S gi = S(p[0]) * r[0];
        for (int j = 1; j < D; ++j) gi = gi + S(p[j]) * r[j];
        g[i] = gi;
      }
      for (int k = 0; k < D; ++k) q = q + r[k] * g[k];
    }
    return S(T(0.5)) * q;
  }

 private:
#if !defined(__CUDA_ARCH__)
  template <class M>
  static detail::square_matrix to_double(M const& cov) {
    if (long(cov.rows()) != D || long(cov.cols()) != D)
      throw std::invalid_argument("ember::gaussian<T, " + std::to_string(D) + ">: the covariance is " +
                                  std::to_string(long(cov.rows())) + " x " + std::to_string(long(cov.cols())));
    detail::square_matrix C(D);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) C(i, j) = double(cov(i, j));
    return C;
  }
  void init(detail::square_matrix const& C) {
    detail::square_matrix P;
    double logdet = 0;
    detail::factor_covariance(C, P, logdet);
    // Σ⁻¹ must be representable in T: an entry beyond T's range (a variance below ~1e-38 in
    // float) would start every chain divergent.
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        T const p = T(P(i, j));
        if (!std::isfinite(double(p)) || (i == j && !(p >= std::numeric_limits<T>::min())))
          throw std::invalid_argument("ember::gaussian: the precision (inverse covariance) has entry (" +
                                      std::to_string(i) + ", " + std::to_string(j) + ") = " + detail::number_g(P(i, j)) +
                                      ", outside the range of " + (sizeof(T) == 4 ? "float" : "double") +
                                      "; rescale the coordinates");
        precision.set(i, j, p);
      }
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
// Fixed-size Eigen inputs give D: gaussian(Eigen::Vector3f, Eigen::Matrix3f) is gaussian<float, 3>
// (matched by Eigen's members Scalar, RowsAtCompileTime and ColsAtCompileTime: no Eigen here).
template <class V, class M>
  requires(requires { typename V::Scalar; typename M::Scalar; V::RowsAtCompileTime; V::ColsAtCompileTime;
                      M::RowsAtCompileTime; M::ColsAtCompileTime; } &&
           std::is_same_v<typename V::Scalar, typename M::Scalar> && int(V::RowsAtCompileTime) > 0 &&
           int(V::ColsAtCompileTime) == 1 &&
           int(M::RowsAtCompileTime) == int(V::RowsAtCompileTime) && int(M::ColsAtCompileTime) == int(V::RowsAtCompileTime))
gaussian(V, M) -> gaussian<typename V::Scalar, int(V::RowsAtCompileTime), covariance::full>;
template <class T, int D, class M>
  requires(requires { typename M::Scalar; M::RowsAtCompileTime; M::ColsAtCompileTime; } &&
           std::is_same_v<typename M::Scalar, T> && int(M::RowsAtCompileTime) == D && int(M::ColsAtCompileTime) == D)
gaussian(vec<T, D>, M) -> gaussian<T, D, covariance::full>;

}  // namespace ember
