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

#include <ember/core/team.hpp>
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

namespace detail {
/// The most f(e) over the energies e inside `x` that f takes (`F::template takes<E>`; 0 where
/// none does), through sums, scalings, transforms (`inner`), kernels and pipelines.
template <class X, class F>
std::int64_t most_over_energies(X const& x, F const& f) {
  using Y = std::remove_const_t<X>;
  if constexpr (F::template takes<Y>) {
    return std::int64_t(f(x));
  } else if constexpr (detail::is_sum_energy<Y>::value) {
    auto const a = most_over_energies(x.a, f), b = most_over_energies(x.b, f);
    return a > b ? a : b;
  } else if constexpr (detail::is_scaled_energy<Y>::value) {
    return most_over_energies(x.a, f);
  } else if constexpr (requires { x.inner; }) {
    return most_over_energies(x.inner, f);
  } else if constexpr (requires { x.energy; }) {
    return most_over_energies(x.energy, f);
  } else if constexpr (requires { x.kernel; }) {
    return most_over_energies(x.kernel, f);
  } else {
    return 0;
  }
}
}  // namespace detail

/// The blocks of data rows a GPU team deals out among its members in `x`'s energy
/// (core/team.hpp): the most `team_blocks()` of any energy inside that declares it (the
/// regressions: blocks of 8 rows; model bodies: blocks of 32); 0 where none does. An energy that
/// reads data without splitting it (a heap-stored precision, a custom energy over a table)
/// declares nothing: a team would only repeat its work, so `backend::cuda` gives it none.
namespace detail {
struct team_blocks_of {
  template <class E>
  static constexpr bool takes = requires(E const& e) { e.team_blocks(); };
  template <class E>
  std::int64_t operator()(E const& e) const {
    return e.team_blocks();
  }
};
struct host_parts_of {
  template <class E>
  static constexpr bool takes = requires(E const& e) { e.dealt_rows(); };
  template <class E>
  std::int64_t operator()(E const& e) const {
    return host_row_parts(e.dealt_rows());
  }
};
}  // namespace detail
template <class X>
std::int64_t team_blocks(X const& x) {
  return detail::most_over_energies(x, detail::team_blocks_of{});
}

/// The most parts any energy inside `x` splits its rows into on the host when a CPU backend asks
/// (core/team.hpp, `host_row_parts` of its `dealt_rows()`); 1 where none deals rows.
template <class X>
int host_parts(X const& x) {
  auto const p = detail::most_over_energies(x, detail::host_parts_of{});
  return p > 1 ? int(p) : 1;
}

}  // namespace ember
