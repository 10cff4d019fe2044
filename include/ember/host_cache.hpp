#pragma once
/// \file
/// The host memory of runs and results is kept for reuse: a freed block of 64 KiB or more (a
/// run's per-chain arrays, a result's final states and recorded draws) goes into a process-wide
/// cache instead of back to the system, and the next run of a similar size takes it from there.
///
/// Why: glibc returns blocks above 128 KiB to the kernel when they are freed, so every run paid
/// for its arrays again in page faults, one per 4 KiB first touched. A `sample()` of 10⁴ chains
/// at d = 10 (P1) faulted 380 times, a fifth of its 3.6 ms; a recording of 51 MB faulted 12,500
/// times and cost as long again as the sampling it recorded (bench/results/2026-11-23-p1-hot-path-passes.md, "Fourth pass",
/// and docs/performance.md, "Recording draws"). Programs that sample more than once (a benchmark, an EBM's training
/// loop, a sweep over settings) pay that once.
///
/// What it keeps: at most `host_cache().limit_bytes` of freed blocks (by default 1 GiB or an
/// eighth of the memory the process may use, whichever is smaller: physical memory, its cgroups'
/// limits (v1 or v2) or its rlimits, backend/detail/host_memory.hpp); a block larger than the limit goes straight back. Blocks are rounded up to eight size classes per power of two (at most 12.5 % unused) and
/// taken by exact class; when the cache is over its limit the blocks freed longest ago go first.
/// `set_host_cache_limit(0)` turns it off and returns everything; `release_host_cache()` returns
/// what is cached now. Thread-safe. Host memory only: the CUDA backend's device arrays are not
/// cached (cudaMalloc does not fault per page).
///
/// Pinned blocks: a device backend may page-lock a block it copies into (`pin`: the CUDA backend
/// registers a recording's block with cudaHostRegister before the first chunk of 1 MiB or more of
/// draws comes back, and a result's arrays of 1 MiB or more).
/// The block stays pinned while it is in use and while it is cached, and is unpinned when it goes
/// back to the system, or at exit. Blocks of 64 KiB or more start on a page and fill whole pages,
/// so that no two registrations overlap. Why: 164 MB of draws came from an H200 in 3.1 ms into pinned memory,
/// 20 ms into pageable memory already touched, and 160 ms into fresh pageable memory; pinning
/// fresh memory took 73 ms, touched memory 11 ms (bench/results/2026-11-29-gpu-h200-session2.md).

#include <ember/backend/detail/host_memory.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// What the cache holds and has done since the program started.
struct host_cache_stats {
  std::size_t cached_bytes = 0;  ///< freed bytes held for reuse now
  std::size_t limit_bytes = 0;   ///< the most it holds
  std::uint64_t reused = 0;      ///< requests served from the cache
  std::uint64_t fresh = 0;       ///< requests that allocated new memory (64 KiB or more)
  std::size_t pinned_bytes = 0;  ///< bytes of blocks page-locked for a device (in use or cached)
};

/// How a device backend page-locks host memory for its copies: `pin(p, bytes)` returns whether
/// it did; `unpin(p)` undoes it before the block goes back to the system.
struct host_pinning {
  bool (*pin)(void*, std::size_t) = nullptr;
  void (*unpin)(void*) = nullptr;
};

namespace detail {

class host_block_cache {
 public:
  static constexpr std::size_t min_bytes = std::size_t(64) << 10;  // below: glibc's heap reuses well
  static constexpr std::align_val_t alignment{64};                  // a cache line, an AVX-512 vector

