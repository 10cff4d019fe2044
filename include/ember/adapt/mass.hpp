#pragma once
/// \file
/// `diagonal_mass()` and `dense_mass()`: the metric (inverse mass) estimated in Stan's growing
/// windows (adapt/mass_windows.hpp) from all chains pooled, regularised as Stan does
/// (adapt/covariance.hpp). A diagonal one by default from draws and gradients,
/// σᵢ² = √(Var xᵢ / Var ∂ᵢU) (nutpie's; robust to chains still on their way in), where the
/// kernel's state holds ∇U at its position; `{.gradients = false}`: Stan's, the draws' variance.
/// A dense one is the draws' covariance (D ≤ 64). At the end of each window the metric is the
/// window's estimate; the step size then restarts (adapt/step_size.hpp) and ChEES carries its T
/// into the new metric's time (adapt/chees.hpp). An adapter (adapt/adapter.hpp).

#include <ember/adapt/adapter.hpp>
#include <ember/adapt/covariance.hpp>
#include <ember/adapt/mass_windows.hpp>
#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/metric.hpp>

#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace ember {

namespace detail {

template <class K>
concept has_metric = requires(K const& k) { k.with_metric(k.metric); };

// n, Σx, Σx² or the upper triangle of Σxxᵀ over live chains (adapt/covariance.hpp's layout), of
// slots first … first + D − 1: the position (0) or, for a diagonal metric from draws and
// gradients, ∇U (D + 1 in a `chain_state`). One functor per quantity, so a reduction's
// per-thread accumulator stays 1 + 2D doubles for a diagonal metric.
template <class T, int D, bool Dense>
struct moment_sums {
  static constexpr int size = pooled_covariance<D, Dense>::sums;
  chain_view<T> v;
  int first = 0;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    a[0] += 1;
    double x[D];
    for (int i = 0; i < D; ++i) x[i] = double(v.slots[(first + i) * v.stride + c]);
    for (int i = 0; i < D; ++i) a[1 + i] += x[i];
    int q = 1 + D;
    for (int i = 0; i < D; ++i)
      for (int j = i; j < (Dense ? D : i + 1); ++j) a[q++] += x[i] * x[j];
  }
};

// Whether kernel K's state holds ∇U at its position after every transition: a `chain_state`
// (mala, hmc, the underdamped Langevin kernels' `phase_state`, per-chain step sizes' wrapper),
// unless its integrator is a splitting that leaves the gradient stale (one whose first
// non-O operator is a drift re-evaluates only U, integrator/splitting.hpp).
template <class K>
consteval bool state_gradient_is_current() {
  using T = typename K::value_type;
  using state = decltype(std::declval<K const&>().init(vec<T, K::dim>{}));
  if constexpr (!std::derived_from<state, chain_state<T, K::dim>>)
    return false;
  else if constexpr (requires { K::integrator_type::reads_gradient_first(); })
    return K::integrator_type::reads_gradient_first();
  else
    return true;
}

}  // namespace detail

/// The metric adapter: `Dense` false for diagonal_mass(), true for dense_mass().
template <bool Dense>
struct mass_adapter {
  bool gradients = !Dense;  ///< diagonal only: from draws and gradients (true) or draws (false)

  static constexpr tunable tunes = tunable::metric;

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool ok = detail::has_metric<K>;
    static_assert(ok, "ember::warmup: diagonal_mass() and dense_mass() need a kernel with a metric (mala, hmc, the underdamped Langevin kernels)");
    return ok;
  }
  /// The kernel with a unit metric of the adapted kind.
  template <class K>
  auto rebind(K const& k) const {
    using T = typename K::value_type;
    if constexpr (Dense) {
      return k.with_metric(dense_metric<T, K::dim>::identity());
    } else {
      diagonal_metric<T, K::dim> m;
      for (int i = 0; i < K::dim; ++i) m.scale[i] = T(1);
      return k.with_metric(m);
    }
  }

  template <class K>
  struct state {
    static constexpr int D = K::dim;
    pooled_covariance<D, Dense> cov;
    pooled_covariance<D, false> grad_cov;  ///< the gradients', when the metric comes from both
    /// Where the kernel allows it and the user asked (else Stan's estimate); a checkpoint saves
    /// it and refuses a pipeline that asks for the other. An integer, not a bool: it is read back
    /// from a file's bytes.
    std::int64_t from_gradients = 0;
    typename detail::metric_of<K>::type metric;
  };

  /// Whether kernel K's diagonal metric comes from draws and gradients with this adapter.
  template <class K>
  bool uses_gradients() const {
    if constexpr (!Dense && detail::state_gradient_is_current<K>())
      return gradients;
    else
      return false;
  }

  template <class K>
  state<K> init(K const& k, warmup_setup const&) const {
    if (Dense && gradients) throw std::invalid_argument("ember::dense_mass: a dense metric comes from the draws only (gradients is for diagonal_mass)");
    state<K> s;
    s.metric = k.metric;
    s.from_gradients = uses_gradients<K>() ? 1 : 0;
    return s;
  }
  template <class K>
  void set(state<K> const& s, kernel_params<K>& p) const {
    p.metric = s.metric;
  }

  template <class K, class R>
  void update(state<K>& s, warmup_step<K, R> const& step) const {
    using T = typename K::value_type;
    constexpr int D = K::dim;
    if (!step.windows.collects(step.t)) return;
    using sums = detail::moment_sums<T, D, Dense>;
    double m[sums::size] = {};
    step.sum(sums{step.view, 0}, m);
    s.cov.add(m);
    if constexpr (!Dense && detail::state_gradient_is_current<K>()) {
      if (s.from_gradients != 0) {
        double g[sums::size] = {};
        step.sum(sums{step.view, D + 1}, g);
        s.grad_cov.add(g);
      }
    }
    if (!step.windows.closes(step.t)) return;
    if constexpr (!Dense)
      s.metric = s.from_gradients != 0 ? diagonal_metric_from_gradients<T>(s.cov, s.grad_cov) : s.cov.template metric<T>();
    else
      s.metric = s.cov.template metric<T>();
    s.cov.reset();
    s.grad_cov.reset();
  }

  template <class K>
  char const* refuses(state<K> const& loaded) const {
    if ((loaded.from_gradients != 0) == uses_gradients<K>()) return nullptr;
    return loaded.from_gradients != 0
               ? "was written by a warm-up whose diagonal metric came from draws and gradients, and this pipeline's does "
                 "not (diagonal_mass({.gradients}))"
               : "was written by a warm-up whose diagonal metric came from draws only, and this pipeline's comes from "
                 "draws and gradients (diagonal_mass({.gradients}))";
  }
};

using diagonal_mass_adapter = mass_adapter<false>;
using dense_mass_adapter = mass_adapter<true>;

/// `diagonal_mass()`, `diagonal_mass({.gradients = false})`.
inline constexpr diagonal_mass_adapter diagonal_mass(diagonal_mass_adapter o = {}) { return o; }
/// `dense_mass()`.
inline constexpr dense_mass_adapter dense_mass() { return {}; }

}  // namespace ember
