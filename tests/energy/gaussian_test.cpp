// gaussian in its three covariance forms: gradients, known values, and the checks on a full
// covariance.
#include <ember/energy/gaussian.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/kernel/ula.hpp>

#include "energy/gradient_check.hpp"
#include "support/message_of.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

using ember::vec;
using ember_test::check_gradient_on_box;

namespace {

// A non-diagonal SPD covariance Σ = B Bᵀ + I with B's entries in [−1, 1]: λ_min ≥ 1.
template <class T, int D>
std::array<std::array<T, D>, D> spd_covariance() {
  std::array<std::array<double, D>, D> B{};
  for (int i = 0; i < D; ++i) {
    auto r = ember_test::test_point<double, D>(std::uint64_t(100 + i), -1, 1);
    for (int j = 0; j < D; ++j) B[i][j] = r[j];
  }
  std::array<std::array<T, D>, D> S{};
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      double s = (i == j) ? 1.0 : 0.0;
      for (int k = 0; k < D; ++k) s += B[i][k] * B[j][k];
      S[i][j] = T(s);
    }
  return S;
}

}  // namespace

TEMPLATE_TEST_CASE("gaussian's analytic gradients match central differences", "[energy][gaussian]", float, double) {
  using T = TestType;
  constexpr int D = 4;
  vec<T, D> mu{{T(0.5), T(-1), T(2), T(0)}};
  // U is quadratic: no truncation error (m3 = 0); its terms are positive, so |U| bounds them.
  SECTION("isotropic") {
    ember::gaussian U(mu, T(0.7));
    check_gradient_on_box(U, 20, -3, 3, {0, 1});
  }
  SECTION("diagonal") {
    ember::gaussian U(mu, vec<T, D>{{T(0.5), T(1), T(2), T(3)}});
    check_gradient_on_box(U, 20, -3, 3, {0, 1});
  }
  SECTION("full") {
    ember::gaussian U(mu, spd_covariance<T, D>());
    // Off-diagonal precision terms cancel: |r|² ≤ 4·5² times |P_ij| ≤ 1 (λ_min(Σ) ≥ 1) bounds them.
    check_gradient_on_box(U, 20, -3, 3, {0, 4 * D * 25});
  }
}

TEMPLATE_TEST_CASE("gaussian is zero at its mean and has the right normaliser", "[energy][gaussian]", float, double) {
  using T = TestType;
  constexpr int D = 3;
  vec<T, D> mu{{T(1), T(-2), T(0.25)}};
  double const two_pi = 6.283185307179586;
  ember::gaussian iso(mu, T(2));
  ember::gaussian dia(mu, vec<T, D>{{T(1), T(2), T(0.5)}});
  std::array<std::array<T, D>, D> cov{{{T(4), T(0), T(0)}, {T(0), T(4), T(0)}, {T(0), T(0), T(4)}}};
  ember::gaussian full(mu, cov);
  CHECK(iso.value(mu) == T(0));
  CHECK(dia.value(mu) == T(0));
  CHECK(full.value(mu) == T(0));
  double eps = std::numeric_limits<T>::epsilon();
  CHECK(double(iso.log_normalizer()) == Approx(0.5 * D * std::log(two_pi * 4)).epsilon(10 * eps));
  CHECK(double(full.log_normalizer()) == Approx(0.5 * D * std::log(two_pi * 4)).epsilon(10 * eps));
  CHECK(double(dia.log_normalizer()) == Approx(0.5 * D * std::log(two_pi) + std::log(1.0 * 2 * 0.5)).epsilon(10 * eps));
  // One unit of σ away along one axis: U = ½ in every form.
  vec<T, D> x = mu;
  x[1] = x[1] + T(2);
  CHECK(double(iso.value(x)) == Approx(0.5).epsilon(10 * eps));
  CHECK(double(full.value(x)) == Approx(0.5).epsilon(10 * eps));
  x = mu;
  x[2] = x[2] + T(0.5);
  CHECK(double(dia.value(x)) == Approx(0.5).epsilon(10 * eps));
}

