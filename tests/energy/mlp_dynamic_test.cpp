// Neural energies whose widths (energy/mlp_dynamic.hpp) and activation (nn::any) are chosen at run
// time: on SIMD batches of chains, the same bits as the compile-time network of the same weights
// (the same sums in the same order), for every activation, blocks with remainders, skips and
// depths from one to three; on one chain (scalar code, whose multiply-adds the compiler may fuse
// differently) against the long-double network of mlp_reference.hpp within its rounding bound; the
// same draws as the compile-time network in a sampler, on one thread and two (each with its own
// scratch buffer); and the refusals, one sentence each.
#include <ember/ember.hpp>

#include "energy/mlp_reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace ember;
using ember_test::LD;
using ember_test::uniform01;

namespace {

template <class B>
bool same_bits(B const& a, B const& b) {
  return std::memcmp(&a, &b, sizeof(B)) == 0;
}

// The compile-time network E against mlp<…, dynamic> with E's activation and with nn::any holding
// it, over three SIMD batches of random points (every lane its own point) and 3W + 1 single points.
template <class E>
void check_against_fixed(typename E::activation_type act, bool skip, std::uint64_t seed) {
  using T = typename E::value_type;
  using Act = typename E::activation_type;
  constexpr int D = E::dim;
  using B = simd_batch<T>;
  constexpr int W = int(B::size);
  std::vector<int> widths;
  for (int l = 0; l <= E::depth + 1; ++l) widths.push_back(E::width[l]);
  auto const w = mlp_weights<T>::uniform(widths, seed);
  E const U(w, {.skip = skip}, act);
  mlp<T, D, Act, dynamic> const Ud(w, {.skip = skip}, act);
  mlp<T, D, nn::any, dynamic> const Ua(w, {.skip = skip}, nn::any(act));
  REQUIRE(Ud.depth == E::depth);
  REQUIRE(Ud.parameters() == std::size_t(E::parameters));
  INFO(Act::name << (skip ? " with skips" : "") << ", widths " << Catch::Detail::stringify(widths));
  std::uint64_t s = seed * 104729;
  for (int rep = 0; rep < 3; ++rep) {
    vec<B, D> x, g, gd, ga;
    for (int i = 0; i < D; ++i) {
      alignas(64) T lanes[W];
      for (int k = 0; k < W; ++k) lanes[k] = T(-3 + 6 * uniform01(s));
      x[i] = B::load_aligned(lanes);
    }
    B const u = U.value_and_grad(x, g), ud = Ud.value_and_grad(x, gd), ua = Ua.value_and_grad(x, ga);
    CHECK(same_bits(u, ud));
    CHECK(same_bits(u, ua));
    CHECK(same_bits(U.value(x), Ud.value(x)));
    CHECK(same_bits(U.value(x), Ua.value(x)));
    for (int i = 0; i < D; ++i) {
      CHECK(same_bits(g[i], gd[i]));
      CHECK(same_bits(g[i], ga[i]));
    }
  }
  // One chain: within the rounding bound of the long-double network (mlp_test.cpp's bound).
  ember_test::reference<Act> const ref(w, act, skip);
  int width_sum = 0;
  for (int v : widths) width_sum += v;
  double const tol = (width_sum + 16) * double(std::numeric_limits<T>::epsilon()) / 2;
  for (int n = 0; n < 3 * W + 1; ++n) {
    vec<T, D> x, g;
    std::vector<LD> xl;
    for (int i = 0; i < D; ++i) x[i] = T(-3 + 6 * uniform01(s)), xl.push_back(x[i]);
    auto const r = ref.eval(xl);
    T const u = Ud.value_and_grad(x, g);
    CHECK(std::fabs(double(u - r.u)) <= tol * double(r.u_mag));
    CHECK(std::fabs(double(Ud.value(x) - r.u)) <= tol * double(r.u_mag));
    for (int i = 0; i < D; ++i) CHECK(std::fabs(double(g[i] - r.g[std::size_t(i)])) <= tol * double(r.g_mag[std::size_t(i)]));
    T const ua = Ua.value_and_grad(x, g);
    CHECK(std::fabs(double(ua - r.u)) <= tol * double(r.u_mag));
    for (int i = 0; i < D; ++i) CHECK(std::fabs(double(g[i] - r.g[std::size_t(i)])) <= tol * double(r.g_mag[std::size_t(i)]));
  }
}

}  // namespace

// Widths 12 (a block of 8 and a remainder of 4), 3 inputs (a remainder only); equal hidden
// widths, so the second layer has a skip when asked.
TEMPLATE_TEST_CASE("an mlp with run-time widths gives the compile-time network's bits on SIMD batches", "[mlp]", nn::silu, nn::relu,
                   nn::leaky_relu, nn::elu, nn::gelu, nn::gelu_tanh, nn::softplus, nn::tanh, nn::sigmoid) {
  for (bool skip : {false, true}) {
    check_against_fixed<mlp<double, 3, TestType, 12, 12>>({}, skip, 21);
    check_against_fixed<mlp<float, 3, TestType, 12, 12>>({}, skip, 22);
  }
}

