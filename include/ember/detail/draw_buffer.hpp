#pragma once
// `draw_buffer<T>`: the host array of a run's recorded draws. A std::vector whose allocator
//  - leaves new elements uninitialised (every recorded draw is written by the chunk that keeps
//    it, so zero-filling them first would only write the array twice), and
//  - backs large arrays (≥ 8 MiB) with 2 MiB-aligned memory marked for transparent huge pages on
//    Linux, so that first touching it faults once per 2 MiB instead of once per 4 KiB.
// Recording 128 chains × 1,000 draws × 100 coordinates (51 MB) cost more than the sampling it
// recorded with a plain vector: a zero fill, page faults, and a copy at every regrowth (a run
// now reserves the whole advance up front). docs/performance.md has the measurement.

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ember::detail {

template <class T>
struct draw_allocator {
  using value_type = T;
  static constexpr std::size_t huge = std::size_t(2) << 20, threshold = std::size_t(8) << 20;

  draw_allocator() = default;
  template <class U>
  draw_allocator(draw_allocator<U> const&) noexcept {}

  T* allocate(std::size_t n) {
    std::size_t const bytes = n * sizeof(T);
    if (bytes < threshold) return static_cast<T*>(::operator new(bytes));
    std::size_t const rounded = (bytes + huge - 1) / huge * huge;
    void* p = std::aligned_alloc(huge, rounded);
    if (!p) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages are ordinary
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < threshold)
      ::operator delete(p);
    else
      std::free(p);
  }
  /// Default-initialisation: no zero fill for arithmetic T.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(static_cast<A&&>(a)...);
  }
  template <class U>
  bool operator==(draw_allocator<U> const&) const noexcept {
    return true;
  }
};

template <class T>
using draw_buffer = std::vector<T, draw_allocator<T>>;

}  // namespace ember::detail
