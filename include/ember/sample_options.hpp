#pragma once
/// \file
/// `sample_options<T, D>`: the run-time settings of a run, written with designated initialisers:
/// `sample(pipe, {.chains = 100'000, .steps = 5'000, .seed = 42}, backend::cpu{})`, and the
/// progress report a run gives between chunks.

#include <ember/core/vec.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

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

namespace detail {
// A dense matrix with direct access to its storage, as Eigen's Matrix, Map, Block and Transpose
// have (matched by its members, so this header never includes Eigen).
template <class M>
concept dense_matrix_storage = requires(M const& m) {
  typename M::Scalar;
  M::IsRowMajor;
  m.data();
  m.rows();
  m.cols();
  m.innerStride();
  m.outerStride();
};
}  // namespace detail

/// The start states of a run, one `vec<T, D>` per chain: a `std::span` over them, which an Eigen
/// matrix converts to without a copy when it stores each state contiguously, that is a D × chains
/// column-major matrix (one state per column: `Eigen::Matrix<float, 3, Eigen::Dynamic>`) or a
/// chains × D row-major one (one state per row). Any other shape or layout is refused with a
/// sentence; a matrix of another scalar type does not compile. A view: the matrix must outlive
/// the run's start (`sample`, `start`).
template <class T, int D>
struct start_states : std::span<vec<T, D> const> {
  using std::span<vec<T, D> const>::span;
  start_states() = default;
  start_states(std::span<vec<T, D> const> s) : std::span<vec<T, D> const>(s) {}

  template <detail::dense_matrix_storage M>
  start_states(M const& m) : std::span<vec<T, D> const>(of_matrix(m)) {}

 private:
  template <class M>
  static std::span<vec<T, D> const> of_matrix(M const& m) {
    static_assert(std::is_same_v<std::remove_cv_t<typename M::Scalar>, T>,
                  "ember: .init from a matrix needs the energy's scalar type (float or double); cast it into a "
                  "named matrix of that type first");
    static_assert(sizeof(vec<T, D>) == D * sizeof(T));
    bool const row_major = M::IsRowMajor;
    auto const n = row_major ? m.rows() : m.cols(), d = row_major ? m.cols() : m.rows();
    if (d != D || m.innerStride() != 1 || (n > 1 && m.outerStride() != D))
      throw std::invalid_argument(
          "ember: .init takes one start state of " + std::to_string(D) + " values per " +
          (row_major ? "row of a row-major" : "column of a column-major") + " matrix, stored contiguously; got a " +
          std::to_string(m.rows()) + " x " + std::to_string(m.cols()) + " matrix" +
          (d == D ? " with strides (" + std::to_string(m.outerStride()) + ", " + std::to_string(m.innerStride()) + ")"
                  : "") +
          " (a chains x " + std::to_string(D) + " column-major matrix needs .transpose() into a named " +
          std::to_string(D) + " x chains matrix)");
    return {reinterpret_cast<vec<T, D> const*>(m.data()), std::size_t(n)};
  }
};

template <class T, int D>
struct sample_options {
  std::int64_t chains = 0;  ///< independent chains, 1 ≤ chains < 2³² − 64
  std::int64_t steps = 0;   ///< `sample`: transitions after warm-up and burn-in; every thin-th is kept
  std::uint64_t seed = 0;   ///< the Philox key: same seed, same draws on any backend and partition
  /// Start states, one per chain, finite; empty means x₀ ~ uniform(−2, 2) in each coordinate, drawn from each chain's stream.
  /// A run from `.init` draws from a stream keyed by the seed and a hash of these states.
  /// Also from an Eigen matrix of start states without a copy (see `start_states`).
  start_states<T, D> init = {};
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
