// Large full-covariance Gaussians on CUDA (issue 10): gaussian<float, 784> and
// gaussian<double, 512> keep their precision matrix on the heap, as a data view; to_device copies
// it to the GPU like a data set and hands backend::cuda a trivially copyable energy. Cases tagged
// [nogpu] run on any machine (types, the host-memory check); the others sample on the GPU and
// are skipped without one. The CPU twin is in gaussian_eigen_test.cpp.
#include <ember/backend/cuda.cuh>
#include <ember/energy/check_views.hpp>
#include <ember/data/device.cuh>
#include <ember/energy/gaussian.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/sample.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace {

// μᵢ from −1 to 1 and Σᵢⱼ = ρ^{|i−j|} (AR(1): eigenvalues in [(1−ρ)/(1+ρ), (1+ρ)/(1−ρ)]), built
// on the heap (D = 784 rows of std::array would overflow the stack).
template <class T, int D>
ember::gaussian<T, D> large_gaussian(double rho) {
  ember::vec<T, D> mu;
  for (int i = 0; i < D; ++i) mu[i] = T(-1 + 2.0 * i / (D - 1));
  auto cov = std::make_unique<std::array<std::array<T, D>, D>>();
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) (*cov)[i][j] = T(std::pow(rho, std::abs(i - j)));
  return ember::gaussian<T, D>(mu, *cov);
}

using device_float_784 = decltype(ember::to_device(std::declval<ember::gaussian<float, 784> const&>()).energy());
using device_double_512 = decltype(ember::to_device(std::declval<ember::gaussian<double, 512> const&>()).energy());
static_assert(std::is_trivially_copyable_v<std::remove_cvref_t<device_float_784>>,
              "the device form of gaussian<float, 784> travels in a kernel argument");
static_assert(std::is_trivially_copyable_v<std::remove_cvref_t<device_double_512>>);
static_assert(sizeof(std::remove_cvref_t<device_float_784>) < 785 * sizeof(float) + 64,
              "the device form holds the mean and a view, not the matrix");
static_assert(!std::is_trivially_copyable_v<ember::gaussian<float, 784>>, "the host form owns its matrix");
// Small Gaussians are unchanged: the precision stays inside the energy and to_device keeps the type.
static_assert(std::is_same_v<std::remove_cvref_t<decltype(ember::to_device(std::declval<ember::gaussian<float, 8> const&>()).energy())>,
                             ember::gaussian<float, 8>>);

// x ~ N(μ, Σ) ⇒ 2U(x) ~ χ²_D: the z-score of the mean of 2U over the chains' final states.
template <class R, class U>
double chi2_z(R const& r, U const& energy) {
  constexpr int D = U::dim;
  double s = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) s += 2 * double(energy.value(r.final_state(c)));
  double m = s / double(r.chains());
  return (m - D) / std::sqrt(2.0 * D / double(r.chains()));
}

}  // namespace

TEST_CASE("a large gaussian's heap precision is a data view that backend::cuda refuses in host memory",
          "[energy][gaussian][cuda][nogpu]") {
  auto U = large_gaussian<float, 784>(0.3);
  CHECK(ember::count_views(U) == 1);
  auto k = ember::mala(U, {.step_size = 0.05});
  CHECK_THROWS_WITH(ember::require_device_views(k), Catch::Contains("points to host memory"));
  CHECK_NOTHROW(ember::require_host_views(k));
}

TEMPLATE_TEST_CASE_SIG("mala samples gaussian<float, 784> and gaussian<double, 512> on the GPU: 2U is chi-squared",
                       "[energy][gaussian][cuda]", ((class T, int D), T, D), (float, 784), (double, 512)) {
  auto U = large_gaussian<T, D>(D == 784 ? 0.3 : 0.5);
  auto dU = ember::to_device(U);  // owns the device copy of the precision matrix
  CHECK(dU.bytes() == std::size_t(D) * D * sizeof(T));
  ember::require_device_views(dU.energy());
  // One draw per chain after a burn-in of many relaxation times (λ_max/η ≤ 3/0.05 = 60 steps per
  // e-fold, 500 steps; 2U relaxes at twice that rate), as in the CPU test.
  auto r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.05}) | ember::burn_in(500),
                         {.chains = 4096, .steps = 1, .seed = 5}, ember::backend::cuda{});
  REQUIRE(r.divergent_chains() == 0);
  CHECK(r.acceptance_rate() > 0.3);
  double z = chi2_z(r, U);
  INFO("D = " << D << ": z of the mean of 2U against chi-squared = " << z);
  CHECK(std::abs(z) < 5);
}
