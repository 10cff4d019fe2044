// dual<T, N>: the chain rule of every operation and primitive, against exact derivatives and
// central differences in double, near the primitives' edge cases; masks and select for a bool
// and for a SIMD batch; lookup of the overloads (unqualified, ember::, `using std::sin` + ADL).
#include <ember/core/dual.hpp>
#include <ember/core/simd.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>

using ember::dual;

static_assert(std::is_trivially_copyable_v<dual<float, 4>>);
static_assert(std::is_trivially_copyable_v<dual<xsimd::batch<float>, 4>>);
static_assert(std::is_same_v<ember::element_t<dual<double, 3>>, double>);
static_assert(std::is_same_v<ember::mask_t<dual<float, 3>>, bool>);
static_assert(std::is_same_v<ember::mask_t<dual<xsimd::batch<float>, 3>>, xsimd::batch_bool<float>>);
static_assert(ember::scalar_traits<dual<xsimd::batch<float>, 2>>::width == int(xsimd::batch<float>::size));

namespace {

using d1 = dual<double, 1>;

// f'(x) by a central difference with step h = 1e-5 (1 + |x|), or 1e-5 |x| for |x| < 1 so that
// x ± h stays in the domain near 0+: error about h² f''' / 6 + 1e-16 |f| / h.
template <class F>
double central(F f, double x) {
  double h = 1e-5 * (std::abs(x) < 1 ? std::abs(x) : 1 + std::abs(x));
  return (f(x + h) - f(x - h)) / ((x + h) - (x - h));
}

// Checks f on a dual seeded at x against f on double and its central difference; `tol` relative
// to 1 + |f'(x)|, with `scale` the size of the terms (the rounding of the difference quotient).
template <class F>
void check_primitive(char const* name, F f, double x, double tol = 1e-7) {
  d1 r = f(d1::variable(x, 0));
  double v = f(x), fd = central([&](double y) { return f(y); }, x);
  INFO(name << " at x = " << x << ": value " << r.val << " (" << v << "), derivative " << r.d[0]
            << ", central difference " << fd);
  CHECK(r.val == v);
  CHECK(std::abs(r.d[0] - fd) <= tol * (1 + std::abs(fd)));
}

}  // namespace

TEST_CASE("dual arithmetic follows the sum, product and quotient rules exactly", "[core][dual]") {
  using d2 = dual<double, 2>;
  d2 a = d2::variable(3.0, 0), b = d2::variable(-2.0, 1);
  d2 p = a * b;  // ∂(ab) = (b, a)
  CHECK(p.val == -6.0);
  CHECK(p.d[0] == -2.0);
  CHECK(p.d[1] == 3.0);
  d2 q = a / b;  // ∂(a/b) = (1/b, −a/b²)
  CHECK(q.val == -1.5);
  CHECK(q.d[0] == -0.5);
  CHECK(q.d[1] == Approx(-0.75).epsilon(1e-15));
  d2 s = 2.0 * a - b + 1 - a / 4.0;  // ∂ = (2 − 1/4, −1)
  CHECK(s.val == 6.0 + 2.0 + 1.0 - 0.75);
  CHECK(s.d[0] == 1.75);
  CHECK(s.d[1] == -1.0);
  d2 c = 1.0 / b;  // ∂(1/b) = (0, −1/b²)
  CHECK(c.d[0] == 0.0);
  CHECK(c.d[1] == -0.25);
  d2 n = -a;
  CHECK(n.d[0] == -1.0);
  CHECK((a < b) == false);
  CHECK((a > 2.5) == true);
  CHECK((1.f < a) == true);
  d2 k = 5;  // a constant: zero partials
  CHECK(k.d[0] == 0.0);
  CHECK(k.d[1] == 0.0);
}

