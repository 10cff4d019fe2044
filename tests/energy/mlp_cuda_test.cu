// Neural energies built by nvcc: the host evaluation of an nvcc-compiled mlp against central
// differences ([nogpu], runs in CI), the host-memory check, and a ReLU network whose energy is
// |x1| + |x2| sampled on the GPU with its weights copied to the device (skipped without a GPU).
#include <ember/backend/cuda.cuh>
#include <ember/core/team.hpp>
#include <ember/data/device.cuh>
#include <ember/energy/check_views.hpp>
#include <ember/energy/for_each_view.hpp>
#include <ember/energy/mlp.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/sample.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

template <class R, class F>
double z_of_mean(R const& r, F f, double truth) {
  double n = double(r.chains()), s = 0, q = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) s += f(r.final_state(c));
  for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(f(r.final_state(c)) - s / n, 2);
  return (s / n - truth) / std::sqrt(q / (n - 1) / n);
}

// |x1| + |x2| as ReLU units: relu(x1) + relu(−x1) + relu(x2) + relu(−x2).
ember::mlp_weights<float> laplace_weights() {
  return ember::mlp_weights<float>(std::vector<ember::dense_layer<float>>{
      {"0", 4, 2, {1, 0, -1, 0, 0, 1, 0, -1}, {0, 0, 0, 0}}, {"1", 1, 4, {1, 1, 1, 1}, {0}}});
}

}  // namespace

TEST_CASE("an mlp compiled by nvcc: the host gradient against central differences", "[mlp][cuda][nogpu]") {
  auto const w = ember::mlp_weights<double>::uniform({3, 12, 12, 1}, 5);
  ember::mlp<double, 3, ember::nn::gelu, 12, 12> const U(w, {.skip = true});
  ember::vec<double, 3> x{{0.3, -1.1, 0.8}}, g;
  double const u = U.value_and_grad(x, g);
  CHECK(u == U.value(x));
  // Central differences in double: truncation h²/6·|U‴| and rounding ε|U|/h with h = 1e-5; |U‴|
  // stays below 10 for these weights (|W| ≤ 1/√in, GELU‴ ≤ 1.5 over three layers), so 1e-8.
  for (int i = 0; i < 3; ++i) {
    auto xp = x, xm = x;
    xp[i] += 1e-5;
    xm[i] -= 1e-5;
    CHECK(std::abs(g[i] - (U.value(xp) - U.value(xm)) / 2e-5) < 1e-8);
  }
}

TEST_CASE("backend::cuda refuses an mlp whose weights are in host memory", "[mlp][cuda][nogpu]") {
  auto const w = laplace_weights();
  ember::mlp<float, 2, ember::nn::relu, 4> const U(w);
  CHECK_THROWS_WITH(ember::require_device_views(ember::mala(U, {.step_size = 0.5})), Catch::Contains("points to host memory"));
}

TEST_CASE("an mlp with its weights on the device samples |x1| + |x2| on the GPU", "[mlp][cuda]") {
  auto const w = laplace_weights();
  ember::mlp<float, 2, ember::nn::relu, 4> const U(w);
  auto dU = ember::to_device(U);
  auto r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.8}) | ember::burn_in(1000),
                         {.chains = 50'000, .steps = 1, .seed = 29}, ember::backend::cuda{});
  REQUIRE(r.divergent_chains() == 0);
  for (int d = 0; d < 2; ++d) {
    INFO("coordinate " << d);
    CHECK(std::abs(z_of_mean(r, [&](auto const& x) { return double(x[d]); }, 0.0)) < 5);
    CHECK(std::abs(z_of_mean(r, [&](auto const& x) { return std::abs(double(x[d])); }, 1.0)) < 5);
    CHECK(std::abs(z_of_mean(r, [&](auto const& x) { return double(x[d]) * double(x[d]); }, 2.0)) < 5);
  }
}

