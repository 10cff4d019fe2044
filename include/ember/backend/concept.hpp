#pragma once
/// \file
/// What a run (run/run.hpp) asks of a backend, written down: `Backend<B, P>` and
/// `detail::backend_diagnosis<B, P>()`, which names in one sentence the first member B misses, as
/// detail/kernel_diagnosis.hpp does for kernels. `sample` and `start` call it before they use B.
///
/// A backend is a small value (its options: threads, a device, a block size) with
///   check(pipeline)                 refusals before any work (memory, parameter blocks, SIMD masks);
///   storage<P>                      the chains' memory for pipeline type P, made from
///                                   (backend, chains) and default-constructible, with
///     init(kernel, key, starts)     each chain's first state (starts empty: the default start);
///     advance<observe>(kernel, chunk, samples, k0, k1, statistics)
///                                   one chunk of the fused loop over every chain, returning its
///                                   tracked sums (pipeline/fused_loop.hpp, pipeline/track.hpp);
///     reduce(f, out)                Σ over chains of f(c, acc) in a fixed order (warm-up);
///     view()                        the arrays as warm-up's reductions read them (chain_view);
///     host(), host_mutable(), upload()   the arrays in host memory, and back after a write;
///     copy_out(x, frozen, diverged_at, accepted)   what a result keeps, returning Σ divergent;
///     counters()                    optional: the per-chain counters alone (progress reports).
/// `backend::cpu` and `backend::scalar` (backend/cpu.hpp) and `backend::cuda` (backend/cuda.cuh)
/// are the three.

#include <ember/adapt/warmup.hpp>
#include <ember/backend/detail/chain_arrays.hpp>
#include <ember/detail/kernel_diagnosis.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/sample_options.hpp>

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ember {

namespace detail {
// A reduction of one value, to ask a storage whether it reduces (never called).
struct probe_reduction {
  static constexpr int size = 1;
  void operator()(std::int64_t, double*) const {}
};

template <class B, class P>
concept backend_has_storage = requires { typename B::template storage<P>; };
template <class B, class P>
concept backend_has_check = requires(B const& b, P const& p) { b.check(p); };
template <class B, class P>
concept storage_is_made = std::is_default_constructible_v<typename B::template storage<P>> &&
                          std::is_constructible_v<typename B::template storage<P>, B const&, std::int64_t>;
template <class B, class P>
concept storage_inits = requires(typename B::template storage<P>& s, typename P::kernel_type const& k) {
  s.init(k, std::uint64_t(0), start_states<typename P::value_type, P::dim>{});
};
template <class B, class P>
concept storage_advances = requires(typename B::template storage<P>& s, typename P::kernel_type const& k, chunk const& ch,
                                    typename P::value_type* samples, typename P::tracked_type const& stats) {
  { s.template advance<observe::nothing>(k, ch, samples, std::int64_t(0), std::int64_t(0), stats).track };
};
template <class B, class P>
concept storage_reduces = requires(typename B::template storage<P> const& s, double* out) {
  s.reduce(probe_reduction{}, out);
  s.view();
};
template <class B, class P>
concept storage_has_host_arrays = requires(typename B::template storage<P>& s) {
  { std::as_const(s).host() } -> std::convertible_to<chain_arrays<typename P::value_type> const&>;
  { s.host_mutable() } -> std::same_as<chain_arrays<typename P::value_type>&>;
  s.upload();
};
template <class B, class P>
concept storage_copies_out = requires(typename B::template storage<P> const& s, typename P::value_type* x, std::uint8_t* f,
                                      std::int64_t* i) {
  { s.copy_out(x, f, i, i) } -> std::convertible_to<std::int64_t>;
};
}  // namespace detail

/// B is a backend a run of pipeline type P can use.
template <class B, class P>
concept Backend = detail::backend_has_storage<B, P> && detail::backend_has_check<B, P> && detail::storage_is_made<B, P> &&
                  detail::storage_inits<B, P> && detail::storage_advances<B, P> && detail::storage_reduces<B, P> &&
                  detail::storage_has_host_arrays<B, P> && detail::storage_copies_out<B, P>;

namespace detail {
/// True for a backend; for anything else one static_assert names the first member it misses.
template <class B, class P>
constexpr bool backend_diagnosis() {
  if constexpr (!requires { sizeof(B); }) {
    static_assert(always_false<B>,
                  "ember: this backend is declared but not defined here: the default, backend::cpu, comes with "
                  "<ember/ember.hpp> (or <ember/backend/cpu.hpp>), backend::cuda with <ember/cuda.cuh> in a .cu file");
  } else if constexpr (!backend_has_storage<B, P>) {
    static_assert(always_false<B>,
                  "ember: not a backend: it has no member template storage<P> (the chains' memory for a pipeline; "
                  "backend/concept.hpp lists what a backend provides)");
  } else if constexpr (!backend_has_check<B, P>) {
    static_assert(always_false<B>, "ember: not a backend: it has no check(pipeline) member (its refusals before any work)");
  } else if constexpr (!storage_is_made<B, P>) {
    static_assert(always_false<B>,
                  "ember: not a backend: its storage<P> is not default-constructible and constructible from "
                  "(backend, chains)");
  } else if constexpr (!storage_inits<B, P>) {
    static_assert(always_false<B>, "ember: not a backend: its storage<P> has no init(kernel, key, start states)");
  } else if constexpr (!storage_advances<B, P>) {
    static_assert(always_false<B>,
                  "ember: not a backend: its storage<P> has no advance<observe>(kernel, chunk, samples, k0, k1, "
                  "statistics) returning the chunk's tracked sums");
  } else if constexpr (!storage_reduces<B, P>) {
    static_assert(always_false<B>, "ember: not a backend: its storage<P> has no reduce(f, out) and view() for warm-up");
  } else if constexpr (!storage_has_host_arrays<B, P>) {
    static_assert(always_false<B>,
                  "ember: not a backend: its storage<P> has no host(), host_mutable() and upload() (the chains' "
                  "arrays in host memory)");
  } else if constexpr (!storage_copies_out<B, P>) {
    static_assert(always_false<B>,
                  "ember: not a backend: its storage<P> has no copy_out(positions, frozen, diverged_at, accepted)");
  }
  if constexpr (requires { sizeof(B); })
    return Backend<B, P>;
  else
    return false;
}
}  // namespace detail

}  // namespace ember