TEST_CASE("dual primitives give the derivative of the value, near their edge cases", "[core][dual]") {
  using namespace ember;
  for (double x : {-3.0, -0.7, 0.1, 0.5, 2.0, 9.0}) {
    check_primitive("exp", [](auto y) { return exp(y); }, x);
    check_primitive("expm1", [](auto y) { return expm1(y); }, x);
    check_primitive("sin", [](auto y) { return sin(y); }, x);
    check_primitive("cos", [](auto y) { return cos(y); }, x);
    check_primitive("tanh", [](auto y) { return tanh(y); }, x);
    check_primitive("abs", [](auto y) { return abs(y); }, x);
    check_primitive("sigmoid", [](auto y) { return sigmoid(y); }, x);
    check_primitive("softplus", [](auto y) { return softplus(y); }, x);
    check_primitive("pow(x, 3)", [](auto y) { return pow(y, 3); }, x);
    check_primitive("pow(2, x)", [](auto y) { return pow(2.0, y); }, x);
  }
  // log, sqrt, log1p and pow(x, y) near 0+: the derivative grows like 1/x, the step shrinks with x.
  for (double x : {1e-6, 1e-3, 0.25, 4.0, 1e6}) {
    check_primitive("log", [](auto y) { return log(y); }, x, 1e-4);
    check_primitive("sqrt", [](auto y) { return sqrt(y); }, x, 1e-4);
    check_primitive("log1p", [](auto y) { return log1p(y); }, x, 1e-4);
    check_primitive("pow(x, 0.3)", [](auto y) { return pow(y, 0.3); }, x, 1e-4);
    if (x < 10) check_primitive("pow(x, x)", [](auto y) { return pow(y, y); }, x, 1e-4);
  }
  // Saturation: tanh and sigmoid at ±large have derivative 0 (not NaN), softplus 0 or 1.
  for (double x : {-800.0, -40.0, 40.0, 800.0}) {
    d1 t = tanh(d1::variable(x, 0)), s = sigmoid(d1::variable(x, 0)), p = softplus(d1::variable(x, 0));
    CHECK(std::abs(t.d[0]) < 1e-30);
    CHECK(std::abs(s.d[0]) < 1e-17);
    CHECK(p.d[0] == Approx(x > 0 ? 1.0 : 0.0).margin(1e-17));
    CHECK(std::isfinite(p.val));
  }
  // Exact values of the derivative at a few points.
  CHECK(sqrt(d1::variable(4.0, 0)).d[0] == 0.25);
  CHECK(log(d1::variable(0.5, 0)).d[0] == 2.0);
  CHECK(exp(d1::variable(0.0, 0)).d[0] == 1.0);
  CHECK(abs(d1::variable(-2.0, 0)).d[0] == -1.0);
  CHECK(abs(d1::variable(0.0, 0)).d[0] == 1.0);  // the subgradient sign(0) = +1
}

TEST_CASE("min, max and log-sum-exp over duals pick the right partials", "[core][dual]") {
  using namespace ember;
  using d3 = dual<double, 3>;
  d3 a = d3::variable(1.0, 0), b = d3::variable(2.0, 1), c = d3::variable(-1000.0, 2);
  CHECK(max(a, b).d[1] == 1.0);
  CHECK(min(a, b).d[0] == 1.0);
  // ∂ log Σ e^{aₖ} / ∂aₖ = softmax: magnitudes far apart, the tiny term underflows to 0 exactly.
  d3 terms[3] = {a, b, c};
  d3 l = log_sum_exp(terms);
  double z = std::exp(1.0) + std::exp(2.0);
  CHECK(l.val == Approx(std::log(z)).epsilon(1e-15));
  CHECK(l.d[0] == Approx(std::exp(1.0) / z).epsilon(1e-15));
  CHECK(l.d[1] == Approx(std::exp(2.0) / z).epsilon(1e-15));
  CHECK(l.d[2] == 0.0);
  d3 big[2] = {d3::variable(1000.0, 0), d3::variable(1000.0, 1)};
  d3 lb = log_sum_exp(big);
  CHECK(lb.val == Approx(1000.0 + std::log(2.0)));
  CHECK(lb.d[0] == Approx(0.5));
  CHECK(lb.d[1] == Approx(0.5));
}

TEST_CASE("using std::sin plus ADL finds the dual overload", "[core][dual]") {
  auto f = [](auto const& x) {
    using std::exp;
    using std::sin;
    return sin(x) * exp(x);
  };
  d1 r = f(d1::variable(0.3, 0));
  CHECK(r.val == std::sin(0.3) * std::exp(0.3));
  CHECK(r.d[0] == Approx((std::cos(0.3) + std::sin(0.3)) * std::exp(0.3)).epsilon(1e-15));
  // ember::exp qualified works on both.
  CHECK(ember::exp(d1::variable(1.0, 0)).d[0] == std::exp(1.0));
  CHECK(ember::exp(1.0) == std::exp(1.0));
}

TEST_CASE("dual over a SIMD batch computes every lane like the scalar dual", "[core][dual][simd]") {
  using B = xsimd::batch<float>;
  constexpr int W = int(B::size);
  using db = dual<B, 2>;
  using ds = dual<float, 2>;
  alignas(64) float xs[W], ys[W];
  for (int l = 0; l < W; ++l) {
    xs[l] = -2.f + 0.3f * float(l);
    ys[l] = 0.5f + 0.1f * float(l);
  }
  auto f = [](auto const& x, auto const& y) {
    using namespace ember;
    auto m = select(x < y, x * y, y / (1.f + x * x));
    return softplus(m) + tanh(x) * sqrt(y) - log(y) + abs(x) + cos(x) * expm1(y * 0.1f) + max(x, y);
  };
  db r = f(db::variable(B::load_aligned(xs), 0), db::variable(B::load_aligned(ys), 1));
  alignas(64) float v[W], d0[W], d1v[W];
  r.val.store_aligned(v);
  r.d[0].store_aligned(d0);
  r.d[1].store_aligned(d1v);
  for (int l = 0; l < W; ++l) {
    ds s = f(ds::variable(xs[l], 0), ds::variable(ys[l], 1));
    INFO("lane " << l);
    CHECK(v[l] == Approx(s.val).epsilon(1e-6));
    CHECK(d0[l] == Approx(s.d[0]).epsilon(1e-5).margin(1e-6));
    CHECK(d1v[l] == Approx(s.d[1]).epsilon(1e-5).margin(1e-6));
  }
}
