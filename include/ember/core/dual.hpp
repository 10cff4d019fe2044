#pragma once
/// \file
/// `dual<T, N>`: a forward-mode dual number carrying a value and N partial derivatives,
/// a + Σⱼ aⱼ εⱼ with εᵢ εⱼ = 0. Evaluating f on duals seeded with xᵢ + εᵢ gives f(x) and
/// ∂f/∂x₁ … ∂f/∂x_N in one pass: every operation applies the chain rule to all N partials.
///
/// `T` is any scalar ember computes with (`float`, `double`, a SIMD batch, even another dual):
/// arithmetic goes through T's own operators, the math of the value through the unqualified
/// primitives of core/math.hpp (ADL finds `xsimd::exp` for a batch), comparisons give
/// `mask_t<T>`. Trivially copyable, no std:: containers, no exceptions: usable in CUDA device
/// code. Models a scalar type: `scalar_traits<dual<T, N>>` gives element type, mask and width.
///
/// The primitives below (exp, log, log1p, log1p_unit, expm1, sqrt, pow, sin, cos, tanh, sigmoid,
/// abs, select) are found by ADL because `dual` lives in namespace ember, so
/// `using std::sin; sin(x)` works on a dual; softplus, min, max and log_sum_exp in core/math.hpp
/// are built on them.

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>

#include <concepts>
#include <type_traits>

namespace ember {

template <class T, int N>
struct dual;

namespace detail {
template <class T>
inline constexpr bool is_dual = false;
template <class T, int N>
inline constexpr bool is_dual<dual<T, N>> = true;

// A constant that mixes with dual<T, N> without becoming a dual: any arithmetic type, or T itself.
template <class U, class T>
concept dual_constant = (std::is_arithmetic_v<U> || std::same_as<U, T>) && !is_dual<U>;
}  // namespace detail

template <class T, int N>
struct dual {
  static_assert(N > 0, "ember::dual needs at least one partial derivative");
  using value_type = T;
  static constexpr int partials = N;

  T val;   ///< a
  T d[N];  ///< ∂a/∂xⱼ for the N seeded inputs

  dual() = default;

  /// A constant: value c, every partial 0. Implicit, so `dual s = 0.f;` and `S(c)` work.
  template <class U>
    requires std::convertible_to<U const&, T> && (!detail::is_dual<U>)
  EMBER_HD constexpr dual(U const& c) : val(T(c)) {
    for (int j = 0; j < N; ++j) d[j] = T(0);
  }

  /// Never converts to its value type: that would drop the partials (a wrong gradient, silently).
  /// It exists so that `std::exp(x)` on a dual (which only a float overload could take) stops
  /// with one sentence instead of a page of candidates.
  template <class U>
    requires std::same_as<U, T> && std::floating_point<U>
  EMBER_HD operator U() const {
    static_assert(!std::same_as<U, T>,
                  "ember: a dual number (how custom_energy differentiates) was passed where a plain number is "
                  "expected, which would drop its derivatives: call math unqualified, exp(x[0]) or ember::exp(x[0]), "
                  "not std::exp, and read .val only where no gradient should flow");
    return val;
  }

  /// The input xᵢ = v seeded with ∂xᵢ/∂xⱼ = [i = j] (no partial set when i is outside [0, N)).
  EMBER_HD static constexpr dual variable(T const& v, int i) {
    dual r;
    r.val = v;
    for (int j = 0; j < N; ++j) r.d[j] = T(j == i ? 1 : 0);
    return r;
  }

  // Arithmetic: (a, a') ∘ (b, b') by the chain rule. Hidden friends, found by ADL only.
  EMBER_HD friend constexpr dual operator+(dual const& a) { return a; }
  EMBER_HD friend constexpr dual operator-(dual const& a) {
    dual r;
    r.val = -a.val;
    for (int j = 0; j < N; ++j) r.d[j] = -a.d[j];
    return r;
  }
  EMBER_HD friend constexpr dual operator+(dual const& a, dual const& b) {
    dual r;
    r.val = a.val + b.val;
    for (int j = 0; j < N; ++j) r.d[j] = a.d[j] + b.d[j];
    return r;
  }
  EMBER_HD friend constexpr dual operator-(dual const& a, dual const& b) {
    dual r;
    r.val = a.val - b.val;
    for (int j = 0; j < N; ++j) r.d[j] = a.d[j] - b.d[j];
    return r;
  }
  /// (ab)' = a'b + ab'.
  EMBER_HD friend constexpr dual operator*(dual const& a, dual const& b) {
    dual r;
    r.val = a.val * b.val;
    for (int j = 0; j < N; ++j) r.d[j] = a.d[j] * b.val + a.val * b.d[j];
    return r;
  }
  /// (a/b)' = (a' − (a/b) b') / b: one division, then multiplies.
  EMBER_HD friend constexpr dual operator/(dual const& a, dual const& b) {
    T inv = T(1) / b.val;
    dual r;
    r.val = a.val * inv;
    for (int j = 0; j < N; ++j) r.d[j] = (a.d[j] - r.val * b.d[j]) * inv;
    return r;
  }

