#pragma once
/// \file
/// `vec<T, D>`: the fixed-size vector every energy, kernel and integrator works on.

#include <ember/core/config.hpp>

namespace ember {

/// A fixed-size array of `D` values of scalar type `T`, trivially copyable and usable on the host
/// and the device. `T` is any scalar ember computes with: `float`, `double`, a SIMD batch of
/// chains or a dual number. An aggregate: `vec<float, 2>{{1.f, 2.f}}`.
template <class T, int D>
struct vec {
  static_assert(D > 0, "ember::vec needs a positive dimension D");
  using value_type = T;
  static constexpr int dim = D;

  T v[D];

  EMBER_HD constexpr T& operator[](int i) { return v[i]; }
  EMBER_HD constexpr T const& operator[](int i) const { return v[i]; }
  EMBER_HD static constexpr int size() { return D; }
};

/// A vector with every component equal to `a` (a scalar or something convertible to `T`).
template <class T, int D, class A>
EMBER_HD constexpr vec<T, D> filled(A const& a) {
  vec<T, D> r;
  for (int i = 0; i < D; ++i) r[i] = T(a);
  return r;
}

}  // namespace ember
