#pragma once
// Rank normalisation (Vehtari et al. 2021, §4.1) of millions of draws without sorting them.
//
// The exact transform is z = Φ⁻¹((r − 3/8)/(S + 1/4)) with r the average rank of a draw among all
// S pooled draws. Sorting 3·10⁶ draws per dimension costs ~0.1 s, so instead the draws are
// counted in 2¹⁶ bins keyed by the top 16 bits of their float pattern (sign, exponent and 7
// mantissa bits: a bin spans 1/128 of a binade, whatever the scale), with the smallest and the
// largest key seen in each bin. Within a bin, rank is interpolated linearly in the key between
// the exact ranks of its smallest and largest member, and z linearly between their normal
// scores. So z is exact for a draw alone in its bin, for ties (a bin with one distinct value gets
// its exact average rank), and at both ends of every bin; elsewhere a rank is off by at most the
// bin's count less one (tests compare with exact ranks). Draws are centred first (by a median of
// a subsample) so that a distribution far from 0 relative to its width still spreads over many
// bins.

#include <ember/detail/xsimd.hpp>  // <immintrin.h> for the AVX-512 gathers, under GCC 12's warning pragmas
#include <ember/diagnostics/detail/normal_quantile.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace ember::detail {

// Order-preserving map from float to uint32: flip all bits of negatives, the sign bit of the rest.
inline std::uint32_t float_key(float v) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
inline float key_float(std::uint32_t k) {
  return std::bit_cast<float>((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

struct rank_normalizer {
  static constexpr int bins = 1 << 16;
  // The keys of bin b are b·2¹⁶ + (0 … 2¹⁶ − 1), so the smallest and largest need 16 bits each:
  // 8-byte bins put the ~2,000 bins that hold 99% of 3.3·10⁶ Gaussian draws in 16 kB of L1
  // (0.14 against 0.20 s for 1.6·10⁸ draws with 16-byte bins).
  struct bin {
    std::uint32_t count;
    std::uint16_t lo, hi;  // low halves of the smallest and largest key counted
  };
  struct score {
    float z0, slope;  // z(k) = z0 + slope·(k mod 2¹⁶) for k in this bin: 8 bytes, one load
  };
  std::vector<bin> hist;         // one cache access per draw when counting
  std::uint32_t kmin(int b) const { return std::uint32_t(b) << 16 | hist[std::size_t(b)].lo; }
  std::uint32_t kmax(int b) const { return std::uint32_t(b) << 16 | hist[std::size_t(b)].hi; }
  std::vector<score> scores;     // and one when transforming
  std::vector<double> below;     // draws in bins before b
  double total = 0;

  void clear() {
    hist.assign(bins, bin{0, 0xffffu, 0});
    total = 0;
  }

  void add(float v) { add_key(float_key(v)); }
  // A bin's range grows about log(count) times, so branches that are almost never taken beat
  // conditional moves that store every time (0.16 against 0.21 s for 1.6·10⁸ draws).
  void add_key(std::uint32_t k) {
    bin& b = hist[k >> 16];
    auto const low = std::uint16_t(k);
    ++b.count;
    if (low < b.lo) [[unlikely]]
      b.lo = low;
    if (low > b.hi) [[unlikely]]
      b.hi = low;
  }

  // The histogram of |v| from that of v, without another pass over the draws: float_key(−v) =
  // ~float_key(v), so the draws of bin b ≥ 2¹⁵ (v ≥ 0) and of its mirror 2¹⁶ − 1 − b (v < 0)
  // fold into bin b, with the mirror's key range reflected (the low half of ~k is 2¹⁶ − 1 − that of k).
  void fold_from(rank_normalizer const& x) {
    clear();
    for (int b = bins / 2; b < bins; ++b) {
      bin const &p = x.hist[std::size_t(b)], &m = x.hist[std::size_t(bins - 1 - b)];
      bin& f = hist[std::size_t(b)];
      f.count = p.count + m.count;
      if (p.count) f.lo = p.lo, f.hi = p.hi;
      if (m.count)
        f.lo = std::min(f.lo, std::uint16_t(0xffffu - m.hi)), f.hi = std::max(f.hi, std::uint16_t(0xffffu - m.lo));
    }
  }

  // After all add(): prefix counts and the per-bin normal scores.
  void finish() {
    scores.assign(bins, score{0.f, 0.f});
    below.assign(bins, 0.0);
    double run = 0;
    for (int b = 0; b < bins; ++b) {
      below[std::size_t(b)] = run;
      run += hist[std::size_t(b)].count;
    }
    total = run;
    double const inv = 1 / (total + 0.25);
    for (int b = 0; b < bins; ++b) {
      auto const& h = hist[std::size_t(b)];
      auto& s = scores[std::size_t(b)];
      if (h.count == 0) continue;
      double const lo = below[std::size_t(b)];
      if (h.count == 1 || h.lo == h.hi) {
        s.z0 = float(normal_quantile((lo + (h.count + 1) * 0.5 - 0.375) * inv));
      } else {
        double za = normal_quantile((lo + 1 - 0.375) * inv), zb = normal_quantile((lo + h.count - 0.375) * inv);
        double const slope = (zb - za) / double(h.hi - h.lo);
        s.slope = float(slope);
        s.z0 = float(za - slope * double(h.lo));  // z at the bin's first key
      }
    }
  }

  // z of the keys k[0 … L) from the table s (scores.data()). With AVX-512, 16 keys take two
  // gathers of whole 8-byte entries and two permutes: 12% less time in diagnose's per-draw loop
  // than what GCC makes of the scalar loop for AMD targets (lane-by-lane loads and inserts).
  template <int L>
  static void lookup(score const* s, std::uint32_t const* k, float* z) {
#if defined(__AVX512F__)
    if constexpr (L % 16 == 0) {
      static_assert(sizeof(score) == sizeof(double));
      __m512i const even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      __m512i const odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
      auto const* table = reinterpret_cast<double const*>(s);
      for (int l = 0; l < L; l += 16) {
        __m512i const key = _mm512_loadu_si512(k + l), b = _mm512_srli_epi32(key, 16);
        __m512 const a0 = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_castsi512_si256(b), table, 8));
        __m512 const a1 = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_extracti64x4_epi64(b, 1), table, 8));
        __m512 const z0 = _mm512_permutex2var_ps(a0, even, a1), slope = _mm512_permutex2var_ps(a0, odd, a1);
        __m512 const low = _mm512_cvtepi32_ps(_mm512_and_si512(key, _mm512_set1_epi32(0xffff)));
        _mm512_storeu_ps(z + l, _mm512_fmadd_ps(slope, low, z0));
      }
      return;
    }
#endif
    for (int l = 0; l < L; ++l) z[l] = s[k[l] >> 16].z0 + s[k[l] >> 16].slope * float(k[l] & 0xffffu);
  }

  float z(float v) const { return z_of_key(float_key(v)); }
  float z_of_key(std::uint32_t k) const {
    score const& s = scores[k >> 16];
    return s.z0 + s.slope * float(k & 0xffffu);
  }

  // The value at rank fraction p (rank p·S, interpolated as above).
  float quantile(double p) const {
    double r = p * total;
    int b = 0;
    while (b + 1 < bins && below[std::size_t(b + 1)] < r) ++b;
    while (hist[std::size_t(b)].count == 0 && b > 0) --b;
    auto const& hb = hist[std::size_t(b)];
    double t = hb.count > 1 ? std::min(1.0, std::max(0.0, (r - below[std::size_t(b)] - 1) / double(hb.count - 1))) : 0.0;
    auto k = std::uint32_t(double(kmin(b)) + t * double(kmax(b) - kmin(b)) + 0.5);
    return key_float(k);
  }
};

}  // namespace ember::detail
