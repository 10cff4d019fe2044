#pragma once
/// \file
/// Regression posteriors over a data set: the energy of coefficients β ∈ ℝ^D (the position x)
/// given a design matrix X (n × D, a `data_view`) and responses y (n × 1),
///
///     U(β) = Σᵢ ℓ(ηᵢ, yᵢ) + prior(β),   ηᵢ = xᵢ·β,   ∇U(β) = Σᵢ ℓ′(ηᵢ, yᵢ) xᵢ + ∇prior(β),
///
/// with the likelihood term ℓ (negative log-likelihood of one row, constants dropped):
///  - logistic (Bernoulli–logit), y ∈ {0, 1}: ℓ = softplus(η) − yη,  ℓ′ = σ(η) − y;
///  - Poisson–log, y ∈ {0, 1, 2, …}:          ℓ = eᵑ − yη,           ℓ′ = eᵑ − y;
///  - Gaussian, known noise sd σ:             ℓ = (η − y)²/(2σ²),    ℓ′ = (η − y)/σ².
/// Include an intercept as a column of ones in X.
///
/// The energy holds views, never the data (any n fits; see docs/models.md for lifetimes). Rows
/// are read once per evaluation and each value is broadcast to every chain of a SIMD batch, so
/// one pass over X serves 16 chains. Rows go in blocks of 8: the 8 ηs stay in registers while βⱼ
/// is loaded once per 8 multiply-adds, and ∇U's accumulation reuses each gⱼ for 8 rows.
/// Per gradient evaluation: 2·n·D multiply-adds, and per row the likelihood's transcendental
/// calls (logistic: one exp, ln(1 + e) by `log1p_unit` and one division; Poisson: one exp;
/// Gaussian: none).
/// Models `DifferentiableEnergy`.

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/team.hpp>
#include <ember/core/vec.hpp>
#include <ember/data/data_view.hpp>
#include <ember/energy/detail/check.hpp>
#include <ember/energy/prior.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if !defined(__CUDACC__)
#include <ember/detail/xsimd.hpp>
#endif

namespace ember {

/// Bernoulli–logit: ℓ(η, y) = softplus(η) − yη, ℓ′ = σ(η) − y, from one exp: with e = e^{−|η|},
/// softplus(η) = max(η, 0) + log1p(e) (`log1p_unit`, a polynomial on floats) and σ(η) = 1/(1 + e)
/// for η ≥ 0, e/(1 + e) otherwise.
struct logistic_likelihood {
  // Y is S's element type (a response broadcast to every chain) or S itself (one response per
  // lane: the scalar path evaluates 8 rows as one batch).
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S value(S const& eta, Y const& y) const {
    return max(eta, S(0.f)) + log1p_unit(exp(-abs(eta))) - S(y) * eta;
  }
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& eta, Y const& y, S& slope) const {
    S e = exp(-abs(eta));
    S inv = S(1.f) / (S(1.f) + e);
    slope = select(eta >= S(0.f), inv, e * inv) - S(y);
    return max(eta, S(0.f)) + log1p_unit(e) - S(y) * eta;
  }
  template <class T>
  static void check(T y, std::int64_t i) {
    if (!(y == T(0) || y == T(1)))
      throw std::invalid_argument("ember::logistic_regression: response " + std::to_string(i) +
                                  " must be 0 or 1, got " + detail::number_g(double(y)));
  }
};

/// Poisson–log: ℓ(η, y) = eᵑ − yη (log y! dropped), ℓ′ = eᵑ − y.
struct poisson_likelihood {
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S value(S const& eta, Y const& y) const {
    return exp(eta) - S(y) * eta;
  }
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& eta, Y const& y, S& slope) const {
    S m = exp(eta);
    slope = m - S(y);
    return m - S(y) * eta;
  }
  template <class T>
  static void check(T y, std::int64_t i) {
    if (!(y >= T(0)) || std::floor(double(y)) != double(y))
      throw std::invalid_argument("ember::poisson_regression: response " + std::to_string(i) +
                                  " must be a non-negative integer count, got " + detail::number_g(double(y)));
  }
};

