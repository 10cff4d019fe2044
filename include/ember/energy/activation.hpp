#pragma once
/// \file
/// Activation functions of neural energies (`ember::mlp`, energy/mlp.hpp), in namespace
/// `ember::nn`: `silu` (Swish), `relu`, `leaky_relu`, `elu`, `gelu` (exact, through erf),
/// `gelu_tanh` (the tanh approximation), `softplus`, `tanh` and `sigmoid`, each as PyTorch's
/// `torch.nn` module of the same name computes it with its default arguments.
///
/// An activation is a small value (`leaky_relu` and `elu` carry their parameter) with
///  - `value(a)`: φ(a), and
///  - `value_and_slope(a, d)`: φ(a), writing φ′(a) into `d` from the same transcendentals,
/// for any scalar type `S` of ember (one chain, a SIMD batch of chains, a dual number), with no
/// branch on a value: a lane-wise choice is a `select`. `any` is one of them chosen at run time
/// (`nn::any::named("relu")`), for code that takes a network's shape from its weights. At a kink (x = 0) the slope is PyTorch's:
/// 0 for `relu`, the negative slope for `leaky_relu`, α for `elu`. A NaN input gives NaN.

#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/math.hpp>

#include <cmath>
#include <concepts>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
// The calls below are qualified (a member named tanh hides the function), so every overload they
// may need is declared first: batches' here, duals' above.
#if !defined(__CUDACC__)
#include <ember/core/simd.hpp>
#endif

namespace ember::nn {

/// x·σ(x) (SiLU, Swish); φ′ = σ(x)(1 + x(1 − σ(x))).
struct silu {
  static constexpr char const* name = "silu";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return a * ember::sigmoid(a);
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    S const s = ember::sigmoid(a);
    d = s * (detail::data_as<S>(1) + a * (detail::data_as<S>(1) - s));
    return a * s;
  }
};

/// max(x, 0); φ′ = 1 for x > 0, else 0.
struct relu {
  static constexpr char const* name = "relu";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return ember::max(a, detail::data_as<S>(0));
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    d = ember::select(a > detail::data_as<S>(0), detail::data_as<S>(1), detail::data_as<S>(0));
    return ember::max(a, detail::data_as<S>(0));  // NaN stays NaN (a select on a > 0 would give 0)
  }
};

/// x for x > 0, else slope·x (PyTorch's negative_slope, default 0.01).
struct leaky_relu {
  static constexpr char const* name = "leaky_relu";
  double negative_slope = 0.01;
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return ember::select(a > detail::data_as<S>(0), a, detail::data_as<S>(negative_slope) * a);
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    auto const pos = a > detail::data_as<S>(0);
    S const k = detail::data_as<S>(negative_slope);
    d = ember::select(pos, detail::data_as<S>(1), k);
    return ember::select(pos, a, k * a);
  }
};

/// x for x > 0, else α(eˣ − 1) (PyTorch's alpha, default 1); φ′ = 1, else αeˣ.
struct elu {
  static constexpr char const* name = "elu";
  double alpha = 1;
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return ember::select(a > detail::data_as<S>(0), a, detail::data_as<S>(alpha) * ember::expm1(a));
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    auto const pos = a > detail::data_as<S>(0);
    S const em1 = detail::data_as<S>(alpha) * ember::expm1(a);
    d = ember::select(pos, detail::data_as<S>(1), em1 + detail::data_as<S>(alpha));
    return ember::select(pos, a, em1);
  }
};

/// x·Φ(x), Φ the standard normal distribution function, through erf (PyTorch's GELU());
/// φ′ = Φ(x) + x·ϕ(x).
struct gelu {
  static constexpr char const* name = "gelu";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return a * cdf(a);
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    S const c = cdf(a);
    // ϕ(x) = e^{−x²/2} / √(2π)
    d = c + a * detail::data_as<S>(0.39894228040143267793994605993438) * ember::exp(detail::data_as<S>(-0.5) * a * a);
    return a * c;
  }

 private:
  template <class S>
  EMBER_HD EMBER_INLINE static S cdf(S const& a) {
    return detail::data_as<S>(0.5) * (detail::data_as<S>(1) + ember::erf(a * detail::data_as<S>(0.70710678118654752440084436210485)));
  }
};

