// diagnose(): rank-normalised split-R̂, bulk and tail ESS, ESS of x and (x − x̄)², against
// processes whose values are known (AR(1), shifted and rescaled chains, Cauchy draws), and the
// FFT, Φ⁻¹ and the rank histogram it is built on.
#include "ar1.hpp"

#include <ember/diagnostics/convergence.hpp>
#include <ember/diagnostics/ess.hpp>
#include <ember/diagnostics/rhat.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

using ember_test::ar1;

TEST_CASE("the lane-parallel FFT equals the DFT within Higham's error bound", "[diagnostics][fft]") {
  // Higham (Accuracy and Stability of Numerical Algorithms, Thm 24.2): a radix-2 FFT satisfies
  // ‖ŷ − y‖₂ ≤ log₂n · η/(1 − log₂n · η) ‖y‖₂ with η = μ + γ₄(√2 + μ) ≈ (1 + 4√2)u, μ the twiddle
  // error (≈ u, the unit roundoff). A radix-4 stage is two radix-2 levels.
  // `nonzero` < 0: a full input; else the input is zero from that index on (the padded case).
  auto run = [](auto zero, int n, int nonzero) {
    using T = decltype(zero);
    constexpr int L = 3;
    ember::detail::fft_plan<T, L> plan(n);
    std::vector<T> re(std::size_t(n) * L), im(std::size_t(n) * L);
    std::mt19937_64 g{std::uint64_t(n)};
    std::normal_distribution<double> z;
    for (auto& v : re) v = T(z(g));
    for (auto& v : im) v = T(z(g));
    for (std::size_t i = std::size_t(nonzero < 0 ? n : nonzero) * L; i < re.size(); ++i) re[i] = im[i] = 0;
    auto re0 = re, im0 = im;
    // The fused spectrum: forward(…, power) adds |X|² to what power held (here 1).
    std::vector<T> pre = re, pim = im, power(re.size(), T(1));
    plan.forward(pre.data(), pim.data(), nonzero, power.data());
    plan.forward(re.data(), im.data(), nonzero);
    double const u = std::numeric_limits<T>::epsilon() / 2;
    double const eta = u + 4 * u / (1 - 4 * u) * (std::numbers::sqrt2 + u);
    double const lg = std::log2(double(n)), bound = lg * eta / (1 - lg * eta);
    for (int l = 0; l < L; ++l) {
      long double err = 0, norm = 0, perr = 0;
      for (int f = 0; f < n; ++f) {
        std::complex<long double> s = 0;
        for (int t = 0; t < n; ++t) {
          long double a = -2 * std::numbers::pi_v<long double> * ((long double)((std::int64_t(f) * t) % n)) / n;
          s += std::complex<long double>(re0[std::size_t(t * L + l)], im0[std::size_t(t * L + l)]) *
               std::complex<long double>(std::cos(a), std::sin(a));
        }
        auto p = std::size_t(plan.pos[std::size_t(f)]) * L + std::size_t(l);
        err += std::norm(s - std::complex<long double>(re[p], im[p]));
        norm += std::norm(s);
        perr += std::abs((long double)power[p] - 1 - std::norm(s));
      }
      // Σ_f ||X̂|² − |X|²| ≤ ‖X̂ − X‖(‖X̂‖ + ‖X‖) ≤ β(2 + β)‖X‖², β = `bound`, plus the rounding
      // of the squares, their sum and the added 1 (4u of |X̂|² + 1 each).
      INFO("fused spectrum, n " << n << " nonzero " << nonzero << " lane " << l << ": L1 error " << double(perr));
      CHECK(double(perr) <= (bound * (2 + bound) + 4 * u * (1 + bound) * (1 + bound)) * double(norm) + 4 * u * n);
      INFO("n " << n << " nonzero " << nonzero << " lane " << l << ": relative error " << double(std::sqrt(err / norm)) << ", bound " << bound);
      if (norm == 0)
        CHECK(err == 0);
      else
        CHECK(double(std::sqrt(err / norm)) <= bound);
    }
  };
  for (int n : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024})
    for (int nonzero : {-1, n / 2, n / 3}) {
      run(0.0f, n, nonzero);
      run(0.0, n, nonzero);
    }
}

