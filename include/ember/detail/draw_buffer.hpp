#pragma once
// `draw_buffer<T>`: the host array of a run's recorded draws. A std::vector in cached host
// memory (host_cache.hpp) whose allocator leaves new elements uninitialised: every recorded draw
// is written by the chunk that keeps it, so zero-filling them first only wrote the array twice.
// A run also reserves the whole advance up front (run.hpp), so no chunk regrows and copies it.
//
// Transparent huge pages (madvise) were measured and left out (docs/performance.md, "Recording
// draws"): they cut the page faults of first touching a 51 MB recording from 12,500 to 25 and its
// cost from about 3.5 to 1.5 times the sampling it recorded, but the kernel compacts memory to
// find huge pages, and on this machine after hours of builds that stalled some runs by tens of
// milliseconds and the first 655 MB recording by 1.4 s. A library's timings should not depend on
// the state of the machine's free-page lists. Reusing the memory of earlier runs and results
// (host_cache.hpp) removes the faults for every run after the first of its size.

#include <ember/host_cache.hpp>

#include <cstddef>
#include <new>
#include <vector>

namespace ember::detail {

template <class T>
struct draw_allocator : host_allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = draw_allocator<U>;
  };

  draw_allocator() = default;
  template <class U>
  draw_allocator(draw_allocator<U> const&) noexcept {}

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
