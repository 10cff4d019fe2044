#pragma once
/// \file
/// `approach()`: the kernel moves by its approach form until the first metric window closes
/// (adapt/mass_windows.hpp), then by its own dynamics.
///
/// Why. Chains start far from the typical set (posteriordb's uniform(−2, 2) starts are about 500
/// posterior sds from earnings-earn_height's log σ). Isokinetic dynamics (MAMS,
/// kernel/adjusted_mclmc.hpp) move at unit speed in the metric's units whatever the energy
/// falls by, and the first metric, estimated from chains still on the slope (their gradients are
/// steep), is orders of magnitude too small: the chains never arrive (earnings-earn_height: every
/// chain off, R̂ 2.3). Hamiltonian trajectories turn the energy a chain loses into speed, so HMC's
/// chains arrive within tens of transitions. adjusted_mclmc's approach form is exact HMC (velocity
/// Verlet, Gaussian momentum, a Metropolis test) with the same step size and metric and at most 16
/// steps. While a kernel is in its approach form, `step_size()` scores the harmonic mean of
/// acceptance over the chains that accepted anything, and it restarts when the form changes
/// (adapt/step_size.hpp). `mams(U)` lists it (kernel/mams.hpp). An adapter (adapt/adapter.hpp).

#include <ember/adapt/adapter.hpp>

#include <cstdint>

namespace ember {

namespace detail {
/// Whether kernel k is in its approach form (a kernel that has none never is).
template <class K>
constexpr bool in_approach_form(K const& k) {
  if constexpr (requires { k.approach; })
    return bool(k.approach);
  else
    return false;
}
}  // namespace detail

struct approach_state {
  std::int64_t on = 1;  ///< the next transition moves by the approach form (an integer: a file's bytes)
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
    p.approach = s.on != 0;
  }
  template <class K, class R>
  void update(approach_state& s, warmup_step<K, R> const& step) const {
    if (step.windows.closes(step.t)) s.on = 0;
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
