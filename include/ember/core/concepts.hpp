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

namespace detail {
// The members of the state protocol, one concept each (see ChainState).
template <class State, class S, int D>
concept state_has_x = requires(State& s) {
  { s.x } -> std::convertible_to<vec<S, D>>;
};
template <class State, class S>
concept state_has_energy = requires(State& s) {
  { s.energy } -> std::convertible_to<S>;
};
template <class State>
concept state_has_slots = requires {
  { State::slots } -> std::convertible_to<int>;
};
template <class State, class S>
concept state_has_slot = requires(State& s, State const& cs, int i) {
  { s.slot(i) } -> std::same_as<S&>;
  { cs.slot(i) } -> std::same_as<S const&>;
};
}  // namespace detail

/// A kernel state following the state protocol of core/chain_state.hpp, for scalar type `S` in
/// dimension `D`: members `x` (`vec<S, D>`) and `energy` (`S`), `slots` and `slot(i)`.
template <class State, class S, int D>
concept ChainState = detail::state_has_x<State, S, D> && detail::state_has_energy<State, S> &&
                     detail::state_has_slots<State> && detail::state_has_slot<State, S>;

namespace detail {
// The pieces of TransitionKernel, one concept each, so that an entry point can name the first
// one a type misses (detail/kernel_diagnosis.hpp) instead of printing "no match for ...".
template <class K>
concept has_energy_type = requires { typename K::energy_type; };
template <class K>
concept kernel_types_match = requires {
  typename K::value_type;
  { K::dim } -> std::convertible_to<int>;
} && std::same_as<typename K::value_type, typename K::energy_type::value_type> && (K::dim == K::energy_type::dim);
template <class K>
concept has_validate = requires(K const& k) { k.validate(); };
template <class K>
concept has_step_size = requires(K const& k) { double(k.step_size); };
// Whether K has a member named step at all (a function, a template or anything else): looking
// the name up in a class derived from K and from one with its own step is ambiguous exactly then.
struct step_name_probe {
  void step();
};
template <class K>
struct step_probe : K, step_name_probe {};
template <class K>
concept has_step_member = !std::is_class_v<K> || std::is_final_v<K> || !requires { &step_probe<K>::step; };
template <class K, class S>
concept has_init_for = requires(K const& k, vec<S, K::dim> const& x) { k.init(x); };
// The state type a kernel's init returns for a position of scalar type S.
template <class K, class S>
using kernel_state_t = std::remove_cvref_t<decltype(std::declval<K const&>().init(std::declval<vec<S, K::dim> const&>()))>;
template <class State>
concept is_vec = requires { State::dim; typename State::value_type; } &&
                 std::same_as<State, vec<typename State::value_type, State::dim>>;
// init returns a struct (not a position or a number) whose x is a vec<S, D>, if it has an x.
template <class State, class S, int D>
concept state_type_fits = std::is_class_v<State> && !is_vec<State> &&
                          (!requires(State& s) { s.x; } || std::same_as<decltype(std::declval<State&>().x), vec<S, D>>);
template <class State>
concept has_grad = requires(State& s) { s.grad; };
template <class K, class S>
concept has_step_for = requires(K const& k, kernel_state_t<K, S>& s, chain_rng<S> const& rng) {
  { k.step(s, rng) } -> std::same_as<step_info<S>>;
};
}  // namespace detail

/// A transition kernel in the init + step style (docs/custom_kernels.md): types `energy_type`
/// (an `Energy`), `value_type` and `dim` (the energy's); a `step_size` (the scale a warm-up
/// tunes, reported by a run and saved in checkpoints); `init(x)` builds a state following the
/// state protocol (`ChainState`: `chain_state`, `position_state`, or a kernel's own struct with
/// more slots, such as `phase_state`); `step(state, rng)` advances it in place by one transition
/// and returns a `step_info`; `validate()` throws `std::invalid_argument` for bad parameters.
/// Only a kernel whose state keeps a gradient (a member `grad`) needs a `DifferentiableEnergy`.
/// Checked here at the scalar `value_type`; a run on the CPU also calls `init` and `step` with
/// SIMD batches, which the entry points check too (detail/kernel_diagnosis.hpp).
template <class K>
concept TransitionKernel =
    detail::has_energy_type<K> && Energy<typename K::energy_type> && detail::kernel_types_match<K> &&
    detail::has_validate<K> && detail::has_step_size<K> && detail::has_init_for<K, typename K::value_type> &&
    detail::state_type_fits<detail::kernel_state_t<K, typename K::value_type>, typename K::value_type, K::dim> &&
    ChainState<detail::kernel_state_t<K, typename K::value_type>, typename K::value_type, K::dim> &&
    (!detail::has_grad<detail::kernel_state_t<K, typename K::value_type>> ||
     DifferentiableEnergy<typename K::energy_type>) &&
    detail::has_step_for<K, typename K::value_type>;

}  // namespace ember