  /// Blocks of min_bytes or more start on a page and fill whole pages, so that no two blocks share
  /// a page: a device pins a block's pages (`pin`), and the CUDA driver refuses a registration
  /// that overlaps another.
  static std::size_t page_bytes() {
    static std::size_t const p = [] {
      long const s = sysconf(_SC_PAGESIZE);
      return s >= 4096 && (s & (s - 1)) == 0 ? std::size_t(s) : std::size_t(4096);
    }();
    return p;
  }
  static std::align_val_t alignment_of(std::size_t cap) {
    return cap >= min_bytes ? std::align_val_t(page_bytes()) : alignment;
  }
  /// The bytes a block of capacity `cap` occupies (whole pages from min_bytes on).
  static std::size_t footprint(std::size_t cap) {
    return cap >= min_bytes ? (cap + page_bytes() - 1) / page_bytes() * page_bytes() : cap;
  }

  /// The bytes a request of n bytes occupies: n rounded up to one of eight classes per octave.
  static std::size_t capacity(std::size_t n) {
    if (n < min_bytes) return n;
    int const top = 63 - __builtin_clzll(n);  // 2^top ≤ n < 2^(top+1)
    std::size_t const step = std::size_t(1) << (top - 3);
    return (n + step - 1) / step * step;
  }

  static host_block_cache& instance() {
    // Never destroyed: a result with static storage duration may be freed after any destructor
    // of this header would have run. The blocks go back to the system with the process.
    static host_block_cache* const c = new host_block_cache;
    return *c;
  }

  void* allocate(std::size_t n) {
    std::size_t const cap = capacity(n);
    if (cap >= min_bytes) {
      std::lock_guard<std::mutex> lock(m_);
      for (std::size_t i = blocks_.size(); i-- > 0;)  // the most recently freed first
        if (blocks_[i].bytes == cap) {
          block const b = blocks_[i];
          live_.push_back(b);  // first: if it throws, the block is still cached
          blocks_.erase(blocks_.begin() + std::ptrdiff_t(i));
          cached_ -= cap;
          ++reused_;
          return b.ptr;
        }
      ++fresh_;
    }
    void* p = nullptr;
    try {
      p = ::operator new(footprint(cap), alignment_of(cap));
    } catch (std::bad_alloc const&) {
      release();  // what the cache holds may be what is missing
      p = ::operator new(footprint(cap), alignment_of(cap));
    }
    if (cap >= min_bytes) {
      std::lock_guard<std::mutex> lock(m_);
      try {
        live_.push_back({p, cap});
      } catch (...) {
        ::operator delete(p, alignment_of(cap));
        throw;
      }
    }
    return p;
  }

  void deallocate(void* p, std::size_t n) noexcept {
    std::size_t const cap = capacity(n);
    if (cap >= min_bytes) {
      std::lock_guard<std::mutex> lock(m_);
      bool pinned = false;
      for (std::size_t i = live_.size(); i-- > 0;)
        if (live_[i].ptr == p) {
          pinned = live_[i].pinned;
          live_[i] = live_.back();
          live_.pop_back();
          break;
        }
      if (cap <= limit_) {
        try {
          blocks_.push_back({p, cap, pinned});
        } catch (...) {  // no room to note it: give it back
          give_back_locked({p, cap, pinned});
          return;
        }
        cached_ += cap;
        trim_locked();
        return;
      }
      give_back_locked({p, cap, pinned});
      return;
    }
    ::operator delete(p, alignment);
  }

