#pragma once
/// \file
/// `diagnose(x, chains, draws)`: the convergence diagnostics of Vehtari, Gelman, Simpson,
/// Carpenter & Bürkner (2021), "Rank-normalization, folding, and localization: an improved R̂
/// for assessing convergence of MCMC", for one scalar quantity drawn by several chains.
///
/// Every chain of n draws is split into two halves of h = ⌊n/2⌋ draws (the middle draw of an odd
/// n is dropped), giving J = 2·chains sequences and S = J·h draws. For a quantity q:
///  - W = mean over halves of the within-half variance s_j², B = variance of the half means,
///    var⁺ = (h − 1)/h · W + B, and split-R̂(q) = √(var⁺ / W).
///  - the autocorrelation at lag t pools the halves, ρ_t = 1 − (W − ā_t)/var⁺, with ā_t the mean
///    over halves of the autocovariance (1/h) Σ_i (q_i − q̄_j)(q_{i+t} − q̄_j): for x, z and
///    (x − x̄)² by FFT, every lag read exact (below); for the two indicators, which are bits, by
///    popcounts, exactly, one lag at a time for as many lags as Geyer's sequence reads.
///  - Geyer's initial monotone sequence: pairs Γ_k = ρ_{2k} + ρ_{2k+1} are summed while
///    positive and forced non-increasing; τ = −1 + 2 Σ Γ_k + max(ρ_{2K}, 0) (the last term, of the
///    pair that failed, reduces the variance for antithetic chains); ESS(q) = S / max(τ, 1/log₁₀ S).
///    τ < 1, hence ESS > S, happens for antithetic chains (negative lag-1 correlation).
///
/// The quantities:
///  - z = Φ⁻¹((r − 3/8)/(S + 1/4)), r the rank of a draw among all S pooled draws (rank
///    normalisation: finite variance for any distribution, so heavy tails cannot hide a
///    disagreement between chains). Bulk ESS = ESS(z); bulk R̂ = split-R̂(z).
///  - folded draws |x − m|, rank-normalised the same way, with m the median of 2¹⁴ draws spread
///    over all chains (within about 0.01 sd of the pooled median; folding at any fixed point
///    measures spread): folded R̂ catches chains that agree in location but not in scale.
///  - I(x ≤ q₀.₀₅) and I(x ≤ q₀.₉₅): tail ESS = the smaller of their ESS, which governs the
///    precision of the 5% and 95% quantiles.
///  - (x − x̄)²: its ESS governs the estimate of the variance; for antithetic chains it can be far
///    below the ESS of x (issue 11: 129,496 for x against 645 for x², from 64,000 draws).
/// R̂ = max(bulk R̂, folded R̂). MCSE of the mean = sd / √ESS(x), with ESS(x) on the draws
/// themselves (no rank normalisation: the mean is a statement about x).
///
/// Ranks come from a 2¹⁶-bin histogram rather than a sort (detail/rank_normalizer.hpp): exact
/// at the ends of every bin and for ties, interpolated in between, so a rank is off by less than
/// its bin's count. The FFTs run in float, 16 chains at once (detail/fft.hpp). Cost and the
/// measured floor of each part: docs/diagnostics.md.

#include <ember/diagnostics/detail/fft.hpp>
#include <ember/diagnostics/detail/normal_quantile.hpp>
#include <ember/diagnostics/detail/rank_normalizer.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace ember {

/// What `diagnose` finds for one scalar quantity (NaN where undefined: fewer than 4 draws per
/// chain, or no variance).
struct convergence {
  double mean = 0;        ///< x̄ over all S used draws
  double sd = 0;          ///< √(Σ(x − x̄)²/(S − 1))
  double mcse_mean = 0;   ///< Monte-Carlo standard error of x̄: sd / √ess_mean
  double median = 0;      ///< the pooled median (from the rank histogram)
  double ess_mean = 0;    ///< ESS(x), no rank normalisation
  double ess_bulk = 0;    ///< ESS(z), z the rank-normalised draws
  double ess_tail = 0;    ///< min(ESS(I(x ≤ q₀.₀₅)), ESS(I(x ≤ q₀.₉₅)))
  double ess_sq = 0;      ///< ESS((x − x̄)²)
  double rhat_bulk = 0;   ///< split-R̂(z)
  double rhat_folded = 0; ///< split-R̂ of the rank-normalised |x − m|, m ≈ the median
  double rhat = 0;        ///< max(rhat_bulk, rhat_folded)
  std::int64_t draws = 0; ///< S = 2·chains·⌊n/2⌋, the draws used
};

