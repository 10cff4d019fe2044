#pragma once
/// \file
/// A batch's lanes one at a time: masks to and from `bool` arrays, one lane's value read or set,
/// and per-lane 32-bit words (Philox counters) from `std::uint32_t` arrays, for code whose lanes
/// keep state of their own (a NUTS tree's doubling and leaf in each lane, kernel/nuts.hpp; the
/// lanes' own chains and transition indices, pipeline/fused_lanes.hpp). Written for every scalar
/// type: a `float` or `double` (a GPU thread, one chain) is one lane.

#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>

#include <cstdint>
#include <type_traits>

namespace ember {

/// Chains one value of `S` carries.
template <class S>
inline constexpr int lanes_of = scalar_traits<S>::width;

namespace detail {
/// Whether `S`'s masks are a register of bits, one a lane (AVX-512's k registers): built from and
/// read into bits directly (through a vector they made a NUTS lane-at-its-own-pace leaf on the
/// funnel a quarter slower).
template <class S>
constexpr bool bit_mask() {
  if constexpr (lanes_of<S> == 1)
    return false;
  else
    return std::is_integral_v<typename mask_t<S>::register_type>;
}
}  // namespace detail

/// `m`'s lanes into `out[0 .. lanes_of<S>)`.
template <class S>
EMBER_HD EMBER_INLINE void mask_lanes(mask_t<S> const& m, bool* out) {
  if constexpr (lanes_of<S> == 1) {
    out[0] = m;
  } else if constexpr (detail::bit_mask<S>()) {
    auto const bits = static_cast<std::uint64_t>(typename mask_t<S>::register_type(m));
    for (int i = 0; i < lanes_of<S>; ++i) out[i] = ((bits >> i) & 1u) != 0;
  } else {
    element_t<S> a[lanes_of<S>];
    select(m, S(element_t<S>(1)), S(element_t<S>(0))).store_unaligned(a);
    for (int i = 0; i < lanes_of<S>; ++i) out[i] = a[i] != element_t<S>(0);
  }
}

/// The mask whose lane i is bit i of `bits`.
template <class S>
EMBER_HD EMBER_INLINE mask_t<S> mask_from_bits(std::uint64_t bits) {
  if constexpr (lanes_of<S> == 1) {
    return (bits & 1u) != 0;
  } else if constexpr (detail::bit_mask<S>()) {
    return mask_t<S>(typename mask_t<S>::register_type(bits));
  } else {
    element_t<S> a[lanes_of<S>];
    for (int i = 0; i < lanes_of<S>; ++i) a[i] = ((bits >> i) & 1u) != 0 ? element_t<S>(1) : element_t<S>(0);
    return S::load_unaligned(a) != S(element_t<S>(0));
  }
}

/// The mask whose lanes are `in[0 .. lanes_of<S>)`.
template <class S>
EMBER_HD EMBER_INLINE mask_t<S> mask_from_lanes(bool const* in) {
  if constexpr (lanes_of<S> == 1) {
    return in[0];
  } else if constexpr (detail::bit_mask<S>()) {
    std::uint64_t bits = 0;
    for (int i = 0; i < lanes_of<S>; ++i) bits |= std::uint64_t(in[i]) << i;
    return mask_from_bits<S>(bits);
  } else {
    element_t<S> a[lanes_of<S>];
    for (int i = 0; i < lanes_of<S>; ++i) a[i] = in[i] ? element_t<S>(1) : element_t<S>(0);
    return S::load_unaligned(a) != S(element_t<S>(0));
  }
}

/// Lane `i` of `v` (a value or a mask).
template <class V>
EMBER_HD EMBER_INLINE auto get_lane(V const& v, int i) {
  if constexpr (std::is_arithmetic_v<V>)
    return v;
  else
    return v.get(std::size_t(i));
}

/// Sets lane `i` of `v` to `x` (a chain moved into a lane: pipeline/fused_lanes.hpp).
template <class S>
EMBER_HD EMBER_INLINE void set_lane(S& v, int i, element_t<S> x) {
  if constexpr (lanes_of<S> == 1) {
    v = x;
  } else {
    element_t<S> a[lanes_of<S>];
    v.store_unaligned(a);
    a[i] = x;
    v = S::load_unaligned(a);
  }
}
/// Sets lane `i` of the mask `m` of `S`'s lanes to `x`.
template <class S>
EMBER_HD EMBER_INLINE void set_lane_mask(mask_t<S>& m, int i, bool x) {
  bool a[lanes_of<S>];
  mask_lanes<S>(m, a);
  a[i] = x;
  m = mask_from_lanes<S>(a);
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