  /// Page-locks the block that starts at p (one this cache allocated, of 64 KiB or more) through
  /// the device's pinning, if it is not already; returns whether it is pinned. Memory that is not
  /// such a block, no pinning set, or a pinning that failed once (then it is not asked again)
  /// give false: the device copies into pageable memory as before. The cache's lock is held
  /// meanwhile (pinning 164 MB of fresh memory took 48–77 ms on an H200's host): other threads'
  /// allocations of 64 KiB or more wait that long.
  bool pin(void* p) {
    std::lock_guard<std::mutex> lock(m_);
    if (!pinning_.pin || pin_refused_) return false;
    for (auto& b : live_)
      if (b.ptr == p) {
        if (!b.pinned) {
          if (!pinning_.pin(p, footprint(b.bytes))) {
            pin_refused_ = true;
            return false;
          }
          b.pinned = true;
          pinned_ += footprint(b.bytes);
        }
        return true;
      }
    return false;
  }
  /// Set by a device backend (the same functions every time). Another pinning first unpins every
  /// block with the old one, and is asked again even if the old one refused.
  void set_pinning(host_pinning p) {
    std::lock_guard<std::mutex> lock(m_);
    if (p.pin != pinning_.pin || p.unpin != pinning_.unpin) {
      unpin_all_locked();
      pin_refused_ = false;
    }
    pinning_ = p;
    // At exit, before the device's runtime tears down (it registered its own handler at its first
    // call, before any pinning was set): unpin what is still pinned, so that nothing registered
    // outlives the program's end (compute-sanitizer's leak check counts each as an error).
    if (p.pin && !at_exit_set_) {
      std::atexit([] { instance().unpin_all(); });
      at_exit_set_ = true;
    }
  }
  /// Unpins every pinned block, in use or cached, and pins nothing more until a pinning is set
  /// again; the blocks stay where they are.
  void unpin_all() noexcept {
    std::lock_guard<std::mutex> lock(m_);
    unpin_all_locked();
    pinning_ = {};
  }

  void set_limit(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(m_);
    limit_ = bytes;
    trim_locked();
  }

  void release() noexcept {
    std::lock_guard<std::mutex> lock(m_);
    for (auto& b : blocks_) give_back_locked(b);
    blocks_.clear();
    cached_ = 0;
  }

  host_cache_stats stats() {
    std::lock_guard<std::mutex> lock(m_);
    return {cached_, limit_, reused_, fresh_, pinned_};
  }

 private:
  struct block {
    void* ptr;
    std::size_t bytes;
    bool pinned = false;
  };

  void unpin_all_locked() noexcept {
    for (auto* list : {&live_, &blocks_})
      for (auto& b : *list)
        if (b.pinned) {
          if (pinning_.unpin) pinning_.unpin(b.ptr);
          b.pinned = false;
        }
    pinned_ = 0;
  }

  // To the system, unpinned first if it was pinned.
  void give_back_locked(block const& b) noexcept {
    if (b.pinned) {
      if (pinning_.unpin) pinning_.unpin(b.ptr);
      pinned_ -= footprint(b.bytes);
    }
    ::operator delete(b.ptr, alignment_of(b.bytes));
  }

  host_block_cache() {
    // What the process may use: physical memory, its cgroups' limits, its rlimits (host_memory.hpp).
    long double const usable = detail::usable_memory().bytes;
    limit_ = std::size_t(std::min<long double>((long double)(std::size_t(1) << 30), usable / 8));
  }

  // Oldest first, until the cache is within its limit.
  void trim_locked() noexcept {
    std::size_t drop = 0;
    while (cached_ > limit_ && drop < blocks_.size()) {
      give_back_locked(blocks_[drop]);
      cached_ -= blocks_[drop].bytes;
      ++drop;
    }
    blocks_.erase(blocks_.begin(), blocks_.begin() + std::ptrdiff_t(drop));
  }

  std::mutex m_;
  std::vector<block> blocks_;  // in the order they were freed
  std::vector<block> live_;    // allocated and not yet freed (64 KiB or more), to know a block's size and pinning
  host_pinning pinning_;
  bool pin_refused_ = false, at_exit_set_ = false;
  std::size_t cached_ = 0, limit_ = 0, pinned_ = 0;
  std::uint64_t reused_ = 0, fresh_ = 0;
};

/// The allocator of ember's host arrays (per-chain arrays, results, recorded draws): blocks of
/// 64 KiB or more through the cache above, 64-byte aligned. New elements of a `host_vector` are
/// value-initialised as by std::allocator; arrays written in full once sized are `host_buffer`s
/// (below), which take the same memory and leave them unfilled.
template <class T>
struct host_allocator {
  using value_type = T;

