#pragma once
/// \file
/// `gaussian_mixture`: U(x) = −log Σₖ wₖ N(x; μₖ, Σₖ) for K components with isotropic
/// (Σₖ = σₖ²I) or diagonal (Σₖ = diag(σₖ²)) covariances. The sum is a log-sum-exp shifted by its
/// largest term, so far-away points give a finite energy and gradient instead of log 0.
/// Unlike `gaussian`, U includes the normalising constants: it is the exact negative log
/// density. Models `DifferentiableEnergy`.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/detail/check.hpp>
#include <ember/energy/gaussian.hpp>

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ember {

template <class T, int D, int K>
struct gaussian_mixture {
  static_assert(K >= 1, "ember::gaussian_mixture needs at least one component");
  using value_type = T;
  static constexpr int dim = D;
  static constexpr int components = K;

  vec<T, D> mean[K];
  vec<T, D> inv_var[K];  // 1/σₖᵢ², so the hot loop never divides
  T log_weight[K];       // log wₖ − Σᵢ log σₖᵢ − (D/2) log 2π

  /// Isotropic components: weights (any positive numbers, normalised here), means, σₖ.
  gaussian_mixture(std::array<T, K> const& weights, std::array<vec<T, D>, K> const& means,
                   std::array<T, K> const& sigmas) {
    std::array<vec<T, D>, K> s;
    for (int k = 0; k < K; ++k) s[k] = filled<T, D>(sigmas[k]);
    init(weights, means, s);
  }

  /// Diagonal components: σₖ is a vector of per-coordinate scales. The tag keeps a braced list
  /// of K scalars from being read as K vectors.
  gaussian_mixture(std::array<T, K> const& weights, std::array<vec<T, D>, K> const& means,
                   covariance::diagonal, std::array<vec<T, D>, K> const& sigmas) {
    init(weights, means, sigmas);
  }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S a[K];
    for (int k = 0; k < K; ++k) a[k] = log_component(k, x);
    return -log_sum_exp(a);
  }

  /// ∇U = Σₖ rₖ Σₖ⁻¹ (x − μₖ), with responsibilities rₖ = wₖN(x; μₖ, Σₖ) / Σⱼ wⱼN(x; μⱼ, Σⱼ).
  /// The scaled residuals Σₖ⁻¹(x − μₖ) of the energy pass are kept for the gradient rather than
  /// recomputed: 9% faster at D = 10, K = 4 on AVX-512 even where they spill (docs/performance.md).
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S a[K];
    S scaled[K][D];  // Σₖ⁻¹(x − μₖ)
    for (int k = 0; k < K; ++k) {
      S q = S(0);
      for (int i = 0; i < D; ++i) {
        S r = x[i] - mean[k][i];
        scaled[k][i] = S(inv_var[k][i]) * r;
        q = q + scaled[k][i] * r;
      }
      a[k] = S(log_weight[k]) - S(T(0.5)) * q;
    }
    S m = a[0];
    for (int k = 1; k < K; ++k) m = max(m, a[k]);
    S total = S(0);
    for (int k = 0; k < K; ++k) {
      a[k] = exp(a[k] - m);
      total = total + a[k];
    }
    S inv_total = S(T(1)) / total;
    for (int i = 0; i < D; ++i) g[i] = S(0);
    for (int k = 0; k < K; ++k) {
      S r = a[k] * inv_total;
      for (int i = 0; i < D; ++i) g[i] = g[i] + r * scaled[k][i];
    }
    return -(m + log(total));
  }

 private:
  template <class S>
  EMBER_HD S log_component(int k, vec<S, D> const& x) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[k][i];
      q = q + S(inv_var[k][i]) * r * r;
    }
    return S(log_weight[k]) - S(T(0.5)) * q;
  }

  void init(std::array<T, K> const& weights, std::array<vec<T, D>, K> const& means,
            std::array<vec<T, D>, K> const& sigmas) {
    double total = 0;
    for (int k = 0; k < K; ++k) {
      detail::require_positive(weights[k], "ember::gaussian_mixture", "every weight");
      total += double(weights[k]);
    }
    for (int k = 0; k < K; ++k) {
      double lw = std::log(double(weights[k]) / total) - 0.5 * D * std::log(two_pi<double>);
      for (int i = 0; i < D; ++i) {
        auto const named = [k, i](char const* what) {
          return [=] {  // appended piece by piece: GCC 12 warns falsely on prepending (-Wrestrict)
            std::string s = what;
            s += '[';
            s += std::to_string(k);
            s += "][";
            s += std::to_string(i);
            s += ']';
            return s;
          };
        };
        detail::require_finite(means[k][i], "ember::gaussian_mixture", named("mean"));
        mean[k][i] = means[k][i];
        inv_var[k][i] = detail::inverse_square<T>(double(sigmas[k][i]), "ember::gaussian_mixture", named("sigma"));
        lw -= std::log(double(sigmas[k][i]));
      }
      log_weight[k] = T(lw);
    }
  }
};

template <class T, int D, std::size_t K>
gaussian_mixture(std::array<T, K>, std::array<vec<T, D>, K>, std::array<T, K>)
    -> gaussian_mixture<T, D, int(K)>;
template <class T, int D, std::size_t K>
gaussian_mixture(std::array<T, K>, std::array<vec<T, D>, K>, covariance::diagonal,
                 std::array<vec<T, D>, K>)
    -> gaussian_mixture<T, D, int(K)>;

}  // namespace ember
