#pragma once
/// \file
/// `approach()`: the kernel moves by its approach form until the first metric window closes
/// (adapt/mass_windows.hpp; the whole warm-up when it has no window), then by its own dynamics.
///
/// Why. Chains start far from the typical set (posteriordb's uniform(−2, 2) draws in unconstrained
/// space can be 10⁴ posterior standard deviations away). Isokinetic dynamics (MAMS,
/// kernel/adjusted_mclmc.hpp) move at unit speed in the metric's units whatever the energy
/// falls by, and the first metric, estimated from chains still on the slope (their gradients are
/// steep), is orders of magnitude too small: the chains never arrive (earnings-earn_height: every
/// chain off, R̂ 2.3). Hamiltonian trajectories turn the energy a chain loses into speed, so HMC's
/// chains arrive within tens of transitions. adjusted_mclmc's approach form is exact HMC (velocity
/// Verlet, Gaussian momentum, a Metropolis test) with the same step size, metric and number of
/// steps; the step-size adaptation restarts when the first metric is set, just as the dynamics
/// change. `mams(U)` lists it (kernel/mams.hpp). An adapter (adapt/adapter.hpp) with one bit of
/// state.

#include <ember/adapt/adapter.hpp>

namespace ember {

struct approach_state {
  bool on = true;  ///< the next transition moves by the approach form
};

struct approach_adapter {
  static constexpr tunable tunes = tunable::approach;

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool ok = requires(K const& k) { k.with_approach(true); };
    static_assert(ok, "ember::warmup: approach() switches a kernel to its approach form (adjusted_mclmc's HMC trajectories), and this kernel has none");
    return ok;
  }

  template <class K>
  approach_state init(K const&, warmup_setup const&) const {
    return {};
  }
  template <class K>
  void set(approach_state const& s, kernel_params<K>& p) const {
    p.approach = s.on;
  }
  template <class K, class R>
  void update(approach_state& s, warmup_step<K, R> const& step) const {
    if (step.windows.closes(step.t)) s.on = false;
  }
  /// After warm-up the kernel moves by its own dynamics, whatever the warm-up's length.
  template <class K>
  void final(approach_state const&, kernel_params<K>& p) const {
    p.approach = false;
  }
};

/// `approach()`.
inline approach_adapter approach() { return {}; }

}  // namespace ember