namespace detail {

// ESS from pooled autocorrelations ρ(t), t < h, by Geyer's initial monotone sequence (above).
// `reach`, if given, receives the largest lag read.
template <class Rho>
double geyer_ess(Rho const& rho, std::int64_t h, double S, std::int64_t* reach = nullptr) {
  double tau = -1, prev = std::numeric_limits<double>::infinity(), last_even = 0;
  std::int64_t t = 0;
  if (reach) *reach = 0;
  for (; t + 1 < h - 3; t += 2) {
    if (reach) *reach = t + 1;
    double even = t == 0 ? 1.0 : rho(t), pair = even + rho(t + 1);
    if (!(pair > 0)) {
      last_even = even;
      break;
    }
    pair = std::min(pair, prev);
    prev = pair;
    tau += 2 * pair;
  }
  tau += std::max(last_even, 0.0);
  tau = std::max(tau, 1 / std::log10(S));
  return S / tau;
}

// Buffers reused across calls (one per thread in summaries).
struct diagnose_workspace {
  static constexpr int lanes = 16;  // chains per block: one AVX-512 register of floats (8 and 32 measured slower or equal)
  static constexpr int quantities = 5;  // x − x̄, (x − x̄)², z, I(z ≤ z₀.₀₅), I(z ≤ z₀.₉₅)
  static constexpr int transformed = 3;  // the first three by FFT, the indicators as bits
  rank_normalizer ranks, folded;
  std::vector<std::uint64_t> bits;  // the indicators: [indicator][word][series]
  std::vector<float> val, re, im, lane_power;
  std::vector<double> super_d;  // super_*: B·L chains × draws, float draws kept float
  std::vector<float> super_f;
  std::vector<double> power, sample, fft_re, fft_im;
};

// Per-half moments of one quantity, summed over halves: Σ (m_j − ref), Σ (m_j − ref)², Σ SS_j.
struct half_sums {
  double m = 0, m2 = 0, ss = 0, ref = 0;
  void add(double mean, double sumsq) {
    m += mean - ref;
    m2 += (mean - ref) * (mean - ref);
    ss += sumsq;
  }
  // W and var⁺ for J halves of h draws.
  double within(double J, double h) const { return ss / (J * (h - 1)); }
  double var_plus(double J, double h) const { return (h - 1) / h * within(J, h) + (m2 - m * m / J) / (J - 1); }
  double rhat(double J, double h) const { return std::sqrt(var_plus(J, h) / within(J, h)); }
};

// Autocovariance sums of J binary series of h bits: G(t) = Σ_j Σ_{i<h−t} (b_i − m_j)(b_{i+t} − m_j),
// m_j = n_j/h with n_j the ones of series j; bit i of series j is bit i mod 64 of
// bits[⌊i/64⌋·J + j], and word ⌈h/64⌉ (a padding word) and the bits past h are zero. With
// P(t) = Σ_j Σ_i b_i b_{i+t} (popcounts of the words and the words shifted by t), E = Σ_j n_j²
// and F(t) = Σ_j n_j (ones among the first t bits + ones among the last t bits of series j):
// G(t) = P(t) − (2E − F(t))/h + (h − t)·E/h². All but the last two terms are integers, so G(t)
// is exact to double rounding. Lags are computed when first asked for, in increasing order:
// Geyer's sequence of a tail indicator usually stops within 20 lags, and a lag costs one pass
// over J·⌈h/64⌉ words (0.5 MB for 8,192 chains of 400 draws), against an FFT over all draws.
struct bit_autocovariance {
  std::uint64_t const* bits;
  std::int64_t J, h, words;
  std::vector<std::int64_t> ones;  // n_j
  std::vector<double> G;           // G(t) for the lags computed so far
  double E = 0;
  std::int64_t F = 0;

  bit_autocovariance(std::uint64_t const* b, std::int64_t series, std::int64_t length)
      : bits(b), J(series), h(length), words((length + 63) / 64), ones(std::size_t(series), 0) {
    for (std::int64_t k = 0; k < words; ++k)
      for (std::int64_t j = 0; j < J; ++j) ones[std::size_t(j)] += std::popcount(bits[k * J + j]);
    for (auto n : ones) E += double(n) * double(n);
  }

  double operator()(std::int64_t t) {
    while (std::int64_t(G.size()) <= t) next();
    return G[std::size_t(t)];
  }

