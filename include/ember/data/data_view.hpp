#pragma once
/// \file
/// `data_view<T>`: what an energy holds of a data set. A pointer to a row-major table of
/// `rows × cols` values and the memory space it points into, nothing else: a small, trivially
/// copyable value, so an energy with data still travels to a device in a kernel argument and
/// costs the same to copy whatever the number of rows. It owns nothing; `dataset<T>`
/// (data/dataset.hpp) owns host tables and `device_copy` (data/device.cuh) owns device copies.

#include <ember/core/config.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

/// Where the memory a `data_view` points to lives. A CPU run needs `host`, a CUDA run `device`;
/// the backends check this before any work (`require_host_views`, `require_device_views`).
enum class memory_space : unsigned char { host, device };

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
  /// Pointer to the first value of row i.
  EMBER_HD EMBER_INLINE T const* row(std::int64_t i) const { return data + i * cols; }
  /// rows · cols.
  EMBER_HD std::int64_t size() const { return rows * std::int64_t(cols); }
};

static_assert(std::is_trivially_copyable_v<data_view<float>>);

}  // namespace ember
