// A warm-up adapter written outside the library (docs/custom_kernels.md, "An adapter of your
// own"): the step size by Robbins–Monro (Andrieu & Thoms 2008, §4), log εₜ₊₁ = log εₜ +
// (t + 1)^−0.6 (ᾱₜ − δ), with ᾱₜ the chains' mean acceptance probability at warm-up transition t,
// and the kept ε the average of log ε over the second half of warm-up since the last metric change
// (Polyak–Ruppert). It plugs into warmup(n, ...) beside the built-in adapters, on either backend:
// the per-chain sum runs where the chains' arrays live. tests/adapt/custom_adapter_test.cpp
// checks it.
#pragma once
#include <ember/library.hpp>  // no backend: a .cpp adds the CPU's (ember.hpp), a .cu the GPU's (ember/cuda.cuh)

#include <cmath>
#include <cstdint>

// Over live chains: how many, and the sum of their last acceptance probabilities.
template <class T>
struct acceptance_total {
  static constexpr int size = 2;  // doubles it sums
  ember::chain_view<T> v;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    a[0] += 1;
    a[1] += double(v.accept_prob[c]);
  }
};

struct robbins_monro {
  double target = 0.574;  // MALA's optimal acceptance
  double decay = 0.6;     // the gain (t + 1)^−decay

  static constexpr ember::tunable tunes = ember::tunable::step_size;     // what it writes
  static constexpr ember::observe observes = ember::observe::acceptance;  // what it reads

  struct state {  // plain data: checkpoints save its bytes
    double log_eps = 0, log_eps_sum = 0;
    std::int64_t t = 0, averaged = 0;
  };

  template <class K>
  state init(K const& kernel, ember::warmup_setup const&) const {
    double const eps = double(kernel.step_size);  // the user's, or NaN for "adapt one"
    return {std::log(std::isfinite(eps) && eps > 0 ? eps : 1.0)};
  }
  template <class K>
  void set(state const& s, ember::kernel_params<K>& p) const {
    p.step_size = std::exp(s.log_eps);
  }
  template <class K, class Reduce>
  void update(state& s, ember::warmup_step<K, Reduce> const& step) const {
    double a[2] = {};
    step.sum(acceptance_total<typename K::value_type>{step.view}, a);
    double const alpha = a[0] > 0 ? a[1] / a[0] : 0.0;
    s.log_eps += std::pow(double(++s.t), -decay) * (alpha - target);
    if (2 * step.t >= step.length) {
      s.log_eps_sum += s.log_eps;
      ++s.averaged;
    }
  }
  // A new metric changes what a step size means: the average starts again.
  template <class K, class Reduce>
  void settle(state& s, ember::warmup_step<K, Reduce> const& step) const {
    if (step.metric_changed) s.log_eps_sum = 0, s.averaged = 0;
  }
  template <class K>
  void final(state const& s, ember::kernel_params<K>& p) const {
    p.step_size = std::exp(s.averaged > 0 ? s.log_eps_sum / double(s.averaged) : s.log_eps);
  }
  template <class K>
  void notes(state const&, K const&, ember::adapter_notes& n) const {
    n.target_acceptance = target;  // what result.acceptance_rate() is held against
  }
};
