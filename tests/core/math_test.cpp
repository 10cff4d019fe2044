// core/math.hpp's own float polynomial, log1p_unit (softplus's and log-add-exp's tail), against
// long double: every float in [½, 1], every 7th in [¼, ½), every 61st below down to 2⁻⁴⁰, every
// power of two down to the smallest subnormal, and 0; the same bits on one chain and on a SIMD batch; and the functions built
// on it (softplus, log_sum_exp of two, the logistic likelihood) against their double values.
#include <ember/core/dual.hpp>
#include <ember/core/math.hpp>
#include <ember/core/simd.hpp>
#include <ember/energy/regression.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

using namespace ember;

namespace {

using B = simd_batch<float>;

// |got − want| in units of the last place of `want` as a float (the spacing of floats at |want|,
// from want's own exponent; below the normal range, the subnormals' spacing).
double ulps(float got, long double want) {
  int e = std::max(std::ilogb(want), std::numeric_limits<float>::min_exponent - 1);
  return double(std::fabs((long double)got - want) / std::ldexp(1.0L, e - std::numeric_limits<float>::digits + 1));
}

std::array<float, B::size> lanes(B const& b) {
  std::array<float, B::size> a;
  b.store_unaligned(a.data());
  return a;
}

// The floats log1p_unit is checked on, in increasing order.
std::vector<float> unit_inputs() {
  std::vector<float> xs{0.f};
  for (float p = std::numeric_limits<float>::denorm_min(); p <= 1.f; p *= 2.f) xs.push_back(p);
  std::uint32_t const lo = std::bit_cast<std::uint32_t>(0x1p-40f), quarter = std::bit_cast<std::uint32_t>(0.25f),
                      half = std::bit_cast<std::uint32_t>(0.5f), one = std::bit_cast<std::uint32_t>(1.f);
  for (std::uint32_t b = lo; b < quarter; b += 61) xs.push_back(std::bit_cast<float>(b));
  for (std::uint32_t b = quarter; b < half; b += 7) xs.push_back(std::bit_cast<float>(b));
  for (std::uint32_t b = half; b <= one; ++b) xs.push_back(std::bit_cast<float>(b));
  return xs;
}

#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
constexpr double log1p_unit_bound = 1.4;  // measured 1.394 (at e = 0.979)
#else
constexpr double log1p_unit_bound = 1.75;  // two roundings in each of the 9 steps; measured 1.71
#endif

}  // namespace

// Which types take the polynomial: floats and float batches of every width, decided by the type
// (no specialisation a header could miss); never doubles or duals.
static_assert(is_float_lanes<float> && is_float_lanes<B>);
static_assert(!is_float_lanes<double> && !is_float_lanes<simd_batch<double>> && !is_float_lanes<dual<float, 2>> &&
              !is_float_lanes<dual<B, 2>>);
static_assert(std::is_void_v<xsimd::make_sized_batch_t<float, 8>> || is_float_lanes<xsimd::make_sized_batch_t<float, 8>>);

TEST_CASE("log1p_unit is within its stated ulps of ln(1 + e) on [0, 1], the same bits on a batch", "[core][math]") {
  auto xs = unit_inputs();
  while (xs.size() % B::size) xs.push_back(1.f);
  double worst = 0, worst_at = 0;
  std::int64_t differ = 0, zero_wrong = 0;
  for (std::size_t i = 0; i < xs.size(); i += B::size) {
    auto lb = lanes(log1p_unit(B::load_unaligned(&xs[i])));
    for (std::size_t l = 0; l < B::size; ++l) {
      float const x = xs[i + l], y = log1p_unit(x);
      differ += std::bit_cast<std::uint32_t>(y) != std::bit_cast<std::uint32_t>(lb[l]);
      if (x == 0.f) {
        zero_wrong += std::bit_cast<std::uint32_t>(y) != 0u;  // ln 1 = +0 exactly
        continue;
      }
      double const u = ulps(y, std::log1p((long double)x));
      if (u > worst) worst = u, worst_at = x;
    }
  }
  INFO("largest error " << worst << " ulp at e = " << worst_at << " over " << xs.size() << " inputs");
  CHECK(worst < log1p_unit_bound);
  CHECK(differ == 0);
  CHECK(zero_wrong == 0);
  // Doubles take log1p unchanged; a dual of floats takes the polynomial on its value.
  CHECK(log1p_unit(0.375) == std::log1p(0.375));
  auto const d = log1p_unit(dual<float, 1>::variable(0.375f, 0));
  CHECK(std::bit_cast<std::uint32_t>(d.val) == std::bit_cast<std::uint32_t>(log1p_unit(0.375f)));
  CHECK(d.d[0] == 1.f / 1.375f);
}

