#pragma once
// The CPU's two backends, for tests that check both: f(backend::cpu{...}) then
// f(backend::scalar{...}), with the same threads and block.
#include <ember/ember.hpp>

#include <cstdint>

namespace ember_test {

template <class F>
void for_each_cpu_backend(F&& f, int threads = 0, std::int64_t block = 0) {
  f(ember::backend::cpu{.threads = threads, .block = block});
  f(ember::backend::scalar{.threads = threads, .block = block});
}

}  // namespace ember_test
