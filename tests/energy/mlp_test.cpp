// Neural energies (energy/mlp.hpp, energy/activation.hpp): each activation's slope against a
// central difference of its value; the network's value, input gradient and parameter gradient
// (one chain and SIMD batches, float and double, with and without skips) against a plain
// long-double implementation (mlp_reference.hpp); weights' shapes refused with one sentence each;
// state_dict names in natural order; and a sampler on a network whose energy is known in closed
// form. PyTorch's formulas themselves are checked against NumPy by mlp_numpy.py (energy_mlp_numpy).
#include <ember/ember.hpp>
#include <ember/energy/mlp.hpp>

#include "energy/mlp_reference.hpp"
#include "generic/sampler_checks.hpp"
#include "support/scratch_dir.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace ember;

namespace {

using ember_test::LD;
using ember_test::reference;
using ember_test::uniform01;

template <class E>
constexpr int width_sum() {
  int s = 0;
  for (int l = 0; l <= E::depth + 1; ++l) s += E::width[l];
  return s;
}

// One network type checked at 3W + 1 random inputs (or `points`), on one chain and on SIMD
// batches; the parameter gradient summed over all of them.
template <class E>
void check_network(typename E::activation_type act, bool skip, std::uint64_t seed, int points_wanted = 0) {
  using T = typename E::value_type;
  constexpr int D = E::dim;
  std::vector<int> widths;
  for (int l = 0; l <= E::depth + 1; ++l) widths.push_back(E::width[l]);
  auto const w = mlp_weights<T>::uniform(widths, seed);
  E const U(w, {.skip = skip}, act);
  reference<typename E::activation_type> const ref(w, act, skip);
  double const tol = (width_sum<E>() + 16) * double(std::numeric_limits<T>::epsilon()) / 2;
  using B = simd_batch<T>;
  constexpr int W = int(B::size);
  std::uint64_t s = seed * 7919;
  std::vector<T> points, coeff;
  std::vector<LD> want_theta(std::size_t(E::parameters), 0), theta_mag(std::size_t(E::parameters), 0);
  LD want_total = 0, total_mag = 0;
  for (int n = 0; n < (points_wanted > 0 ? points_wanted : 3 * W + 1); ++n) {
    vec<T, D> x;
    std::vector<LD> xl;
    for (int i = 0; i < D; ++i) x[i] = T(-3 + 6 * uniform01(s)), xl.push_back(x[i]);
    auto const r = ref.eval(xl);
    INFO(E::activation_type::name << (skip ? " with skips" : "") << ", point " << n);
    vec<T, D> g;
    T const u = U.value_and_grad(x, g);
    CHECK(std::fabs(double(u - r.u)) <= tol * double(r.u_mag));
    CHECK(std::fabs(double(U.value(x) - r.u)) <= tol * double(r.u_mag));
    for (int i = 0; i < D; ++i) CHECK(std::fabs(double(g[i] - r.g[std::size_t(i)])) <= tol * double(r.g_mag[std::size_t(i)]));
    // The same point in every lane of a batch, beside other points.
    vec<B, D> xb, gb;
    for (int i = 0; i < D; ++i) {
      alignas(64) T lanes[W];
      for (int k = 0; k < W; ++k) lanes[k] = k == n % W ? x[i] : T(k - 1);
      xb[i] = B::load_aligned(lanes);
    }
    B const ub = U.value_and_grad(xb, gb), vb = U.value(xb);
    CHECK(std::fabs(double(ub.get(std::size_t(n % W)) - r.u)) <= tol * double(r.u_mag));
    CHECK(std::fabs(double(vb.get(std::size_t(n % W)) - r.u)) <= tol * double(r.u_mag));
    for (int i = 0; i < D; ++i)
      CHECK(std::fabs(double(gb[i].get(std::size_t(n % W)) - r.g[std::size_t(i)])) <= tol * double(r.g_mag[std::size_t(i)]));
    // ∂U/∂θ summed with coefficients.
    T const c = T(0.5 - uniform01(s));
    for (int i = 0; i < D; ++i) points.push_back(x[i]);
    coeff.push_back(c);
    want_total += LD(c) * r.u;
    total_mag += std::fabs(LD(c)) * r.u_mag;
    for (int p = 0; p < E::parameters; ++p)
      want_theta[std::size_t(p)] += LD(c) * r.theta[std::size_t(p)], theta_mag[std::size_t(p)] += std::fabs(LD(c)) * r.theta_mag[std::size_t(p)];
  }
  std::vector<T> grad(std::size_t(E::parameters), T(0));
  T const total = U.add_param_grad(points, coeff, grad);
  INFO(E::activation_type::name << (skip ? " with skips" : "") << ": parameter gradient over " << coeff.size() << " points");
  // Summed over the points too: n more terms in each sum.
  double const tol_sum = tol + double(coeff.size()) * double(std::numeric_limits<T>::epsilon()) / 2;
  CHECK(std::fabs(double(total - want_total)) <= tol_sum * double(total_mag));
  int bad = 0;
  for (int p = 0; p < E::parameters; ++p)
    if (!(std::fabs(double(grad[std::size_t(p)] - want_theta[std::size_t(p)])) <= tol_sum * double(theta_mag[std::size_t(p)]))) {
      if (++bad <= 5) FAIL_CHECK("parameter " << p << ": " << double(grad[std::size_t(p)]) << " against " << double(want_theta[std::size_t(p)]));
    }
  CHECK(bad == 0);
}

}  // namespace