  // With a constant c (no partials): cheaper than promoting c to a dual of zeros, whose
  // multiplications the compiler may not drop (0 · x is not 0 for x = ∞ or NaN).
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator+(dual a, U const& c) {
    a.val = a.val + T(c);
    return a;
  }
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator+(U const& c, dual a) {
    a.val = T(c) + a.val;
    return a;
  }
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator-(dual a, U const& c) {
    a.val = a.val - T(c);
    return a;
  }
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator-(U const& c, dual const& a) {
    dual r;
    r.val = T(c) - a.val;
    for (int j = 0; j < N; ++j) r.d[j] = -a.d[j];
    return r;
  }
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator*(dual const& a, U const& c) {
    T k = T(c);
    dual r;
    r.val = a.val * k;
    for (int j = 0; j < N; ++j) r.d[j] = a.d[j] * k;
    return r;
  }
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator*(U const& c, dual const& a) {
    T k = T(c);
    dual r;
    r.val = k * a.val;
    for (int j = 0; j < N; ++j) r.d[j] = k * a.d[j];
    return r;
  }
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator/(dual const& a, U const& c) {
    T inv = T(1) / T(c);
    dual r;
    r.val = a.val * inv;
    for (int j = 0; j < N; ++j) r.d[j] = a.d[j] * inv;
    return r;
  }
  /// (c/b)' = −(c/b) b' / b.
  template <detail::dual_constant<T> U>
  EMBER_HD friend constexpr dual operator/(U const& c, dual const& b) {
    T inv = T(1) / b.val;
    dual r;
    r.val = T(c) * inv;
    T k = -r.val * inv;
    for (int j = 0; j < N; ++j) r.d[j] = k * b.d[j];
    return r;
  }

  EMBER_HD constexpr dual& operator+=(dual const& b) { return *this = *this + b; }
  EMBER_HD constexpr dual& operator-=(dual const& b) { return *this = *this - b; }
  EMBER_HD constexpr dual& operator*=(dual const& b) { return *this = *this * b; }
  EMBER_HD constexpr dual& operator/=(dual const& b) { return *this = *this / b; }