/// Gaussian with known noise sd σ: ℓ(η, y) = (η − y)²/(2σ²), ℓ′ = (η − y)/σ². Stores 1/σ².
template <class T>
struct gaussian_likelihood {
  T inv_var;
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S value(S const& eta, Y const& y) const {
    S r = eta - S(y);
    return S(T(0.5) * inv_var) * r * r;
  }
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& eta, Y const& y, S& slope) const {
    S r = eta - S(y);
    slope = S(inv_var) * r;
    return S(T(0.5)) * r * slope;
  }
  static void check(T y, std::int64_t i) {
    if (!std::isfinite(double(y)))
      throw std::invalid_argument("ember::linear_regression: response " + std::to_string(i) + " must be finite, got " +
                                  detail::number_g(double(y)));
  }
};

/// U(β) = Σᵢ ℓ(xᵢ·β, yᵢ) + prior(β) over the rows of `x` (see the file comment). Built by
/// `logistic_regression<D>`, `poisson_regression<D>`, `linear_regression<D>`. Trivially
/// copyable; `for_each_view` exposes `x` and `y` so the data can be moved to a device.
template <class T, int D, class Likelihood, class Prior>
struct regression {
  using value_type = T;
  static constexpr int dim = D;
  /// Rows per block of the evaluation loop (a team deals out blocks); a device thread evaluates a
  /// block `device_rows` at a time.
  static constexpr int block_rows = 8;
  static constexpr int device_rows = 2;

  data_view<T> x;  ///< n × D design matrix
  data_view<T> y;  ///< n × 1 responses
  Likelihood lik;
  prior_terms<T, Prior> prior;

  template <class F>
  void for_each_view(F&& f) {
    f(x);
    f(y);
  }
  /// The blocks of rows a GPU team deals out (energy/for_each_view.hpp, `team_blocks`).
  std::int64_t team_blocks() const { return (x.rows + block_rows - 1) / block_rows; }
  /// The rows a team deals out (on the host, core/team.hpp's `host_row_parts`).
  std::int64_t dealt_rows() const { return x.rows; }

  // Both out of line on the host (EMBER_HOT_CALLEE, core/config.hpp): one copy of the data
  // loop per scalar type rather than one per fused loop.
  // A team (core/team.hpp: a GPU's threads, or the host's parts of a split energy) shares the
  // rows: each member adds its blocks of rows (for_rows) to its part, only the first member's part
  // holds the prior, and the parts are added up. A team of one is the plain loop over every row.
  template <class S>
  EMBER_HD EMBER_HOT_CALLEE S value(vec<S, D> const& b) const {
#if !defined(__CUDA_ARCH__)
    if (int const parts = detail::host_split_requested<S>() ? detail::host_row_parts(dealt_rows()) : 1; parts > 1)
      return detail::split_rows<S, D>(parts, nullptr, [&](vec<S, D>*) { return value(b); });
#endif
    team const t = team_for<S>();
    S u = prior.value(b);
    if (t.rank != 0) u = S(T(0));
    for_rows(t, [&]<int K>(std::int64_t i) { u = u + block_value<K>(b, i); });
    return team_sum(t, u);
  }

  template <class S>
  EMBER_HD EMBER_HOT_CALLEE S value_and_grad(vec<S, D> const& b, vec<S, D>& g) const {
#if !defined(__CUDA_ARCH__)
    if (int const parts = detail::host_split_requested<S>() ? detail::host_row_parts(dealt_rows()) : 1; parts > 1)
      return detail::split_rows<S, D>(parts, &g, [&](vec<S, D>* gp) { return value_and_grad(b, *gp); });
#endif
    team const t = team_for<S>();
    S u = prior.value_and_grad(b, g);
    if (t.rank != 0) {
      u = S(T(0));
      for (int j = 0; j < D; ++j) g[j] = S(T(0));
    }
    for_rows(t, [&]<int K>(std::int64_t i) { u = u + block_grad<K>(b, g, i); });
    if (t.size > 1)
      for (int j = 0; j < D; ++j) g[j] = team_sum(t, g[j]);
    return team_sum(t, u);
  }

