#pragma once
/// \file
/// `detail::kernel_diagnosis<K>()`: why K is not a transition kernel, in one sentence. The entry
/// points (`operator|`, `sample`, `start`) call it before they use K, so a misuse prints one
/// `static_assert` naming the missing or wrong member instead of "no match for 'operator|'" or an
/// error deep in the fused loop. It checks the pieces of `TransitionKernel` (core/concepts.hpp)
/// in order and stops at the first one K misses; then, on the CPU, that its energy, `init` and
/// `step` also take the SIMD batch a run calls them with. The compiler names K in the line above the
/// sentence ("required from ... [with K = ...]").

#include <ember/core/concepts.hpp>
#include <ember/core/simd.hpp>

namespace ember::detail {

template <class...>
inline constexpr bool always_false = false;

// The batch type a run calls init and step with: a SIMD batch on the CPU; nvcc compiles the
// scalar path only.
#if defined(__CUDACC__)
template <class T>
using run_batch = T;
#else
template <class T>
using run_batch = simd_batch<T>;
#endif

// Whether energy E takes the batch type a run calls it with: value(x), and value_and_grad(x, g)
// where E has it (a built-in kernel's init and step are templates, so a scalar-only energy
// would otherwise fail deep inside them).
template <class E, class B = run_batch<typename E::value_type>>
constexpr bool energy_takes_batch =
    requires(E const& e, vec<B, E::dim> const& x) { e.value(x); } &&
    (!DifferentiableEnergy<E> || requires(E const& e, vec<B, E::dim> const& x, vec<B, E::dim>& g) { e.value_and_grad(x, g); });

// The state init returns, then step at the scalar type and at the batch type.
template <class K, class State>
constexpr bool kernel_state_diagnosis() {
  using T = typename K::value_type;
  constexpr int D = K::dim;
  using B = run_batch<T>;
  if constexpr (!state_type_fits<State, T, D>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: init(x) must return the chain's state, a struct such as "
                  "chain_state<S, dim> or position_state<S, dim> whose x is a vec<S, dim> of the scalar type S of x");
  } else if constexpr (!state_has_x<State, T, D>) {
    static_assert(always_false<K>, "ember: not a transition kernel: its state (what init returns) has no member x");
  } else if constexpr (!state_has_energy<State, T>) {
    static_assert(always_false<K>, "ember: not a transition kernel: its state (what init returns) has no member energy");
  } else if constexpr (!state_has_slots<State>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: its state (what init returns) has no static constexpr int slots member");
  } else if constexpr (!state_has_slot<State, T>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: its state (what init returns) has no slot(i) members returning S& "
                  "and S const&");
  } else if constexpr (has_grad<State> && !DifferentiableEnergy<typename K::energy_type>) {
    static_assert(always_false<K>,
                  "ember: this kernel keeps a gradient in its state (a member grad) but its energy has no "
                  "value_and_grad(x, g): use a gradient-free kernel, or an energy with a gradient "
                  "(custom_energy<D>(f) differentiates a generic callable)");
  } else if constexpr (!has_step_for<K, T>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: its step() has the wrong signature: it must be callable as "
                  "step(state, rng) with state what init returns and rng a chain_rng<S> const&, and return "
                  "step_info<S>");
  } else if constexpr (!has_init_for<K, B>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: its init() takes only value_type, but on the CPU a run calls it "
                  "with a SIMD batch of chains: make it a template on the scalar type S");
  } else if constexpr (!has_step_for<K, B>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: its step() takes only value_type, but on the CPU a run calls it "
                  "with a SIMD batch of chains: make it a template on the scalar type S");
  } else {
    return true;
  }
  return false;
}

// The members: validate, step_size, step and init (whose result the checks above need).
template <class K>
constexpr bool kernel_member_diagnosis() {
  if constexpr (!has_validate<K>) {
    static_assert(always_false<K>, "ember: not a transition kernel: it has no validate() member");
  } else if constexpr (!has_step_size<K>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: it has no step_size member (its scale, which a run reports and "
                  "a warm-up tunes)");
  } else if constexpr (!has_step_member<K>) {
    static_assert(always_false<K>, "ember: not a transition kernel: it has no step() member");
  } else if constexpr (!has_init_for<K, typename K::value_type>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: it has no init(x) member taking a vec<value_type, dim>");
  } else {
    return kernel_state_diagnosis<K, kernel_state_t<K, typename K::value_type>>();
  }
  return false;
}

// True when K is a transition kernel; otherwise one static_assert says why, and false. First the
// energy K samples and K's own value_type and dim, which every later check names.
template <class K>
constexpr bool kernel_diagnosis() {
  if constexpr (!has_energy_type<K>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel (ula, mala, hmc, ... or your own): it has no energy_type member");
  } else if constexpr (!Energy<typename K::energy_type>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: its energy_type is not an energy (a type with dim, value_type "
                  "and value(x))");
  } else if constexpr (!kernel_types_match<K>) {
    static_assert(always_false<K>,
                  "ember: not a transition kernel: it needs value_type and dim members equal to its energy_type's");
  } else if constexpr (!energy_takes_batch<typename K::energy_type>) {
    static_assert(always_false<K>,
                  "ember: the energy's value(x) or value_and_grad(x, g) takes only vec<value_type, dim>, but on the "
                  "CPU a run calls it with a SIMD batch of chains: make it a template on the scalar type S "
                  "(template <class S> S value(ember::vec<S, dim> const& x) const)");
  } else {
    return kernel_member_diagnosis<K>();
  }
  return false;
}

}  // namespace ember::detail