TEST_CASE("softplus, log_sum_exp of two and the logistic likelihood on floats stay within a few ulp of double",
          "[core][math]") {
  // Their float error is exp's (xsimd or libm, ≤ 1 ulp on e, which log1p(e)'s slope e/(1 + e) ≤ ½
  // halves) plus log1p_unit's 1.4 plus the sum's rounding: 3 ulp of the result covers it, where
  // a wrong branch or a dropped term is off by far more.
  std::vector<float> xs;
  for (int i = -4000; i <= 4000; ++i) xs.push_back(float(i) / 100.f);  // [−40, 40] in steps of 0.01
  for (float x : {-87.f, -50.f, 50.f, 87.f}) xs.push_back(x);
  while (xs.size() % B::size) xs.push_back(0.f);
  logistic_likelihood const lik;
  double worst_softplus = 0, worst_lse = 0, worst_lik = 0, worst_slope = 0;
  for (std::size_t i = 0; i < xs.size(); i += B::size) {
    B const x = B::load_unaligned(&xs[i]);
    B slope_b;
    auto const sp = lanes(softplus(x)), lse = lanes(log_sum_exp(x, B(0.5f))),
               lv = lanes(lik.value_and_slope(x, 1.f, slope_b)), sl = lanes(slope_b);
    for (std::size_t l = 0; l < B::size; ++l) {
      long double const d = xs[i + l];
      long double const sp_ref = std::fmax(d, 0.0L) + std::log1p(std::exp(-std::fabs(d)));
      worst_softplus = std::fmax(worst_softplus, std::fmax(ulps(sp[l], sp_ref), ulps(softplus(xs[i + l]), sp_ref)));
      long double const lse_ref = std::fmax(d, 0.5L) + std::log1p(std::exp(-std::fabs(d - 0.5L)));
      worst_lse = std::fmax(worst_lse, ulps(lse[l], lse_ref));
      // y = 1: ℓ = softplus(η) − η = softplus(−η), ℓ′ = σ(η) − 1 = −σ(−η). Both are checked
      // relative to themselves, so a term cancelled to rounding would show.
      long double const lik_ref = std::fmax(-d, 0.0L) + std::log1p(std::exp(-std::fabs(d)));
      long double const slope_ref = -1.0L / (1.0L + std::exp(d));
      // softplus(η) − η loses digits to cancellation for η ≫ 0: measure in ulps of the larger.
      worst_lik = std::fmax(worst_lik, double(std::fabs(lv[l] - lik_ref) /
                                              (std::ldexp(1.0L, std::ilogb(float(std::fmax(sp_ref, lik_ref))) - 23))));
      // σ(η) − 1 cancels for η ≫ 0, so the slope's error is absolute: in units of 2⁻²⁴, half an
      // ulp of 1.
      worst_slope = std::fmax(worst_slope, double(std::fabs(sl[l] - slope_ref) * 0x1p24L));
    }
  }
  INFO("softplus " << worst_softplus << ", log_sum_exp " << worst_lse << ", logistic value " << worst_lik
                   << " ulp, slope " << worst_slope << " × 2⁻²⁴");
  CHECK(worst_softplus < 3);
  CHECK(worst_lse < 3);
  CHECK(worst_lik < 3);
  CHECK(worst_slope < 3);
}
