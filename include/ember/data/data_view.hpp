#pragma once
/// \file
/// `data_view<T>`: what an energy holds of a data set. A pointer to a row-major table of
/// `rows × cols` values and the memory space it points into, nothing else: a small, trivially
/// copyable value, so an energy with data still travels to a device in a kernel argument and
/// costs the same to copy whatever the number of rows. It owns nothing; `dataset<T>`
/// (data/dataset.hpp) owns host tables and `device_copy` (data/device.cuh) owns device copies.

#include <ember/core/config.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ember {

/// Where the memory a `data_view` points to lives. A CPU run needs `host`, a CUDA run `device`;
/// the backends check this before any work (`require_host_views`, `require_device_views`).
enum class memory_space : unsigned char { host, device };

/// Row i of a table: a pointer to its values (it converts to `T const*`) and how many there are,
/// so that `dot(X.row(i), m[beta])` can refuse a row whose length is not the parameter's.
template <class T>
struct data_row {
  T const* values;
  int cols;
  EMBER_HD EMBER_INLINE operator T const*() const { return values; }
  EMBER_HD EMBER_INLINE T operator[](int j) const { return values[j]; }
};

namespace detail {
// A row of `cols` values where a log-density needs `k` (`dot`, `multi_normal_cholesky_lpdf`):
// refused with one sentence on the host, where the CPU backends' check of the energy before a
// run meets it first (on a GPU, unchecked).
EMBER_HD inline void require_row_length(int cols, int k) {
#if !defined(__CUDA_ARCH__)
  if (cols != k)
    throw std::invalid_argument(std::string("ember: a data row of ").append(std::to_string(cols)).append(" values where ").append(std::to_string(k)).append(
        " are needed (dot(X.row(i), m[beta]), multi_normal_cholesky_lpdf): the table's columns and the parameter's length differ"));
#else
  (void)cols;
  (void)k;
#endif
}
}  // namespace detail

/// A read-only view of a row-major table: element (i, j) is `data[i·cols + j]`.
/// Trivially copyable; valid for as long as the memory it points to (see docs/models.md for the
/// lifetime rules). `rows` is 64-bit, so any n fits.
template <class T>
struct data_view {
  T const* data = nullptr;
  std::int64_t rows = 0;
  int cols = 0;
  memory_space space = memory_space::host;

  /// Element (i, j) = data[i·cols + j].
  EMBER_HD EMBER_INLINE T operator()(std::int64_t i, int j) const { return data[i * cols + j]; }
  /// Row i: its first value's address, and its length.
  EMBER_HD EMBER_INLINE data_row<T> row(std::int64_t i) const { return {data + i * cols, cols}; }
  /// rows · cols.
  EMBER_HD std::int64_t size() const { return rows * std::int64_t(cols); }
};

static_assert(std::is_trivially_copyable_v<data_view<float>>);

}  // namespace ember
