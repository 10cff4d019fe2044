#pragma once
/// \file
/// Constrained parameters: an energy U(x) defined on a constrained set is sampled in an
/// unconstrained y ∈ ℝ^D through a smooth bijection x = f(y), as the energy
///
///     V(y) = U(f(y)) − log |det J_f(y)|,   ∇V(y) = J_f(y)ᵀ ∇U(f(y)) − ∇ log |det J_f(y)|,
///
/// so that y ~ e^{−V} exactly when x = f(y) ~ e^{−U}. The nodes are plain aggregates over the
/// wrapped energy, like the expressions of energy/expression.hpp, and model
/// `DifferentiableEnergy` when the wrapped energy does.
///
/// `constrained_energy` acts coordinate by coordinate (Jacobian diagonal):
///  - free,            x = y,                 log J = 0;
///  - lower bound a,   x = a + eʸ,            log J = y;
///  - upper bound b,   x = b − eʸ,            log J = y;
///  - interval (a, b), x = a + (b − a) σ(y),  log J = log(b − a) − softplus(y) − softplus(−y),
///                     dx/dy = (b − a) σ(y) σ(−y),  d log J/dy = 1 − 2σ(y).
/// Built by `positive(U)`, `interval(U, a, b)` and `constrain(U, lower, upper)` (`positive`,
/// `lower(a)`, `upper(b)`, `bounded(a, b)` and `ordered` are the constraints of ad/params.hpp,
/// which applied to an energy constrain every coordinate).
/// `ordered_energy` maps y to an increasing x: x₁ = y₁, xₖ = xₖ₋₁ + e^{yₖ}, log J = Σ_{k≥2} yₖ
/// (`ordered(U)`).
/// Both give `constrain_point(y)` (draws back to x) and `unconstrain_point(x)` (start states).

#include <ember/core/concepts.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/detail/check.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ember {

/// How `constrained_energy` maps coordinate i.
enum class bound_kind : unsigned char { free, lower, upper, interval };

/// V(y) = U(f(y)) − log|det J_f(y)| for the coordinate-wise f of the file comment.
/// Stores per coordinate its kind, the bounds a, b and b − a (so the loop never subtracts them).
template <class E>
struct constrained_energy {
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  using T = value_type;

  E inner;
  bound_kind kind[dim];
  vec<T, dim> lo, hi, width;
  T log_width_sum;  // Σ log(b − a) over interval coordinates: a constant of log J

  template <class F>
  void for_each_view(F&& f) {
    if constexpr (requires { inner.for_each_view(f); }) inner.for_each_view(f);
  }

  /// x = f(y), for any scalar type: the draws of a run mapped back to the constrained space.
  template <class S>
  EMBER_HD vec<S, dim> constrain_point(vec<S, dim> const& y) const {
    vec<S, dim> x, d, l;
    transform(y, x, d, l);
    return x;
  }

  /// y = f⁻¹(x) on the host, for start states; throws if x is outside the support.
  vec<T, dim> unconstrain_point(vec<T, dim> const& x) const {
    vec<T, dim> y;
    for (int i = 0; i < dim; ++i) {
      double xi = double(x[i]), a = double(lo[i]), b = double(hi[i]);
      bool inside = kind[i] == bound_kind::free || (kind[i] == bound_kind::lower && xi > a) ||
                    (kind[i] == bound_kind::upper && xi < b) || (kind[i] == bound_kind::interval && xi > a && xi < b);
      if (!inside || !std::isfinite(xi))
        throw std::invalid_argument("ember::constrained_energy::unconstrain_point: coordinate " + std::to_string(i) +
                                    " = " + detail::number_g(xi) + " is outside its support");
      switch (kind[i]) {
        case bound_kind::free: y[i] = x[i]; break;
        case bound_kind::lower: y[i] = T(std::log(xi - a)); break;
        case bound_kind::upper: y[i] = T(std::log(b - xi)); break;
        case bound_kind::interval: y[i] = T(std::log(xi - a) - std::log(b - xi)); break;
      }
    }
    return y;
  }

  template <class S>
  EMBER_HD S value(vec<S, dim> const& y) const {
    vec<S, dim> x, d, l;
    S logj = transform(y, x, d, l);
    return inner.value(x) - logj;
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& y, vec<S, dim>& g) const
    requires DifferentiableEnergy<E>
  {
    vec<S, dim> x, dxdy, dlogj;
    S logj = transform(y, x, dxdy, dlogj);
    S u = inner.value_and_grad(x, g);
    for (int i = 0; i < dim; ++i) g[i] = g[i] * dxdy[i] - dlogj[i];
    return u - logj;
  }

