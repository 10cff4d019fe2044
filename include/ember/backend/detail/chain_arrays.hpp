#pragma once
// The per-chain arrays of a run as every backend lays them out, and what a chunk returns.

#include <ember/host_cache.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ember {

/// The per-chain arrays of a run, in the layout every backend uses: chain c's value i at
/// `[i·stride + c]`, `stride` the chain count padded to whole SIMD batches (the padding holds the
/// ghost lanes of a last partial batch, which then persist between chunks like real chains;
/// NUTS's lanes at their own pace run real chains only and leave the padding as it was).
template <class T>
struct chain_arrays {
  std::int64_t stride = 0;
  detail::host_buffer<T> slots;                 ///< state slots × stride (see `allocate`)
  detail::host_vector<T> window;                ///< accepted transitions since the last kept step
  detail::host_vector<std::uint8_t> frozen;     ///< went non-finite (and was frozen at its last finite state)
  detail::host_vector<std::int64_t> diverged_at;  ///< transition at which it froze; −1 start, −2 never
  detail::host_vector<std::int64_t> accepted;   ///< accepted transitions in the kept phase (exact)
  detail::host_vector<std::int64_t> divergent;  ///< divergent transitions after warm-up (exact)
  detail::host_vector<std::int64_t> truncated;  ///< transitions after warm-up cut short by a cap (exact)
  detail::host_vector<std::int64_t> gradients;  ///< gradient evaluations reported, warm-up included (exact)

  /// Sizes the arrays for `chains` chains padded to `padded`. The state slots of the chains and
  /// of a SIMD path's ghost lanes are left unfilled: every backend writes them (first states,
  /// then every chunk, or a copy from the device) before anything reads them, and filling them
  /// first cost P1 1.7 MB of memset per run. Only the padding, which a scalar path never writes
  /// and a checkpoint saves, is zeroed.
  void allocate(std::int64_t slot_count, std::int64_t padded, std::int64_t chains) {
    stride = padded;
    auto n = std::size_t(padded);
    slots.resize(std::size_t(slot_count) * n);
    for (std::int64_t i = 0; i < slot_count; ++i)
      std::fill(slots.begin() + i * padded + chains, slots.begin() + (i + 1) * padded, T(0));
    window.assign(n, T(0));
    frozen.assign(n, 0);
    diverged_at.assign(n, -2);
    accepted.assign(n, 0);
    divergent.assign(n, 0);
    truncated.assign(n, 0);
    gradients.assign(n, 0);
  }
};

/// What one chunk produced besides the chains' new state: tracked sums of its kept steps.
struct chunk_output {
  std::vector<double> track;  ///< kept steps of the chunk × P::track_stride, summed over chains
};

}  // namespace ember