// The slope of every activation against a central difference of its value, in long double
// at a grid that avoids ReLU's kink by more than the step. With h = 1e-5 the difference is off
// by at most h²/6·|φ‴| + u·|φ|/h (u = 2⁻⁶⁴ the rounding unit); |φ‴| ≤ 2 on every activation
// here (tanh's is largest, 2 at 0; silu, gelu, elu, softplus and sigmoid stay below 1.5), so
// 4·(h²/3 + u(1 + |x|)/h) bounds it with room for the rounding of the slope formula itself.
TEMPLATE_TEST_CASE("an activation's slope is the derivative of its value", "[mlp]", nn::silu, nn::relu, nn::leaky_relu, nn::elu,
                   nn::gelu, nn::gelu_tanh, nn::softplus, nn::tanh, nn::sigmoid) {
  TestType const act{};
  LD const h = 1e-5L, u = std::numeric_limits<LD>::epsilon() / 2;
  for (LD x = -9.03L; x < 9.1L; x += 0.37L) {
    LD d = 0;
    LD const v = act.value_and_slope(x, d);
    CHECK(v == act.value(x));
    LD const fd = (act.value(x + h) - act.value(x - h)) / (2 * h);
    INFO(TestType::name << " at " << double(x));
    CHECK(std::fabs(double(d - fd)) <= double(4 * (h * h / 3 + u * (1 + std::fabs(x)) / h)));
  }
}

// Widths 12 (one block of 8 and a remainder of 4) and 3 inputs (a remainder only); two equal
// hidden widths, so the second layer has a skip when asked.
TEMPLATE_TEST_CASE("an mlp's value, input gradient and parameter gradient equal a plain long-double network's", "[mlp]", nn::silu,
                   nn::relu, nn::leaky_relu, nn::elu, nn::gelu, nn::gelu_tanh, nn::softplus, nn::tanh, nn::sigmoid) {
  for (bool skip : {false, true}) {
    check_network<mlp<double, 3, TestType, 12, 12>>({}, skip, 11);
    check_network<mlp<float, 3, TestType, 12, 12>>({}, skip, 12);
  }
}

TEST_CASE("an mlp's parameter gradient over more points than one chunk of batches", "[mlp]") {
  // add_param_grad gathers param_chunk batches at a time: 2.5 chunks and a partial batch.
  constexpr int W = int(simd_batch<double>::size);
  check_network<mlp<double, 3, nn::silu, 12, 12>>({}, true, 13, 40 * W + 3);
  check_network<mlp<float, 3, nn::elu, 13, 6>>({}, false, 14, 40 * int(simd_batch<float>::size) + 5);
}

