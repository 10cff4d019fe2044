#pragma once
/// \file
/// A model's parameters as a body sees them, several at a time: `block<Offset, N>` names N
/// consecutive coordinates; in a value context they are `block_values` (plain numbers), in a
/// gradient context `block_vars` (reverse-mode leaves: values and where their adjoints add up);
/// a matrix parameter is a `matrix_view` over either, row by row. Multi-parameter log-densities
/// (`dot`, `lkj_corr_cholesky_lpdf`) take these and build one node each.

#include <ember/ad/node.hpp>
#include <ember/core/config.hpp>

namespace ember {

/// N consecutive parameters starting at `Offset`: `m[block<3, 3>{}]` is β = x₃…x₅.
template <int Offset, int N>
struct block {
  static_assert(Offset >= 0 && N > 0, "ember::block<Offset, N>: Offset must be >= 0 and N > 0");
  static constexpr int offset = Offset;
  static constexpr int size = N;
};

/// The parameters of a block in a value context: plain values, indexable.
template <class S, int N>
struct block_values {
  S const* x;
  EMBER_HD EMBER_INLINE S const& operator[](int j) const { return x[j]; }
  EMBER_HD static constexpr int size() { return N; }
};
/// The parameters of a block in a gradient context: `var`s, indexable.
template <class S, int N>
struct block_vars {
  S const* x;
  S* g;
  EMBER_HD EMBER_INLINE ad::var<S> operator[](int j) const { return {x[j], {&g[j]}}; }
  EMBER_HD static constexpr int size() { return N; }
};

/// A matrix parameter (row by row) in a context: `L(i, j)`, over a block of its R·C values.
template <class Block, int R, int C>
struct matrix_view {
  Block b;
  static constexpr int rows = R, cols = C;
  EMBER_HD EMBER_INLINE auto operator()(int i, int j) const { return b[i * C + j]; }
};

/// A block of R·C values as an R×C matrix, row by row: `as_matrix<3, 3>(Lcov.block())`.
template <int R, int C, class Block>
EMBER_HD EMBER_INLINE matrix_view<Block, R, C> as_matrix(Block const& b) {
  static_assert(Block::size() == R * C, "ember::as_matrix<R, C>: the block must hold R * C values");
  return {b};
}

}  // namespace ember
