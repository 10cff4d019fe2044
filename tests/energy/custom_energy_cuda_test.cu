// custom_energy on CUDA, and energies with data on CUDA.
//
// nvcc rejects a generic lambda marked __host__ __device__ as a custom energy's callable, so on
// CUDA the callable is a struct with a templated call operator; docs/custom_energies.md shows the
// code between the [functor] markers below. Cases tagged [nogpu] run on any machine (host
// evaluation, the host-memory check); the others sample on the GPU and are skipped without one.
#include <ember/backend/cuda.cuh>
#include <ember/energy/check_views.hpp>
#include <ember/data/dataset.hpp>
#include <ember/data/device.cuh>
#include <ember/energy/custom_energy.hpp>
#include <ember/energy/regression.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/sample.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

// [functor]
// U(x) = x₀²/8 + (x₁ − x₀²/4)²: a banana. One templated call operator serves every scalar type
// ember evaluates it with (float, dual numbers; SIMD batches on the CPU), on host and device.
struct banana_fn {
  float bend = 0.25f;
  template <class V>
  EMBER_HD auto operator()(V const& x) const {
    auto r = x[1] - bend * x[0] * x[0];
    return 0.125f * x[0] * x[0] + r * r;
  }
};
// [functor]

namespace {

// z-score of the mean over chains' final states of f against truth (independent chains).
template <class R, class F>
double z_of_mean(R const& r, F f, double truth) {
  double n = double(r.chains()), s = 0, q = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) s += f(r.final_state(c));
  for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(f(r.final_state(c)) - s / n, 2);
  return (s / n - truth) / std::sqrt(q / (n - 1) / n);
}

// A logistic regression of 43 rows × 3 (an intercept, a ramp, a sine), for the team cases.
struct rows43 {
  ember::dataset<float> X, y;
  rows43() : X(column(0), 43, 3), y(column(1), 43, 1) {}
  auto energy() const { return ember::logistic_regression<3>(X.view(), y.view(), ember::normal_prior{2.0}); }
  // 0: the design matrix, row-major; 1: the responses.
  static std::vector<float> column(int which) {
    std::vector<float> xv, yv;
    for (int i = 0; i < 43; ++i) {
      float t = -1.f + 2.f * float(i) / 42;
      xv.insert(xv.end(), {1.f, t, std::sin(3.f * float(i))});
      yv.push_back((0.3f + 1.2f * t + 0.5f * std::sin(5.f * float(i))) > 0 ? 1.f : 0.f);
    }
    return which == 0 ? xv : yv;
  }
};

}  // namespace

TEST_CASE("a functor custom energy evaluates on the host with the analytic gradient", "[custom_energy][cuda][nogpu]") {
  auto U = ember::custom_energy<2>(banana_fn{});
  ember::vec<float, 2> x{{0.7f, -0.3f}}, g;
  float u = U.value_and_grad(x, g);
  float r = -0.3f - 0.25f * 0.49f;
  CHECK(u == Approx(0.125f * 0.49f + r * r).epsilon(1e-6));
  CHECK(g[0] == Approx(0.25f * 0.7f - 4 * 0.25f * 0.7f * r).epsilon(1e-5));
  CHECK(g[1] == Approx(2 * r).epsilon(1e-6));
}

TEST_CASE("backend::cuda's data check refuses an energy whose data is in host memory", "[data][cuda][nogpu]") {
  ember::dataset<float> X(std::vector<float>{1, 0, 1, 1, 1, 2}, 3, 2), y(std::vector<float>{0, 1, 1}, 3, 1);
  auto U = ember::logistic_regression<2>(X.view(), y.view(), ember::normal_prior{1.0});
  auto k = ember::mala(U, {.step_size = 0.1});
  CHECK_THROWS_WITH(ember::require_device_views(k), Catch::Contains("points to host memory"));
}