 private:
  std::int64_t bit(std::int64_t j, std::int64_t i) const { return std::int64_t(bits[(i / 64) * J + j] >> (i % 64) & 1u); }

  void next() {
    std::int64_t const t = std::int64_t(G.size());
    std::int64_t const q = t / 64;
    unsigned const r = unsigned(t % 64);
    std::int64_t P = 0;
    for (std::int64_t k = 0; k + q < words; ++k) {
      std::uint64_t const *a = bits + k * J, *b0 = bits + (k + q) * J, *b1 = bits + (k + q + 1) * J;
      if (r == 0)
        for (std::int64_t j = 0; j < J; ++j) P += std::popcount(a[j] & b0[j]);
      else
        for (std::int64_t j = 0; j < J; ++j) P += std::popcount(a[j] & (b0[j] >> r | b1[j] << (64 - r)));
    }
    double const hd = double(h);
    G.push_back(double(P) - (2 * E - double(F)) / hd + double(h - t) * E / (hd * hd));
    // F(t + 1) = F(t) + Σ_j n_j (b_t + b_{h−1−t}).
    if (t < h)
      for (std::int64_t j = 0; j < J; ++j) F += ones[std::size_t(j)] * (bit(j, t) + bit(j, h - 1 - t));
  }
};

// The whole computation; x(c, i) is draw i of chain c. Two passes over the draws: a histogram
// for the ranks (that of the folded draws follows from it), then per block of 16 chains the
// quantities, their half moments, their FFTs and the indicators' bits. A third pass only where
// the sequence of (x − x̄)² reads past the lags its shorter transform gives exactly.
template <class F>
convergence diagnose(F const& x, std::int64_t M, std::int64_t N, diagnose_workspace& w) {
  constexpr int L = diagnose_workspace::lanes, Q = diagnose_workspace::quantities;
  convergence out;
  double const nan = std::numeric_limits<double>::quiet_NaN();
  std::int64_t const h = N / 2, second = N - h;
  if (M < 1 || h < 2) {
    out = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, 0};
    return out;
  }
  double const J = double(2 * M), S = J * double(h);
  out.draws = std::int64_t(S);
  auto used = [&](std::int64_t i) { return i < h || i >= second; };

  // Centre: the median of about 2¹⁴ draws spread over all chains. The float keys of the ranks
  // are taken of x − centre, and the folding is |x − centre| (see the file comment).
  w.sample.clear();
  std::int64_t const stride = std::max<std::int64_t>(1, std::int64_t(S) / 16384);
  for (std::int64_t k = 0; k < std::int64_t(S); k += stride) {
    std::int64_t c = k / (2 * h), i = k % (2 * h);
    w.sample.push_back(double(x(c, i < h ? i : second + (i - h))));
  }
  auto mid = w.sample.begin() + std::ptrdiff_t(w.sample.size() / 2);
  std::nth_element(w.sample.begin(), mid, w.sample.end());
  double const centre = std::isfinite(*mid) ? *mid : 0.0;

  // Pass 1: moments and the histogram of x − centre (that of |x − centre| follows from it).
  // Per draw, 256 chains at a time (small enough to leave the histogram's busy bins in L1): the
  // values copied as they come (`omp simd` over x(c, i) itself made gathers), their moments and
  // keys as vectors (L partial sums, not one chain of dependent additions), then the histogram.
  constexpr std::int64_t chunk = 256;
  w.ranks.clear();
  double p1[L] = {}, p2[L] = {};
  for (std::int64_t i = 0; i < N; ++i) {
    if (!used(i)) continue;
    for (std::int64_t c1 = 0; c1 < M; c1 += chunk) {
      std::int64_t const width = std::min(chunk, M - c1);
      double row[chunk];
      std::uint32_t keys[chunk];
      for (std::int64_t c = 0; c < width; ++c) row[c] = double(x(c1 + c, i));
      for (std::int64_t c0 = 0; c0 < width; c0 += L) {
        int const lanes = int(std::min<std::int64_t>(L, width - c0));
#pragma omp simd
        for (int l = 0; l < lanes; ++l) {
          double const v = row[c0 + l] - centre;
          p1[l] += v;
          p2[l] += v * v;
          keys[c0 + l] = float_key(float(v));
        }
      }
      for (std::int64_t c = 0; c < width; ++c) w.ranks.add_key(keys[c]);
    }
  }
  double s1 = 0, s2 = 0;
  for (int l = 0; l < L; ++l) s1 += p1[l], s2 += p2[l];
  w.folded.fold_from(w.ranks);
  w.ranks.finish();
  w.folded.finish();
  out.mean = centre + s1 / S;
  double const var = std::max(0.0, (s2 - s1 * s1 / S) / (S - 1));
  out.sd = std::sqrt(var);
  out.median = centre + double(w.ranks.quantile(0.5));
  float const z05 = float(normal_quantile(0.05)), z95 = float(normal_quantile(0.95));
  double const mean = out.mean;