/// ½x(1 + tanh(√(2/π)(x + 0.044715x³))) (PyTorch's GELU(approximate='tanh')).
struct gelu_tanh {
  static constexpr char const* name = "gelu_tanh";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return detail::data_as<S>(0.5) * a * (detail::data_as<S>(1) + ember::tanh(inner(a)));
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    S const t = ember::tanh(inner(a));
    S const half = detail::data_as<S>(0.5);
    S const du = detail::data_as<S>(k0) * (detail::data_as<S>(1) + detail::data_as<S>(3 * k1) * a * a);
    d = half * (detail::data_as<S>(1) + t) + half * a * (detail::data_as<S>(1) - t * t) * du;
    return half * a * (detail::data_as<S>(1) + t);
  }

 private:
  static constexpr double k0 = 0.79788456080286535587989211986876;  // √(2/π)
  static constexpr double k1 = 0.044715;
  template <class S>
  EMBER_HD EMBER_INLINE static S inner(S const& a) {
    return detail::data_as<S>(k0) * (a + detail::data_as<S>(k1) * a * a * a);
  }
};

/// log(1 + eˣ) (PyTorch's Softplus(beta=1), without its switch to x above 20, which differs by
/// at most log1p(e⁻²⁰) ≈ 2·10⁻⁹); φ′ = σ(x), both from one exponential.
struct softplus {
  static constexpr char const* name = "softplus";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return ember::softplus(a);
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    S const e = ember::exp(-ember::abs(a));
    S const inv = detail::data_as<S>(1) / (detail::data_as<S>(1) + e);
    d = ember::select(a >= detail::data_as<S>(0), inv, e * inv);
    return ember::max(a, detail::data_as<S>(0)) + ember::log1p_unit(e);
  }
};

/// tanh x; φ′ = 1 − tanh² x.
struct tanh {
  static constexpr char const* name = "tanh";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return ember::tanh(a);
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    S const t = ember::tanh(a);
    d = detail::data_as<S>(1) - t * t;
    return t;
  }
};

/// 1/(1 + e⁻ˣ), from e^{−|x|} so that neither side overflows; φ′ = σ(1 − σ).
struct sigmoid {
  static constexpr char const* name = "sigmoid";
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    S d;
    return value_and_slope(a, d);
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    S const e = ember::exp(-ember::abs(a));
    S const inv = detail::data_as<S>(1) / (detail::data_as<S>(1) + e);
    S const s = ember::select(a >= detail::data_as<S>(0), inv, e * inv);
    d = s * (detail::data_as<S>(1) - s);
    return s;
  }
};

/// What a network needs of an activation `A` at value type `T`: `value(a)` and `value_and_slope(a, d)`.
template <class A, class T>
concept activation_for = requires(A const& a, T x, T& d) {
  { a.value(x) } -> std::convertible_to<T>;
  { a.value_and_slope(x, d) } -> std::convertible_to<T>;
};

/// A layer's activations in place, out[k] = φ(out[k]) for k < n, keeping φ′ in slope[k] when
/// `slopes`; an activation with `visit` (`any`) chooses once for the layer, not once a unit.
template <bool slopes, class A, class S>
EMBER_HD EMBER_INLINE void activate_layer(A const& act, S* out, S* slope, int n) {
  auto const apply = [&](auto const& phi) {
    if constexpr (slopes) {
      for (int k = 0; k < n; ++k) out[k] = phi.value_and_slope(out[k], slope[k]);
    } else {
      for (int k = 0; k < n; ++k) out[k] = phi.value(out[k]);
    }
  };
  if constexpr (requires { act.visit(apply); })
    act.visit(apply);
  else
    apply(act);
}

