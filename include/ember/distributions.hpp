#pragma once
/// \file
/// Log-densities with analytic derivatives in every argument (issue 28, first part), for the
/// bodies of `custom_energy` lambdas and, later, models. Each family has two forms:
///  - `normal_lpdf(x, mu, sigma)`: the log-density itself, normalised as SciPy's `logpdf` /
///    `logpmf`, for any mix of constants (`double`, `float`), values of the lambda's scalar type
///    (a float or double, a SIMD batch of chains) and dual numbers. With duals it evaluates the
///    analytic partials once at the arguments' values and combines them with the arguments'
///    tangents (one multiply-add per argument and partial); measured, that is about as fast as
///    the formula written out on duals (bench/lpdf_cost.cpp), and the partials are what a
///    reverse-mode gradient will use;
///  - `normal_lpdf_partials(x, mu, sigma)`: value and ∂/∂ of each argument as an
///    `lpdf_partials<S, K>`, for plain values of one type S.
/// Discrete families take their outcome as data (an arithmetic value, not differentiated):
/// `bernoulli_logit_lpmf(y, eta)`, `binomial_logit_lpmf(k, n, eta)`, `poisson_log_lpmf(y, eta)`.
/// Arguments are not checked (σ > 0 and the support are the caller's, as in Stan's unchecked
/// `_lupdf`); outside them the value is whatever the formula gives, often NaN, and so is the
/// edge of a support where the density is finite (gamma with α = 1 at x = 0: 0 · log 0). Dual
/// arguments must be one dual type. A float argument makes the result float (an energy in float
/// whose constants are double literals). Known limits: the differences of log Γ and ψ in
/// student_t's ν and neg_binomial_2_log's φ cancel for large ν or φ, so in float ∂ν is off by
/// tens of per cent from ν ≈ 10³ (in double from ν ≈ 10⁷); compute such models in double.
///
/// | family | density | partials |
/// | --- | --- | --- |
/// | `normal_lpdf(x, μ, σ)` | −z²/2 − log σ − ½ log 2π, z = (x − μ)/σ | ∂x = −z/σ, ∂μ = z/σ, ∂σ = (z² − 1)/σ |
/// | `lognormal_lpdf(x, μ, σ)` | normal of log x − log x | ∂x = −(z/σ + 1)/x |
/// | `cauchy_lpdf(x, μ, γ)` | −log π − log γ − log(1 + z²) | ∂x = −2z/(γ(1 + z²)), ∂γ = (z² − 1)/(γ(1 + z²)) |
/// | `laplace_lpdf(x, μ, b)` | −log 2b − \|x − μ\|/b | ∂x = −sign(x − μ)/b, ∂b = (\|x − μ\|/b − 1)/b |
/// | `logistic_lpdf(x, μ, s)` | −z − log s − 2 log(1 + e^{−z}) | ∂x = −tanh(z/2)/s, ∂s = (z tanh(z/2) − 1)/s |
/// | `exponential_lpdf(x, λ)` | log λ − λx | ∂x = −λ, ∂λ = 1/λ − x |
/// | `student_t_lpdf(x, ν, μ, σ)` | log Γ((ν+1)/2) − log Γ(ν/2) − ½ log νπ − log σ − (ν+1)/2 log(1 + z²/ν) | ∂ν through ψ |
/// | `gamma_lpdf(x, α, β)` (rate β) | α log β − log Γ(α) + (α − 1) log x − βx | ∂α = log β − ψ(α) + log x |
/// | `inv_gamma_lpdf(x, α, β)` | α log β − log Γ(α) − (α + 1) log x − β/x | ∂α = log β − ψ(α) − log x |
/// | `beta_lpdf(x, a, b)` | log B(a, b)⁻¹ + (a − 1) log x + (b − 1) log(1 − x) | ∂a = ψ(a + b) − ψ(a) + log x |
/// | `weibull_lpdf(x, k, λ)` (shape k, scale λ) | log k/λ + (k − 1) log(x/λ) − (x/λ)ᵏ | ∂λ = k((x/λ)ᵏ − 1)/λ |
/// | `neg_binomial_2_log_lpmf(y, η, φ)` (mean e^η) | Stan's neg_binomial_2_log | ∂φ through ψ |
/// `log_gamma(x)` and `digamma(x)` (x > 0) work on plain values and SIMD batches.
/// | `bernoulli_logit_lpmf(y, η)` | yη − log(1 + e^η) | ∂η = y − σ(η) |
/// | `binomial_logit_lpmf(k, n, η)` | log C(n, k) + kη − n log(1 + e^η) | ∂η = k − n σ(η) |
/// | `poisson_log_lpmf(y, η)` | yη − e^η − log y! | ∂η = y − e^η |
/// | `uniform_lpdf(x, a, b)` | −log(b − a) inside, −∞ outside | ∂a = 1/(b − a) |
/// | `categorical_logit_lpmf(y, η)` (η a vector) | η_y − log Σ e^{ηₖ} | ∂ηₖ = [k = y] − softmaxₖ |
/// | `ordered_logistic_lpmf(y, η, c)` (c a vector) | log(σ(η − c_{y−1}) − σ(η − c_y)) | through σ |
/// | `multi_normal_cholesky_lpdf(y, μ, L)` | −½\|L⁻¹(y − μ)\|² − Σ log Lᵢᵢ − (K/2) log 2π | ∂μ = L⁻ᵀz |
/// | `lkj_corr_cholesky_lpdf(L, η)` | Σᵢ (K − i − 1 + 2(η − 1)) log Lᵢᵢ − log c_K(η) | ∂Lᵢᵢ |
/// (∂μ = −∂x for the location families.)