  // Pass 2, per block of L chains: the quantities, their half moments, and the power spectra of
  // the centred halves, two halves per complex FFT (first half real, second imaginary). The sum
  // of the two halves' power spectra is (|Z(f)|² + |Z(−f)|²)/2; its inverse transform is the
  // real part of that of |Z(f)|², so |Z|² is accumulated as it comes, in the FFT's output order.
  // An n-point transform of the zero-padded halves gives the lags t ≤ n − h exactly (the longer
  // ones wrap around). A quantity whose Geyer sequence usually ends early gets n ≥ 1.25h first
  // (256 rather than 512 for h = 200: under half the work) and is transformed again with n ≥ 2h,
  // where no lag wraps, if its sequence reads past lag n − h. Either way every lag used is exact.
  using value_t = std::remove_cvref_t<decltype(x(0, 0))>;  // float draws stay float here
  // B blocks per super-block: 16, or fewer when there are fewer chains.
  int const B = int(std::min<std::int64_t>(16, (M + L - 1) / L));
  auto& super_buffer = [&]() -> auto& {
    if constexpr (std::is_same_v<value_t, float>)
      return w.super_f;
    else
      return w.super_d;
  }();
  super_buffer.resize(std::size_t(N) * std::size_t(B) * L);
  using store_t = typename std::remove_reference_t<decltype(super_buffer)>::value_type;
  store_t* const w_raw = super_buffer.data();
  std::int64_t super = 0;
  // The stored series: x − x̄, (x − x̄)², z, and the folded z (for its R̂ only).
  constexpr int T = diagnose_workspace::transformed, V = T + 1;
  w.val.assign(std::size_t(V) * std::size_t(N) * L, 0.f);
  std::int64_t const words = (h + 63) / 64, series = 2 * M;
  w.bits.assign(std::size_t(2 * (words + 1) * series), 0u);
  auto bits = [&](int k, std::int64_t word) { return w.bits.data() + (k * (words + 1) + word) * series; };
  auto val = [&](int q, std::int64_t i) { return w.val.data() + (std::size_t(q) * std::size_t(N) + std::size_t(i)) * L; };
  half_sums sums[Q + 1];
  double ess[Q];
  int const full = next_pow2(2 * h), part = std::min(full, next_pow2(h + h / 4 + 1));
  fft_plan<float, L> const plan_full(full), plan_part(part);
  auto plan_of = [&](int n) -> fft_plan<float, L> const& { return n == full ? plan_full : plan_part; };
  // The half sums, and the spectra of quantity q with nq[q]-point transforms (none where 0).
  auto spectra = [&](int const (&nq)[T]) {
    int const n = full;  // the stride of the spectra
    w.re.assign(std::size_t(n) * L, 0.f);
    w.im.assign(std::size_t(n) * L, 0.f);
    w.lane_power.assign(std::size_t(T) * std::size_t(n) * L, 0.f);
    w.power.assign(std::size_t(T) * std::size_t(n), 0.0);
    for (auto& s : sums) s = {};
    sums[1].ref = var;
    // Float partial sums of |Z|² per lane, moved into double every 16 blocks.
    auto flush = [&] {
      for (int q = 0; q < T; ++q)
        for (int j = 0; j < nq[q]; ++j) {
          float* p = w.lane_power.data() + (std::size_t(q) * std::size_t(n) + std::size_t(j)) * L;
          double s = 0;
          for (int l = 0; l < L; ++l) s += p[l], p[l] = 0.f;
          w.power[std::size_t(q) * std::size_t(n) + std::size_t(j)] += s;
        }
    };
    std::int64_t blocks = 0;
    for (std::int64_t c0 = 0; c0 < M; c0 += L, ++blocks) {
      int const valid = int(std::min<std::int64_t>(L, M - c0));
      // Draws are copied B·L chains at a time (B·L adjacent values of a row of a result at
      // once, rather than L: a sixteenth of the page walks), into raw[i][chain − super].
      if (c0 % (B * L) == 0) {
        super = c0;
        std::int64_t const width = std::min<std::int64_t>(B * L, M - c0);
        for (std::int64_t i = 0; i < N; ++i) {
          if (!used(i)) continue;
          store_t* r = w_raw + std::size_t(i) * std::size_t(B) * L;
          for (std::int64_t l = 0; l < width; ++l) r[l] = store_t(x(c0 + l, i));
          // Ghost lanes hold a constant, which centring turns into zeros.
          for (std::int64_t l = width; l < std::int64_t(B) * L; ++l) r[l] = store_t(centre);
        }
      }
      // The quantities, and per half their sums relative to the half's first value (so that a
      // constant half has exactly zero variance).
      // The indicators go into words of 64 draws, lo[l] and hi[l] for I(z ≤ z₀.₀₅), I(z ≤ z₀.₉₅).
      float base[V][2][L], acc[V][2][L] = {};
      std::uint64_t lo[L] = {}, hi[L] = {};
      for (std::int64_t i = 0; i < N; ++i) {
        if (!used(i)) continue;
        int const half = i < h ? 0 : 1;
        std::int64_t const at = half == 0 ? i : i - second;  // the draw's index in its half
        std::uint64_t const bit = std::uint64_t(1) << (at % 64);
        store_t const* src = w_raw + std::size_t(i) * std::size_t(B) * L + std::size_t(c0 - super);
        float *v0 = val(0, i), *v1 = val(1, i), *v2 = val(2, i), *v3 = val(3, i);
        rank_normalizer::score const *zt = w.ranks.scores.data(), *ft = w.folded.scores.data();
        std::uint32_t keys[2][L];
#pragma omp simd
        for (int l = 0; l < L; ++l) {
          double const r = double(src[l]);
          double const d = r - mean;
          // One key for both lookups: the key of |c| is that of c, or its complement for c < 0.
          std::uint32_t const k = float_key(float(r - centre));
          keys[0][l] = k;
          keys[1][l] = k & 0x80000000u ? k : ~k;
          v0[l] = float(d);
          v1[l] = float(d * d);
        }
        rank_normalizer::lookup<L>(zt, keys[0], v2);
        rank_normalizer::lookup<L>(ft, keys[1], v3);
#pragma omp simd
        for (int l = 0; l < L; ++l) {
          lo[l] |= v2[l] <= z05 ? bit : 0u;
          hi[l] |= v2[l] <= z95 ? bit : 0u;
        }
        if (at % 64 == 63 || at == h - 1) {
          std::uint64_t *a = bits(0, at / 64) + half * M + c0, *b = bits(1, at / 64) + half * M + c0;
          for (int l = 0; l < valid; ++l) a[l] = lo[l], b[l] = hi[l];
          for (int l = 0; l < L; ++l) lo[l] = hi[l] = 0;
        }
        float const* v[V] = {v0, v1, v2, v3};
        if (i == 0 || i == second)
          for (int q = 0; q < V; ++q)
            for (int l = 0; l < L; ++l) base[q][half][l] = v[q][l];
        for (int q = 0; q < V; ++q)
          for (int l = 0; l < L; ++l) acc[q][half][l] += v[q][l] - base[q][half][l];
      }
      for (int q = 0; q < V; ++q) {
        for (int half = 0; half < 2; ++half) {
          std::int64_t const start = half == 0 ? 0 : second;
          // The centred values go into the FFT buffer, their sum of squares into W.
          float m[L], ss[L] = {};
          for (int l = 0; l < L; ++l) m[l] = base[q][half][l] + acc[q][half][l] / float(h);
          float* dst = start == 0 ? w.re.data() : w.im.data();
          for (std::int64_t i = 0; i < h; ++i) {
            float const* v = val(q, start + i);
            float* o = dst + std::size_t(i) * L;
            for (int l = 0; l < L; ++l) {
              o[l] = v[l] - m[l];
              ss[l] += o[l] * o[l];
            }
          }
          for (int l = 0; l < valid; ++l) sums[q == T ? Q : q].add(m[l], ss[l]);
        }
        if (q == T || nq[q] == 0) continue;
        std::fill(w.re.begin() + std::ptrdiff_t(h) * L, w.re.begin() + std::ptrdiff_t(nq[q]) * L, 0.f);
        std::fill(w.im.begin() + std::ptrdiff_t(h) * L, w.im.begin() + std::ptrdiff_t(nq[q]) * L, 0.f);
        plan_of(nq[q]).forward(w.re.data(), w.im.data(), int(h), w.lane_power.data() + std::size_t(q) * std::size_t(n) * L);
      }
      if (blocks % 16 == 15) flush();
    }
    flush();
  };