 private:
  // A team member's rows: blocks of block_rows dealt out in turn (member r takes blocks r, r + size,
  // ...), then the rows left over one each, continuing the turn (the member after the last full
  // block's takes the first); a team of one, every row in order.
  // f.template operator()<K>(i) evaluates rows i..i+K−1.
  template <class F>
  EMBER_HD EMBER_INLINE void for_rows(team const& t, F&& f) const {
    std::int64_t const blocks = x.rows / block_rows;
#if defined(__CUDA_ARCH__)
    // A device thread takes its blocks two rows at a time, in a loop left rolled: eight rows at
    // once (248 multiply-adds unrolled) spilled registers inside the row loop of ChEES-HMC's
    // kernel (255 registers, 2.2 KB of spill loads); two rows spill nothing there. Breast-cancer
    // logistic regression, H200 (bench/results/2026-11-29-gpu-h200-session2.md): a gradient
    // 20.4 µs against 23.0 in teams of 32 at 128 chains, 179 against 300 µs with a thread per chain
    // at 1,024 (one row at a time: 20.5 and 199).
    static_assert(block_rows % device_rows == 0, "a dealt block is a whole number of device steps");
    for (std::int64_t k = t.rank; k < blocks; k += t.size) {
#pragma unroll 1
      for (int m = 0; m < block_rows; m += device_rows) f.template operator()<device_rows>(k * block_rows + m);
    }
#else
    for (std::int64_t k = t.rank; k < blocks; k += t.size) f.template operator()<block_rows>(k * block_rows);
#endif
    std::int64_t const first = (t.rank - blocks % t.size + t.size) % t.size;
    for (std::int64_t i = blocks * block_rows + first; i < x.rows; i += t.size) f.template operator()<1>(i);
  }
  // Whether rows are batched for the likelihood: host code (not nvcc, which rejects xsimd in
  // host-device functions), one chain in T itself, and a K-lane batch of T exists.
  template <class S, int K>
  static constexpr bool batch_rows() {
#if defined(__CUDACC__)
    return false;
#else
    if constexpr (K > 1 && std::is_same_v<S, T>)
      return !std::is_void_v<xsimd::make_sized_batch_t<T, std::size_t(K)>>;
    else
      return false;
#endif
  }

  // η of rows i..i+K−1: βⱼ is read once per K multiply-adds; the row values are broadcast.
  template <int K, class S>
  EMBER_HD EMBER_INLINE void linear(vec<S, D> const& b, std::int64_t i, S (&eta)[K]) const {
    T const* r = x.row(i);
    EMBER_UNROLL for (int k = 0; k < K; ++k) eta[k] = S(T(0));
    for (int j = 0; j < D; ++j) {
      S bj = b[j];
      EMBER_UNROLL for (int k = 0; k < K; ++k) eta[k] = S(r[k * D + j]) * bj + eta[k];
    }
  }
  template <int K, class S>
  EMBER_HD EMBER_INLINE S block_value(vec<S, D> const& b, std::int64_t i) const {
    S eta[K];
    linear<K>(b, i, eta);
    S u = lik.value(eta[0], y.data[i]);
    EMBER_UNROLL for (int k = 1; k < K; ++k) u = u + lik.value(eta[k], y.data[i + k]);
    return u;
  }
  template <int K, class S>
  EMBER_HD EMBER_INLINE S block_grad(vec<S, D> const& b, vec<S, D>& g, std::int64_t i) const {
    S eta[K];
    linear<K>(b, i, eta);
    S u = S(T(0));
#if !defined(__CUDACC__)  // xsimd is not included under nvcc, even in a discarded branch
    if constexpr (batch_rows<S, K>()) {
      // One chain in plain float/double on the host: the block's K likelihood terms (exp,
      // log1p_unit, division) as one K-lane batch instead of K libm calls.
      using B = xsimd::make_sized_batch_t<T, std::size_t(K)>;
      B slope, v = lik.value_and_slope(B::load_unaligned(eta), B::load_unaligned(y.data + i), slope);
      slope.store_unaligned(eta);
      u = xsimd::hadd(v);
    } else
#endif
    {
      EMBER_UNROLL for (int k = 0; k < K; ++k) {
        S slope;
        u = u + lik.value_and_slope(eta[k], y.data[i + k], slope);
        eta[k] = slope;
      }
    }
    T const* r = x.row(i);
    for (int j = 0; j < D; ++j) {
      S gj = g[j];
      EMBER_UNROLL for (int k = 0; k < K; ++k) gj = S(r[k * D + j]) * eta[k] + gj;
      g[j] = gj;
    }
    return u;
  }
};

