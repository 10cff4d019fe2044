#pragma once
/// \file
/// `per_chain_step_size<K>`: the kernel K (mala or hmc) with every chain carrying its own step
/// size, which is what `warmup(n, step_size(per_chain))` runs (pipeline/pipeline.hpp wraps the
/// kernel). The chain's ε and its last acceptance probability are two more slots of its state
/// (`per_chain_step_state`), so they live in the run's per-chain arrays between chunks, in
/// registers within one, in checkpoints, and in device memory on a GPU, like the position. The
/// warm-up (adapt/warmup.hpp) runs one dual averaging per chain on the acceptance slot and writes
/// the ε slot; after warm-up each chain keeps its own ε̄. K's transition takes the lane's ε
/// through `K::step(s, rng, ε)`; everything else (energy, metric, jitter, the integrator steps,
/// validation) is K's, which is why this is K plus two slots rather than a kernel of its own.
/// Models `TransitionKernel`.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/rng.hpp>
#include <ember/core/vec.hpp>

#include <stdexcept>
#include <utility>

namespace ember {

/// K's state plus this chain's step size and the acceptance probability of its last transition.
/// Slots: K's, then ε, then α.
template <class State>
struct per_chain_step_state : State {
  using lane_type = decltype(std::declval<State&>().energy);
  lane_type step_size;
  lane_type accept_prob;

  static constexpr int step_size_slot = State::slots;
  static constexpr int accept_prob_slot = State::slots + 1;
  static constexpr int slots = State::slots + 2;
  EMBER_HD EMBER_INLINE lane_type& slot(int i) {
    return i < State::slots ? State::slot(i) : i == step_size_slot ? step_size : accept_prob;
  }
  EMBER_HD EMBER_INLINE lane_type const& slot(int i) const {
    return i < State::slots ? State::slot(i) : i == step_size_slot ? step_size : accept_prob;
  }
};

template <class K>
struct per_chain_step_size : K {
  /// Every chain starts from K's step size.
  template <class S>
  EMBER_HD auto init(vec<S, K::dim> const& x) const {
    using base = decltype(K::init(x));
    per_chain_step_state<base> s{K::init(x), S(this->step_size), S(0)};
    return s;
  }

  /// K's transition with this chain's (this lane's) ε; records its acceptance probability.
  template <class State, class S>
  EMBER_HD step_info<S> step(per_chain_step_state<State>& s, chain_rng<S> const& rng) const {
    step_info<S> info = K::step(static_cast<State&>(s), rng, s.step_size);
    s.accept_prob = info.accept_prob;
    return info;
  }

  per_chain_step_size with_step_size(double eps) const { return {K::with_step_size(eps)}; }
  template <class M>
  auto with_metric(M const& m) const {
    using rebound = decltype(K::with_metric(m));
    return per_chain_step_size<rebound>{K::with_metric(m)};
  }

  void validate() const {
    K::validate();
    if constexpr (requires { this->trajectory_length; })
      if (this->trajectory_length > 0)
        throw std::invalid_argument(
            "ember::warmup: step_size(per_chain) needs a fixed number of integrator steps (hmc's .integrator_steps), "
            "not a .trajectory_length: a SIMD batch or a warp integrates its chains in step");
  }
};

}  // namespace ember