TEST_CASE("normal_quantile inverts the normal CDF to double precision", "[diagnostics]") {
  // Φ(x̂) − p: x̂'s relative error u·|x̂| moves Φ by φ(x̂)·|x̂|·u·|x̂|, at most (x̂² + 1)·u·Φ in the
  // tail (Mills ratio φ/Φ ≤ |x| + 1/|x|), and erfc adds a few ulp: 8(x̂² + 1)u·min(p, 1 − p).
  double const u = std::numeric_limits<double>::epsilon() / 2;
  for (double p : {1e-300, 1e-100, 1e-20, 1e-8, 1e-3, 0.02, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97575, 0.99, 1 - 1e-9}) {
    double x = ember::detail::normal_quantile(p);
    double back = p < 0.5 ? 0.5 * std::erfc(-x / std::numbers::sqrt2) : 1 - 0.5 * std::erfc(x / std::numbers::sqrt2);
    double err = p < 0.5 ? std::abs(back - p) : std::abs(0.5 * std::erfc(x / std::numbers::sqrt2) - (1 - p));
    INFO("p " << p << " x " << x);
    CHECK(err <= 8 * (x * x + 1) * u * std::min(p, 1 - p) + (p < 0.5 ? 0.0 : 4 * u));
  }
  CHECK(ember::detail::normal_quantile(0.5) == 0);
  CHECK(ember::detail::normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-14));
}

