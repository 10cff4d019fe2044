#pragma once
/// \file
/// `diagonal_mass()`, `dense_mass()` and `auto_mass()`: the metric (inverse mass) estimated in
/// Stan's growing windows (adapt/mass_windows.hpp) from all chains pooled, regularised as Stan does
/// (adapt/covariance.hpp). By default from draws and gradients, where the kernel's state holds ∇U
/// at its position: the diagonal σᵢ² = √(Var xᵢ / Var ∂ᵢU) (nutpie's), the dense its matrix form,
/// the geometric mean Σx # Σg⁻¹ (D ≤ 64); both equal the covariance on a Gaussian target and are
/// robust to chains still on their way in. `{.gradients = false}`: Stan's, from the draws alone.
/// `auto_mass()` estimates both and keeps, at each window, the dense one only where it promises
/// fewer than half the diagonal's leapfrog steps and the window looks Gaussian, or a twentieth
/// where it does not (`auto_metric_from_gradients`). At the end of each window the metric is the window's estimate; the step size then restarts
/// (adapt/step_size.hpp) and ChEES carries its T into the new metric's time (adapt/chees.hpp). An
/// adapter (adapt/adapter.hpp).

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

// Whether kernel K adapts a diagonal metric only (it says so: the underdamped Langevin kernels).
template <class K>
concept diagonal_metric_only = requires { requires K::diagonal_metric_only; };

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

/// The kinds of metric a warm-up adapts: `diagonal_mass()`, `dense_mass()`, `auto_mass()`.
enum class metric_kind { diagonal, dense, automatic };

/// The metric adapter of kind `Kind`. `auto_mass()` adapts an `auto_metric`: at each window's
/// close the diagonal or the dense estimate, as `auto_metric_from_gradients` (adapt/covariance.hpp)
/// decides; where it cannot hold or judge a dense metric (`dense_sums`, below) it is
/// `diagonal_mass()`.
template <metric_kind Kind>
struct mass_adapter {
  bool gradients = true;  ///< from draws and gradients (true) or from the draws alone (false)

  static constexpr tunable tunes = tunable::metric;

  /// Whether kernel K's windows sum the dense (co)variance: `auto_mass()` is `diagonal_mass()` for
  /// kernels whose metric is diagonal only (the underdamped Langevin kernels), for kernels whose
  /// state does not hold ∇U (no gradients to judge by), and above 64 dimensions (dense_metric's
  /// bound).
  template <class K>
  static constexpr bool dense_sums = Kind == metric_kind::dense ||
                                     (Kind == metric_kind::automatic && K::dim <= 64 && !detail::diagonal_metric_only<K> &&
                                      detail::state_gradient_is_current<K>());

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool ok = detail::has_metric<K>;
    static_assert(ok, "ember::warmup: diagonal_mass(), dense_mass() and auto_mass() need a kernel with a metric (mala, hmc, nuts, the underdamped Langevin kernels)");
    return ok;
  }
  /// The kernel with a unit metric of the adapted kind.
  template <class K>
  auto rebind(K const& k) const {
    using T = typename K::value_type;
    if constexpr (Kind == metric_kind::dense) {
      return k.with_metric(dense_metric<T, K::dim>::identity());
    } else if constexpr (dense_sums<K>) {
      return k.with_metric(auto_metric<T, K::dim>::identity());
    } else {
      diagonal_metric<T, K::dim> m;
      for (int i = 0; i < K::dim; ++i) m.scale[i] = T(1);
      return k.with_metric(m);
    }
  }

  template <class K>
  struct state {
    static constexpr int D = K::dim;
    pooled_covariance<D, dense_sums<K>> cov;
    pooled_covariance<D, dense_sums<K>> grad_cov;  ///< the gradients', when the metric comes from both
    /// Where the kernel allows it and the user asked (else Stan's estimate); a checkpoint saves
    /// it and refuses a pipeline that asks for the other. An integer, not a bool: it is read back
    /// from a file's bytes.
    std::int64_t from_gradients = 0;
    typename detail::metric_of<K>::type metric;
  };

  /// Whether kernel K's metric comes from draws and gradients with this adapter.
  template <class K>
  bool uses_gradients() const {
    if constexpr (detail::state_gradient_is_current<K>())
      return gradients;
    else
      return false;
  }

  template <class K>
  state<K> init(K const& k, warmup_setup const&) const {
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
    using sums = detail::moment_sums<T, D, dense_sums<K>>;
    double m[sums::size] = {};
    step.sum(sums{step.view, 0}, m);
    s.cov.add(m);
    if constexpr (detail::state_gradient_is_current<K>()) {
      if (s.from_gradients != 0) {
        double g[sums::size] = {};
        step.sum(sums{step.view, D + 1}, g);
        s.grad_cov.add(g);
      }
    }
    if (!step.windows.closes(step.t)) return;
    bool const grads = s.from_gradients != 0;
    if constexpr (Kind == metric_kind::dense)
      s.metric = grads ? dense_metric_from_gradients<T>(s.cov, s.grad_cov) : s.cov.template metric<T>();
    else if constexpr (dense_sums<K>)
      s.metric = auto_metric_from_gradients<T>(s.cov, grads ? s.grad_cov : pooled_covariance<D, true>{});
    else
      s.metric = grads ? diagonal_metric_from_gradients<T>(s.cov, s.grad_cov) : s.cov.template metric<T>();
    s.cov.reset();
    s.grad_cov.reset();
  }

  template <class K>
  char const* refuses(state<K> const& loaded) const {
    if ((loaded.from_gradients != 0) == uses_gradients<K>()) return nullptr;
    return loaded.from_gradients != 0
               ? "was written by a warm-up whose metric came from draws and gradients, and this pipeline's comes from "
                 "the draws alone ({.gradients = false})"
               : "was written by a warm-up whose metric came from the draws alone, and this pipeline's comes from "
                 "draws and gradients ({.gradients = false} not given)";
  }
};

using diagonal_mass_adapter = mass_adapter<metric_kind::diagonal>;
using dense_mass_adapter = mass_adapter<metric_kind::dense>;
using auto_mass_adapter = mass_adapter<metric_kind::automatic>;

/// `diagonal_mass()`, `diagonal_mass({.gradients = false})`.
inline constexpr diagonal_mass_adapter diagonal_mass(diagonal_mass_adapter o = {}) { return o; }
/// `dense_mass()` (from draws and gradients), `dense_mass({.gradients = false})` (from the draws).
inline constexpr dense_mass_adapter dense_mass(dense_mass_adapter o = {}) { return o; }
/// `auto_mass()`: diagonal or dense, decided at each window (above); `{.gradients = false}`: the
/// diagonal metric from the draws (which cannot tell a correlation from chains in transit).
inline constexpr auto_mass_adapter auto_mass(auto_mass_adapter o = {}) { return o; }

}  // namespace ember