#include <ember/ad/blocks.hpp>
#include <ember/ad/node.hpp>
#include <ember/data/data_view.hpp>
#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/math.hpp>

#include <cmath>
#include <concepts>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ember {

/// A log-density's value and its partial derivatives in its K arguments, in argument order.
template <class S, int K>
struct lpdf_partials {
  S value;
  S d[K];
};

namespace detail {
inline constexpr double half_log_two_pi = 0.91893853320467274178;  // ½ log 2π
inline constexpr double log_pi = 1.14472988584940017414;
inline constexpr double log_two = 0.69314718055994530942;
}  // namespace detail

/// log Γ(x) for x > 0, on plain values (float, double, SIMD batches): shifted to x ≥ 10 by the
/// recurrence Γ(x + 1) = xΓ(x) (masked, so lanes differ freely), then Stirling's series to x⁻⁹;
/// in double, within a few 10⁻¹⁴ of SciPy's gammaln (tests/distributions).
template <class S>
EMBER_HD EMBER_INLINE S log_gamma(S x) {
  S prod = S(1);
  for (int k = 0; k < 10; ++k) {
    auto const small = x < S(10);
    prod = select(small, prod * x, prod);
    x = select(small, x + S(1), x);
  }
  S const inv = S(1) / x, inv2 = inv * inv;
  S const series = inv * (S(1.0 / 12) - inv2 * (S(1.0 / 360) - inv2 * (S(1.0 / 1260) - inv2 * (S(1.0 / 1680) - inv2 * S(1.0 / 1188)))));
  return (x - S(0.5)) * log(x) - x + S(detail::half_log_two_pi) + series - log(prod);
}

/// ψ(x) = d log Γ(x)/dx for x > 0, on plain values: shifted to x ≥ 10 by ψ(x) = ψ(x + 1) − 1/x,
/// then the asymptotic series to x⁻¹²; within a few 10⁻¹⁴ of SciPy's digamma.
template <class S>
EMBER_HD EMBER_INLINE S digamma(S x) {
  S acc = S(0);
  for (int k = 0; k < 10; ++k) {
    auto const small = x < S(10);
    acc = select(small, acc - S(1) / x, acc);
    x = select(small, x + S(1), x);
  }
  S const inv = S(1) / x, inv2 = inv * inv;
  S const series =
      inv2 * (S(1.0 / 12) - inv2 * (S(1.0 / 120) - inv2 * (S(1.0 / 252) - inv2 * (S(1.0 / 240) - inv2 * (S(1.0 / 132) - inv2 * S(691.0 / 32760))))));
  return acc + log(x) - S(0.5) * inv - series;
}

