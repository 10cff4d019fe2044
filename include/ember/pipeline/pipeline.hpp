#pragma once
/// \file
/// `pipeline<Kernel, Stages...>`: a transition kernel followed by stages, built with `|`:
/// `mala(U, {.step_size = 0.05f}) | burn_in(500) | thin(10) | record() | track(moments)`.
/// The pipeline is a type: which stages it has is known at compile time, and their run-time
/// numbers (burn-in length, thinning) fold into one `schedule`. `sample` turns it into one fused
/// per-chain loop (pipeline/fused_loop.hpp).

#include <ember/core/concepts.hpp>
#include <ember/pipeline/stages.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

/// The run-time shape of a run: `burn_in` discarded transitions, then `steps` transitions of which
/// every `thin`-th is kept (`kept` = steps / thin of them).
struct schedule {
  std::int64_t burn_in = 0;
  std::int64_t steps = 0;
  std::int64_t thin = 1;
  std::int64_t kept = 0;
};

namespace detail {
template <class T>
struct is_track : std::false_type {};
template <class... Tags>
struct is_track<track_stage<Tags...>> : std::true_type {};
template <class Tag, class T>
constexpr bool tracks() {
  if constexpr (is_track<T>::value)
    return T::template has<Tag>;
  else
    return false;
}
}  // namespace detail

template <class Kernel, class... Stages>
struct pipeline {
  using kernel_type = Kernel;
  using energy_type = typename Kernel::energy_type;
  using value_type = typename energy_type::value_type;
  static constexpr int dim = energy_type::dim;

  static constexpr bool records = (std::is_same_v<Stages, record_stage> || ...);
  static constexpr bool tracks_moments = (detail::tracks<moments_t, Stages>() || ...);
  static constexpr bool tracks_acceptance = (detail::tracks<acceptance_t, Stages>() || ...);
  static constexpr bool tracks_energy = (detail::tracks<mean_energy_t, Stages>() || ...);
  static constexpr bool tracks_any = tracks_moments || tracks_acceptance || tracks_energy;

  Kernel kernel;
  std::int64_t burn_in = 0;
  std::int64_t thin = 1;

  /// The schedule of a run of `steps` transitions after burn-in.
  constexpr schedule make_schedule(std::int64_t steps) const {
    return {burn_in, steps, thin, steps / thin};
  }
};

namespace detail {
template <class P, class Stage>
constexpr auto append(P const& p, Stage const& s) {
  return []<class K, class... Ss>(pipeline<K, Ss...> const& q, Stage const& st) {
    pipeline<K, Ss..., Stage> r{q.kernel, q.burn_in, q.thin};
    if constexpr (std::is_same_v<Stage, burn_in_stage>) r.burn_in += st.n;
    if constexpr (std::is_same_v<Stage, thin_stage>) r.thin *= st.k;
    return r;
  }(p, s);
}
template <class T>
struct is_pipeline : std::false_type {};
template <class K, class... S>
struct is_pipeline<pipeline<K, S...>> : std::true_type {};
template <class T>
struct is_stage : std::false_type {};
template <>
struct is_stage<burn_in_stage> : std::true_type {};
template <>
struct is_stage<thin_stage> : std::true_type {};
template <>
struct is_stage<record_stage> : std::true_type {};
template <class... Tags>
struct is_stage<track_stage<Tags...>> : std::true_type {};
}  // namespace detail

/// A kernel or a pipeline, as `sample` accepts it.
template <class P>
constexpr auto as_pipeline(P const& p) {
  if constexpr (detail::is_pipeline<P>::value)
    return p;
  else
    return pipeline<P>{p};
}

/// `kernel | stage` and `pipeline | stage`.
template <class P, class Stage>
  requires(detail::is_stage<Stage>::value && (detail::is_pipeline<P>::value || TransitionKernel<P>))
constexpr auto operator|(P const& p, Stage const& s) {
  return detail::append(as_pipeline(p), s);
}

}  // namespace ember