TEST_CASE("backend::cuda gives an mlp a team by the width of its widest layer", "[mlp][cuda][nogpu]") {
  auto const w = ember::mlp_weights<float>::uniform({2, 128, 128, 1}, 3);
  ember::mlp<float, 2, ember::nn::silu, 128, 128> const U(w);
  CHECK(ember::team_blocks(U) == 64);
  CHECK(ember::detail::auto_team_size(4'096, ember::team_blocks(U)) == 32);  // four units a member
  CHECK(ember::detail::auto_team_size(16'384, ember::team_blocks(U)) == 8);  // 2^17 threads at most
  auto const narrow = laplace_weights();
  CHECK(ember::team_blocks(ember::mlp<float, 2, ember::nn::relu, 4>(narrow)) == 0);  // too narrow to share
  auto const w24 = ember::mlp_weights<float>::uniform({3, 24, 24, 1}, 17);
  CHECK(ember::detail::auto_team_size(128, ember::team_blocks(ember::mlp<float, 3, ember::nn::gelu, 24, 24>(w24))) == 4);
}

TEST_CASE("teams of 4-32 threads evaluate an mlp's gradient as one thread does", "[mlp][cuda]") {
  // One ULA step from the same start, x' = x - h grad U(x) + sqrt(2h) xi: with the same draws the
  // states differ by h times the gradients' rounding. A 3 -> 24 -> 24 -> 1 GELU network with a
  // skip connection: 24 units leave members idle in a team of 32 and give some two units in a
  // team of 16; the input width 3 is not a multiple of any team. Any block size gives the same
  // bits (4,097 chains: enough that blocks of 256 and of 64 threads hold different numbers of
  // chains for every team size, as a team's blocks are spread over the multiprocessors).
  auto const w = ember::mlp_weights<float>::uniform({3, 24, 24, 1}, 17);
  ember::mlp<float, 3, ember::nn::gelu, 24, 24> const U(w, {.skip = true});
  auto dU = ember::to_device(U);
  constexpr std::int64_t n = 4097;
  auto once = [&](int team, int block) {
    return ember::sample(ember::ula(dU.energy(), {.step_size = 0.1}), {.chains = n, .steps = 1, .seed = 3},
                         ember::backend::cuda{.block_size = block, .threads_per_chain = team});
  };
  auto const r1 = once(1, 256);
  for (int team : {4, 8, 16, 32}) {
    auto const rt = once(team, 256), rb = once(team, 64);
    for (std::int64_t c = 0; c < n; ++c)
      for (int d = 0; d < 3; ++d) {
        INFO("team " << team << ", chain " << c << ", coordinate " << d);
        CHECK(std::abs(rt.final_state(c)[d] - r1.final_state(c)[d]) <= 1e-5f * (1 + std::abs(r1.final_state(c)[d])));
        CHECK(rb.final_state(c)[d] == rt.final_state(c)[d]);
      }
  }
  // MALA reads energies too: its acceptance in a team of 32 is one thread's (the same proposals).
  auto mala_once = [&](int team) {
    return ember::sample(ember::mala(dU.energy(), {.step_size = 0.3}), {.chains = 4096, .steps = 1, .seed = 4},
                         ember::backend::cuda{.threads_per_chain = team});
  };
  CHECK(mala_once(32).acceptance_rate() == Approx(mala_once(1).acceptance_rate()).epsilon(1e-3));
}

TEST_CASE("an mlp sampled by teams of threads has the law of |x1| + |x2|", "[mlp][cuda]") {
  // The ReLU network above in teams of 32 (28 members own no unit) and of 4 (one unit each).
  auto const w = laplace_weights();
  ember::mlp<float, 2, ember::nn::relu, 4> const U(w);
  auto dU = ember::to_device(U);
  for (int team : {4, 32}) {
    auto r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.8}) | ember::burn_in(1000),
                           {.chains = 20'000, .steps = 1, .seed = 31}, ember::backend::cuda{.threads_per_chain = team});
    REQUIRE(r.divergent_chains() == 0);
    for (int d = 0; d < 2; ++d) {
      INFO("team " << team << ", coordinate " << d);
      CHECK(std::abs(z_of_mean(r, [&](auto const& x) { return double(x[d]); }, 0.0)) < 5);
      CHECK(std::abs(z_of_mean(r, [&](auto const& x) { return std::abs(double(x[d])); }, 1.0)) < 5);
      CHECK(std::abs(z_of_mean(r, [&](auto const& x) { return double(x[d]) * double(x[d]); }, 2.0)) < 5);
    }
  }
}

namespace {
// Every member of a team of W (blocks of (W, 1, 2): two chains a block, core/team.hpp's shape)
// evaluates U.value and U.value_and_grad at its chain's point and writes them: out[(c·W + m)·5 + k].
template <class E>
__global__ void team_energies(E const U, ember::vec<float, 3> const* xs, float* out) {
  int const c = int(blockIdx.x) * 2 + int(threadIdx.z), m = int(threadIdx.x);
  ember::vec<float, 3> g;
  float const v = U.value(xs[c]);
  float const u = U.value_and_grad(xs[c], g);
  float* o = out + (std::size_t(c) * blockDim.x + std::size_t(m)) * 5;
  o[0] = v;
  o[1] = u;
  for (int i = 0; i < 3; ++i) o[2 + i] = g[i];
}
}  // namespace

TEST_CASE("an mlp's value and gradient in a team: every member the same bits, the host's to rounding", "[mlp][cuda]") {
  // value() (the forward pass alone, which ULA and MALA never call) and value_and_grad in teams
  // of 4-32 against the host's float evaluation of the same network at 64 points: relative 1e-5
  // (a float sum of at most 25 products per unit, three layers), and bit-identical across members.
  auto const w = ember::mlp_weights<float>::uniform({3, 24, 24, 1}, 23);
  ember::mlp<float, 3, ember::nn::gelu, 24, 24> const U(w, {.skip = true});
  auto dU = ember::to_device(U);
  constexpr int n = 64;
  std::vector<ember::vec<float, 3>> xs(n);
  for (int c = 0; c < n; ++c)
    for (int i = 0; i < 3; ++i) xs[std::size_t(c)][i] = float(std::sin(1.7 * c + 2.3 * i)) * 2.f;
  ember::vec<float, 3>* dx = nullptr;
  float* dout = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&dx), n * sizeof(ember::vec<float, 3>)) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&dout), std::size_t(n) * 32 * 5 * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMemcpy(dx, xs.data(), n * sizeof(ember::vec<float, 3>), cudaMemcpyHostToDevice) == cudaSuccess);
  for (int team : {4, 8, 16, 32}) {
    team_energies<<<n / 2, dim3(unsigned(team), 1, 2)>>>(dU.energy(), dx, dout);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    std::vector<float> out(std::size_t(n) * team * 5);
    REQUIRE(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int c = 0; c < n; ++c) {
      ember::vec<float, 3> g;
      float const u = U.value_and_grad(xs[std::size_t(c)], g);
      float const want[5] = {u, u, g[0], g[1], g[2]};
      for (int m = 0; m < team; ++m)
        for (int k = 0; k < 5; ++k) {
          INFO("team " << team << ", point " << c << ", member " << m << ", output " << k);
          float const got = out[(std::size_t(c) * team + m) * 5 + k];
          CHECK(std::abs(got - want[k]) <= 1e-5f * (1 + std::abs(want[k])));
          CHECK(std::memcmp(&got, &out[(std::size_t(c) * team) * 5 + k], sizeof(float)) == 0);  // member 0's bits
        }
    }
  }
  cudaFree(dx);
  cudaFree(dout);
}
