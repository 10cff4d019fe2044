#pragma once
// `draw_buffer<T>`: the host array of a run's recorded draws. A std::vector whose allocator
//  - leaves new elements uninitialised: every recorded draw is written by the chunk that keeps
//    it, so zero-filling them first only wrote the array twice;
//  - backs arrays of 8 to 64 MiB with 2 MiB-aligned memory marked for transparent huge pages on
//    Linux, so that first touching it faults once per 2 MiB instead of once per 4 KiB.
// Recording 128 chains × 1,000 draws × 100 coordinates (51 MB) cost 3.6 times the ChEES sampling
// it recorded with a plain vector (a zero fill, 12,500 page faults, a copy at each regrowth, now
// gone since a run reserves the whole advance up front) and costs 1.5 times now
// (`bench/record_cost.cpp`, docs/performance.md). Above 64 MiB the pages stay ordinary: the
// kernel may have to compact memory to find hundreds of huge pages, and on a fragmented machine
// that made the first run recording 655 MB take 1.4 s longer instead of 0.2 s shorter.

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
  static constexpr std::size_t huge = std::size_t(2) << 20, low = std::size_t(8) << 20,
                               high = std::size_t(64) << 20;

  draw_allocator() = default;
  template <class U>
  draw_allocator(draw_allocator<U> const&) noexcept {}

  static bool huge_pages(std::size_t n) { return n * sizeof(T) >= low && n * sizeof(T) <= high; }

  T* allocate(std::size_t n) {
    if (!huge_pages(n)) return static_cast<T*>(::operator new(n * sizeof(T)));
    std::size_t const rounded = (n * sizeof(T) + huge - 1) / huge * huge;
    void* p = std::aligned_alloc(huge, rounded);
    if (!p) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages are ordinary
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (huge_pages(n))
      std::free(p);
    else
      ::operator delete(p);
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
