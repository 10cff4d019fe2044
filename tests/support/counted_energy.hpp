#pragma once
// An energy that counts its gradient evaluations, one per chain (a SIMD batch counts its width).
// One run at a time, on one thread: the count is a plain integer.
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

#include <cstdint>

namespace ember_test {

template <class E>
struct counted_energy {
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  E e;
  std::int64_t* count;
  template <class S>
  S value(ember::vec<S, dim> const& x) const {
    return e.value(x);
  }
  template <class S>
  S value_and_grad(ember::vec<S, dim> const& x, ember::vec<S, dim>& g) const {
    *count += ember::scalar_traits<S>::width;
    return e.value_and_grad(x, g);
  }
};

}  // namespace ember_test