 private:
  // x = f(y), dx/dy, d log J/dy per coordinate; returns log J. The kind is the same for every
  // chain of a batch, so these branches never depend on a chain's value.
  template <class S>
  EMBER_HD EMBER_INLINE S transform(vec<S, dim> const& y, vec<S, dim>& x, vec<S, dim>& dxdy, vec<S, dim>& dlogj) const {
    S logj = S(log_width_sum);
    for (int i = 0; i < dim; ++i) {
      if (kind[i] == bound_kind::lower || kind[i] == bound_kind::upper) {
        S e = exp(y[i]);
        bool up = kind[i] == bound_kind::upper;
        x[i] = up ? S(hi[i]) - e : S(lo[i]) + e;
        dxdy[i] = up ? -e : e;
        dlogj[i] = S(T(1));
        logj = logj + y[i];
      } else if (kind[i] == bound_kind::interval) {
        S s = sigmoid(y[i]), t = sigmoid(-y[i]);  // σ(y) and 1 − σ(y) without cancellation
        x[i] = S(lo[i]) + S(width[i]) * s;
        dxdy[i] = S(width[i]) * s * t;
        dlogj[i] = t - s;
        logj = logj - softplus(y[i]) - softplus(-y[i]);
      } else {  // free
        x[i] = y[i];
        dxdy[i] = S(T(1));
        dlogj[i] = S(T(0));
      }
    }
    return logj;
  }
};

/// U on the box lower ≤ x ≤ upper, coordinate by coordinate (an infinite bound means none),
/// sampled through the transforms of the file comment. Throws `std::invalid_argument` for
/// lower ≥ upper or a NaN bound.
template <DifferentiableEnergy E>
constrained_energy<E> constrain(E const& U, vec<typename E::value_type, E::dim> const& lower,
                                vec<typename E::value_type, E::dim> const& upper) {
  using T = typename E::value_type;
  constrained_energy<E> c{U, {}, lower, upper, {}, T(0)};
  double lw = 0;
  for (int i = 0; i < E::dim; ++i) {
    double a = double(lower[i]), b = double(upper[i]);
    if (std::isnan(a) || std::isnan(b) || !(a < b) || a == std::numeric_limits<double>::infinity() ||
        b == -std::numeric_limits<double>::infinity())
      throw std::invalid_argument("ember::constrain: coordinate " + std::to_string(i) + " has bounds (" +
                                  detail::number_g(a) + ", " + detail::number_g(b) + "), need lower < upper");
    bool fa = std::isfinite(a), fb = std::isfinite(b);
    c.kind[i] = fa && fb ? bound_kind::interval : fa ? bound_kind::lower : fb ? bound_kind::upper : bound_kind::free;
    c.width[i] = fa && fb ? T(b - a) : T(1);
    if (fa && fb) lw += std::log(b - a);
  }
  c.log_width_sum = T(lw);
  return c;
}

/// U on a < x < b in every coordinate: x = a + (b − a) σ(y).
template <DifferentiableEnergy E>
constrained_energy<E> interval(E const& U, double a, double b) {
  using T = typename E::value_type;
  return constrain(U, filled<T, E::dim>(T(a)), filled<T, E::dim>(T(b)));
}

/// U on increasing vectors x₁ < x₂ < … < x_D: x₁ = y₁, xₖ = xₖ₋₁ + e^{yₖ}, log J = Σ_{k≥2} yₖ;
/// ∂V/∂yₖ = e^{yₖ} Σ_{m≥k} ∂U/∂xₘ − 1 for k ≥ 2, ∂V/∂y₁ = Σₘ ∂U/∂xₘ. Built by `ordered(U)`.
template <class E>
struct ordered_energy {
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  using T = value_type;

  E inner;

  template <class F>
  void for_each_view(F&& f) {
    if constexpr (requires { inner.for_each_view(f); }) inner.for_each_view(f);
  }

  template <class S>
  EMBER_HD vec<S, dim> constrain_point(vec<S, dim> const& y) const {
    vec<S, dim> x;
    x[0] = y[0];
    for (int k = 1; k < dim; ++k) x[k] = x[k - 1] + exp(y[k]);
    return x;
  }
  /// y = f⁻¹(x); throws unless x is strictly increasing.
  vec<T, dim> unconstrain_point(vec<T, dim> const& x) const {
    vec<T, dim> y;
    y[0] = x[0];
    for (int k = 1; k < dim; ++k) {
      if (!(x[k] > x[k - 1]))
        throw std::invalid_argument("ember::ordered_energy::unconstrain_point: x is not increasing at coordinate " +
                                    std::to_string(k));
      y[k] = T(std::log(double(x[k]) - double(x[k - 1])));
    }
    return y;
  }
  template <class S>
  EMBER_HD S value(vec<S, dim> const& y) const {
    S logj = S(T(0));
    for (int k = 1; k < dim; ++k) logj = logj + y[k];
    return inner.value(constrain_point(y)) - logj;
  }
  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& y, vec<S, dim>& g) const
    requires DifferentiableEnergy<E>
  {
    vec<S, dim> x, e;
    x[0] = y[0];
    S logj = S(T(0));
    for (int k = 1; k < dim; ++k) {
      e[k] = exp(y[k]);
      x[k] = x[k - 1] + e[k];
      logj = logj + y[k];
    }
    S u = inner.value_and_grad(x, g);
    S tail = S(T(0));  // Σ_{m ≥ k} ∂U/∂xₘ
    for (int k = dim - 1; k >= 1; --k) {
      tail = tail + g[k];
      g[k] = e[k] * tail - S(T(1));
    }
    g[0] = tail + g[0];
    return u - logj;
  }
};

}  // namespace ember