TEMPLATE_TEST_CASE("the full-covariance gaussian's precision times its covariance is the identity", "[energy][gaussian]",
                   float, double) {
  using T = TestType;
  constexpr int D = 6;
  auto cov = spd_covariance<T, D>();
  ember::gaussian U(vec<T, D>{}, cov);
  // Σ's eigenvalues lie in [1, tr Σ], so cond(Σ) ≤ tr Σ; the precision is computed in double and
  // rounded to T, so each entry of PΣ is off by about D·ε_T·max|P|·max|Σ|, plus ε_double·cond.
  double tr = 0, maxs = 0, maxp = 0;
  for (int i = 0; i < D; ++i) {
    tr += double(cov[i][i]);
    for (int j = 0; j < D; ++j) {
      maxs = std::max(maxs, std::abs(double(cov[i][j])));
      maxp = std::max(maxp, std::abs(double(U.precision[i][j])));
    }
  }
  double tol = 4 * D * (std::numeric_limits<T>::epsilon() * maxp * maxs + 1e-16 * tr);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += double(U.precision[i][k]) * double(cov[k][j]);
      INFO("(P Σ)(" << i << ", " << j << ") = " << s);
      CHECK(std::abs(s - (i == j ? 1.0 : 0.0)) <= tol);
    }
}