TEST_CASE("mala samples a functor custom energy on the GPU", "[custom_energy][cuda]") {
  // [sample]
  auto U = ember::custom_energy<2>(banana_fn{});
  auto r = ember::sample(ember::mala(U, {.step_size = 0.3}) | ember::burn_in(2000),
                         {.chains = 100'000, .steps = 1, .seed = 17}, ember::backend::cuda{});
  // [sample]
  // x₀ ~ N(0, 4), x₁ | x₀ ~ N(x₀²/4, ½): E x₀ = 0, E x₀² = 4, E x₁ = 1, E x₁² = ½ + E x₀⁴/16 = 3.5.
  REQUIRE(r.divergent_chains() == 0);
  double const truth[4] = {0, 4, 1, 3.5};
  for (int d = 0; d < 2; ++d)
    for (int p = 1; p <= 2; ++p) {
      double z = z_of_mean(r, [&](auto const& x) { return std::pow(double(x[d]), p); }, truth[2 * d + p - 1]);
      INFO("coordinate " << d << ", moment " << p << ", z = " << z);
      CHECK(std::abs(z) < 5);
    }
}

TEST_CASE("a regression energy copied to the device samples its closed-form posterior on the GPU", "[data][cuda]") {
  // Linear regression with known noise σ and a N(0, s²I) prior, D = 2: the posterior is
  // N(A⁻¹Xᵀy/σ², A⁻¹) with A = XᵀX/σ² + I/s², inverted here by the 2 × 2 formula.
  constexpr int N = 40;
  std::vector<float> xv, yv;
  for (int i = 0; i < N; ++i) {
    float t = -1.f + 2.f * float(i) / (N - 1);
    xv.push_back(1.f);
    xv.push_back(t);
    yv.push_back(0.5f + 1.5f * t + 0.3f * std::sin(7.f * float(i)));
  }
  ember::dataset<float> X(xv, N, 2), y(yv, N, 1);
  double const sigma = 0.5, s = 2;
  double a00 = 1 / (s * s), a01 = 0, a11 = 1 / (s * s), b0 = 0, b1 = 0;
  for (int i = 0; i < N; ++i) {
    a00 += X(i, 0) * X(i, 0) / (sigma * sigma);
    a01 += X(i, 0) * X(i, 1) / (sigma * sigma);
    a11 += X(i, 1) * X(i, 1) / (sigma * sigma);
    b0 += X(i, 0) * y(i, 0) / (sigma * sigma);
    b1 += X(i, 1) * y(i, 0) / (sigma * sigma);
  }
  double det = a00 * a11 - a01 * a01;
  double c00 = a11 / det, c01 = -a01 / det, c11 = a00 / det;
  double m[2] = {c00 * b0 + c01 * b1, c01 * b0 + c11 * b1}, v[2] = {c00, c11};
  // [device]
  auto U = ember::linear_regression<2>(X.view(), y.view(), sigma, ember::normal_prior{s});
  auto dU = ember::to_device(U);  // owns the device copies of X and y until it goes out of scope
  ember::require_device_views(dU.energy());
  auto r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.01}) | ember::burn_in(1000),
                         {.chains = 50'000, .steps = 1, .seed = 23}, ember::backend::cuda{});
  // [device]
  CHECK(dU.bytes() == (2 * N + N) * sizeof(float));
  REQUIRE(r.divergent_chains() == 0);
  for (int d = 0; d < 2; ++d) {
    double zm = z_of_mean(r, [&](auto const& x) { return double(x[d]); }, m[d]);
    double zv = z_of_mean(r, [&](auto const& x) { return std::pow(double(x[d]) - m[d], 2); }, v[d]);
    INFO("coefficient " << d << ": z(mean) = " << zm << ", z(variance) = " << zv);
    CHECK(std::abs(zm) < 5);
    CHECK(std::abs(zv) < 5);
  }
}

TEST_CASE("backend::cuda's team size: automatic by data rows and chains, and checked", "[data][cuda][nogpu]") {
  using ember::detail::auto_team_size;
  CHECK(auto_team_size(128, 0) == 1);          // nothing split: a thread per chain
  CHECK(auto_team_size(128, 72) == 32);        // the breast-cancer regression's 72 blocks of 8 rows: 2 or 3 a member
  CHECK(auto_team_size(128, 13) == 4);         // at least two blocks a member
  CHECK(auto_team_size(1'000'000, 72) == 1);   // enough chains to fill a GPU without teams
  CHECK(auto_team_size(8'192, 72) == 16);      // 2^17 threads at most
  // What a team splits: a regression's blocks of 8 rows, through sums, kernels and pipelines;
  // nothing for a custom energy (whatever data it reads: a team would only repeat its work).
  std::vector<float> xv(34, 1.f), yv(17, 0.f);
  ember::dataset<float> X(xv, 17, 2), y(yv, 17, 1);
  auto const reg = ember::logistic_regression<2>(X.view(), y.view(), ember::normal_prior{1.0});
  CHECK(ember::team_blocks(reg) == 3);
  CHECK(ember::team_blocks(reg + ember::custom_energy<2>(banana_fn{})) == 3);
  CHECK(ember::team_blocks(ember::custom_energy<2>(banana_fn{})) == 0);
  CHECK(ember::team_blocks(ember::mala(reg, {.step_size = 0.1f}) | ember::burn_in(1)) == 3);
  for (int bad : {-1, 3, 64})
    CHECK_THROWS_WITH(ember::sample(ember::mala(ember::custom_energy<2>(banana_fn{}), {.step_size = 0.1f}) | ember::burn_in(1), {.chains = 4, .steps = 1},
                                    ember::backend::cuda{.threads_per_chain = bad}),
                      Catch::Contains("threads_per_chain must be 0 (automatic) or 1, 2, 4, 8, 16 or 32"));
}

TEST_CASE("a team of threads per chain computes a regression's energy and gradient", "[data][cuda]") {
  // A logistic regression of 43 rows (5 blocks of 8 and 3 rows left over: in a team of 32,
  // members 0-4 take a block, 5-7 a left-over row, the rest nothing). One MALA transition from the same start with teams
  // of 1, 4 and 32: the same proposal up to the rows' summation order, so the states agree to
  // float rounding (a gradient's error moves the proposal by step² · error).
  constexpr int D = 3;
  rows43 const data;
  auto dU = ember::to_device(data.energy());
  auto once = [&](int team, int block, std::int64_t chains) {
    return ember::sample(ember::mala(dU.energy(), {.step_size = 0.2}) | ember::record(), {.chains = chains, .steps = 1, .seed = 5},
                         ember::backend::cuda{.block_size = block, .threads_per_chain = team});
  };
  auto const r1 = once(1, 256, 257);
  for (int team : {4, 32}) {
    auto const rt = once(team, 256, 257);
    for (std::int64_t c = 0; c < 257; ++c)
      for (int d = 0; d < D; ++d) {
        INFO("team " << team << ", chain " << c << ", coordinate " << d);
        CHECK(std::abs(rt.final_state(c)[d] - r1.final_state(c)[d]) <= 1e-4f * (1 + std::abs(r1.final_state(c)[d])));
      }
    CHECK(rt.acceptance_rate() == Approx(r1.acceptance_rate()).epsilon(0.02));
    // The block size never changes a draw: 4,097 chains, so that blocks of 256 and of 64 threads
    // hold different numbers of chains (a team's blocks are spread over the multiprocessors).
    auto const big = once(team, 256, 4097), small = once(team, 64, 4097);
    for (std::int64_t c = 0; c < 4097; ++c)
      for (int d = 0; d < D; ++d) {
        INFO("team " << team << ", chain " << c << ", coordinate " << d);
        CHECK(small.final_state(c)[d] == big.final_state(c)[d]);
      }
  }
}

TEST_CASE("a regression sampled by teams of 32 threads per chain has one thread's posterior", "[data][cuda]") {
  // Chain means of 4,096 chains after 2,000 MALA transitions with a team of 32 against the same
  // on one thread per chain (independent runs: z of the difference), on the 43-row data above.
  constexpr int D = 3;
  rows43 const data;
  auto dU = ember::to_device(data.energy());
  auto const long_run = [&](int team, std::uint64_t seed) {
    return ember::sample(ember::mala(dU.energy(), {.step_size = 0.3}) | ember::burn_in(2000),
                         {.chains = 4096, .steps = 1, .seed = seed}, ember::backend::cuda{.threads_per_chain = team});
  };
  auto const a = long_run(32, 11), b = long_run(1, 12);
  REQUIRE(a.divergent_chains() == 0);
  REQUIRE(b.divergent_chains() == 0);
  for (int d = 0; d < D; ++d) {
    double ma = 0, mb = 0, va = 0, vb = 0, n = 4096;
    for (std::int64_t c = 0; c < 4096; ++c) ma += a.final_state(c)[d] / n, mb += b.final_state(c)[d] / n;
    for (std::int64_t c = 0; c < 4096; ++c)
      va += std::pow(a.final_state(c)[d] - ma, 2) / (n - 1), vb += std::pow(b.final_state(c)[d] - mb, 2) / (n - 1);
    double const z = (ma - mb) / std::sqrt(va / n + vb / n);
    INFO("coefficient " << d << ": team-of-32 mean " << ma << ", one-thread mean " << mb << ", z = " << z);
    CHECK(std::abs(z) < 5);
  }
}

TEST_CASE("teams track their chains once: the block sums of track() count the first member only", "[data][cuda]") {
  // A regression of 43 rows in teams of 32 and of 4, 257 chains, 20 MALA transitions with
  // track(moments, acceptance): at every kept step the live-chain count is the chain count (not
  // 32 times it), and the tracked mean at the last step is the mean of the final states.
  constexpr int D = 3;
  rows43 const data;
  auto dU = ember::to_device(data.energy());
  for (int team : {4, 32}) {
    auto const r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.2}) | ember::track(ember::moments, ember::acceptance),
                                 {.chains = 257, .steps = 20, .seed = 9}, ember::backend::cuda{.threads_per_chain = team});
    auto const& tr = r.trace();
    REQUIRE(tr.live_chains.size() == 20);
    for (auto n : tr.live_chains) CHECK(n == 257);
    for (int d = 0; d < D; ++d) {
      double m = 0;
      for (std::int64_t c = 0; c < 257; ++c) m += double(r.final_state(c)[d]) / 257;
      INFO("team " << team << ", coordinate " << d);
      CHECK(tr.mean.back()[d] == Approx(m).epsilon(1e-6).margin(1e-9));
    }
    CHECK(tr.acceptance.back() >= 0);
    CHECK(tr.acceptance.back() <= 1);
  }
}
