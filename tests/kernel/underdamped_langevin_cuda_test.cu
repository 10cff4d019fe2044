// The underdamped Langevin checks of tests/kernel/langevin_checks.hpp (run with backend::cpu by
// the kernel tests) instantiated for backend::cuda: BAOAB's exact law, the adjusted kernel on
// the 10-d Gaussian and the double well. Skipped (code 77) without a GPU; always compiled.
#include <ember/backend/cuda.cuh>
#include <ember/sample.hpp>

#include "kernel/langevin_checks.hpp"

TEST_CASE("baoab follows its exact finite-step law on the GPU", "[cuda][underdamped_langevin][statistics]") {
  ember_test::check_splitting_exact_law<ember::baoab>(ember::backend::cuda{}, 0.4, 1.5, 100);
}

TEST_CASE("obabo follows its exact finite-step law on the GPU", "[cuda][underdamped_langevin][statistics]") {
  ember_test::check_splitting_exact_law<ember::obabo>(ember::backend::cuda{}, 0.4, 0.5, 300);
}

TEST_CASE("adjusted underdamped langevin keeps a correlated 10-d gaussian on the GPU",
          "[cuda][adjusted_underdamped_langevin][statistics]") {
  ember_test::check_adjusted_gaussian_from_exact(ember::backend::cuda{});
  ember_test::check_adjusted_gaussian_from_normal(ember::backend::cuda{});
}

TEST_CASE("adjusted underdamped langevin samples the double well on the GPU",
          "[cuda][adjusted_underdamped_langevin][statistics]") {
  ember_test::check_adjusted_double_well_from_right_well(ember::backend::cuda{});
  ember_test::check_adjusted_double_well_from_exact(ember::backend::cuda{});
}

namespace {

// One thread per initial condition: the gradient flow of a diagonal Gaussian integrated to t = 1
// by RK4 (fixed steps) and by adaptive Dormand–Prince, the same code as on the host.
__global__ void flows_on_device(ember::gaussian<float, 2, ember::covariance::diagonal> U, float* out, int n) {
  int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  ember::gradient_flow f{U};
  ember::vec<float, 2> x0{{float(i) / float(n), 1.f}};
  auto a = ember::integrate<ember::rk4>(f, 0.f, 1.f, x0, 50);
  auto b = x0;
  auto rep = ember::integrate_adaptive(f, 0.f, 1.f, b, {.rtol = 1e-5, .atol = 1e-6});
  out[2 * i] = a[0];
  out[2 * i + 1] = rep.done ? b[0] : -1e30f;
}

}  // namespace

TEST_CASE("rk4 and adaptive dopri5 run in a CUDA kernel and match the gradient flow's solution",
          "[cuda][integrator][butcher]") {
  // U = (x − μ)²/2σ² per coordinate: x(1) = μ + e^{−1/σ²}(x₀ − μ), σ₀ = 1, μ₀ = 0.
  ember::gaussian<float, 2, ember::covariance::diagonal> U(ember::vec<float, 2>{{0.f, 0.f}},
                                                            ember::vec<float, 2>{{1.f, 2.f}});
  int const n = 256;
  float* d = nullptr;
  REQUIRE(cudaMalloc(&d, sizeof(float) * 2 * n) == cudaSuccess);
  flows_on_device<<<2, 128>>>(U, d, n);
  std::vector<float> h(2 * n);
  REQUIRE(cudaMemcpy(h.data(), d, sizeof(float) * 2 * n, cudaMemcpyDeviceToHost) == cudaSuccess);
  cudaFree(d);
  for (int i = 0; i < n; ++i) {
    double exact = std::exp(-1.0) * double(i) / n;
    CHECK(std::abs(h[2 * i] - exact) < 1e-5);
    CHECK(std::abs(h[2 * i + 1] - exact) < 1e-4);
  }
}
