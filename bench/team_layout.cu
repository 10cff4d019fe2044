// How a team of 32 threads should split one chain's logistic-regression gradient (issue 32,
// point 2): three layouts of the same sum, timed on the breast-cancer data (569 rows x 31), one
// warp per chain, against one thread per chain. Not library code: an experiment whose winner the
// regressions would adopt (bench/results/2026-11-28-gpu-h200.md measured the library's layout,
// "blocks", at 45 us per gradient, 27x its issue floor, and named the suspects this separates).
//   thread      one thread per chain, every row (the library without teams);
//   blocks      member m takes 8-row blocks m, m + 32, ... of the row-major X (the library's team
//               layout), then 31 + 1 butterfly sums;
//   transposed  member m takes rows m, m + 32, ... of a column-major copy of X, so a warp's load
//               of one coefficient is one 128-byte line; then 31 + 1 butterfly sums;
//   columns     lane j owns coefficient j: per row one coalesced 124-byte load, eta a butterfly
//               sum, g_j accumulated in its own lane with no final sum (an all-gather of g, 31
//               shuffles, is timed with it, as a chain in a team needs every g_j in every member).
// Each kernel evaluates R gradients per chain at beta_r = beta_c + r * 1e-6 (so nothing is
// hoisted) and writes the last; every layout is checked against a double-precision host gradient
// (relative error of the gradient vector < 1e-4) before it is timed. Times: cudaEvent around one
// launch, median of 5 after a warm-up launch.
//
// usage: ember_team_layout [DATA_CSV] [R]   (default: data/breast_cancer.csv of this repository, R = 200)
#include <ember/targets/breast_cancer_logistic.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int D = 31;
constexpr int W = 32;

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));              \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__device__ __forceinline__ float softplus_slope(float eta, float y, float& slope) {
  // -log p(y | eta) = softplus(eta) - y eta; slope = sigmoid(eta) - y
  float const e = __expf(-fabsf(eta));
  float const sp = fmaxf(eta, 0.f) + log1pf(e);
  float const s = eta >= 0 ? 1.f / (1.f + e) : e / (1.f + e);
  slope = s - y;
  return sp - y * eta;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Chain c's beta at repetition r into b, and the prior's part (N(0, I)) into g and u: all of it
// for `first`, zeros for the other members of a team (their parts are added to the first's).
__device__ __forceinline__ void start_gradient(float const* beta, int c, int r, bool first, float (&b)[D], float (&g)[D],
                                               float& u) {
  u = 0;
  for (int j = 0; j < D; ++j) {
    b[j] = beta[c * D + j] + 1e-6f * float(r);
    g[j] = first ? b[j] : 0.f;
    if (first) u += 0.5f * b[j] * b[j];
  }
}
// Row i's term into u and g (one row alone: the left-over rows, and the one-thread layout).
__device__ __forceinline__ void add_row(float const* X, float const* y, int i, float const (&b)[D], float (&g)[D], float& u) {
  float eta = 0;
  for (int j = 0; j < D; ++j) eta = fmaf(X[i * D + j], b[j], eta);
  float slope;
  u += softplus_slope(eta, y[i], slope);
  for (int j = 0; j < D; ++j) g[j] = fmaf(slope, X[i * D + j], g[j]);
}
// A team's parts summed in every member: part of every gradient, as a chain's next step needs them.
__device__ __forceinline__ void sum_team(float (&g)[D], float& u) {
  for (int j = 0; j < D; ++j) g[j] = warp_sum(g[j]);
  u = warp_sum(u);
}
// Chain c's gradient and energy, written by one thread.
__device__ __forceinline__ void write(int c, bool writer, float const (&g)[D], float u, float* out) {
  if (!writer) return;
  for (int j = 0; j < D; ++j) out[c * (D + 1) + j] = g[j];
  out[c * (D + 1) + D] = u;
}

// One thread per chain: chain c = thread c.
__global__ void grad_thread(float const* X, float const* y, int n, float const* beta, float* out, int chains, int R) {
  int const c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chains) return;
  float b[D], g[D];
  float u = 0;
  for (int r = 0; r < R; ++r) {
    start_gradient(beta, c, r, true, b, g, u);
    for (int i = 0; i < n; ++i) add_row(X, y, i, b, g, u);
  }
  write(c, true, g, u, out);
}