TEST_CASE("an mlp with run-time widths: one hidden layer, three of sixteen, parametrised activations, remainders", "[mlp]") {
  check_against_fixed<mlp<double, 2, nn::silu, 5>>({}, false, 23);
  check_against_fixed<mlp<float, 7, nn::silu, 16, 16, 16>>({}, true, 24);
  check_against_fixed<mlp<double, 4, nn::leaky_relu, 9, 9>>(nn::leaky_relu{.negative_slope = 0.2}, true, 25);
  check_against_fixed<mlp<double, 4, nn::elu, 9, 9>>(nn::elu{.alpha = 0.5}, false, 26);
  check_against_fixed<mlp<float, 9, nn::tanh, 13, 6>>({}, false, 27);  // a 9-input remainder backwards
  // Every remainder 1-7 forwards (outputs) and backwards (inputs) somewhere in this case or above.
  check_against_fixed<mlp<float, 2, nn::softplus, 11, 10, 7>>({}, false, 28);
  check_against_fixed<mlp<double, 6, nn::tanh, 14, 5>>({}, false, 29);
  // Small layers the compiler may unroll whole in the compile-time network, with skips; a skip on
  // the last hidden layer only.
  check_against_fixed<mlp<float, 3, nn::gelu, 4, 4>>({}, true, 30);
  check_against_fixed<mlp<double, 2, nn::silu, 3, 3, 3>>({}, true, 31);
  check_against_fixed<mlp<double, 3, nn::elu, 12, 8, 8>>({}, true, 32);
}

TEST_CASE("a sampler on an mlp with run-time widths draws the compile-time network's bits, on one thread and two", "[mlp]") {
  auto const w = mlp_weights<float>::uniform({2, 24, 24, 1}, 31);
  mlp<float, 2, nn::silu, 24, 24> const U(w);
  mlp<float, 2, nn::any, dynamic> const Ua(w, {}, nn::any::named("silu"));
  auto const opts = sample_options<float, 2>{.chains = 64, .steps = 40, .seed = 5, .progress = false};
  auto const a = sample(chees_hmc(U, {.warmup = 60}) | record(), opts, backend::cpu{.threads = 1});
  auto const b = sample(chees_hmc(Ua, {.warmup = 60}) | record(), opts, backend::cpu{.threads = 1});
  auto const c = sample(chees_hmc(Ua, {.warmup = 60}) | record(), opts, backend::cpu{.threads = 2});
  REQUIRE(a.kept() == 40);
  int differ_b = 0, differ_c = 0;
  for (std::int64_t k = 0; k < 40; ++k)
    for (std::int64_t ch = 0; ch < 64; ++ch)
      for (int d = 0; d < 2; ++d) {
        float const x = a.samples()(k, ch, d), y = b.samples()(k, ch, d), z = c.samples()(k, ch, d);
        differ_b += std::memcmp(&x, &y, sizeof x) != 0;
        differ_c += std::memcmp(&x, &z, sizeof x) != 0;
      }
  CHECK(differ_b == 0);
  CHECK(differ_c == 0);
  CHECK(a.gradients() == c.gradients());
}

TEST_CASE("an mlp with run-time widths refuses weights it cannot take, one sentence each", "[mlp]") {
  using net = mlp<float, 2, nn::silu, dynamic>;
  REQUIRE_THROWS_WITH(net(mlp_weights<float>::uniform({3, 8, 1}, 1)),
                      "ember::mlp: Layer 0 ('0') takes 3 inputs; this network's input width is 2.");
  REQUIRE_THROWS_WITH(net(mlp_weights<float>::uniform({2, 8, 2}, 1)), "ember::mlp: The last layer ('1') has 2 outputs; an energy has one.");
  REQUIRE_THROWS_WITH(net(mlp_weights<float>::uniform({2, 1}, 1)),
                      "ember::mlp: the weights have 1 layer; a network needs at least one hidden layer and the output.");
  std::vector<int> deep(35, 4);
  deep.front() = 2, deep.back() = 1;
  REQUIRE_THROWS_WITH(net(mlp_weights<float>::uniform(deep, 1)), "ember::mlp: The weights have 33 hidden layers; at most 32 are supported.");
  REQUIRE_THROWS_WITH(net(mlp_weights<float>::uniform({3, 8, 2}, 1)),
                      "ember::mlp: Layer 0 ('0') takes 3 inputs; this network's input width is 2. The last layer ('1') has 2 outputs; "
                      "an energy has one.");
  REQUIRE_THROWS_WITH(nn::any::named("swish"),
                      "ember::nn::any: no activation named 'swish' (there are silu, relu, leaky_relu, elu, gelu, gelu_tanh, softplus, "
                      "tanh, sigmoid)");
  REQUIRE_THROWS_WITH(nn::any::named("relu", 0.1), "ember::nn::any: relu takes no parameter (leaky_relu and elu do)");
  CHECK(nn::any::named("leaky_relu").parameter == 0.01);
  CHECK(nn::any::named("elu", 0.5).parameter == 0.5);
}
