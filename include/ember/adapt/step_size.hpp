#pragma once
/// \file
/// `step_size()`: one step size for all chains by dual averaging (Hoffman & Gelman 2014, Stan's
/// γ = 0.05, t₀ = 10, κ = 0.75, adapt/dual_averaging.hpp) towards `target` acceptance (0: the
/// kernel's own, MALA 0.574, HMC 0.8), from the mean acceptance probability of the live chains at
/// each warm-up transition, reduced in a fixed order, so the step size depends on nothing but the
/// seed. When an adapter asks for it (chees(): `harmonic_acceptance`), the harmonic mean over
/// chains towards 0.8 instead, with γ = 0.2 and μ = log ε₀ (below, why); the harmonic mean
/// towards the kernel's target while the kernel is in its approach form (adapt/approach.hpp).
/// Restarts from its current ε whenever the metric changes (Stan's rule) and when the kernel
/// leaves its approach form. An adapter (adapt/adapter.hpp).

#include <ember/adapt/adapter.hpp>
#include <ember/adapt/approach.hpp>
#include <ember/adapt/dual_averaging.hpp>
#include <ember/core/config.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ember {

namespace detail {
/// An adapter's target acceptance: 0 (the kernel's own) or in (0, 1); anything else, NaN
/// included, is refused rather than read as the default. `what` and `zero` name the option and
/// what 0 means in the sentence (`chees_hmc` and `mams` check their own option with it).
inline double checked_target(double target, char const* what = "ember::step_size: target",
                             char const* zero = "the kernel's own") {
  if (!(target == 0 || (target > 0 && target < 1)))
    throw std::invalid_argument(std::string(what) + " must be 0 (" + zero + ") or an acceptance rate in (0, 1), got " +
                                std::to_string(target));
  return target;
}
/// A kernel's first step size for an adaptation: its own where it has one, else 1.
template <class K>
double first_step_size(K const& k) {
  double const eps = double(k.step_size);
  return std::isfinite(eps) && eps > 0 ? eps : 1.0;
}

// Over live chains: n, Σα, and the number and Σ 1/α of those with α > 0 (the harmonic mean's).
template <class T>
struct acceptance_sums {
  static constexpr int size = 4;
  chain_view<T> v;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    double const al = double(v.accept_prob[c]);
    a[0] += 1;
    a[1] += al;
    if (al > 0) {
      a[2] += 1;
      a[3] += 1 / al;
    }
  }
};
}  // namespace detail

struct step_size_adapter {
  double target = 0;

  static constexpr tunable tunes = tunable::step_size;
  static constexpr observe observes = observe::acceptance;

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool ok = requires { K::target_acceptance; };
    static_assert(ok, "ember::warmup: step_size() needs a kernel with a target acceptance (mala, hmc, the underdamped Langevin kernels)");
    return ok;
  }

  struct state {
    dual_averaging da;
    std::int64_t harmonic = 0;  ///< ChEES's regime: the harmonic mean over chains (an integer: a file's bytes)
  };

  template <class K>
  state init(K const& k, warmup_setup const& w) const {
    state s;
    s.harmonic = w.harmonic;
    double t = detail::checked_target(target);
    // ChEES's own 0.651 (Hoffman, Radul & Sountsov; BlackJAX) is optimal on a Gaussian, but on a
    // hierarchical model its step can be too long for the tail of a scale parameter, where a
    // chain then sticks: on the shared 60-parameter hier_logit, 1,000 + 1,000, 24 seeds, 4 of 24
    // 4-chain runs ended unhealthy (R-hat up to 1.07, up to 90 divergent transitions) against 1
    // of 24 at 0.8, which costs 13 % of the ESS per gradient at the median of posteriordb's 19
    // posteriors (docs/decisions/2026-11-30-chees-target-0.8.md). Stan's and NumPyro's target.
    if (t == 0) t = s.harmonic ? 0.8 : K::target_acceptance;
    s.da.target = t;
    if (s.harmonic) {
      // ChEES's pooled acceptance changes from one transition to the next with the Halton
      // length uT (and the harmonic mean with the worst chain). With Stan's γ = 0.05 and
      // μ = log 10ε₀, log ε's iterates over the 50-transition term buffer had a standard
      // deviation of 0.63 on Gaussians, and ε̄, their average, ended at harmonic acceptance
      // 0.75-0.79 against a target of 0.651. With γ = 0.2 and μ = log ε₀ (the restart's ε is
      // already adapted; the pull towards 10ε₀ grows with γ): 0.06, and 0.645-0.654.
      s.da.gamma = 0.2;
      s.da.explore = 1;
    }
    s.da.restart(detail::first_step_size(k));
    return s;
  }

  template <class K>
  void set(state const& s, kernel_params<K>& p) const {
    p.step_size = s.da.current();
  }

  template <class K, class R>
  void update(state& s, warmup_step<K, R> const& step) const {
    using T = typename K::value_type;
    double a[4] = {0, 0, 0, 0};
    step.sum(detail::acceptance_sums<T>{step.view}, a);
    // With ChEES, the harmonic mean over chains (Hoffman, Radul & Sountsov 2021): one chain
    // stuck where the step is too large (a far start, a distribution's stiff tail) pulls it
    // down, where the arithmetic mean would leave that chain stuck. A chain whose α is 0 (a
    // divergence) is left out, as BlackJAX does, so one of them cannot stall the adaptation.
    // So too while the kernel is in its approach form (adapt/approach.hpp): a chain far up a
    // slope rejects every move that climbs, whatever ε (half of them at U ~ 10²¹ on posteriordb's
    // arma11), and the arithmetic mean drove ε to 10⁻³⁶ there.
    if (s.harmonic || detail::in_approach_form(step.kernel))
      s.da.update(a[2] > 0 ? a[2] / a[3] : 0.0);
    else
      s.da.update(a[0] > 0 ? a[1] / a[0] : 0.0);
  }

  /// Stan restarts the dual averaging from its current ε at the end of each metric window; so
  /// does a kernel leaving its approach form (other dynamics want another ε).
  template <class K, class R>
  void settle(state& s, warmup_step<K, R> const& step) const {
    if (step.metric_changed || detail::in_approach_form(step.kernel) != detail::in_approach_form(*step.next))
      s.da.restart(s.da.current());
  }

  template <class K>
  void final(state const& s, kernel_params<K>& p) const {
    p.step_size = s.da.final();
  }

  template <class K>
  void notes(state const& s, K const&, adapter_notes& n) const {
    n.target_acceptance = s.da.target;
    n.harmonic = s.harmonic != 0;
  }

  /// A checkpoint whose step size aimed at another target than the one this adapter names is
  /// refused; with no target named (0), the saved run goes on with its own.
  char const* refuses(state const& loaded) const {
    if (target == 0 || target == loaded.da.target) return nullptr;
    return "was written by a warm-up whose step size aims at another target acceptance than this pipeline's "
           "step_size({.target = ...}) (chees_hmc's or mams' .target_acceptance); give the saved run's, or none";
  }
};

/// `step_size()`, `step_size({.target = 0.9})`.
inline step_size_adapter step_size(step_size_adapter o = {}) { return {detail::checked_target(o.target)}; }

}  // namespace ember