TEST_CASE("activations at their kinks take PyTorch's slopes, and NaN stays NaN", "[mlp]") {
  double d = -1;
  CHECK(nn::relu{}.value_and_slope(0.0, d) == 0.0);
  CHECK(d == 0.0);
  CHECK(nn::leaky_relu{.negative_slope = 0.2}.value_and_slope(0.0, d) == 0.0);
  CHECK(d == 0.2);
  CHECK(nn::elu{.alpha = 0.5}.value_and_slope(0.0, d) == 0.0);
  CHECK(d == 0.5);
  double const nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(nn::relu{}.value_and_slope(nan, d)));
  CHECK(std::isnan(nn::relu{}.value(nan)));
  CHECK(std::isnan(nn::leaky_relu{}.value_and_slope(nan, d)));
  CHECK(std::isnan(nn::silu{}.value_and_slope(nan, d)));
}

TEST_CASE("an mlp of one hidden layer, three of sixteen, and parametrised activations", "[mlp]") {
  check_network<mlp<double, 2, nn::silu, 5>>({}, false, 3);
  check_network<mlp<float, 7, nn::silu, 16, 16, 16>>({}, true, 4);
  check_network<mlp<double, 4, nn::leaky_relu, 9, 9>>(nn::leaky_relu{.negative_slope = 0.2}, true, 5);
  check_network<mlp<double, 4, nn::elu, 9, 9>>(nn::elu{.alpha = 0.5}, false, 6);
}

TEST_CASE("an mlp refuses weights of another shape, one sentence per mismatch", "[mlp]") {
  auto const w = mlp_weights<float>::uniform({2, 64, 128, 1}, 1);
  using net = mlp<float, 2, nn::silu, 128, 128>;
  REQUIRE_THROWS_WITH(net(w), "ember::mlp: Layer 0 ('0') is 64 × 2; this network needs 128 × 2 (out × in, as torch.nn.Linear stores it). "
                              "Layer 1 ('1') is 128 × 64; this network needs 128 × 128 (out × in, as torch.nn.Linear stores it).");
  auto const short_w = mlp_weights<float>::uniform({2, 128, 1}, 1);
  REQUIRE_THROWS_WITH(net(short_w), "ember::mlp: the weights have 2 layers; this network needs 3 (2 hidden and the output). Layer 1 "
                                    "('1') is 1 × 128; this network needs 128 × 128 (out × in, as torch.nn.Linear stores it).");
  REQUIRE_THROWS_WITH(mlp_weights<float>(std::vector<dense_layer<float>>{{"a", 2, 3, std::vector<float>(5), {}}}),
                      "ember::mlp_weights: layer 0 ('a') has 5 weights; its shape 2 × 3 needs 6");
  REQUIRE_THROWS_WITH(mlp_weights<float>(std::vector<dense_layer<float>>{{"a", 2, 3, std::vector<float>(6), {}},
                                                                        {"b", 1, 4, std::vector<float>(4), {}}}),
                      "ember::mlp_weights: layer 1 ('b') takes 4 inputs, but layer 0 ('a') gives 2");
  std::vector<float> nan_w(6, 0.f);
  nan_w[4] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE_THROWS_WITH(mlp_weights<float>(std::vector<dense_layer<float>>{{"a", 2, 3, nan_w, {}}}),
                      "ember::mlp_weights: layer 0's weight 4 must be finite, got nan");
  std::vector<float> const pts(6, 0.f), cs(2, 1.f);
  std::vector<float> grad(5);
  net const U(mlp_weights<float>::uniform({2, 128, 128, 1}, 1));
  REQUIRE_THROWS_WITH(U.add_param_grad(pts, cs, grad), "ember::mlp::add_param_grad: 6 point values for 2 coefficients; each point has 2");
}

