#pragma once
/// \file
/// `ember::eigen`: a run's draws and final states as `Eigen::Map` views, without copies. Host
/// only: include it in `.cpp` files, never in a `.cu` translation unit (ember.hpp does not
/// include it).
///
/// ember stores kept draws draw-major, then dimension, then chain (`result.hpp`): element
/// (k, c, d) at `data[(k·D + d)·chains + c]`. Each view below is that memory seen with strides:
///  - `final_states(r)`, `draw(r, k)`: D × chains, column c is chain c's state;
///  - `chain(r, c)`: kept × D, row k is chain c's draw k (a trace);
///  - `coordinate(r, d)`: kept × chains, coordinate d of every draw of every chain.
/// The views are read-only and valid while `r` lives. The other direction, start states from an
/// Eigen matrix, needs no header: `.init = M` (see `start_states` in sample_options.hpp).

#include <ember/result.hpp>

#if !__has_include(<Eigen/Core>)
#error "ember/eigen.hpp needs Eigen 3 (Debian: libeigen3-dev) on the include path: CMake's ember::ember adds it where it finds it (EMBER_EIGEN_INCLUDE_DIR), and no other ember header needs it"
#endif
#include <Eigen/Core>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ember::eigen {

/// D × n, row-major storage with unit column stride: a column is a state, its entries `chains`
/// apart.
template <class T, int D>
using states_map = Eigen::Map<Eigen::Matrix<T, D, Eigen::Dynamic, Eigen::RowMajor> const, Eigen::Unaligned,
                              Eigen::Stride<Eigen::Dynamic, 1>>;
/// rows × cols with any strides.
template <class T, int Rows, int Cols>
using strided_map = Eigen::Map<Eigen::Matrix<T, Rows, Cols, Eigen::RowMajor> const, Eigen::Unaligned,
                               Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

namespace detail {
inline void check_index(std::int64_t i, std::int64_t n, char const* who, char const* what) {
  if (i < 0 || i >= n)
    throw std::out_of_range(std::string("ember::eigen::") + who + ": " + what + " " + std::to_string(i) +
                            " is not in [0, " + std::to_string(n) + ")");
}
template <class T, int D>
void require_draws(result<T, D> const& r, char const* who) {
  if (r.samples().empty())
    throw std::invalid_argument(std::string("ember::eigen::") + who +
                                ": the run recorded no draws (add record() to the pipeline)");
}
}  // namespace detail

/// The final states: a D × chains matrix, column c = `r.final_state(c)`.
template <class T, int D>
states_map<T, D> final_states(result<T, D> const& r) {
  return {r.final_states().data(), D, Eigen::Index(r.chains()), Eigen::Stride<Eigen::Dynamic, 1>(r.chains(), 1)};
}

/// Kept draw k of every chain: a D × chains matrix, column c = `r.samples().draw(k, c)`.
template <class T, int D>
states_map<T, D> draw(result<T, D> const& r, std::int64_t k) {
  detail::require_draws(r, "draw");
  detail::check_index(k, r.kept(), "draw", "draw");
  return {r.samples().ptr + k * D * r.chains(), D, Eigen::Index(r.chains()),
          Eigen::Stride<Eigen::Dynamic, 1>(r.chains(), 1)};
}

/// The kept draws of chain c: a kept × D matrix, row k = draw k.
template <class T, int D>
strided_map<T, Eigen::Dynamic, D> chain(result<T, D> const& r, std::int64_t c) {
  detail::require_draws(r, "chain");
  detail::check_index(c, r.chains(), "chain", "chain");
  return {r.samples().ptr + c, Eigen::Index(r.kept()), D,
          Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(D * r.chains(), r.chains())};
}

/// Coordinate d of every kept draw: a kept × chains matrix, column c = chain c's trace of x_d.
template <class T, int D>
strided_map<T, Eigen::Dynamic, Eigen::Dynamic> coordinate(result<T, D> const& r, int d) {
  detail::require_draws(r, "coordinate");
  detail::check_index(d, D, "coordinate", "coordinate");
  return {r.samples().ptr + std::int64_t(d) * r.chains(), Eigen::Index(r.kept()), Eigen::Index(r.chains()),
          Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(D * r.chains(), 1)};
}

}  // namespace ember::eigen