TEST_CASE("histogram ranks are within one bin count of exact average ranks, and exact for ties", "[diagnostics][ranks]") {
  // The claim of detail/rank_normalizer.hpp: the rank implied by z̃, r̃ = Φ(z̃)(S + 1/4) + 3/8,
  // and the exact average rank r both lie among the ranks of the draw's bin, so
  // |r̃ − r| ≤ count − 1 (plus float rounding of z̃: 1e-6 relative in z, times dr/dz); a bin of
  // equal draws gives exactly their average rank.
  std::mt19937_64 g(5);
  std::normal_distribution<double> z;
  std::cauchy_distribution<double> cy;
  std::vector<float> v;
  for (int i = 0; i < 200'000; ++i) v.push_back(float(z(g) * 0.01 + 1000));  // narrow, far from 0
  for (int i = 0; i < 100'000; ++i) v.push_back(float(cy(g) + 1000));          // heavy tails
  for (int i = 0; i < 50'000; ++i) v.push_back(float(1000 + std::floor(z(g))));  // ties
  ember::detail::rank_normalizer rn;
  rn.clear();
  float const centre = 1000.f;
  for (float x : v) rn.add(x - centre);
  rn.finish();
  std::vector<float> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  double const S = double(v.size());
  double worst = 0;
  for (std::size_t i = 0; i < v.size(); i += 7) {
    float x = v[i];
    auto lo = std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
    auto hi = std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
    double r = 0.5 * double(lo + 1 + hi);  // average rank of the ties
    double zt = rn.z(x - centre);
    double rt = 0.5 * std::erfc(-zt / std::numbers::sqrt2) * (S + 0.25) + 0.375;
    auto k = ember::detail::float_key(x - centre);
    double count = rn.hist[k >> 16].count;
    double dens = std::exp(-zt * zt / 2) / std::sqrt(2 * std::numbers::pi) * (S + 0.25);  // dr/dz
    double slack = 1e-6 * (std::abs(zt) + 1) * dens;
    worst = std::max(worst, std::abs(rt - r) / (count - 1 + slack));
    if (hi - lo == count) {  // the bin holds only this value: exact average rank
      INFO("tied value " << x << " count " << count << ": r " << r << " histogram " << rt);
      CHECK(std::abs(rt - r) <= slack + 1e-9 * r);
    } else {
      INFO("x " << x << ": r " << r << " histogram " << rt << ", bin count " << count);
      CHECK(std::abs(rt - r) <= count - 1 + slack);
    }
  }
  INFO("largest |r̃ − r| / (count − 1): " << worst);
  CHECK(worst <= 1);
}

namespace {
// Each estimate against its theoretical value, as a z-score with the relative sd of the estimator
// measured over 200 seeds at this size (M = 4, N = 20,000), written next to each case. The
// measured biases are at most 0.7 sd (tail ESS: Geyer's truncation and the estimated quantile
// pull it 1–3% low), so |z| ≤ 5 fails a correct estimator about once in 10⁵ seeds.
struct expect {
  double phi, sd_mean, sd_bulk, sd_sq, sd_tail;
};
}  // namespace

TEST_CASE("ESS of AR(1) chains matches N(1 - phi)/(1 + phi), and its x^2 and tail versions", "[diagnostics][ess]") {
  for (auto e : {expect{0.0, 0.0111, 0.0111, 0.0106, 0.0092}, expect{0.5, 0.0214, 0.0214, 0.0184, 0.0204},
                 expect{0.9, 0.0442, 0.0442, 0.0438, 0.0480}, expect{-0.5, 0.0247, 0.0247, 0.0200, 0.0170}}) {
    auto d = ar1(4, 20'000, e.phi, 77);
    auto c = ember::diagnose(d, d.M, d.N);
    double const S = double(d.M * d.N);
    REQUIRE(c.draws == d.M * d.N);
    double const want = S * ember_test::ess_fraction(e.phi), want_sq = S * ember_test::ess_sq_fraction(e.phi);
    double const want_tail = S * ember_test::tail_ess_fraction(e.phi, ember::detail::normal_quantile(0.05));
    INFO("phi " << e.phi << ": ESS(x) " << c.ess_mean << ", bulk " << c.ess_bulk << " (theory " << want << "); ESS(x²) "
                << c.ess_sq << " (theory " << want_sq << "); tail " << c.ess_tail << " (theory " << want_tail << ")");
    CHECK(std::abs(c.ess_mean / want - 1) / e.sd_mean < 5);
    CHECK(std::abs(c.ess_bulk / want - 1) / e.sd_bulk < 5);
    CHECK(std::abs(c.ess_sq / want_sq - 1) / e.sd_sq < 5);
    CHECK(std::abs(c.ess_tail / want_tail - 1) / e.sd_tail < 5);
    // R̂ of agreeing chains: sd over 200 seeds ≤ 5.4e-4 (φ = 0.9), mean 1 + 9.5e-4 there.
    CHECK(c.rhat < 1.005);
    CHECK(c.rhat > 0.997);
    // The mean and its Monte-Carlo standard error: x̄ ~ N(0, mcse²).
    CHECK(std::abs(c.mean) < 5 * c.mcse_mean);
    CHECK(c.sd == Approx(1).margin(5 * std::sqrt(2.0 / c.ess_sq)));
  }
}

TEST_CASE("antithetic chains have ESS above the number of draws but not for x^2", "[diagnostics][ess]") {
  // φ = −0.5: ESS(x) = 3S, ESS(x²) = 0.6S (relative sds 2.5% and 2%).
  auto d = ar1(4, 20'000, -0.5, 3);
  auto c = ember::diagnose(d, d.M, d.N);
  double const S = double(d.M * d.N);
  CHECK(c.ess_mean > 2.5 * S);
  CHECK(c.ess_bulk > 2.5 * S);
  CHECK(c.ess_sq < 0.7 * S);
}

TEST_CASE("R-hat exceeds 1.01 when chains are shifted or rescaled, and stays near 1 otherwise", "[diagnostics][rhat]") {
  using ember_test::chains;
  SECTION("shifted by half an sd in half the chains") {
    // Bulk R̂ over 200 seeds: 1.0326, sd 0.0029 (1.01 is 7.8 sd below); folded R̂ 1.0000, sd 0.0004.
    auto d = ar1(8, 1000, 0.0, 11, {0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5});
    auto c = ember::diagnose(d, d.M, d.N);
    CHECK(c.rhat_bulk > 1.01);
    CHECK(c.rhat > 1.01);
    CHECK(c.rhat_folded < 1.003);
  }
  SECTION("the same location, twice the scale in half the chains: only folding sees it") {
    // Folded R̂: 1.0738, sd 0.0040 (16 sd above 1.01); bulk R̂: 1.0000, sd 0.0004.
    auto d = ar1(8, 1000, 0.0, 12, {}, {1, 1, 1, 1, 2, 2, 2, 2});
    auto c = ember::diagnose(d, d.M, d.N);
    CHECK(c.rhat_folded > 1.01);
    CHECK(c.rhat_bulk < 1.003);
    CHECK(c.rhat == c.rhat_folded);
    CHECK(ember::split_rhat(d, d.M, d.N) < 1.003);  // the classic R̂ misses it
  }
  SECTION("agreeing chains") {
    // R̂ over 200 seeds: 1 + 1.4e-5, sd 2.8e-5.
    auto d = ar1(4, 20'000, 0.0, 13);
    CHECK(ember::diagnose(d, d.M, d.N).rhat < 1.001);
  }
}

TEST_CASE("rank normalisation lets R-hat see a shift in heavy-tailed chains", "[diagnostics][rhat]") {
  // Cauchy draws, half the chains shifted by one scale unit. On the raw draws the within-chain
  // variance is dominated by the tails and the classic split-R̂ is 1.00003 (sd 0.00027 over 200
  // seeds): blind. Rank-normalised: 1.0256, sd 0.0027, so 1.01 is 5.8 sd below it. Without a
  // shift the rank-normalised R̂ is 1.0002, sd 0.0003 (largest of 200: 1.0012).
  auto shifted = ember_test::cauchy(8, 1000, 21, {0, 0, 0, 0, 1, 1, 1, 1});
  auto c = ember::diagnose(shifted, 8, 1000);
  CHECK(c.rhat_bulk > 1.01);
  CHECK(ember::split_rhat(shifted, 8, 1000) < 1.005);
  auto same = ember_test::cauchy(8, 1000, 22, std::vector<double>(8, 0.0));
  CHECK(ember::diagnose(same, 8, 1000).rhat < 1.005);
  // The median is robust where the mean is not: the pooled median of the unshifted chains is
  // within 5 standard errors (π/(2√S) for the Cauchy) of 0.
  CHECK(std::abs(ember::diagnose(same, 8, 1000).median) < 5 * std::numbers::pi / (2 * std::sqrt(8000.0)));
}

TEST_CASE("diagnose handles odd lengths, float draws, tiny and constant input", "[diagnostics]") {
  auto d = ar1(3, 2001, 0.3, 4);
  auto c = ember::diagnose(d, 3, 2001);
  CHECK(c.draws == 3 * 2000);  // the middle draw of each chain is dropped
  auto as_float = [&](std::int64_t ch, std::int64_t i) { return float(d(ch, i)); };
  auto cf = ember::diagnose(as_float, 3, 2001);
  // The same statistics up to float rounding of the draws (relative 6e-8, far below these).
  CHECK(cf.ess_bulk == Approx(c.ess_bulk).epsilon(1e-4));
  CHECK(cf.rhat == Approx(c.rhat).epsilon(1e-5));
  CHECK(std::isnan(ember::diagnose(d, 3, 3).ess_bulk));
  CHECK(std::isnan(ember::diagnose(d, 3, 3).rhat));
  auto constant = [](std::int64_t, std::int64_t) { return 2.5; };
  auto k = ember::diagnose(constant, 4, 100);
  CHECK(k.mean == 2.5);
  CHECK(k.sd == 0);
  CHECK(std::isnan(k.ess_bulk));
  CHECK(std::isnan(k.rhat));
}

TEST_CASE("FFT autocovariances agree with direct lag sums when every lag is needed", "[diagnostics][ess]") {
  // φ = 0.98 (τ = 99) over halves of h = 200: Geyer's sequence runs over most lags, so a lag
  // that wrapped around in the FFT would show. Against the old ess(), direct lag sums with
  // Stan's truncation rule, which differs only in the last pair: measured 1.2% apart here.
  auto d = ar1(64, 400, 0.98, 8);
  auto c = ember::diagnose(d, d.M, d.N);
  double old = ember::ess(d, d.M, d.N);
  CHECK(c.ess_mean == Approx(old).epsilon(0.03));
  // (x − x̄)² is first transformed with n = 256, exact to lag 56 only; its sequence here reads to
  // the last lag, so it is transformed again with n = 512. Measured 1.1% from the direct sums;
  // the wrapped n = 256 lags alone would give 10%.
  auto sq = [&](std::int64_t ch, std::int64_t i) { return (d(ch, i) - c.mean) * (d(ch, i) - c.mean); };
  CHECK(c.ess_sq == Approx(ember::ess(sq, d.M, d.N)).epsilon(0.03));
}

TEST_CASE("bit-packed autocovariances of indicators equal direct sums at every lag", "[diagnostics][ess]") {
  // G(t) = Σ_j Σ_{i<h−t} (b_i − m_j)(b_{i+t} − m_j) from popcounts, against the direct sum in long
  // double. Both are sums of at most J·h terms of size ≤ 1, and the popcount form is exact
  // integers but for its last two terms: agreement to 16 ulp of J·h. Lengths around word edges,
  // densities from none to all ones (a constant series: G = 0).
  std::mt19937_64 g(11);
  for (std::int64_t h : {1, 3, 63, 64, 65, 127, 128, 130, 200}) {
    for (double p : {0.0, 0.05, 0.5, 0.95, 1.0}) {
      std::int64_t const J = 7, words = (h + 63) / 64;
      std::vector<std::uint64_t> bits(std::size_t((words + 1) * J), 0u);
      std::vector<std::vector<int>> b(J, std::vector<int>(std::size_t(h)));
      std::bernoulli_distribution coin(p);
      for (std::int64_t j = 0; j < J; ++j)
        for (std::int64_t i = 0; i < h; ++i) {
          // Runs: a new coin with probability 0.3, else the previous bit, so lags are correlated.
          int v = i > 0 && std::uniform_real_distribution<>(0, 1)(g) > 0.3 ? b[j][std::size_t(i - 1)] : int(coin(g));
          b[j][std::size_t(i)] = v;
          bits[std::size_t((i / 64) * J + j)] |= std::uint64_t(v) << (i % 64);
        }
      ember::detail::bit_autocovariance G(bits.data(), J, h);
      double const tol = 16 * std::numeric_limits<double>::epsilon() * double(J * h);
      for (std::int64_t t = 0; t < h; ++t) {
        long double direct = 0;
        for (std::int64_t j = 0; j < J; ++j) {
          long double m = 0;
          for (int v : b[j]) m += v;
          m /= h;
          for (std::int64_t i = 0; i + t < h; ++i) direct += (b[j][std::size_t(i)] - m) * (b[j][std::size_t(i + t)] - m);
        }
        INFO("h " << h << " p " << p << " lag " << t);
        CHECK(std::abs(G(t) - double(direct)) <= tol);
      }
    }
  }
}

TEST_CASE("the 16-key table lookup equals the one-key lookup", "[diagnostics][ranks]") {
  // rank_normalizer::lookup (gathers with AVX-512) against z_of_key: the same z0 + slope·low,
  // one rounding apart at most (fused or not): 2 ulp of |z0| + |slope·low|.
  std::mt19937_64 g(12);
  std::normal_distribution<double> z;
  ember::detail::rank_normalizer rn;
  rn.clear();
  std::vector<float> v;
  for (int i = 0; i < 100'000; ++i) v.push_back(float(z(g)));
  for (float x : v) rn.add(x);
  rn.finish();
  std::uint32_t keys[32];
  float out[32];
  for (std::size_t i = 0; i + 32 <= v.size(); i += 32) {
    for (int l = 0; l < 32; ++l) keys[l] = ember::detail::float_key(v[i + std::size_t(l)]);
    ember::detail::rank_normalizer::lookup<32>(rn.scores.data(), keys, out);
    for (int l = 0; l < 32; ++l) {
      auto const& s = rn.scores[keys[l] >> 16];
      double const size = std::abs(s.z0) + std::abs(s.slope * float(keys[l] & 0xffffu));
      CHECK(std::abs(out[l] - rn.z_of_key(keys[l])) <= 2 * std::numeric_limits<float>::epsilon() * size);
    }
  }
}
