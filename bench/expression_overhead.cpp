// Does an energy expression cost anything at run time? ULA on U = gaussian + 0.5 · double_well
// (D = 4, one thread, scalar path) three ways, selected by argv[1]:
//   expr  — ember's pipeline with the expression `gaussian + 0.5f * double_well`;
//   fused — ember's pipeline with one hand-written energy computing the same sum in one loop;
//   hand  — a hand-written loop (same Philox draws, same maths, no pipeline, no divergence check).
// Count instructions with callgrind (see docs/performance.md):
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null build-x86-64-v3/bench/ember_expression_overhead expr
// and subtract each mode's own count at 0 steps (`... expr 0`: setup only). argv[2] = steps
// (default 2000).
#include <ember/ember.hpp>

#include <cstdio>
#include <cstdlib>

using namespace ember;
constexpr int D = 4;
constexpr long chains = 512;

// The same energy written by hand: ½|x − μ|²/σ² + 0.5 · 2 Σ (x² − 1)².
struct hand_energy {
  using value_type = float;
  static constexpr int dim = D;
  vec<float, D> mean;
  float inv_var;
  template <class S>
  S value(vec<S, D> const& x) const {
    vec<S, D> g;
    return value_and_grad(x, g);
  }
  template <class S>
  S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S u = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i], w = x[i] * x[i] - S(1);
      u = u + S(0.5f * inv_var) * r * r + S(0.5f * 2.f) * w * w;
      g[i] = S(inv_var) * r + S(0.5f * 8.f) * x[i] * w;
    }
    return u;
  }
};

int main(int argc, char** argv) {
  char const* mode = argc > 1 ? argv[1] : "expr";
  long steps = argc > 2 ? std::atol(argv[2]) : 2000;
  vec<float, D> mu{{0.5f, -0.5f, 1.f, 0.f}};
  gaussian<float, D, covariance::isotropic> G(mu, 1.f);
  double_well<float, D> W{};
  double check = 0;
  backend::scalar one{.threads = 1};
  if (mode[0] == 'e') {
    auto r = sample(ula(G + 0.5f * W, {.step_size = 0.01}), {.chains = chains, .steps = steps, .seed = 3}, one);
    for (long c = 0; c < chains; ++c) check += r.final_state(c)[0];
  } else if (mode[0] == 'f') {
    auto r = sample(ula(hand_energy{mu, 1.f}, {.step_size = 0.01}), {.chains = chains, .steps = steps, .seed = 3}, one);
    for (long c = 0; c < chains; ++c) check += r.final_state(c)[0];
  } else if (mode[0] == 'h') {
    hand_energy U{mu, 1.f};
    float const eta = 0.01f, sigma = std::sqrt(0.02f);
    for (long c = 0; c < chains; ++c) {
      auto x = default_start<float, D>(3, std::uint32_t(c));
      vec<float, D> g;
      U.value_and_grad(x, g);
      for (long t = 0; t < steps; ++t) {
        auto xi = make_chain_rng<float>(3, std::uint32_t(c), std::uint32_t(t)).normal<D>(purpose::proposal);
        for (int i = 0; i < D; ++i) x[i] = x[i] - eta * g[i] + sigma * xi[i];
        U.value_and_grad(x, g);
      }
      check += x[0];
    }
  } else {
    std::fprintf(stderr, "usage: ember_expression_overhead expr|fused|hand [steps]\n");
    return 2;
  }
  std::printf("%s: %ld chains x %ld steps, checksum %.6f\n", mode, chains, steps, check);
}
