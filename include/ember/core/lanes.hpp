#pragma once
/// \file
/// A batch's lanes one at a time: masks to and from `bool` arrays and per-lane 32-bit words
/// (Philox counters) from `std::uint32_t` arrays, for code whose lanes keep integer state of
/// their own (a NUTS tree's doubling and leaf in each lane, kernel/nuts.hpp; the lanes' own
/// transition indices, pipeline/fused_lanes.hpp). Written for every scalar type: a `float` or
/// `double` (a GPU thread, one chain) is one lane.

#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>

#include <cstdint>

namespace ember {

/// Chains one value of `S` carries.
template <class S>
inline constexpr int lanes_of = scalar_traits<S>::width;

/// `m`'s lanes into `out[0 .. lanes_of<S>)`.
template <class S>
EMBER_HD EMBER_INLINE void mask_lanes(mask_t<S> const& m, bool* out) {
  if constexpr (lanes_of<S> == 1) {
    out[0] = m;
  } else {
    element_t<S> a[lanes_of<S>];
    select(m, S(element_t<S>(1)), S(element_t<S>(0))).store_unaligned(a);
    for (int i = 0; i < lanes_of<S>; ++i) out[i] = a[i] != element_t<S>(0);
  }
}

/// The mask whose lanes are `in[0 .. lanes_of<S>)`.
template <class S>
EMBER_HD EMBER_INLINE mask_t<S> mask_from_lanes(bool const* in) {
  if constexpr (lanes_of<S> == 1) {
    return in[0];
  } else {
    element_t<S> a[lanes_of<S>];
    for (int i = 0; i < lanes_of<S>; ++i) a[i] = in[i] ? element_t<S>(1) : element_t<S>(0);
    return S::load_unaligned(a) != S(element_t<S>(0));
  }
}

/// The mask of lane `lane` alone.
template <class S>
EMBER_HD EMBER_INLINE mask_t<S> one_lane(int lane) {
  bool in[lanes_of<S>] = {};
  in[lane] = true;
  return mask_from_lanes<S>(in);
}

/// Per-lane 32-bit words (`rng_traits<S>::u32`) from `in[0 .. lanes_of<S>)`.
template <class S>
EMBER_HD EMBER_INLINE typename rng_traits<S>::u32 words_from_lanes(std::uint32_t const* in) {
  using U = typename rng_traits<S>::u32;
  if constexpr (lanes_of<S> == 1) {
    return U(in[0]);
  } else {
    typename U::value_type a[U::size];
    for (std::size_t i = 0; i < U::size; ++i) a[i] = in[i];
    return U::load_unaligned(a);
  }
}

}  // namespace ember
