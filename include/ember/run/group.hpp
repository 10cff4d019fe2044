#pragma once
/// \file
/// The processes a run's chains are shared out over. A run asks its backend for a group
/// (`backend.group()`; `detail::group_of`): `one_process` for every backend of one process, an MPI
/// communicator's for `backend::mpi` (ember/mpi.hpp). The group gives this process its range of
/// the chains (`partition`) and the few collective operations that keep every process's decisions
/// the same: sums and a maximum over processes, and a gather of per-chain values in chain order.
/// With one process every operation is the identity, so a run of one process is unchanged.
///
/// Everything a run decides from more than its own chains (warm-up's pooled sums, its rescue of
/// stuck chains, the tuned kernel at the end of warm-up, chunk lengths, NUTS's pace) goes through
/// these operations in the same order on every process, from values gathered in global chain
/// order, so that every process decides alike and the draws do not depend on the process count.

#include <cstdint>
#include <exception>
#include <span>
#include <vector>

namespace ember {

/// This process's chains: global indices [first, first + count) of `total`.
struct chain_range {
  std::int64_t first = 0, count = 0, total = 0;
};

/// The group of a run that is one process.
struct one_process {
  int rank() const { return 0; }
  int size() const { return 1; }
  chain_range partition(std::int64_t chains) const { return {0, chains, chains}; }
  /// In place, Σ over processes.
  void sum(std::int64_t*, int) const {}
  void sum(double*, int) const {}
  double max(double v) const { return v; }
  /// Every process's values, in rank order (so in global chain order for per-chain values).
  template <class V>
  std::vector<V> all_gather(std::span<V const> mine) const {
    return {mine.begin(), mine.end()};
  }
  /// Every process says whether it failed (`e`: its exception, or null); if any did, every
  /// process throws (one process: `e` itself, rethrown).
  void agree(std::exception_ptr e) const {
    if (e) std::rethrow_exception(e);
  }
};

namespace detail {
/// Runs f and returns what it threw (null if nothing), for `group.agree`.
template <class F>
std::exception_ptr failure_of(F&& f) {
  try {
    f();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}
}  // namespace detail

namespace detail {
/// The group a backend's run is shared out over (one process unless the backend has `group()`).
template <class B>
auto group_of(B const& b) {
  if constexpr (requires { b.group(); })
    return b.group();
  else
    return one_process{};
}
}  // namespace detail

}  // namespace ember