/// One of the activations above chosen at run time: `any::named("leaky_relu", 0.2)`, or
/// converted from one (`nn::any a = nn::gelu{};`); default-constructed it is `silu`. Values and
/// slopes are the chosen activation's bit for bit. `value` and `value_and_slope` switch on the kind
/// at every call; a network calls `visit` once a layer instead and runs the layer's loop with the
/// chosen type (bench/results/2026-11-30-mlp-dynamic.md: a switch per unit cost 5–7 %).
struct any {
  static constexpr char const* name = "any";
  enum class kind : int { silu, relu, leaky_relu, elu, gelu, gelu_tanh, softplus, tanh, sigmoid };
  kind k = kind::silu;
  double parameter = 0;  ///< leaky_relu's negative slope, elu's alpha; unused by the others

  constexpr any() = default;
  constexpr any(nn::silu) : k(kind::silu) {}
  constexpr any(nn::relu) : k(kind::relu) {}
  constexpr any(nn::leaky_relu a) : k(kind::leaky_relu), parameter(a.negative_slope) {}
  constexpr any(nn::elu a) : k(kind::elu), parameter(a.alpha) {}
  constexpr any(nn::gelu) : k(kind::gelu) {}
  constexpr any(nn::gelu_tanh) : k(kind::gelu_tanh) {}
  constexpr any(nn::softplus) : k(kind::softplus) {}
  constexpr any(nn::tanh) : k(kind::tanh) {}
  constexpr any(nn::sigmoid) : k(kind::sigmoid) {}

  /// The names, as the activations' `name` members give them.
  static constexpr char const* names = "silu, relu, leaky_relu, elu, gelu, gelu_tanh, softplus, tanh, sigmoid";

  /// By name (`name` of the activations above); `parameter` is leaky_relu's negative slope
  /// (default 0.01) or elu's alpha (default 1), and must be left out for the others. Throws
  /// std::invalid_argument naming the names it knows.
  static any named(std::string_view n, std::optional<double> parameter = std::nullopt) {
    any a;
    if (n == "silu") a = nn::silu{};
    else if (n == "relu") a = nn::relu{};
    else if (n == "leaky_relu") a = nn::leaky_relu{parameter.value_or(0.01)};
    else if (n == "elu") a = nn::elu{parameter.value_or(1.0)};
    else if (n == "gelu") a = nn::gelu{};
    else if (n == "gelu_tanh") a = nn::gelu_tanh{};
    else if (n == "softplus") a = nn::softplus{};
    else if (n == "tanh") a = nn::tanh{};
    else if (n == "sigmoid") a = nn::sigmoid{};
    else throw std::invalid_argument("ember::nn::any: no activation named '" + std::string(n) + "' (there are " + names + ")");
    if (parameter && a.k != kind::leaky_relu && a.k != kind::elu)
      throw std::invalid_argument("ember::nn::any: " + std::string(n) + " takes no parameter (leaky_relu and elu do)");
    if (parameter && !std::isfinite(*parameter))
      throw std::invalid_argument("ember::nn::any: " + std::string(n) + "'s parameter is not finite");
    return a;
  }

  /// Calls f with the chosen activation.
  template <class F>
  EMBER_HD EMBER_INLINE decltype(auto) visit(F&& f) const {
    switch (k) {
      case kind::relu: return f(nn::relu{});
      case kind::leaky_relu: return f(nn::leaky_relu{parameter});
      case kind::elu: return f(nn::elu{parameter});
      case kind::gelu: return f(nn::gelu{});
      case kind::gelu_tanh: return f(nn::gelu_tanh{});
      case kind::softplus: return f(nn::softplus{});
      case kind::tanh: return f(nn::tanh{});
      case kind::sigmoid: return f(nn::sigmoid{});
      case kind::silu: break;
    }
    return f(nn::silu{});
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value(S const& a) const {
    return visit([&](auto const& act) { return act.value(a); });
  }
  template <class S>
  EMBER_HD EMBER_INLINE S value_and_slope(S const& a, S& d) const {
    return visit([&](auto const& act) { return act.value_and_slope(a, d); });
  }
};

}  // namespace ember::nn