  // Comparisons look at the value only and give T's mask (bool, or a SIMD lane mask).
#define EMBER_DUAL_COMPARE(op)                                                 \
  EMBER_HD friend constexpr auto operator op(dual const& a, dual const& b) {   \
    return a.val op b.val;                                                     \
  }                                                                            \
  template <detail::dual_constant<T> U>                                        \
  EMBER_HD friend constexpr auto operator op(dual const& a, U const& c) {      \
    return a.val op T(c);                                                      \
  }                                                                            \
  template <detail::dual_constant<T> U>                                        \
  EMBER_HD friend constexpr auto operator op(U const& c, dual const& a) {      \
    return T(c) op a.val;                                                      \
  }
  EMBER_DUAL_COMPARE(<)
  EMBER_DUAL_COMPARE(<=)
  EMBER_DUAL_COMPARE(>)
  EMBER_DUAL_COMPARE(>=)
  EMBER_DUAL_COMPARE(==)
  EMBER_DUAL_COMPARE(!=)
#undef EMBER_DUAL_COMPARE
};

/// A dual number is a scalar of the same element type, mask and width as its value type.
template <class T, int N>
struct scalar_traits<dual<T, N>> {
  using element_type = element_t<T>;
  using mask_type = mask_t<T>;
  static constexpr int width = scalar_traits<T>::width;
};

namespace detail {
// f(a) for f with value fa and derivative dfa at a.val: (fa, dfa · a').
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> chain(dual<T, N> const& a, T const& fa, T const& dfa) {
  dual<T, N> r;
  r.val = fa;
  for (int j = 0; j < N; ++j) r.d[j] = dfa * a.d[j];
  return r;
}
}  // namespace detail

/// `m ? a : b` lane by lane on the value and every partial; `m` is T's mask (`mask_t<T>`).
/// For a `bool` mask (T = float or double) core/math.hpp's `select` already does this.
template <class T, int N>
  requires(!std::same_as<mask_t<T>, bool>)
EMBER_HD EMBER_INLINE dual<T, N> select(mask_t<T> const& m, dual<T, N> const& a, dual<T, N> const& b) {
  dual<T, N> r;
  r.val = select(m, a.val, b.val);
  for (int j = 0; j < N; ++j) r.d[j] = select(m, a.d[j], b.d[j]);
  return r;
}

/// (eᵃ)' = eᵃ a'.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> exp(dual<T, N> const& a) {
  T e = exp(a.val);
  return detail::chain(a, e, e);
}
/// (log a)' = a' / a.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> log(dual<T, N> const& a) {
  return detail::chain(a, T(log(a.val)), T(T(1) / a.val));
}
/// (log(1 + a))' = a' / (1 + a).
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> log1p(dual<T, N> const& a) {
  return detail::chain(a, T(log1p(a.val)), T(T(1) / (T(1) + a.val)));
}
/// log1p_unit (core/math.hpp) of the value, so a dual of floats gives the bits the float gives;
/// the slope is ln(1 + a)'s, 1/(1 + a).
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> log1p_unit(dual<T, N> const& a) {
  return detail::chain(a, T(log1p_unit(a.val)), T(T(1) / (T(1) + a.val)));
}
/// (eᵃ − 1)' = eᵃ a' = (expm1(a) + 1) a'.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> expm1(dual<T, N> const& a) {
  T e = expm1(a.val);
  return detail::chain(a, e, T(e + T(1)));
}
/// (√a)' = a' / (2√a): infinite at a = 0, as the derivative is.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> sqrt(dual<T, N> const& a) {
  T s = sqrt(a.val);
  return detail::chain(a, s, T(T(0.5) / s));
}
/// (sin a)' = cos a · a'.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> sin(dual<T, N> const& a) {
  return detail::chain(a, T(sin(a.val)), T(cos(a.val)));
}
/// (cos a)' = −sin a · a'.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> cos(dual<T, N> const& a) {
  return detail::chain(a, T(cos(a.val)), T(-sin(a.val)));
}
/// (tanh a)' = (1 − tanh² a) a'.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> tanh(dual<T, N> const& a) {
  T t = tanh(a.val);
  return detail::chain(a, t, T(T(1) - t * t));
}
/// (erf a)' = (2/√π) e^{−a²} a'.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> erf(dual<T, N> const& a) {
  return detail::chain(a, T(erf(a.val)), T(T(1.1283791670955125738961589031215452) * exp(-a.val * a.val)));
}
/// σ(a)' = σ(a) (1 − σ(a)) a'. Overrides core/math.hpp's generic 1 / (1 + e^{−a}), whose chain
/// rule gives ∞ · 0 = NaN once e^{−a} overflows (a < −88 in float).
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> sigmoid(dual<T, N> const& a) {
  T s = sigmoid(a.val);
  return detail::chain(a, s, T(s * (T(1) - s)));
}
/// |a|' = sign(a) a', with sign(0) = +1 (a subgradient).
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> abs(dual<T, N> const& a) {
  auto neg = a.val < T(0);
  dual<T, N> r;
  r.val = select(neg, T(-a.val), a.val);
  for (int j = 0; j < N; ++j) r.d[j] = select(neg, T(-a.d[j]), a.d[j]);
  return r;
}
/// (aᵇ)' = aᵇ (b' log a + b a'/a) for a > 0.
template <class T, int N>
EMBER_HD EMBER_INLINE dual<T, N> pow(dual<T, N> const& a, dual<T, N> const& b) {
  T p = pow(a.val, b.val);
  T la = log(a.val);
  T k = p * b.val / a.val;
  dual<T, N> r;
  r.val = p;
  for (int j = 0; j < N; ++j) r.d[j] = k * a.d[j] + p * la * b.d[j];
  return r;
}
/// (aᶜ)' = c aᶜ⁻¹ a' for a constant exponent; exact at a = 0 for c ≥ 1.
template <class T, int N, detail::dual_constant<T> U>
EMBER_HD EMBER_INLINE dual<T, N> pow(dual<T, N> const& a, U const& c) {
  T e = T(c);
  return detail::chain(a, T(pow(a.val, e)), T(e * pow(a.val, T(e - T(1)))));
}
/// (cᵇ)' = cᵇ log c · b' for a constant base c > 0.
template <class T, int N, detail::dual_constant<T> U>
EMBER_HD EMBER_INLINE dual<T, N> pow(U const& c, dual<T, N> const& b) {
  T base = T(c);
  T p = pow(base, b.val);
  return detail::chain(b, p, T(p * log(base)));
}

}  // namespace ember