TEST_CASE("the full-covariance gaussian rejects a covariance that is not symmetric positive definite", "[energy][gaussian]") {
  using Cov = std::array<std::array<double, 2>, 2>;
  vec<double, 2> mu{{0, 0}};
  auto message = [&](Cov const& c) -> std::string {
    try {
      ember::gaussian U(mu, c);
      (void)U;
    } catch (std::invalid_argument const& e) {
      return e.what();
    }
    return "no exception";
  };
  CHECK_THAT(message(Cov{{{1, 0.5}, {0.4, 1}}}), Catch::Contains("not symmetric"));
  CHECK_THAT(message(Cov{{{1, 2}, {2, 1}}}), Catch::Contains("not positive definite"));
  CHECK_THAT(message(Cov{{{0, 0}, {0, 1}}}), Catch::Contains("not positive definite"));
  CHECK_THAT(message(Cov{{{1, 0}, {0, NAN}}}), Catch::Contains("non-finite"));
  CHECK(message(Cov{{{2, 0.5}, {0.5, 1}}}) == "no exception");
  // Non-positive scales of the other forms are rejected too.
  CHECK_THROWS_AS(ember::gaussian(mu, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(ember::gaussian(mu, vec<double, 2>{{1.0, -1.0}}), std::invalid_argument);
}

TEST_CASE("gaussian refuses a non-finite mean and a sigma whose 1/sigma^2 leaves float, naming the value",
          "[energy][gaussian]") {
  using ember_test::message_of;
  using V = vec<float, 2>;
  float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  CHECK(message_of([&] { ember::gaussian(V{{0.f, nan}}, 1.f); }) == "ember::gaussian: mean[1] must be finite, got nan");
  CHECK(message_of([&] { ember::gaussian(V{{inf, 0.f}}, V{{1.f, 1.f}}); }) ==
        "ember::gaussian: mean[0] must be finite, got inf");
  CHECK_THAT(message_of([&] { ember::gaussian(V{{nan, 0.f}}, std::array<std::array<float, 2>, 2>{{{1, 0}, {0, 1}}}); }),
             Catch::Equals("ember::gaussian: mean[0] must be finite, got nan"));
  // 1/σ² = 1e50 overflows float (today every chain would start divergent); 1/σ² = 1e-40 is
  // below float's smallest normal number. Both are fine in double.
  CHECK(message_of([&] { ember::gaussian(V{}, 1e-25f); }) ==
        "ember::gaussian: sigma = 1e-25 gives 1/sigma^2 = 1e+50, which overflows float (sigma must lie between "
        "5.42101e-20 and 9.22337e+18); rescale the coordinates");
  CHECK_THAT(message_of([&] { ember::gaussian(V{}, V{{1.f, 1e20f}}); }),
             Catch::StartsWith("ember::gaussian: sigma[1] = 1e+20 gives 1/sigma[1]^2 = 1e-40, which underflows float"));
  CHECK_NOTHROW(ember::gaussian(vec<double, 2>{}, 1e-25));
  CHECK_NOTHROW(ember::gaussian(vec<double, 2>{}, vec<double, 2>{{1.0, 1e20}}));
  // A full covariance whose inverse leaves float: Σ = diag(1, 1e-40) is SPD in double.
  CHECK(message_of([&] { ember::gaussian(V{}, std::array<std::array<float, 2>, 2>{{{1, 0}, {0, 1e-40f}}}); }).find(
            "ember::gaussian: the precision (inverse covariance) has entry (1, 1) = ") == 0);
  // Small numbers in messages are printed with %g, not as 0.000000.
  CHECK_THAT(message_of([&] { ember::gaussian(V{}, -1e-9f); }),
             Catch::Equals("ember::gaussian: sigma must be positive and finite, got -1e-09"));
}

namespace {
// Row by row, each row summed over j in order: what the full-covariance gradient computes, up to
// where the compiler fuses a·b + c (the four-row loop and this one are vectorised differently).
template <class S, class U, int D>
S row_by_row(U const& u, vec<S, D> const& x, vec<S, D>& g, vec<double, D>& abs_terms) {
  vec<S, D> r;
  for (int i = 0; i < D; ++i) r[i] = x[i] - u.mean[i];
  S q = S(0);
  for (int i = 0; i < D; ++i) {
    S gi = S(u.precision[i][0]) * r[0];
    abs_terms[i] = std::abs(double(u.precision[i][0]) * double(r[0]));
    for (int j = 1; j < D; ++j) {
      gi = gi + S(u.precision[i][j]) * r[j];
      abs_terms[i] += std::abs(double(u.precision[i][j]) * double(r[j]));
    }
    g[i] = gi;
    q = q + r[i] * gi;
  }
  return S(0.5f) * q;
}
// Both sums lie within Higham's bound γ_D·Σ|pᵢⱼ rⱼ| (γ_D = Dε/(1 − Dε)) of the exact row sum, so
// they differ by at most twice that; q = ½Σ rᵢgᵢ inherits |rᵢ| times each row's difference plus
// its own two sums' γ_D Σ|rᵢgᵢ|.
template <class T, int D>
void check_blocked_rows() {
  ember::gaussian U(vec<T, D>{}, spd_covariance<T, D>());
  double const eps = std::numeric_limits<T>::epsilon() / 2, gamma = D * eps / (1 - D * eps);
  for (std::uint64_t k = 0; k < 5; ++k) {
    auto x = ember_test::test_point<T, D>(k, -2, 2);
    vec<T, D> g, h;
    vec<double, D> abs_terms;
    T const u = U.value_and_grad(x, g), v = row_by_row(U, x, h, abs_terms);
    double q_bound = 0;
    for (int i = 0; i < D; ++i) {
      double const row_bound = 2 * gamma * abs_terms[i];
      CHECK(std::abs(double(g[i]) - double(h[i])) <= row_bound);
      q_bound += std::abs(double(x[i])) * (row_bound + 2 * gamma * abs_terms[i]) + 2 * gamma * std::abs(double(x[i] * h[i]));
    }
    CHECK(std::abs(double(u) - double(v)) <= 0.5 * q_bound);
  }
}
}  // namespace

TEMPLATE_TEST_CASE("the full-covariance gradient above 16 dimensions, four rows at a time, is the row-by-row sum",
                   "[energy][gaussian]", float, double) {
  check_blocked_rows<TestType, 37>();  // a partial block of rows at the end
  check_blocked_rows<TestType, 100>();
}

namespace {
// U with coordinate i set to v (the others finite, from test_point): must not be finite.
template <class U>
void check_nonfinite_coordinates(U const& energy) {
  constexpr int D = U::dim;
  using T = typename U::value_type;
  static_assert(ember::finite_value_means_finite_x<ember::ula_kernel<U>>);
  T const inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  for (int i = 0; i < D; ++i)
    for (T v : {inf, -inf, nan}) {
      auto x = ember_test::test_point<T, D>(std::uint64_t(7 + i), -2, 2);
      x[i] = v;
      vec<T, D> g;
      INFO("coordinate " << i << " = " << v);
      CHECK(!std::isfinite(double(energy.value_and_grad(x, g))));
      CHECK(!std::isfinite(double(energy.value(x))));
    }
}
}  // namespace

// What the fused loop relies on when it tests a gaussian chain's energy alone for finiteness
// (pipeline/fused_loop.hpp, finite_value_means_finite_x): a non-finite coordinate, anywhere,
// makes U non-finite, in every covariance form and on the blocked full-covariance path.
TEMPLATE_TEST_CASE("a non-finite coordinate makes every gaussian's energy non-finite", "[energy][gaussian]", float,
                   double) {
  using T = TestType;
  vec<T, 4> mu{{T(0.5), T(-1), T(2), T(0)}};
  check_nonfinite_coordinates(ember::gaussian(mu, T(0.7)));
  check_nonfinite_coordinates(
      ember::gaussian(mu, vec<T, 4>{{T(0.5), T(1), T(2), T(3)}}));
  check_nonfinite_coordinates(
      ember::gaussian(mu, spd_covariance<T, 4>()));
  // Above 16 dimensions, four rows at a time; a diagonal Σ makes most of P's entries 0 (0·∞ = NaN).
  std::array<std::array<T, 37>, 37> diag{};
  for (int i = 0; i < 37; ++i) diag[i][i] = T(1 + i % 3);
  check_nonfinite_coordinates(
      ember::gaussian(vec<T, 37>{}, diag));
  check_nonfinite_coordinates(
      ember::gaussian(vec<T, 37>{}, spd_covariance<T, 37>()));
}