namespace detail {

// The type a log-density of these arguments returns: the dual among them if any (all duals must
// be the same type), else the non-arithmetic one (a SIMD batch), else float if any argument is a
// float (an energy computing in float, its constants written as double literals), else their
// common type.
template <class A, class... R>
consteval auto lpdf_result_of() {
  if constexpr (sizeof...(R) == 0) {
    return std::type_identity<A>{};
  } else {
    using rest = typename decltype(lpdf_result_of<R...>())::type;
    if constexpr (is_dual<A>)
      return std::type_identity<A>{};
    else if constexpr (is_dual<rest>)
      return std::type_identity<rest>{};
    else if constexpr (!std::is_arithmetic_v<A>)
      return std::type_identity<A>{};
    else if constexpr (!std::is_arithmetic_v<rest>)
      return std::type_identity<rest>{};
    else if constexpr (std::is_same_v<A, float> || std::is_same_v<rest, float>)
      return std::type_identity<float>{};
    else
      return std::type_identity<std::common_type_t<A, rest>>{};
  }
}
template <class... A>
using lpdf_result_t = typename decltype(lpdf_result_of<std::remove_cvref_t<A>...>())::type;

template <class R>
struct plain_of {
  using type = R;
};
template <class T, int N>
struct plain_of<dual<T, N>> {
  using type = T;
};

// An argument as the plain type P: a dual's value, a constant converted (through P's element
// type, so a double constant meets a float batch), a plain value as it is.
template <class P, class A>
EMBER_HD EMBER_INLINE P to_plain(A const& a) {
  if constexpr (is_dual<A>)
    return a.val;
  else if constexpr (std::is_arithmetic_v<A>)
    return P(typename scalar_traits<P>::element_type(a));
  else
    return a;
}

// The log-density of R from the partials that `f` computes at the arguments' values: for a dual
// R, value plus Σ_k ∂_k · (argument k's tangent).
template <class R, class F, class... A, std::size_t... I>
EMBER_HD EMBER_INLINE R lift(F const& f, std::index_sequence<I...>, A const&... a) {
  static_assert(((!is_dual<A> || std::is_same_v<A, R>) && ...),
                "ember: a log-density's dual arguments must all be the same dual type (one custom energy's)");
  using P = typename plain_of<R>::type;
  auto const p = f(to_plain<P>(a)...);
  if constexpr (!is_dual<R>) {
    return p.value;
  } else {
    R r(p.value);
    auto add = [&](auto const& arg, P const& partial) {
      if constexpr (is_dual<std::remove_cvref_t<decltype(arg)>>)
        for (int j = 0; j < R::partials; ++j) r.d[j] = fmadd(partial, arg.d[j], r.d[j]);
    };
    (add(a, p.d[I]), ...);
    return r;
  }
}

// With a reverse-mode node among the arguments (a model's gradient, ad/model.hpp) the result is
// a node holding the partials, whose backward pass hands s·∂ₖ to argument k.
template <class F, class... A>
EMBER_HD EMBER_INLINE auto lpdf(F const& f, A const&... a) {
  if constexpr ((ad::node<A> || ...))
    return ad_apply(f, a...);
  else
    return lift<lpdf_result_t<A...>>(f, std::index_sequence_for<A...>{}, a...);
}


// −1, 0 or 1 as the sign of r.
template <class S>
EMBER_HD EMBER_INLINE S sign(S const& r) {
  return select(r > S(0), S(1), select(r < S(0), S(-1), S(0)));
}

// log(1 + e^η) and σ(η) from one exponential, e^{−|η|}, without overflow.
template <class S>
struct softplus_sigmoid {
  S softplus, sigmoid;
};
template <class S>
EMBER_HD EMBER_INLINE softplus_sigmoid<S> softplus_and_sigmoid(S const& eta) {
  S const e = exp(-abs(eta)), r = S(1) / (S(1) + e);
  return {max(eta, S(0)) + log1p_unit(e), select(eta >= S(0), r, e * r)};
}

// Data (an outcome or a count) as an element of S, checked to be a plain number.
template <class S, class Y>
EMBER_HD EMBER_INLINE S data(Y const& y) {
  static_assert(std::is_arithmetic_v<Y>,
                "ember: a discrete log-density's outcome is data (an int, float or double), not a parameter");
  return S(typename scalar_traits<S>::element_type(y));
}

}  // namespace detail

// --- continuous ---------------------------------------------------------------------------------

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> normal_lpdf_partials(S const& x, S const& mu, S const& sigma) {
  S const inv = S(1) / sigma, z = (x - mu) * inv;
  S const dx = -z * inv;
  return {-S(0.5) * z * z - log(sigma) - S(detail::half_log_two_pi), {dx, -dx, (z * z - S(1)) * inv}};
}
template <class X, class M, class G>
EMBER_HD EMBER_INLINE auto normal_lpdf(X const& x, M const& mu, G const& sigma) {
  if constexpr (std::is_arithmetic_v<G>) {
    // A constant σ (a prior's scale): 1/σ and log σ once, in double, instead of a division and a
    // logarithm per call on every lane (497 priors of a 500-parameter model: a quarter of its
    // reverse-mode gradient on SIMD batches, bench/grad_cost.cpp).
    double const inv = 1.0 / double(sigma), c = log(double(sigma)) + detail::half_log_two_pi;
    return detail::lpdf(
        [inv, c](auto const& xx, auto const& mm) {
          using S = std::remove_cvref_t<decltype(xx)>;
          using T = typename scalar_traits<S>::element_type;
          S const k = S(T(inv)), z = (xx - mm) * k, dx = -z * k;
          return lpdf_partials<S, 2>{-S(0.5) * z * z - S(T(c)), {dx, -dx}};
        },
        x, mu);
  } else if constexpr (requires { sigma.inv; sigma.log_v; }) {
    // A scale from `let(m, σ)` (ad/model.hpp): its 1/σ and log σ were computed once.
    using S = std::remove_cvref_t<decltype(sigma.v)>;
    S const inv = sigma.inv, c = sigma.log_v + S(detail::half_log_two_pi);
    return detail::lpdf(
        [inv, c](S const& xx, S const& mm, S const&) {
          S const z = (xx - mm) * inv, dx = -z * inv;
          return lpdf_partials<S, 3>{-S(0.5) * z * z - c, {dx, -dx, (z * z - S(1)) * inv}};
        },
        x, mu, sigma);
  } else {
    return detail::lpdf([](auto const&... a) { return normal_lpdf_partials(a...); }, x, mu, sigma);
  }
}

namespace detail {
// The backward part of normal_lpdf over a block of N parameters with a constant μ and σ:
// ∂/∂xₖ = −(xₖ − μ)/σ², from the block's values when the seed arrives (no N partials kept).
template <class S, int N>
struct normal_block_back {
  S const* x;
  S* adj;
  double mu, inv_var;
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    using T = element_t<S>;
    for (int k = 0; k < N; ++k) impl::accumulate(adj[k], impl::seed_times(s, (S(T(mu)) - x[k]) * S(T(inv_var))));
  }
};
}  // namespace detail

