#pragma once
/// \file
/// The concepts at ember's public boundaries. Entry points check them with `static_assert` and a
/// sentence in plain words, so a misuse reads as one line rather than an instantiation backtrace.

#include <ember/core/chain_state.hpp>
#include <ember/core/rng.hpp>
#include <ember/core/vec.hpp>

#include <concepts>
#include <type_traits>
#include <utility>

namespace ember {

/// An energy U: ℝ^D → ℝ. Provides `static constexpr int dim`, a floating-point `value_type` (the
/// precision of its parameters) and `value(x)` for `x` a `vec<value_type, dim>`. Built-in
/// energies accept any scalar type in `value` (SIMD batches, dual numbers) with a member template.
template <class E>
concept Energy = requires {
  typename E::value_type;
  { E::dim } -> std::convertible_to<int>;
} && std::floating_point<typename E::value_type> && (E::dim > 0) &&
                 requires(E const& e, vec<typename E::value_type, E::dim> const& x) {
                   { e.value(x) } -> std::convertible_to<typename E::value_type>;
                 };

/// An energy that also gives its gradient: `value_and_grad(x, g)` returns U(x) and writes ∇U(x)
/// into `g`, sharing the work between the two.
template <class E>
concept DifferentiableEnergy =
    Energy<E> && requires(E const& e, vec<typename E::value_type, E::dim> const& x,
                          vec<typename E::value_type, E::dim>& g) {
      { e.value_and_grad(x, g) } -> std::convertible_to<typename E::value_type>;
    };

/// A kernel state following the protocol of core/chain_state.hpp: position `x`, `energy`, and
/// `slots` values reachable through `slot(i)`.
template <class State>
concept KernelState = requires(State& s, State const& cs) {
  { State::slots } -> std::convertible_to<int>;
  s.x;
  s.energy;
  s.slot(0);
  cs.slot(0);
};

/// A transition kernel in the init + step style: `init(x)` builds its state (a `KernelState`,
/// usually `chain_state`) from a position, `step(state, rng)` advances it in place by one
/// transition and returns a `step_info`, and `validate()` throws `std::invalid_argument` for bad
/// parameters (a non-positive step size...).
namespace detail {
template <class K>
using kernel_state_t = decltype(std::declval<K const&>().init(
    std::declval<vec<typename K::energy_type::value_type, K::energy_type::dim> const&>()));
}  // namespace detail

template <class K>
concept TransitionKernel =
    requires { typename K::energy_type; } && DifferentiableEnergy<typename K::energy_type> &&
    requires { typename detail::kernel_state_t<K>; } && KernelState<detail::kernel_state_t<K>> &&
    requires(K const& k, detail::kernel_state_t<K>& s, chain_rng<typename K::energy_type::value_type> const& rng) {
      k.step(s, rng);
      k.validate();
    };

}  // namespace ember
