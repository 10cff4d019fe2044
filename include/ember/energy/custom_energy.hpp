#pragma once
/// \file
/// `custom_energy<D>(f)` and `custom_energy<D, double>(f)`: an energy U(x) = f(x) from a generic
/// callable `f` on `vec<S, D>` for any scalar type S. Its gradient comes from forward-mode dual
/// numbers (core/dual.hpp): f is evaluated on xᵢ + εᵢ, and the result's partials are ∂U/∂xᵢ,
/// with U(x) from the same evaluation. D ≤ 16 takes one pass of `dual<S, D>`; larger D takes
/// P = ⌈D/16⌉ passes of N = ⌈D/P⌉ partials each (D = 40: 3 passes of 14), so a dual stays small
/// enough for registers. The result, `callable_energy<T, D, F>`, models `DifferentiableEnergy`
/// and mixes with built-in energies in expressions (`V + 0.5f * gaussian`).
///
/// A callable with a member `value_and_grad(x, g)` of its own keeps it (no duals), and a type
/// that already models `DifferentiableEnergy` is returned as is: custom_energy differentiates
/// only what has no gradient of its own.

#include <ember/core/concepts.hpp>
#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

#include <concepts>
#include <type_traits>

namespace ember {

namespace detail {
/// Most partial derivatives one dual carries: beyond this a dual<float, N> no longer fits the
/// registers and the compiler spills; larger D is split into passes.
inline constexpr int max_dual_partials = 16;
template <int D>
inline constexpr int dual_passes = (D + max_dual_partials - 1) / max_dual_partials;
template <int D>
inline constexpr int dual_chunk = (D + dual_passes<D> - 1) / dual_passes<D>;

// Partials per pass actually carried for scalar type S. On the host, for one chain in a plain
// float or double, N is rounded up to 4 or 8 so the partials fill whole SIMD registers; the
// extra lanes are seeded 0. Rounding 10 up to 16 measured slower (bench/dual_cost.cpp), so N > 8
// stays as is. SIMD batches and device code carry exactly N (every lane costs there).
template <class S, int D>
constexpr int dual_partials() {
  constexpr int n = dual_chunk<D>;
#if defined(__CUDA_ARCH__)
  return n;
#else
  if constexpr (scalar_traits<S>::width == 1 && std::is_floating_point_v<S>)
    return n <= 4 ? 4 : n <= 8 ? 8 : n;
  else
    return n;
#endif
}

template <class F, class T, int D>
concept callable_on_duals = std::invocable<F const&, vec<dual<T, dual_chunk<D>>, D> const&>;

template <class F, class T, int D>
concept has_own_gradient = requires(F const& f, vec<T, D> const& x, vec<T, D>& g) { f.value_and_grad(x, g); };

EMBER_EXEC_CHECK_DISABLE
template <class F, class S, int D>
EMBER_HD EMBER_INLINE S call_value(F const& f, vec<S, D> const& x) {
  if constexpr (requires { f.value(x); })
    return S(f.value(x));
  else
    return S(f(x));
}
}  // namespace detail

/// U(x) = f(x) for a generic callable f, ∇U by forward-mode dual numbers (or by f's own
/// `value_and_grad` when it has one). Trivially copyable when F is, so it travels to a device
/// by value. Models `DifferentiableEnergy`. Built by `custom_energy<D>(f)`.
template <class T, int D, class F>
struct callable_energy {
  using value_type = T;
  static constexpr int dim = D;

  F f;

  EMBER_EXEC_CHECK_DISABLE
  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    return detail::call_value(f, x);
  }

  /// One evaluation of f per pass on `dual<S, N>`: the value and N partials at once.
  EMBER_EXEC_CHECK_DISABLE
  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    if constexpr (detail::has_own_gradient<F, T, D>) {
      return S(f.value_and_grad(x, g));
    } else if constexpr (detail::callable_on_duals<F, T, D>) {
      constexpr int N = detail::dual_chunk<D>;
      constexpr int P = detail::dual_passes<D>;
      using dual_t = dual<S, detail::dual_partials<S, D>()>;
      S u = S(0);
      for (int p = 0; p < P; ++p) {
        vec<dual_t, D> xd;
        for (int i = 0; i < D; ++i) xd[i] = dual_t::variable(x[i], i - p * N);
        // A callable that ignores x may return a plain constant: it becomes a dual of zeros.
        dual_t r = f(xd);
        if (p == 0) u = r.val;
        for (int j = 0; j < N; ++j)
          if (p * N + j < D) g[p * N + j] = r.d[j];
      }
      return u;
    } else {
      return S(0);  // unreachable: custom_energy already stopped with a static_assert
    }
  }
};

/// `custom_energy<D>(f)` (float) or `custom_energy<D, double>(f)`: wraps a generic callable,
/// `[](auto const& x) { return sin(x[0]) * x[1] * x[1]; }`, as a `DifferentiableEnergy` of
/// dimension D. Inside f use ember's math (unqualified, `ember::exp`, or `using std::sin` plus
/// ADL): exp, log, log1p, expm1, sqrt, pow, sin, cos, tanh, sigmoid, softplus, abs, min, max,
/// select and log_sum_exp work on plain scalars, SIMD batches and dual numbers alike.
/// An energy that models `DifferentiableEnergy` already is returned unchanged.
template <int D, class T = float, class F>
constexpr auto custom_energy(F const& f) {
  static_assert(std::floating_point<T>, "ember::custom_energy<D, T>: T must be float or double");
  if constexpr (DifferentiableEnergy<F>) {
    static_assert(F::dim == D, "ember::custom_energy<D>: the energy passed in has another dimension");
    static_assert(std::is_same_v<typename F::value_type, T>,
                  "ember::custom_energy<D, T>: the energy passed in has another precision");
    return f;
  } else {
    static_assert(detail::has_own_gradient<F, T, D> || detail::callable_on_duals<F, T, D>,
                  "ember::custom_energy needs a generic callable such as [](auto const& x) { ... } "
                  "that accepts ember::vec of any scalar type, because its gradient comes from "
                  "evaluating it on dual numbers");
    return callable_energy<T, D, F>{f};
  }
}

}  // namespace ember
