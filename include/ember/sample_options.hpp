#pragma once
/// \file
/// `sample_options<T, D>`: the run-time settings of a run, written with designated initialisers:
/// `sample(pipe, {.chains = 100'000, .steps = 5'000, .seed = 42}, backend::cpu{})`, and the
/// progress report a run gives between chunks.

#include <ember/core/vec.hpp>

#include <cstdint>
#include <functional>
#include <span>

namespace ember {

/// A progress report, given to `.on_progress` between chunks of a run.
struct progress_report {
  std::int64_t done = 0, total = 0;  ///< transitions of this `advance` (or `sample`) call
  std::int64_t transition = 0;       ///< the run's transition counter
  bool warming_up = false;
  double seconds = 0, seconds_left = 0;  ///< elapsed in this call, and the linear estimate of what is left
  double acceptance = 0;                   ///< kept-phase acceptance so far (0 before the kept phase)
  std::int64_t divergent_transitions = 0;  ///< after warm-up, so far
  std::int64_t divergent_chains = 0;
};

template <class T, int D>
struct sample_options {
  std::int64_t chains = 0;  ///< independent chains, 1 ≤ chains < 2³² − 64
  std::int64_t steps = 0;   ///< `sample`: transitions after warm-up and burn-in; every thin-th is kept
  std::uint64_t seed = 0;   ///< the Philox key: same seed, same draws on any backend and partition
  /// Start states, one per chain, finite; empty means x₀ ~ N(0, I) drawn from each chain's stream.
  /// A run from `.init` draws from a stream keyed by the seed and a hash of these states.
  std::span<vec<T, D> const> init = {};
  /// A one-line progress display on stderr when stderr is a terminal and the run takes more than
  /// about two seconds.
  bool progress = true;
  /// Called between chunks (about twice a second) with the run's progress.
  std::function<void(progress_report const&)> on_progress = {};
};

namespace detail {
template <class P>
struct options_of {
  using type = sample_options<float, 1>;  // not a kernel: sample() says so in a static_assert
};
template <class P>
  requires requires { typename P::energy_type; }
struct options_of<P> {
  using type = sample_options<typename P::energy_type::value_type, P::energy_type::dim>;
};
}  // namespace detail

}  // namespace ember
