#pragma once
/// \file
/// `benchmark::target<Family>{"name", args...}`: one row of a benchmark matrix's target axis. A
/// target family is a class template over the precision `T` whose instances follow the protocol
/// of `ember/targets/` (`dim`, `energy()`, `reported(x)`, `reference()`); `make<T>()` builds the
/// instance for one precision from the stored constructor arguments (a data file's path, say).
/// A user's own energy joins a matrix the same way: a small template with those four members.

#include <cstdint>
#include <tuple>
#include <utility>

namespace ember::benchmark {

template <template <class> class Family, class... Args>
struct target {
  char const* name;
  std::tuple<Args...> args{};
  /// Caps the chain count of this target's runs (0: none), for targets whose gradient is costly.
  std::int64_t max_chains = 0;

  template <class T>
  Family<T> make() const {
    return std::make_from_tuple<Family<T>>(args);
  }
};

/// `make_target<Family>("name", args...)`: a target whose instances are built as `Family<T>(args...)`.
template <template <class> class Family, class... Args>
target<Family, std::decay_t<Args>...> make_target(char const* name, Args&&... args) {
  return {name, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
}

}  // namespace ember::benchmark