TEST_CASE("mlp weights from a state_dict's .npz: natural order of the layer names, explicit names, and back", "[mlp]") {
  ember_test::scratch_dir dir("ember_mlp_test");
  // nn.Sequential's names: Linear layers at 0, 2, …, 10 (text order would put 10 before 2).
  std::vector<int> const widths{3, 4, 4, 4, 4, 4, 1};
  auto const w = mlp_weights<double>::uniform(widths, 9);
  {
    npz_writer z((dir / "sd.npz").string());
    for (std::size_t l = 0; l < w.layers().size(); ++l) {
      auto const& ly = w.layers()[l];
      std::size_t const ws[2] = {std::size_t(ly.out), std::size_t(ly.in)}, bs[1] = {std::size_t(ly.out)};
      // float32 as torch saves, so the read converts
      std::vector<float> wf(w.parameters().begin() + std::ptrdiff_t(ly.weight), w.parameters().begin() + std::ptrdiff_t(ly.bias));
      std::vector<float> bf(w.parameters().begin() + std::ptrdiff_t(ly.bias), w.parameters().begin() + std::ptrdiff_t(ly.bias + std::size_t(ly.out)));
      std::string const name = "net." + std::to_string(2 * l);
      z.add(name + ".weight", wf.data(), std::span<std::size_t const>(ws));
      z.add(name + ".bias", bf.data(), std::span<std::size_t const>(bs));
    }
    z.close();
  }
  auto const r = mlp_weights<double>::from_npz((dir / "sd.npz").string());
  REQUIRE(r.layers().size() == 6);
  for (std::size_t l = 0; l < 6; ++l) {
    CHECK(r.layers()[l].name == "net." + std::to_string(2 * l));
    CHECK(r.layers()[l].in == widths[l]);
  }
  for (std::size_t i = 0; i < w.parameters().size(); ++i) CHECK(r.parameters()[i] == double(float(w.parameters()[i])));
  mlp<double, 3, nn::tanh, 4, 4, 4, 4, 4> const U(r);
  // Explicit names in another order: refused by the chained shapes, with the names.
  REQUIRE_THROWS_WITH(mlp_weights<double>::from_npz((dir / "sd.npz").string(), {"net.10", "net.0", "net.2", "net.4", "net.6", "net.8"}),
                      "ember::mlp_weights: layer 1 ('net.0') takes 3 inputs, but layer 0 ('net.10') gives 1");
  // Written back and read again: the same values and names.
  r.write_npz((dir / "back.npz").string());
  auto const b = mlp_weights<double>::from_npz((dir / "back.npz").string());
  REQUIRE(b.parameters().size() == r.parameters().size());
  for (std::size_t i = 0; i < r.parameters().size(); ++i) CHECK(b.parameters()[i] == r.parameters()[i]);
  CHECK(b.layers()[5].name == "net.10");
  {
    npz_writer z((dir / "bad.npz").string());
    float const v[2] = {1, 2};
    std::size_t const s1[1] = {2};
    z.add("net.0.running_mean", v, std::span<std::size_t const>(s1));
    z.close();
  }
  REQUIRE_THROWS_WITH(mlp_weights<float>::from_npz((dir / "bad.npz").string()),
                      Catch::Contains("entry 'net.0.running_mean' is neither a layer's weight nor its bias"));
}

// E(x) = Σᵢ relu(xᵢ) + relu(−xᵢ) = Σᵢ |xᵢ|: two independent Laplace(0, 1) coordinates, drawn by
// the default sampler through SIMD batches. Moments of the final states (one per chain, so
// independent) within 5 standard errors: E x = 0, E|x| = 1, E x² = 2.
TEST_CASE("a sampler on an mlp whose energy is known: ReLU units that add up to |x1| + |x2|", "[mlp]") {
  std::vector<dense_layer<double>> layers{{"0", 4, 2, {1, 0, -1, 0, 0, 1, 0, -1}, {0, 0, 0, 0}}, {"1", 1, 4, {1, 1, 1, 1}, {0}}};
  mlp_weights<double> const w(layers);
  mlp<double, 2, nn::relu, 4> const U(w);
  auto const r = sample(chees_hmc(U), {.chains = 2048, .steps = 1, .seed = 3});
  for (int i = 0; i < 2; ++i) {
    INFO("coordinate " << i);
    CHECK(std::fabs(ember_test::z_of_mean(r, [i](auto const& x) { return double(x[i]); }, 0.0)) < 5);
    CHECK(std::fabs(ember_test::z_of_mean(r, [i](auto const& x) { return std::fabs(double(x[i])); }, 1.0)) < 5);
    CHECK(std::fabs(ember_test::z_of_mean(r, [i](auto const& x) { return double(x[i]) * double(x[i]); }, 2.0)) < 5);
  }
}