  // The ESS of quantity q from its nq[q]-point spectrum; sets nq[q] to `full` where Geyer's
  // sequence read a lag past nq[q] − h, else to 0.
  auto estimate = [&](int (&nq)[T]) {
    bool redo = false;
    for (int q = 0; q < T; ++q) {
      int const n = nq[q];
      if (n == 0) continue;
      nq[q] = 0;
      // G(t) = Re Σ_f P(f) e^{−2πi f t/n} / n = Σ_halves Σ_i c_i c_{i+t}, with P(f) stored at pos[f].
      auto const& plan = plan_of(n);
      fft_plan<double, 1> inv(n);
      double const hd = double(h);
      w.fft_re.assign(std::size_t(n), 0.0);
      w.fft_im.assign(std::size_t(n), 0.0);
      for (int f = 0; f < n; ++f) w.fft_re[std::size_t(f)] = w.power[std::size_t(q) * std::size_t(full) + std::size_t(plan.pos[std::size_t(f)])];
      inv.forward(w.fft_re.data(), w.fft_im.data());
      double const W = sums[q].within(J, hd), vp = sums[q].var_plus(J, hd);
      if (!(W > 0) || !std::isfinite(vp)) {
        ess[q] = nan;
        continue;
      }
      auto rho = [&](std::int64_t t) {
        double const abar = w.fft_re[std::size_t(inv.pos[std::size_t(t)])] / double(n) / (J * hd);
        return 1 - (W - abar) / vp;
      };
      std::int64_t reach = 0;
      ess[q] = geyer_ess(rho, h, S, &reach);
      if (reach > n - h) nq[q] = full, redo = true;
    }
    return redo;
  };