// Teams: blocks of (32, chains per block); chain = blockIdx.x * blockDim.y + threadIdx.y.
__global__ void grad_blocks(float const* X, float const* y, int n, float const* beta, float* out, int chains, int R) {
  int const c = blockIdx.x * blockDim.y + threadIdx.y, m = threadIdx.x;
  if (c >= chains) return;  // whole warps leave together
  constexpr int K = 8;
  float b[D], g[D];
  float u = 0;
  for (int r = 0; r < R; ++r) {
    start_gradient(beta, c, r, m == 0, b, g, u);
    int const blocks = n / K;
    for (int k = m; k < blocks; k += W) {
      float const* row = X + k * K * D;
      float eta[K];
      for (int q = 0; q < K; ++q) eta[q] = 0;
      for (int j = 0; j < D; ++j)
        for (int q = 0; q < K; ++q) eta[q] = fmaf(row[q * D + j], b[j], eta[q]);
      for (int q = 0; q < K; ++q) {
        float slope;
        u += softplus_slope(eta[q], y[k * K + q], slope);
        eta[q] = slope;
      }
      for (int j = 0; j < D; ++j)
        for (int q = 0; q < K; ++q) g[j] = fmaf(row[q * D + j], eta[q], g[j]);
    }
    for (int i = blocks * K + (m - blocks % W + W) % W; i < n; i += W) add_row(X, y, i, b, g, u);
    sum_team(g, u);
  }
  write(c, m == 0, g, u, out);
}

// Teams over a column-major copy XT (D x n): member m takes rows m, m + 32, ...
__global__ void grad_transposed(float const* XT, float const* y, int n, float const* beta, float* out, int chains, int R) {
  int const c = blockIdx.x * blockDim.y + threadIdx.y, m = threadIdx.x;
  if (c >= chains) return;
  constexpr int K = 4;  // rows per member in flight: i, i + 32, i + 64, i + 96
  float b[D], g[D];
  float u = 0;
  for (int r = 0; r < R; ++r) {
    start_gradient(beta, c, r, m == 0, b, g, u);
    for (int i0 = 0; i0 < n; i0 += K * W) {
      float eta[K];
      bool in[K];
      for (int q = 0; q < K; ++q) eta[q] = 0, in[q] = i0 + q * W + m < n;
      for (int j = 0; j < D; ++j)
        for (int q = 0; q < K; ++q)
          if (in[q]) eta[q] = fmaf(XT[j * n + i0 + q * W + m], b[j], eta[q]);
      for (int q = 0; q < K; ++q) {
        float slope = 0;
        if (in[q]) u += softplus_slope(eta[q], y[i0 + q * W + m], slope);
        eta[q] = slope;
      }
      for (int j = 0; j < D; ++j)
        for (int q = 0; q < K; ++q)
          if (in[q]) g[j] = fmaf(XT[j * n + i0 + q * W + m], eta[q], g[j]);
    }
    sum_team(g, u);
  }
  write(c, m == 0, g, u, out);
}

// Lane j owns coefficient j (lane 31 owns none: D = 31).
__global__ void grad_columns(float const* X, float const* y, int n, float const* beta, float* out, int chains, int R) {
  int const c = blockIdx.x * blockDim.y + threadIdx.y, j = threadIdx.x;
  if (c >= chains) return;
  constexpr int K = 8;  // rows whose butterflies are interleaved
  bool const owns = j < D;
  float gj = 0, u = 0;
  float gall[D];
  for (int r = 0; r < R; ++r) {
    float const bj = owns ? beta[c * D + j] + 1e-6f * float(r) : 0.f;
    gj = bj;  // prior N(0, 1), in its own lane
    float uj = 0.5f * bj * bj, ur = 0;
    int i = 0;
    for (; i + K <= n; i += K) {
      float p[K];
      for (int q = 0; q < K; ++q) p[q] = owns ? X[(i + q) * D + j] * bj : 0.f;
      for (int o = 16; o > 0; o >>= 1)
        for (int q = 0; q < K; ++q) p[q] = __fadd_rn(p[q], __shfl_xor_sync(0xffffffffu, p[q], o));
      for (int q = 0; q < K; ++q) {
        float slope;
        ur += softplus_slope(p[q], y[i + q], slope);  // the same in every lane
        if (owns) gj = fmaf(slope, X[(i + q) * D + j], gj);
      }
    }
    for (; i < n; ++i) {
      float const eta = warp_sum(owns ? X[i * D + j] * bj : 0.f);
      float slope;
      ur += softplus_slope(eta, y[i], slope);
      if (owns) gj = fmaf(slope, X[i * D + j], gj);
    }
    u = ur + warp_sum(uj);
    for (int k = 0; k < D; ++k) gall[k] = __shfl_sync(0xffffffffu, gj, k);  // every member gets g
  }
  write(c, j == 0, gall, u, out);
}

struct layout {
  char const* name;
  bool team, transposed;
  void (*kernel)(float const*, float const*, int, float const*, float*, int, int);
};

}  // namespace