namespace detail {
template <int D, class T, class L, class P>
regression<T, D, L, P> make_regression(char const* who, data_view<T> x, data_view<T> y, L lik, P prior) {
  auto const w = std::string(who);
  if (x.rows <= 0 || x.data == nullptr) throw std::invalid_argument(w + ": the design matrix has no rows");
  if (x.cols != D)
    throw std::invalid_argument(w + "<" + std::to_string(D) + ">: the design matrix has " + std::to_string(x.cols) +
                                " columns, the energy's dimension is " + std::to_string(D));
  if (y.cols != 1 || y.rows != x.rows)
    throw std::invalid_argument(w + ": the responses must be " + std::to_string(x.rows) + " x 1, got " +
                                std::to_string(y.rows) + " x " + std::to_string(y.cols));
  if (x.space != y.space) throw std::invalid_argument(w + ": the design matrix and responses are in different memory");
  if (y.space == memory_space::host)
    for (std::int64_t i = 0; i < y.rows; ++i) L::check(y.data[i], i);
  if (x.space == memory_space::host)
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (int j = 0; j < D; ++j)
        if (!std::isfinite(double(x(i, j))))
          throw std::invalid_argument(w + ": design matrix row " + std::to_string(i) + ", column " + std::to_string(j) +
                                      " is not finite (" + detail::number_g(double(x(i, j))) + ")");
  return regression<T, D, L, P>{x, y, lik, prior_terms<T, P>(prior)};
}
}  // namespace detail

/// Bernoulli–logit regression: yᵢ ~ Bernoulli(σ(xᵢ·β)), β ~ prior. `x` is n × D, `y` n × 1 of
/// 0s and 1s. Throws `std::invalid_argument` for mismatched shapes or a response not in {0, 1}.
template <int D, class T, class P>
regression<T, D, logistic_likelihood, P> logistic_regression(data_view<T> x, data_view<T> y, P prior) {
  return detail::make_regression<D>("ember::logistic_regression", x, y, logistic_likelihood{}, prior);
}

/// Poisson regression with log link: yᵢ ~ Poisson(exp(xᵢ·β)), β ~ prior.
template <int D, class T, class P>
regression<T, D, poisson_likelihood, P> poisson_regression(data_view<T> x, data_view<T> y, P prior) {
  return detail::make_regression<D>("ember::poisson_regression", x, y, poisson_likelihood{}, prior);
}

/// Linear regression with known noise: yᵢ ~ N(xᵢ·β, σ²), β ~ prior. Throws for σ ≤ 0.
template <int D, class T, class P>
regression<T, D, gaussian_likelihood<T>, P> linear_regression(data_view<T> x, data_view<T> y, double noise_sd,
                                                              P prior) {
  return detail::make_regression<D>(
      "ember::linear_regression", x, y,
      gaussian_likelihood<T>{detail::inverse_square<T>(noise_sd, "ember::linear_regression", "noise_sd")}, prior);
}

}  // namespace ember