  // x and z: full transforms at once, since their Geyer sequences often read past lag h/4 (to
  // the last lag: in 31 of the 50 dimensions of bench/summary_cost's MALA run, 8,192 chains ×
  // 400 draws, and about 40% of AR(1) runs of that shape); (x − x̄)² in none of them.
  int nq[T] = {full, part, full};
  spectra(nq);
  if (estimate(nq)) {
    spectra(nq);
    estimate(nq);
  }
  // The indicators, from their bits: exact half sums (n ones: mean n/h, SS = n − n²/h) and
  // autocovariances.
  for (int k = 0; k < 2; ++k) {
    bit_autocovariance G(bits(k, 0), series, h);
    half_sums& s = sums[3 + k];
    s.ref = k == 0 ? 0.05 : 0.95;
    double const hd = double(h);
    for (auto n : G.ones) s.add(double(n) / hd, double(n) - double(n) * double(n) / hd);
    double const W = s.within(J, hd), vp = s.var_plus(J, hd);
    if (!(W > 0) || !std::isfinite(vp)) {
      ess[3 + k] = nan;
      continue;
    }
    ess[3 + k] = geyer_ess([&](std::int64_t t) { return 1 - (W - G(t) / (J * hd)) / vp; }, h, S);
  }

  out.ess_mean = ess[0];
  out.ess_sq = ess[1];
  out.ess_bulk = ess[2];
  out.ess_tail = std::min(ess[3], ess[4]);
  if (std::isnan(ess[3]) || std::isnan(ess[4])) out.ess_tail = nan;
  out.mcse_mean = out.sd / std::sqrt(out.ess_mean);
  auto rh = [&](half_sums const& s) {
    double const hd = double(h), W = s.within(J, hd);
    return W > 0 ? s.rhat(J, hd) : nan;
  };
  out.rhat_bulk = rh(sums[2]);
  out.rhat_folded = rh(sums[Q]);
  out.rhat = std::max(out.rhat_bulk, out.rhat_folded);
  if (std::isnan(out.rhat_bulk) || std::isnan(out.rhat_folded)) out.rhat = nan;
  return out;
}

}  // namespace detail

/// Rank-normalised split-R̂ (max of bulk and folded), bulk and tail ESS, ESS of x and of
/// (x − x̄)², mean, sd and MCSE of one scalar quantity; `x(c, i)` is draw i of chain c, for
/// `chains` chains of `draws` draws each. Host only, one thread.
template <class F>
convergence diagnose(F const& x, std::int64_t chains, std::int64_t draws) {
  detail::diagnose_workspace w;
  return detail::diagnose(x, chains, draws, w);
}

}  // namespace ember
