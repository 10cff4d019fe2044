// 10_custom_statistic: a statistic of one's own, tracked over the chains at every kept step
// exactly as the built-in `moments` is (ember/pipeline/track.hpp). Here two expectations of a
// correlated Gaussian that the moments do not give: P(x₀ > c) and E[x₀x₁].
#include <ember/ember.hpp>

#include <cmath>
#include <cstdio>

// Two sums over the live chains per kept step; the trace keeps their means over chains.
struct tail_and_cross {
  static constexpr char const* name = "tail and cross";
  float c = 1.0f;  // a statistic's data travel with the pipeline (to a GPU too)
  static constexpr int sums(int /*dim*/) { return 2; }
  template <int I, class Chain>
  EMBER_HD double term(Chain const& chain) const {
    if constexpr (I == 0)
      return chain.x[0] > c ? 1.0 : 0.0;  // the indicator of the tail
    else
      return double(chain.x[0]) * double(chain.x[1]);
  }
};

int main() {
  using namespace ember;
  // Unit variances, correlation 0.8: P(x₀ > 1) = 0.158655, E[x₀x₁] = 0.8.
  auto U = gaussian(vec<float, 2>{{0.f, 0.f}}, std::array<std::array<float, 2>, 2>{{{1.f, 0.8f}, {0.8f, 1.f}}});
  auto pipe = mala(U) | warmup(500) | thin(10) | track(moments, tail_and_cross{.c = 1.0f});
  auto res = sample(pipe, {.chains = 4'096, .steps = 1'000, .seed = 3});
  auto const& s = res.trace().statistic("tail and cross");  // s(k, i): mean of sum i at kept step k
  double tail = 0, cross = 0;
  for (std::int64_t k = 0; k < s.kept(); ++k) tail += s(k, 0), cross += s(k, 1);
  std::printf("over %lld kept steps of %lld chains: P(x0 > 1) = %.4f (truth 0.1587), E[x0 x1] = %.4f (truth 0.8)\n",
              (long long)s.kept(), (long long)res.chains(), tail / double(s.kept()), cross / double(s.kept()));
  return res.divergent_chains() == 0 ? 0 : 1;
}