int main(int argc, char** argv) {
  std::string const csv = argc > 1 ? argv[1] : std::string(EMBER_DATA_DIR "/breast_cancer.csv");
  int const R = argc > 2 ? std::atoi(argv[2]) : 200;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "ember_team_layout: no CUDA device here; nothing to run.\n");
    return 77;
  }
  ember::targets::breast_cancer_logistic<float> target(csv);
  int const n = int(target.design().rows());
  std::vector<float> X(static_cast<std::size_t>(n) * D), XT(static_cast<std::size_t>(n) * D), y(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    y[std::size_t(i)] = target.response()(i, 0);
    for (int j = 0; j < D; ++j) X[std::size_t(i * D + j)] = XT[std::size_t(j * n + i)] = target.design()(i, j);
  }
  int const max_chains = 1024;
  std::vector<float> beta(std::size_t(max_chains) * D);
  auto const mode = target.mode();
  for (int c = 0; c < max_chains; ++c)
    for (int j = 0; j < D; ++j) beta[std::size_t(c * D + j)] = mode[j] + 0.1f * std::sin(float(c * D + j));
  float *dX, *dXT, *dy, *db, *dout;
  CHECK_CUDA(cudaMalloc(&dX, X.size() * 4));
  CHECK_CUDA(cudaMalloc(&dXT, XT.size() * 4));
  CHECK_CUDA(cudaMalloc(&dy, y.size() * 4));
  CHECK_CUDA(cudaMalloc(&db, beta.size() * 4));
  CHECK_CUDA(cudaMalloc(&dout, std::size_t(max_chains) * (D + 1) * 4));
  CHECK_CUDA(cudaMemcpy(dX, X.data(), X.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dXT, XT.data(), XT.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dy, y.data(), y.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, beta.data(), beta.size() * 4, cudaMemcpyHostToDevice));

  // The host reference at the last repetition's beta, in double.
  auto reference = [&](int c, std::vector<double>& g) {
    g.assign(D + 1, 0.0);
    double b[D];
    for (int j = 0; j < D; ++j) b[j] = double(beta[std::size_t(c * D + j)] + 1e-6f * float(R - 1)), g[j] = b[j], g[D] += 0.5 * b[j] * b[j];
    for (int i = 0; i < n; ++i) {
      double eta = 0;
      for (int j = 0; j < D; ++j) eta += double(X[std::size_t(i * D + j)]) * b[j];
      double const s = 1 / (1 + std::exp(-eta)), yi = y[std::size_t(i)];
      g[D] += std::max(eta, 0.0) + std::log1p(std::exp(-std::abs(eta))) - yi * eta;
      for (int j = 0; j < D; ++j) g[j] += (s - yi) * double(X[std::size_t(i * D + j)]);
    }
  };

  layout const layouts[] = {{"thread", false, false, grad_thread},
                            {"blocks", true, false, grad_blocks},
                            {"transposed", true, true, grad_transposed},
                            {"columns", true, false, grad_columns}};
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d rows x %d, R = %d gradients per chain per launch\n", prop.name, n, D, R);
  std::printf("%-11s %7s %12s %14s %10s\n", "layout", "chains", "us/gradient", "max rel. err", "check");
  bool all_ok = true;
  for (int chains : {4, 128, 1024}) {
    for (auto const& l : layouts) {
      dim3 grid, block;
      if (l.team) {
        int const per_block = std::min(chains, 4);
        block = dim3(W, unsigned(per_block));
        grid = dim3(unsigned((chains + per_block - 1) / per_block));
      } else {
        block = dim3(unsigned(std::min(chains, 128)));
        grid = dim3(unsigned((chains + int(block.x) - 1) / int(block.x)));
      }
      float const* x = l.transposed ? dXT : dX;
      CHECK_CUDA(cudaMemset(dout, 0xff, std::size_t(max_chains) * (D + 1) * 4));  // poisoned: NaN
      l.kernel<<<grid, block>>>(x, dy, n, db, dout, chains, R);
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<float> out(std::size_t(chains) * (D + 1));
      CHECK_CUDA(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      std::vector<double> ref;
      for (int c = 0; c < chains; ++c) {
        reference(c, ref);
        double num = 0, den = 0;
        for (int j = 0; j <= D; ++j) {
          double const d = double(out[std::size_t(c * (D + 1) + j)]) - ref[std::size_t(j)];
          num += d * d, den += ref[std::size_t(j)] * ref[std::size_t(j)];
        }
        double const e = std::sqrt(num / den);
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
      }
      bool const ok = worst < 1e-4;
      all_ok = all_ok && ok;
      cudaEvent_t t0, t1;
      CHECK_CUDA(cudaEventCreate(&t0));
      CHECK_CUDA(cudaEventCreate(&t1));
      std::vector<float> ms;
      for (int rep = 0; rep < 5; ++rep) {
        CHECK_CUDA(cudaEventRecord(t0));
        l.kernel<<<grid, block>>>(x, dy, n, db, dout, chains, R);
        CHECK_CUDA(cudaEventRecord(t1));
        CHECK_CUDA(cudaEventSynchronize(t1));
        CHECK_CUDA(cudaGetLastError());
        float t = 0;
        CHECK_CUDA(cudaEventElapsedTime(&t, t0, t1));
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      std::printf("%-11s %7d %12.2f %14.2e %10s\n", l.name, chains, 1e3 * double(ms[2]) / R, worst, ok ? "ok" : "FAILED");
      CHECK_CUDA(cudaEventDestroy(t0));
      CHECK_CUDA(cudaEventDestroy(t1));
    }
  }
  return all_ok ? 0 : 1;
}
