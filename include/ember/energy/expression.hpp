#pragma once
/// \file
/// Energy expressions: `U1 + U2`, `c * U`, `U * c` and `U / T` (tempering), nested to any depth.
/// Each node is a plain aggregate holding its operands by value (no base class, no references),
/// so a whole expression is one trivially copyable value that travels to a device in a kernel
/// argument. Gradients compose analytically: ∇(U1 + U2) = ∇U1 + ∇U2 and ∇(cU) = c∇U. After
/// inlining nothing of the tree is left: the compiler sees the same arithmetic as a hand-written
/// sum (measured with callgrind, see docs/performance.md).

#include <ember/core/concepts.hpp>
#include <ember/core/vec.hpp>

#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace ember {

/// U(x) = a(x) + b(x). Models `Energy`, and `DifferentiableEnergy` when both operands do.
template <class A, class B>
struct sum_energy {
  using value_type = typename A::value_type;
  static constexpr int dim = A::dim;

  A a;
  B b;

  template <class S>
  EMBER_HD S value(vec<S, dim> const& x) const {
    return a.value(x) + b.value(x);
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& x, vec<S, dim>& g) const
    requires DifferentiableEnergy<A> && DifferentiableEnergy<B>
  {
    vec<S, dim> gb;
    S u = a.value_and_grad(x, g);
    u = u + b.value_and_grad(x, gb);
    for (int i = 0; i < dim; ++i) g[i] = g[i] + gb[i];
    return u;
  }
};

/// U(x) = c · a(x): weights in a sum, and tempering (U / T is stored as (1/T) · U).
template <class A>
struct scaled_energy {
  using value_type = typename A::value_type;
  static constexpr int dim = A::dim;

  value_type c;
  A a;

  template <class S>
  EMBER_HD S value(vec<S, dim> const& x) const {
    return S(c) * a.value(x);
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, dim> const& x, vec<S, dim>& g) const
    requires DifferentiableEnergy<A>
  {
    S u = a.value_and_grad(x, g);
    for (int i = 0; i < dim; ++i) g[i] = S(c) * g[i];
    return S(c) * u;
  }
};

namespace detail {
template <class A, class B>
constexpr void check_sum() {
  static_assert(Energy<A> && Energy<B>,
                "ember: both operands of + must be energies (a type with dim, value_type and "
                "value(x))");
  if constexpr (Energy<A> && Energy<B>) {
    static_assert(A::dim == B::dim, "ember: cannot add energies of different dimensions");
    static_assert(std::is_same_v<typename A::value_type, typename B::value_type>,
                  "ember: cannot add energies of different precision (float and double)");
  }
}
}  // namespace detail

/// The sum of two energies of the same dimension and precision.
template <class A, class B>
  requires(Energy<A> || Energy<B>)
constexpr auto operator+(A const& a, B const& b) {
  detail::check_sum<A, B>();
  return sum_energy<A, B>{a, b};
}

namespace detail {
/// c · a as one node. A scaled operand folds: c · (c' · U) is (c·c') · U, the product taken in
/// double and rounded once, so nested weights and temperatures cost one multiply per gradient
/// coordinate instead of one per level (measured in docs/performance.md).
template <class A>
constexpr auto scale(double c, A const& a) {
  return scaled_energy<A>{typename A::value_type(c), a};
}
template <class A>
constexpr auto scale(double c, scaled_energy<A> const& s) {
  return scaled_energy<A>{typename A::value_type(c * double(s.c)), s.a};
}
}  // namespace detail

/// c · U for a finite constant c.
template <class C, Energy A>
  requires std::is_arithmetic_v<C>
constexpr auto operator*(C c, A const& a) {
  return detail::scale(double(c), a);
}

template <class C, Energy A>
  requires std::is_arithmetic_v<C>
constexpr auto operator*(A const& a, C c) {
  return c * a;
}

/// U / T: the energy tempered at temperature T > 0 (the density becomes p^{1/T}). A
/// non-positive or non-finite temperature throws `std::invalid_argument`.
template <Energy A, class C>
  requires std::is_arithmetic_v<C>
auto operator/(A const& a, C temperature) {
  if (!(temperature > C(0)) || !std::isfinite(double(temperature)))
    throw std::invalid_argument("ember: the temperature in U / T must be positive and finite");
  return detail::scale(1.0 / double(temperature), a);
}

}  // namespace ember
