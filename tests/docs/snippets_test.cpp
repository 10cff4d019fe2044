// Code shown in docs/custom_energies.md and docs/models.md that no example or other test holds.
// The docs quote the lines between the [name] markers verbatim; the doc_snippets_* ctests check
// that every quoted block still occurs in its source file, so the docs cannot drift from code
// that compiles and is run here.
#include <ember/ember.hpp>

#include "energy/gradient_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace {
using namespace ember;

// [one_liners]
auto V = custom_energy<2>([](auto const& x) { using std::sin; return sin(x[0]) * x[1] * x[1]; });
auto W = custom_energy<3, double>([](auto const& x) { return softplus(x[0] * x[1]) + log1p(x[2] * x[2]); });
// [one_liners]

// [own_gradient]
struct my_energy {
  using value_type = float;
  static constexpr int dim = 2;
  template <class S> EMBER_HD S value(vec<S, 2> const& x) const { return x[0] * x[0] * x[1]; }
  template <class S> EMBER_HD S value_and_grad(vec<S, 2> const& x, vec<S, 2>& g) const {
    g[0] = S(2.f) * x[0] * x[1];
    g[1] = x[0] * x[0];
    return x[0] * x[0] * x[1];
  }
};
// [own_gradient]

}  // namespace

TEST_CASE("the custom-energy snippets of the docs compile and have correct gradients", "[docs]") {
  // V, W: smooth on [−2, 2]^D; third derivatives and magnitudes below 50 there.
  ember_test::check_gradient_on_box(V, 5, -2, 2, {50, 50});
  ember_test::check_gradient_on_box(W, 5, -2, 2, {50, 50});
  ember_test::check_gradient_on_box(my_energy{}, 5, -2, 2, {50, 50});
  static_assert(DifferentiableEnergy<decltype(custom_energy<2>(my_energy{}))>);
}

TEST_CASE("the models snippets of the docs run", "[docs]") {
  // [models_transform]
  // Gamma(3, rate 2) for x > 0, sampled in y = log x.
  auto gamma = custom_energy<1, double>([](auto const& x) { using std::log; return -2 * log(x[0]) + 2 * x[0]; });
  auto Y = positive(gamma);
  auto r = sample(mala(Y, {.step_size = 0.1}) | burn_in(500),
                  {.chains = 1000, .steps = 1, .seed = 1, .init = std::vector(1000, Y.unconstrain_point({{1.0}}))});
  vec<double, 1> x = Y.constrain_point(r.final_state(0));  // a draw of x itself
  // [models_transform]
  CHECK(x[0] > 0);
  CHECK(r.divergent_chains() == 0);
}