// ∂/∂θ Σᵢ vᵢ·∇ₓU(xᵢ) against central differences in θ of F(θ) = Σᵢ vᵢ·∇ₓU(xᵢ; θ), in double. The
// difference is off by at most h²/6·|F‴| + ε·A/h with A = Σᵢ|vᵢ|·|∇ₓU(xᵢ)| bounding F's terms;
// with weights below 1/√in in size, |x| ≤ 3 and activations whose first four derivatives stay below
// 2, |F‴| along one parameter stays below 100 here, and h = 1e-4 balances the two bounds.
TEST_CASE("the parameter gradient of v·∇U against central differences of v·∇U in each parameter", "[mlp]") {
  auto w = mlp_weights<double>::uniform({3, 5, 5, 1}, 21);
  mlp<double, 3, nn::silu, 5, 5> const U(w, {.skip = true});
  std::uint64_t s = 99;
  constexpr int n = 21;  // more than two batches on any SIMD width, and a partial one
  std::vector<double> x(3 * n), v(3 * n);
  for (auto& e : x) e = -3 + 6 * uniform01(s);
  for (auto& e : v) e = -1 + 2 * uniform01(s);
  auto const F = [&] {
    std::vector<double> g(3 * n);
    U.values_and_grads(x, g);
    double f = 0, a = 0;
    for (int i = 0; i < 3 * n; ++i) f += v[std::size_t(i)] * g[std::size_t(i)], a += std::fabs(v[std::size_t(i)] * g[std::size_t(i)]);
    return std::pair{f, a};
  };
  std::vector<double> grad(std::size_t(U.parameters), 0.0);
  U.add_param_grad_of_input_grad(x, v, grad);
  double const h = 1e-4, eps = std::numeric_limits<double>::epsilon();
  for (int p = 0; p < U.parameters; ++p) {
    double const keep = w.parameters()[std::size_t(p)];
    w.parameters()[std::size_t(p)] = keep + h;
    auto const [fp, ap] = F();
    w.parameters()[std::size_t(p)] = keep - h;
    auto const [fm, am] = F();
    w.parameters()[std::size_t(p)] = keep;
    double const fd = (fp - fm) / (2 * h), tol = 4 * (h * h / 6 * 100 + eps * (ap + am) / h);
    INFO("parameter " << p);
    CHECK(std::fabs(grad[std::size_t(p)] - fd) <= tol);
  }
  // values_and_grads against the long-double network, with check_network's rounding bound.
  std::vector<double> g(3 * n), e(n);
  U.values_and_grads(x, g, e);
  reference<nn::silu> const ref(w, {}, true);
  double const tol = (width_sum<mlp<double, 3, nn::silu, 5, 5>>() + 16) * eps / 2;
  for (int i = 0; i < n; ++i) {
    auto const r = ref.eval({x[3 * std::size_t(i)], x[3 * std::size_t(i) + 1], x[3 * std::size_t(i) + 2]});
    CHECK(std::fabs(e[std::size_t(i)] - double(r.u)) <= tol * double(r.u_mag));
    for (int j = 0; j < 3; ++j)
      CHECK(std::fabs(g[3 * std::size_t(i) + std::size_t(j)] - double(r.g[std::size_t(j)])) <= tol * double(r.g_mag[std::size_t(j)]));
  }
}
