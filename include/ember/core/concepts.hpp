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

/// A kernel state following the state protocol of core/chain_state.hpp, for scalar type `S` in
/// dimension `D`: members `x` (`vec<S, D>`) and `energy` (`S`), `slots` and `slot(i)`.
template <class State, class S, int D>
concept ChainState = requires(State& s, State const& cs, int i) {
  { s.x } -> std::convertible_to<vec<S, D>>;
  { s.energy } -> std::convertible_to<S>;
  { State::slots } -> std::convertible_to<int>;
  { s.slot(i) } -> std::same_as<S&>;
  { cs.slot(i) } -> std::same_as<S const&>;
};

namespace detail {
// The state type a kernel's init returns for a position of its energy's precision.
template <class K>
using kernel_state_t = std::remove_cvref_t<decltype(std::declval<K const&>().init(
    std::declval<vec<typename K::energy_type::value_type, K::energy_type::dim> const&>()))>;
}  // namespace detail

/// A transition kernel in the init + step style: `init(x)` builds a state following the state
/// protocol (`ChainState`: `chain_state`, or a kernel's own struct with more slots, such as
/// `phase_state`), `step(state, rng)` advances it in place by one transition and returns a
/// `step_info`, and `validate()` throws `std::invalid_argument` for bad parameters.
template <class K>
concept TransitionKernel =
    requires { typename K::energy_type; } && DifferentiableEnergy<typename K::energy_type> &&
    requires(K const& k, vec<typename K::energy_type::value_type, K::energy_type::dim> const& x) {
      { k.init(x) } -> ChainState<typename K::energy_type::value_type, K::energy_type::dim>;
    } &&
    requires(K const& k, detail::kernel_state_t<K>& s, chain_rng<typename K::energy_type::value_type> const& rng) {
      k.step(s, rng);
      k.validate();
    };

}  // namespace ember
