#pragma once
/// \file
/// `for_each_view(x, f)`: calls `f(view)` on every `data_view` inside an energy, a kernel or a
/// pipeline, by reference, so `f` may read a view or repoint it (data/device.cuh repoints views
/// at device copies). What it walks into:
///  - a type with a member `for_each_view(f)` (energies with data, transform nodes): that member;
///  - `sum_energy` (both operands) and `scaled_energy` (its operand), from energy/expression.hpp;
///  - `callable_energy` (the wrapped callable `f`), from custom_energy;
///  - anything with a member `energy` (kernels) or `kernel` (pipelines).
/// Everything else has no views. Walking happens on the host, once per run, never in the loop.

#include <ember/data/data_view.hpp>
#include <ember/energy/custom_energy.hpp>
#include <ember/energy/expression.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

namespace detail {
template <class X>
struct is_sum_energy : std::false_type {};
template <class A, class B>
struct is_sum_energy<sum_energy<A, B>> : std::true_type {};
template <class X>
struct is_scaled_energy : std::false_type {};
template <class A>
struct is_scaled_energy<scaled_energy<A>> : std::true_type {};
template <class X>
struct is_callable_energy : std::false_type {};
template <class T, int D, class F>
struct is_callable_energy<callable_energy<T, D, F>> : std::true_type {};
}  // namespace detail

/// Calls `f(data_view<T>&)` on every data view reachable from `x` (see the file comment).
/// `f` must accept views of every element type present (`[](auto& v) { ... }`).
template <class X, class F>
void for_each_view(X& x, F&& f) {
  using Y = std::remove_const_t<X>;
  if constexpr (requires { x.for_each_view(f); }) {
    x.for_each_view(f);
  } else if constexpr (detail::is_sum_energy<Y>::value) {
    for_each_view(x.a, f);
    for_each_view(x.b, f);
  } else if constexpr (detail::is_scaled_energy<Y>::value) {
    for_each_view(x.a, f);
  } else if constexpr (detail::is_callable_energy<Y>::value) {
    for_each_view(x.f, f);
  } else if constexpr (requires { x.energy; }) {
    for_each_view(x.energy, f);
  } else if constexpr (requires { x.kernel; }) {
    for_each_view(x.kernel, f);
  }
}

/// The number of data views reachable from `x`.
template <class X>
std::int64_t count_views(X const& x) {
  std::int64_t n = 0;
  auto copy = x;
  for_each_view(copy, [&](auto&) { ++n; });
  return n;
}

/// The blocks of data rows a GPU team deals out among its members in `x`'s energy
/// (core/team.hpp): the most `team_blocks()` of any energy inside that declares it (the
/// regressions: blocks of 8 rows; model bodies: blocks of 32), through sums, scalings, transforms
/// (`inner`), kernels and pipelines; 0 where none does. An energy that reads data without
/// splitting it (a heap-stored precision, a custom energy over a table) declares nothing: a team
/// would only repeat its work, so `backend::cuda` gives it none.
template <class X>
std::int64_t team_blocks(X const& x) {
  using Y = std::remove_const_t<X>;
  if constexpr (requires { x.team_blocks(); }) {
    return x.team_blocks();
  } else if constexpr (detail::is_sum_energy<Y>::value) {
    auto const a = team_blocks(x.a), b = team_blocks(x.b);
    return a > b ? a : b;
  } else if constexpr (detail::is_scaled_energy<Y>::value) {
    return team_blocks(x.a);
  } else if constexpr (requires { x.inner; }) {
    return team_blocks(x.inner);
  } else if constexpr (requires { x.energy; }) {
    return team_blocks(x.energy);
  } else if constexpr (requires { x.kernel; }) {
    return team_blocks(x.kernel);
  } else {
    return 0;
  }
}

}  // namespace ember