  host_allocator() = default;
  template <class U>
  host_allocator(host_allocator<U> const&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::size_t(PTRDIFF_MAX) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(host_block_cache::instance().allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { host_block_cache::instance().deallocate(p, n * sizeof(T)); }

  template <class U>
  bool operator==(host_allocator<U> const&) const noexcept {
    return true;
  }
};

/// A std::vector in cached host memory.
template <class T>
using host_vector = std::vector<T, host_allocator<T>>;
/// A growable array of trivially copyable T in cached host memory whose new elements are left
/// uninitialised, for arrays written in full once sized (recorded draws, per-chain state slots,
/// a result's copies). Not a std::vector with a non-initialising allocator: std::vector grows by
/// constructing each new element, a loop that only the optimiser removes, and that loop over a
/// 12.8·10⁶-float recording cost 3 ms per advance in a translation unit built at -O1 (the
/// benchmark matrix's, bench/results/2026-11-23-matrix-compile-time-rounds.md). Here `resize` moves the end and nothing else. A run
/// reserves a whole advance of recorded draws up front (run/run.hpp), so no chunk regrows and copies
/// them. Transparent huge pages were measured for recordings and left out (docs/performance.md,
/// "Recording draws"): they cut a 51 MB recording's 12,500 page faults to 25, but the kernel
/// compacts memory to find huge pages, which on this machine after hours of builds stalled some
/// runs by tens of milliseconds; reusing freed memory removes the faults without that.
template <class T>
class host_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "ember::detail::host_buffer holds trivially copyable values only");

 public:
  using value_type = T;
  host_buffer() = default;
  explicit host_buffer(std::size_t n) { resize(n); }
  host_buffer(host_buffer const& o) : host_buffer(o.n_) {
    if (n_) std::memcpy(static_cast<void*>(p_), static_cast<void const*>(o.p_), n_ * sizeof(T));
  }
  host_buffer(host_buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), cap_(std::exchange(o.cap_, 0)) {}
  host_buffer& operator=(host_buffer o) noexcept {  // copy or move, then swap
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
    return *this;
  }
  ~host_buffer() {
    if (p_) host_allocator<T>().deallocate(p_, cap_);
  }

  T* data() noexcept { return p_; }
  T const* data() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }
  std::size_t capacity() const noexcept { return cap_; }
  bool empty() const noexcept { return n_ == 0; }
  T* begin() noexcept { return p_; }
  T* end() noexcept { return p_ + n_; }
  T const* begin() const noexcept { return p_; }
  T const* end() const noexcept { return p_ + n_; }
  T& operator[](std::size_t i) noexcept { return p_[i]; }
  T const& operator[](std::size_t i) const noexcept { return p_[i]; }
  T const& at(std::size_t i) const {
    if (i >= n_) throw std::out_of_range("ember::detail::host_buffer::at: index past the end");
    return p_[i];
  }

  /// Element-wise, as std::vector's.
  friend bool operator==(host_buffer const& a, host_buffer const& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

  /// Room for n elements; the first size() keep their values.
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    T* q = host_allocator<T>().allocate(n);
    if (n_) std::memcpy(static_cast<void*>(q), static_cast<void const*>(p_), n_ * sizeof(T));
    if (p_) host_allocator<T>().deallocate(p_, cap_);
    p_ = q;
    cap_ = n;
  }
  /// n elements: the first min(n, size()) keep their values, any new ones are uninitialised.
  void resize(std::size_t n) {
    if (n > cap_) reserve(std::max(n, 2 * cap_));
    n_ = n;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
};

}  // namespace detail

/// Limits the bytes of freed host memory kept for reuse (0: keep none, and return what is held).
inline void set_host_cache_limit(std::size_t bytes) { detail::host_block_cache::instance().set_limit(bytes); }
/// Returns every cached block to the system now; the cache stays on.
inline void release_host_cache() { detail::host_block_cache::instance().release(); }
/// What the cache holds and how often it served a request.
inline host_cache_stats host_cache() { return detail::host_block_cache::instance().stats(); }

}  // namespace ember
