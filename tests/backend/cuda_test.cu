// Tests of backend::cuda (ember/backend/cuda.cuh). The sampler checks are one body each
// (generic/sampler_checks.hpp), instantiated here for backend::cuda and in cuda_test_cpu.cpp for
// backend::cpu; the comparisons run the same pipelines on both. Tests tagged [nogpu] run everywhere; the
// others need a device, and the binary's main (support/cuda_catch_main.cpp) skips them with
// ctest's code 77 when there is none.
#include "generic/sampler_checks.hpp"

#include <ember/backend/cuda.cuh>
#include <ember/sample.hpp>

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {
using namespace ember_test;
constexpr int D = p1_dim;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
}  // namespace

TEST_CASE("ula on a Gaussian follows its exact finite-step law on the GPU", "[backend][cuda][ula]") {
  ula_follows_exact_law(ember::backend::cuda{});
}

TEST_CASE("mala leaves a Gaussian invariant on the GPU", "[backend][cuda][mala]") {
  mala_leaves_gaussian_invariant(ember::backend::cuda{});
}

TEST_CASE("a chain's draws on the GPU are its draws on the CPU", "[backend][cuda]") {
  // Same seed, same chain index, same counters: only floating-point contraction differs.
  auto pipe = compare_ula_pipe();
  auto opt = compare_ula_opt;
  auto g = sample(pipe, opt, backend::cuda{.block_size = 128});
  auto h = cpu_compare_ula();
  REQUIRE(g.samples().kept == h.samples().kept);
  double worst = 0;
  for (std::size_t j = 0; j < g.samples_.size(); ++j)
    worst = std::max(worst, std::abs(double(g.samples_[j]) - double(h.samples_[j])) / (1 + std::abs(double(h.samples_[j]))));
  CHECK(worst < 1e-4);
  for (std::size_t j = 0; j < g.final_.size(); ++j) CHECK(g.final_[j] == Approx(h.final_[j]).margin(1e-4));
  for (std::size_t k = 0; k < h.trace().mean.size(); ++k) {
    CHECK(g.trace().live_chains[k] == h.trace().live_chains[k]);
    CHECK(g.trace().energy[k] == Approx(h.trace().energy[k]).epsilon(1e-4));
    for (int i = 0; i < D; ++i) {
      CHECK(g.trace().mean[k][i] == Approx(h.trace().mean[k][i]).margin(1e-4));
      CHECK(g.trace().variance[k][i] == Approx(h.trace().variance[k][i]).epsilon(1e-4));
    }
  }
  // The partition of chains into blocks and rounds changes nothing: bitwise on one device.
  auto g2 = sample(pipe, opt, backend::cuda{.block_size = 64});
  CHECK(g2.samples_ == g.samples_);
}

TEST_CASE("mala chains and acceptance agree between GPU and CPU", "[backend][cuda]") {
  auto opt = compare_mala_opt;
  auto g = sample(compare_mala_pipe(), opt, backend::cuda{});
  auto h = cpu_compare_mala();
  // An accept decision within rounding of its threshold may flip; allow a handful of chains.
  int differ = 0;
  for (std::int64_t c = 0; c < opt.chains; ++c) {
    bool same = true;
    for (int d = 0; d < D; ++d)
      same = same && std::abs(g.final_state(c)[d] - h.final_state(c)[d]) < 1e-3f * (1 + std::abs(h.final_state(c)[d]));
    differ += !same;
  }
  CHECK(differ <= 2);
  CHECK(g.acceptance_rate() == Approx(h.acceptance_rate()).margin(1e-3));
}