/// Σₖ normal_lpdf(xₖ, μ, σ) over a block or vector parameter (`m[z]`) with constant μ and σ: an
/// iid prior in one term, one node in reverse mode.
template <class S, int N, class M, class G>
  requires(std::is_arithmetic_v<M> && std::is_arithmetic_v<G>)
EMBER_HD EMBER_INLINE S normal_lpdf(block_values<S, N> const& x, M const& mu, G const& sigma) {
  using T = element_t<S>;
  double const inv = 1.0 / double(sigma);
  S q = S(0);
  for (int k = 0; k < N; ++k) {
    S const z = (x[k] - S(T(mu))) * S(T(inv));
    q = q + z * z;
  }
  return S(T(-0.5)) * q - S(T(double(N) * (log(double(sigma)) + detail::half_log_two_pi)));
}
template <class S, int N, class M, class G>
  requires(std::is_arithmetic_v<M> && std::is_arithmetic_v<G>)
EMBER_HD EMBER_INLINE ad::expr<S, detail::normal_block_back<S, N>> normal_lpdf(block_vars<S, N> const& x, M const& mu,
                                                                                G const& sigma) {
  double const inv = 1.0 / double(sigma);
  return {normal_lpdf(block_values<S, N>{x.x}, mu, sigma), {x.x, x.g, double(mu), inv * inv}};
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> lognormal_lpdf_partials(S const& x, S const& mu, S const& sigma) {
  S const lx = log(x), inv = S(1) / sigma, z = (lx - mu) * inv;
  return {-S(0.5) * z * z - log(sigma) - lx - S(detail::half_log_two_pi),
          {-(z * inv + S(1)) / x, z * inv, (z * z - S(1)) * inv}};
}
template <class X, class M, class G>
EMBER_HD EMBER_INLINE auto lognormal_lpdf(X const& x, M const& mu, G const& sigma) {
  return detail::lpdf([](auto const&... a) { return lognormal_lpdf_partials(a...); }, x, mu, sigma);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> cauchy_lpdf_partials(S const& x, S const& mu, S const& gamma) {
  S const inv = S(1) / gamma, z = (x - mu) * inv, q = S(1) + z * z, iq = S(1) / q;
  S const dx = -S(2) * z * inv * iq;
  return {-S(detail::log_pi) - log(gamma) - log1p(z * z), {dx, -dx, (z * z - S(1)) * inv * iq}};
}
template <class X, class M, class G>
EMBER_HD EMBER_INLINE auto cauchy_lpdf(X const& x, M const& mu, G const& gamma) {
  return detail::lpdf([](auto const&... a) { return cauchy_lpdf_partials(a...); }, x, mu, gamma);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> laplace_lpdf_partials(S const& x, S const& mu, S const& b) {
  S const inv = S(1) / b, r = x - mu, a = abs(r) * inv;
  S const dx = -detail::sign(r) * inv;
  return {-S(detail::log_two) - log(b) - a, {dx, -dx, (a - S(1)) * inv}};
}
template <class X, class M, class B>
EMBER_HD EMBER_INLINE auto laplace_lpdf(X const& x, M const& mu, B const& b) {
  return detail::lpdf([](auto const&... a) { return laplace_lpdf_partials(a...); }, x, mu, b);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> logistic_lpdf_partials(S const& x, S const& mu, S const& s) {
  S const inv = S(1) / s, z = (x - mu) * inv, t = tanh(S(0.5) * z);
  S const dx = -t * inv;
  return {-z - log(s) - S(2) * softplus(-z), {dx, -dx, (z * t - S(1)) * inv}};
}
template <class X, class M, class G>
EMBER_HD EMBER_INLINE auto logistic_lpdf(X const& x, M const& mu, G const& s) {
  return detail::lpdf([](auto const&... a) { return logistic_lpdf_partials(a...); }, x, mu, s);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 2> exponential_lpdf_partials(S const& x, S const& lambda) {
  return {log(lambda) - lambda * x, {-lambda, S(1) / lambda - x}};
}
template <class X, class L>
EMBER_HD EMBER_INLINE auto exponential_lpdf(X const& x, L const& lambda) {
  return detail::lpdf([](auto const&... a) { return exponential_lpdf_partials(a...); }, x, lambda);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 4> student_t_lpdf_partials(S const& x, S const& nu, S const& mu, S const& sigma) {
  S const inv = S(1) / sigma, z = (x - mu) * inv, w = z * z / nu, q = S(1) + w, h = S(0.5) * (nu + S(1));
  S const dx = -(nu + S(1)) * z * inv / (nu * q);
  S const value = log_gamma(h) - log_gamma(S(0.5) * nu) - S(0.5) * log(nu) - S(0.5 * detail::log_pi) - log(sigma) - h * log1p(w);
  S const dnu = S(0.5) * (digamma(h) - digamma(S(0.5) * nu)) - S(0.5) / nu - S(0.5) * log1p(w) + h * w / (nu * q);
  return {value, {dx, dnu, -dx, ((nu + S(1)) * w / q - S(1)) * inv}};
}
template <class X, class N, class M, class G>
EMBER_HD EMBER_INLINE auto student_t_lpdf(X const& x, N const& nu, M const& mu, G const& sigma) {
  return detail::lpdf([](auto const&... a) { return student_t_lpdf_partials(a...); }, x, nu, mu, sigma);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> gamma_lpdf_partials(S const& x, S const& alpha, S const& beta) {
  S const lx = log(x), lb = log(beta);
  return {alpha * lb - log_gamma(alpha) + (alpha - S(1)) * lx - beta * x,
          {(alpha - S(1)) / x - beta, lb - digamma(alpha) + lx, alpha / beta - x}};
}
template <class X, class A, class B>
EMBER_HD EMBER_INLINE auto gamma_lpdf(X const& x, A const& alpha, B const& beta) {
  return detail::lpdf([](auto const&... a) { return gamma_lpdf_partials(a...); }, x, alpha, beta);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> inv_gamma_lpdf_partials(S const& x, S const& alpha, S const& beta) {
  S const lx = log(x), lb = log(beta), ix = S(1) / x;
  return {alpha * lb - log_gamma(alpha) - (alpha + S(1)) * lx - beta * ix,
          {(beta * ix - (alpha + S(1))) * ix, lb - digamma(alpha) - lx, alpha / beta - ix}};
}
template <class X, class A, class B>
EMBER_HD EMBER_INLINE auto inv_gamma_lpdf(X const& x, A const& alpha, B const& beta) {
  return detail::lpdf([](auto const&... a) { return inv_gamma_lpdf_partials(a...); }, x, alpha, beta);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> beta_lpdf_partials(S const& x, S const& a, S const& b) {
  S const lx = log(x), l1x = log1p(-x), dab = digamma(a + b);
  return {log_gamma(a + b) - log_gamma(a) - log_gamma(b) + (a - S(1)) * lx + (b - S(1)) * l1x,
          {(a - S(1)) / x - (b - S(1)) / (S(1) - x), dab - digamma(a) + lx, dab - digamma(b) + l1x}};
}
template <class X, class A, class B>
EMBER_HD EMBER_INLINE auto beta_lpdf(X const& x, A const& a, B const& b) {
  return detail::lpdf([](auto const&... p) { return beta_lpdf_partials(p...); }, x, a, b);
}

template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> weibull_lpdf_partials(S const& x, S const& k, S const& lambda) {
  S const lr = log(x / lambda), p = exp(k * lr);
  return {log(k) - log(lambda) + (k - S(1)) * lr - p,
          {((k - S(1)) - k * p) / x, S(1) / k + lr - p * lr, k * (p - S(1)) / lambda}};
}
template <class X, class K, class L>
EMBER_HD EMBER_INLINE auto weibull_lpdf(X const& x, K const& k, L const& lambda) {
  return detail::lpdf([](auto const&... a) { return weibull_lpdf_partials(a...); }, x, k, lambda);
}

// --- discrete, with a logit or log link (the outcome is data) -----------------------------------

template <class S, class Y>
EMBER_HD EMBER_INLINE lpdf_partials<S, 1> bernoulli_logit_lpmf_partials(Y const& y, S const& eta) {
  S const yy = detail::data<S>(y);
  auto const f = detail::softplus_and_sigmoid(eta);
  return {yy * eta - f.softplus, {yy - f.sigmoid}};
}
template <class Y, class E>
EMBER_HD EMBER_INLINE auto bernoulli_logit_lpmf(Y const& y, E const& eta) {
  return detail::lpdf([&y](auto const& e) { return bernoulli_logit_lpmf_partials(y, e); }, eta);
}

template <class S, class K, class N>
EMBER_HD EMBER_INLINE lpdf_partials<S, 1> binomial_logit_lpmf_partials(K const& k, N const& n, S const& eta) {
  using T = typename scalar_traits<S>::element_type;
  double const kk = double(k), nn = double(n);
  T const log_choose = T(log_gamma(nn + 1) - log_gamma(kk + 1) - log_gamma(nn - kk + 1));  // lgamma writes signgam: a race
  S const ks = detail::data<S>(k), ns = detail::data<S>(n);
  auto const f = detail::softplus_and_sigmoid(eta);
  return {S(log_choose) + ks * eta - ns * f.softplus, {ks - ns * f.sigmoid}};
}
template <class K, class N, class E>
EMBER_HD EMBER_INLINE auto binomial_logit_lpmf(K const& k, N const& n, E const& eta) {
  return detail::lpdf([&k, &n](auto const& e) { return binomial_logit_lpmf_partials(k, n, e); }, eta);
}

template <class S, class Y>
EMBER_HD EMBER_INLINE lpdf_partials<S, 1> poisson_log_lpmf_partials(Y const& y, S const& eta) {
  using T = typename scalar_traits<S>::element_type;
  S const yy = detail::data<S>(y), rate = exp(eta);
  return {yy * eta - rate - S(T(log_gamma(double(y) + 1))), {yy - rate}};
}
template <class Y, class E>
EMBER_HD EMBER_INLINE auto poisson_log_lpmf(Y const& y, E const& eta) {
  return detail::lpdf([&y](auto const& e) { return poisson_log_lpmf_partials(y, e); }, eta);
}

template <class S, class Y>
EMBER_HD EMBER_INLINE lpdf_partials<S, 2> neg_binomial_2_log_lpmf_partials(Y const& y, S const& eta, S const& phi) {
  // log(μ + φ) = η + log(1 + φ/μ) and μ/(μ + φ) = σ(η − log φ): no e^η that overflows for large η.
  S const yy = detail::data<S>(y), lphi = log(phi), lmp = eta + softplus(lphi - eta);
  S const share = sigmoid(eta - lphi), r = exp(-lmp);  // μ/(μ + φ), 1/(μ + φ)
  S const value = yy * eta + phi * lphi - (yy + phi) * lmp + log_gamma(yy + phi) - log_gamma(phi) - log_gamma(yy + S(1));
  return {value, {yy - (yy + phi) * share, lphi + S(1) - lmp - (yy + phi) * r + digamma(yy + phi) - digamma(phi)}};
}
template <class Y, class E, class F>
EMBER_HD EMBER_INLINE auto neg_binomial_2_log_lpmf(Y const& y, E const& eta, F const& phi) {
  return detail::lpdf([&y](auto const& e, auto const& f) { return neg_binomial_2_log_lpmf_partials(y, e, f); }, eta, phi);
}

/// uniform(x | a, b) = −log(b − a) for a < x < b, −∞ outside (so a sampler never leaves the
/// interval; a `bounded(a, b)` parameter never does); ∂a = 1/(b − a), ∂b = −1/(b − a), ∂x = 0.
template <class S>
EMBER_HD EMBER_INLINE lpdf_partials<S, 3> uniform_lpdf_partials(S const& x, S const& a, S const& b) {
  S const inv = S(1) / (b - a);
  S const outside = S(element_t<S>(-HUGE_VAL));
  return {select(x > a, select(x < b, log(inv), outside), outside), {S(0), inv, -inv}};
}
template <class X, class A, class B>
EMBER_HD EMBER_INLINE auto uniform_lpdf(X const& x, A const& a, B const& b) {
  return detail::lpdf([](auto const&... v) { return uniform_lpdf_partials(v...); }, x, a, b);
}

namespace detail {
// log c_K(η), the LKJ normalising constant (Lewandowski, Kurowicka & Joe 2009, J. Multivariate
// Anal. 100, section 3.2): Σ_{k=1}^{K−1} [(2η − 2 + K − k)(K − k) log 2 + (K − k) log B(b_k, b_k)],
// b_k = η + (K − k − 1)/2. K = 2 gives 2^{2η−1} B(η, η), K = 3 and η = 1 the volume π²/2 of the
// 3×3 correlation matrices.
EMBER_HD inline double lkj_log_normaliser(int K, double eta) {
  double c = 0;
  for (int k = 1; k < K; ++k) {
    double const b = eta + 0.5 * double(K - k - 1);
    c += (2 * eta - 2 + double(K - k)) * double(K - k) * log_two + double(K - k) * (2 * log_gamma(b) - log_gamma(2 * b));
  }
  return c;
}
// The coefficient of log L_ii in lkj_corr_cholesky_lpdf: K − i − 1 from Ω = L Lᵀ's Jacobian, 2(η − 1)
// from det Ω^{η−1} = Π L_ii^{2(η−1)}.
EMBER_HD inline double lkj_diagonal_power(int K, int i, double eta) { return double(K - i - 1) + 2 * (eta - 1); }
// The backward part of lkj_corr_cholesky_lpdf: the partials of L_11 … L_{K−1,K−1}, whose adjoints
// sit K + 1 apart in the factor's block.
template <class S, int K>
struct lkj_back {
  S* adj;
  S d[K - 1];
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    for (int i = 1; i < K; ++i) impl::accumulate(adj[i * (K + 1)], impl::seed_times(s, d[i - 1]));
  }
};
}  // namespace detail

/// LKJ(η) on correlation matrices Ω = L Lᵀ, as a density of the Cholesky factor L (a parameter
/// `param<"L", K, K>(cholesky_corr)`): Σᵢ₌₁^{K−1} (K − i − 1 + 2(η − 1)) log Lᵢᵢ − log c_K(η), Stan's
/// `lkj_corr_cholesky_lpdf`, normalised. η > 0 is data (a number), not a parameter.
template <class S, int N, int K>
EMBER_HD EMBER_INLINE S lkj_corr_cholesky_lpdf(matrix_view<block_values<S, N>, K, K> const& L, double eta) {
  static_assert(K >= 2, "ember::lkj_corr_cholesky_lpdf: L must be at least 2x2");
  S v = S(element_t<S>(-detail::lkj_log_normaliser(K, eta)));
  for (int i = 1; i < K; ++i) v = v + S(element_t<S>(detail::lkj_diagonal_power(K, i, eta))) * log(L(i, i));
  return v;
}
template <class S, int N, int K>
EMBER_HD EMBER_INLINE ad::expr<S, detail::lkj_back<S, K>> lkj_corr_cholesky_lpdf(matrix_view<block_vars<S, N>, K, K> const& L,
                                                                                 double eta) {
  static_assert(K >= 2, "ember::lkj_corr_cholesky_lpdf: L must be at least 2x2");
  ad::expr<S, detail::lkj_back<S, K>> e;
  e.v = S(element_t<S>(-detail::lkj_log_normaliser(K, eta)));
  e.b.adj = L.b.g;
  for (int i = 1; i < K; ++i) {
    S const c = S(element_t<S>(detail::lkj_diagonal_power(K, i, eta))), l = L.b.x[i * (K + 1)];
    e.v = e.v + c * log(l);
    e.b.d[i - 1] = c / l;
  }
  return e;
}

namespace detail {
// Category y of n (0 … n − 1), refused on the host outside that range or not a whole number
// (categories count from 0: Stan's from 1 would shift every one and read past the last).
template <class Y>
EMBER_HD EMBER_INLINE int category(Y const& y, int n) {
  int const c = int(y);
#if !defined(__CUDA_ARCH__)
  if (!(c >= 0 && c < n && double(c) == double(y)))
  {
    char b[160];
    std::snprintf(b, sizeof b, "ember: category %g is not one of 0 ... %d (categorical_logit_lpmf, ordered_logistic_lpmf count categories from 0)",
                  double(y), n - 1);
    throw std::invalid_argument(b);
  }
#endif
  return c;
}
}  // namespace detail

/// categorical_logit(y | η) = η_y − log Σₖ e^{ηₖ} for a category y ∈ {0, …, K − 1} (data) and K
/// logits; ∂η_k = [k = y] − softmax(η)ₖ. `categorical_logit_lpmf(y, m[eta])` takes a vector
/// parameter or a `let<K>`.
template <class S, class Y, class... E>
EMBER_HD EMBER_INLINE lpdf_partials<S, sizeof...(E)> categorical_logit_lpmf_partials(Y const& y, E const&... eta) {
  constexpr int K = int(sizeof...(E));
  S const e[K] = {eta...};
  int const c = detail::category(y, K);
  S m = e[0];  // log Σ e^{ηₖ} shifted by the largest, its K exponentials kept for the softmax
  for (int k = 1; k < K; ++k) m = max(m, e[k]);
  S ex[K], sum = S(0);
  for (int k = 0; k < K; ++k) sum = sum + (ex[k] = exp(e[k] - m));
  S const inv = S(1) / sum;
  lpdf_partials<S, K> p;
  p.value = e[c] - m - log(sum);
  for (int k = 0; k < K; ++k) p.d[k] = (k == c ? S(1) : S(0)) - ex[k] * inv;
  return p;
}
template <class Y, class V>
  requires requires { V::size(); }
EMBER_HD EMBER_INLINE auto categorical_logit_lpmf(Y const& y, V const& eta) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return detail::lpdf(
        [&y](auto const&... e) {
          using S = std::common_type_t<std::remove_cvref_t<decltype(e)>...>;
          return categorical_logit_lpmf_partials<S>(y, e...);
        },
        eta[int(I)]...);
  }(std::make_index_sequence<std::size_t(V::size())>{});
}

/// ordered_logistic(y | η, c) for a category y ∈ {0, …, K} (data) and K increasing cutpoints c (an
/// `ordered` parameter): P(y = 0) = 1 − σ(η − c₀), P(y = k) = σ(η − c_{k−1}) − σ(η − c_k),
/// P(y = K) = σ(η − c_{K−1}); Stan's ordered_logistic with categories from 0.
template <class S, class Y, class... C>
EMBER_HD EMBER_INLINE lpdf_partials<S, 1 + sizeof...(C)> ordered_logistic_lpmf_partials(Y const& y, S const& eta, C const&... cut) {
  constexpr int K = int(sizeof...(C));
  S const c[K] = {cut...};
  int const k = detail::category(y, K + 1);
  lpdf_partials<S, K + 1> p;
  for (auto& d : p.d) d = S(0);
  if (k == 0) {  // log(1 − σ(η − c₀)) = log σ(c₀ − η)
    S const a = eta - c[0], s = sigmoid(a);
    p.value = -softplus(a);
    p.d[0] = -s;
    p.d[1] = s;
  } else if (k == K) {  // log σ(η − c_{K−1})
    S const a = eta - c[K - 1], t = sigmoid(-a);
    p.value = -softplus(-a);
    p.d[0] = t;
    p.d[K] = -t;
  } else {  // log(σ(a) − σ(b)), a = η − c_{k−1} > b = η − c_k: log σ(a) + log σ(−b) + log(1 − e^{b − a})
    S const a = eta - c[k - 1], b = eta - c[k];
    S const sa = sigmoid(a), sb = sigmoid(b), e = exp(b - a);
    p.value = -softplus(-a) - softplus(b) + log1p(-e);
    // d/da log(σ(a) − σ(b)) = 1 − σ(a) − 1/(e^{a−b} − 1); d/db = −σ(b) − 1/(e^{a−b} − 1)... written
    // through r = e^{b−a}/(1 − e^{b−a}) = 1/(e^{a−b} − 1).
    S const r = e / (S(1) - e);
    S const da = S(1) - sa + r, db = -sb - r;
    p.d[0] = da + db;
    p.d[k] = -da;
    p.d[k + 1] = -db;
  }
  return p;
}
template <class Y, class E, class V>
  requires requires { V::size(); }
EMBER_HD EMBER_INLINE auto ordered_logistic_lpmf(Y const& y, E const& eta, V const& cut) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return detail::lpdf(
        [&y](auto const& e, auto const&... c) {
          using S = std::common_type_t<std::remove_cvref_t<decltype(e)>, std::remove_cvref_t<decltype(c)>...>;
          return ordered_logistic_lpmf_partials<S>(y, S(e), c...);
        },
        eta, cut[int(I)]...);
  }(std::make_index_sequence<std::size_t(V::size())>{});
}

namespace detail {
// Entry t of a K×K lower triangle, row by row: (i, j) with t = i(i + 1)/2 + j.
constexpr int tri_row(int t) {
  int i = 0;
  while ((i + 1) * (i + 2) / 2 <= t) ++i;
  return i;
}
constexpr int tri_col(int t) { return t - tri_row(t) * (tri_row(t) + 1) / 2; }
}  // namespace detail

/// multi_normal_cholesky(y | μ, L) = −½|z|² − Σᵢ log Lᵢᵢ − (K/2) log 2π, z = L⁻¹(y − μ), for a
/// data vector y (K values: a view's row), a mean μ (a vector parameter, a `let<K>`, or data in a
/// block) and the lower Cholesky factor L of the covariance (a K×K matrix parameter or
/// `as_matrix<K, K>(let)`; only its lower triangle is read). With w = L⁻ᵀz: ∂μ = w,
/// ∂Lᵢⱼ = wᵢzⱼ − [i = j]/Lᵢᵢ.
template <class S, int K, class Y, class... A>
EMBER_HD EMBER_INLINE lpdf_partials<S, int(sizeof...(A))> multi_normal_cholesky_lpdf_partials(Y const& y, A const&... a) {
  static_assert(int(sizeof...(A)) == K + K * (K + 1) / 2, "ember::multi_normal_cholesky_lpdf: K means and K(K + 1)/2 factor entries");
  using T = element_t<S>;
  S const v[] = {a...};
  S const* mu = v;
  S const* L = v + K;  // L(i, j) = L[i(i + 1)/2 + j]
  S z[K], w[K];
  lpdf_partials<S, int(sizeof...(A))> p;
  S q = S(0), logdet = S(0);
  for (int i = 0; i < K; ++i) {
    S r = S(T(y[i])) - mu[i];
    for (int j = 0; j < i; ++j) r = r - L[i * (i + 1) / 2 + j] * z[j];
    z[i] = r / L[i * (i + 1) / 2 + i];
    q = q + z[i] * z[i];
    logdet = logdet + log(L[i * (i + 1) / 2 + i]);
  }
  for (int i = K - 1; i >= 0; --i) {
    S r = z[i];
    for (int j = i + 1; j < K; ++j) r = r - L[j * (j + 1) / 2 + i] * w[j];
    w[i] = r / L[i * (i + 1) / 2 + i];
  }
  p.value = S(T(-0.5)) * q - logdet - S(T(double(K) * detail::half_log_two_pi));
  for (int i = 0; i < K; ++i) {
    p.d[i] = w[i];
    for (int j = 0; j <= i; ++j) p.d[K + i * (i + 1) / 2 + j] = w[i] * z[j] - (i == j ? S(1) / L[i * (i + 1) / 2 + i] : S(0));
  }
  return p;
}
template <class Y, class Mu, class Lm>
  requires requires { Mu::size(); Lm::rows; }
EMBER_HD EMBER_INLINE auto multi_normal_cholesky_lpdf(Y const& y, Mu const& mu, Lm const& L) {
  constexpr int K = Mu::size();
  static_assert(Lm::rows == K && Lm::cols == K, "ember::multi_normal_cholesky_lpdf: L must be K x K for a mean of K");
  if constexpr (requires { y.cols; }) detail::require_row_length(y.cols, K);
  return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
    return detail::lpdf(
        [&y](auto const&... e) {
          using S = std::common_type_t<std::remove_cvref_t<decltype(e)>...>;
          return multi_normal_cholesky_lpdf_partials<S, K>(y, e...);
        },
        mu[int(I)]..., L(detail::tri_row(int(J)), detail::tri_col(int(J)))...);
  }(std::make_index_sequence<std::size_t(K)>{}, std::make_index_sequence<std::size_t(K * (K + 1) / 2)>{});
}

}  // namespace ember
