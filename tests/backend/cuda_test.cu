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
#include <cstdlib>
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
// Whether this system lets CUDA pin host memory (a sandbox may not; ember then copies pageable).
bool system_pins() {
  void* p = std::aligned_alloc(4096, 1 << 16);
  bool const ok = p && ember::detail::cuda_pin(p, 1 << 16);
  if (ok) ember::detail::cuda_unpin(p);
  std::free(p);
  return ok;
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
  ember::release_host_cache();  // the pinned blocks below are this test's
  auto g = sample(pipe, opt, backend::cuda{.block_size = 128});
  auto h = cpu_compare_ula();
  REQUIRE(g.samples().kept == h.samples().kept);
  double worst = 0;
  for (std::size_t j = 0; j < g.samples_.size(); ++j)
    worst = std::max(worst, std::abs(double(g.samples_[j]) - double(h.samples_[j])) / (1 + std::abs(double(h.samples_[j]))));
  CHECK(worst < 1e-4);
  // The recording (1.6 MB) came back into a block pinned for it (host_cache.hpp); the second
  // run below takes that block from the cache, pinned, and must give the same bits.
  if (system_pins())
    CHECK(ember::host_cache().pinned_bytes > 0);
  else
    WARN("this system refuses to pin host memory: the recording came back pageable");
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
  {
    auto g2 = sample(pipe, opt, backend::cuda{.block_size = 64});
    CHECK(g2.samples_ == g.samples_);
  }
  // Again into g2's blocks, from the cache and still pinned: the same bits.
  auto const before = ember::host_cache();
  auto g3 = sample(pipe, opt, backend::cuda{});
  CHECK(ember::host_cache().reused > before.reused);
  CHECK(g3.samples_ == g.samples_);
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

namespace {
// A value per chain and index whose sum depends on the order of the additions (magnitudes from
// 2^-20 to 2^20, both signs), so only the documented order gives the same bits.
EMBER_HD inline double order_sensitive(std::int64_t c, int i) {
  std::uint64_t h = std::uint64_t(c) * 0x9E3779B97F4A7C15ull + std::uint64_t(i) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  double const m = double(h >> 11) * 0x1p-53;  // [0, 1)
  int const e = int(h % 41) - 20;
  return (h & 1 ? -1.0 : 1.0) * (1 + m) * ::ldexp(1.0, e);
}
struct order_sums {
  static constexpr int size = 40;  // more than one chunk of 32 values
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    for (int i = 0; i < size; ++i) a[i] += order_sensitive(c, i);
  }
};
// The order cuda.cuh documents for reduce(): in each tile of 256 chains, each warp's butterfly of
// shuffles (lane 0's), then the tile's warps in order; then the tiles in order.
double documented_sum(std::int64_t chains, int i) {
  std::int64_t const tiles = (chains + 255) / 256;
  double total = 0;
  for (std::int64_t t = 0; t < tiles; ++t) {
    double tile = 0;
    for (int w = 0; w < 8; ++w) {
      double v[32];
      for (int l = 0; l < 32; ++l) {
        std::int64_t const c = t * 256 + w * 32 + l;
        v[l] = c < chains ? 0.0 + order_sensitive(c, i) : 0.0;
      }
      for (int o = 16; o > 0; o >>= 1) {
        double n[32];
        for (int l = 0; l < 32; ++l) n[l] = v[l] + v[l ^ o];
        std::copy(n, n + 32, v);
      }
      tile += v[0];
    }
    total += tile;  // reduce_values starts from 0; one tile is its own sum, 0 + tile exactly
  }
  return total;
}
}  // namespace

TEST_CASE("the device's sums over chains are in the documented order, bit for bit", "[backend][cuda]") {
  // One tile (its own sum) and several (a second kernel adds the tiles), each with 40 values (two
  // rounds of the block's 32-value buffer).
  using P = decltype(compare_ula_pipe());
  for (std::int64_t chains : {200, 256, 1000}) {
    CAPTURE(chains);
    ember::backend::cuda::storage<P> st(backend::cuda{}, chains);
    double got[order_sums::size];
    st.reduce(order_sums{}, got);
    int same = 0;
    double naive_differs = 0;
    for (int i = 0; i < order_sums::size; ++i) {
      double const want = documented_sum(chains, i);
      same += got[i] == want;
      double naive = 0;
      for (std::int64_t c = 0; c < chains; ++c) naive += order_sensitive(c, i);
      naive_differs += naive != want;
    }
    CHECK(same == order_sums::size);
    CHECK(naive_differs > 0);  // the values do tell orders apart
    // Called again (kept buffers), the same bits.
    double again[order_sums::size];
    st.reduce(order_sums{}, again);
    CHECK(std::equal(got, got + order_sums::size, again));
  }
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