TEST_CASE("record_stats on the GPU: each kept transition's report", "[backend][cuda][record_stats]") {
  // The CUDA sink writes a chunk's statistics beside its draws and the host copies them to their
  // kept steps: thin 1, no burn-in, so the counts add up to the run's, lp is −U at the draw (the
  // device's and the host's float sums of D² products: within 4D² ulp), and the Hamiltonian a
  // transition starts from is never below U at the previous draw.
  auto const U = p1_energy();
  auto pipe = hmc(U, {.step_size = 0.2, .integrator_steps = 8}) | record() | record_stats();
  auto r = sample(pipe, {.chains = 1000, .steps = 200, .seed = 5}, backend::cuda{.block_size = 128});
  REQUIRE(r.sample_stats().size() == 6);
  double steps = 0, diverging = 0, worst_lp = 0, below = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c)
    for (std::int64_t k = 0; k < r.kept(); ++k) {
      steps += r.sample_stat(draw_stat::n_steps, k, c);
      diverging += r.sample_stat(draw_stat::diverging, k, c);
      double const u = U.value(r.samples().draw(k, c));
      worst_lp = std::max(worst_lp, std::abs(double(r.sample_stat(draw_stat::lp, k, c)) + u) / (1 + std::abs(u)));
      if (k > 0)
        below = std::min(below, double(r.sample_stat(draw_stat::energy, k, c)) + double(r.sample_stat(draw_stat::lp, k - 1, c)));
    }
  CHECK(steps == double(r.gradients()));
  CHECK(diverging == double(r.divergent_transitions()));
  CHECK(worst_lp < 4.0 * D * D * std::numeric_limits<float>::epsilon());
  CHECK(below >= 0);
}

TEST_CASE("chains that diverge on the GPU are frozen and flagged as on the CPU", "[backend][cuda]") {
  // η far beyond 2σ² makes ULA on a Gaussian explode to infinity within a few hundred steps.
  auto opt = diverging_opt;
  auto g = sample(diverging_pipe(), opt, backend::cuda{});
  auto h = cpu_diverging();
  CHECK(g.divergent_chains() == h.divergent_chains());
  CHECK(g.divergent_chains() > 0);
  for (std::int64_t c = 0; c < opt.chains; ++c) {
    CHECK(g.divergent(c) == h.divergent(c));
    CHECK(g.diverged_at(c) == h.diverged_at(c));
  }
  for (float x : g.samples_) CHECK(std::isfinite(x));
  CHECK(g.trace().live_chains.back() == h.trace().live_chains.back());
}

TEST_CASE("start states are used as given and steps = 0 returns them", "[backend][cuda]") {
  auto const U = p1_energy();
  std::vector<vec<float, D>> x0(1000);
  for (std::size_t c = 0; c < x0.size(); ++c)
    for (int d = 0; d < D; ++d) x0[c][d] = float(c) * 0.001f + float(d);
  auto r = sample(ula(U, {.step_size = 0.1f}), {.chains = 1000, .steps = 0, .seed = 1, .init = x0}, backend::cuda{});
  for (std::int64_t c = 0; c < 1000; ++c)
    for (int d = 0; d < D; ++d) CHECK(r.final_state(c)[d] == x0[std::size_t(c)][d]);
}

TEST_CASE("the cuda backend refuses a run larger than free device memory", "[backend][cuda]") {
  // sample() allocates the host result before the backend runs, so the device check is tested
  // on its own: one byte more than the device has.
  std::size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  CHECK_THROWS_WITH(ember::detail::cuda_require_free(total_b + 1, 0),
                    Catch::Contains("bytes of device memory") && Catch::Contains(ember::detail::with_commas(total_b + 1)));
  CHECK_NOTHROW(ember::detail::cuda_require_free(1 << 20, 0));
}

TEST_CASE("bad backend settings and missing devices are errors that name the problem", "[backend][cuda][nogpu]") {
  auto const U = p1_energy();
  auto pipe = ula(U, {.step_size = 0.1f});
  ember::sample_options<float, D> opt{.chains = 100, .steps = 10, .seed = 1};
  if (!have_gpu()) {
    try {
      (void)sample(pipe, opt, backend::cuda{});
      FAIL("no exception");
    } catch (ember::cuda_error const& e) {
      CHECK(std::string(e.what()).find("cudaGetDeviceCount") != std::string::npos);
    }
  } else {
    CHECK_THROWS_WITH(sample(pipe, opt, backend::cuda{.device = 1000}), Catch::Contains("device 1000 does not exist"));
  }
  CHECK_THROWS_WITH(sample(pipe, opt, backend::cuda{.block_size = 100}), Catch::Contains("multiple of 32"));
  CHECK_THROWS_AS(sample(pipe, {.chains = 0, .steps = 10}, backend::cuda{}), std::invalid_argument);
  static_assert(std::is_base_of_v<std::runtime_error, ember::cuda_error>);
}
