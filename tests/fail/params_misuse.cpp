// Must not compile: each -D variant misuses named parameters (ad/params.hpp) in one way, and the
// compiler's first error is the library's sentence for it.
#include <ember/ember.hpp>

namespace {
constexpr auto mu = ember::param<"mu">();
constexpr auto sigma = ember::param<"sigma">(ember::positive);

struct body {
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[mu], 0.0, 1.0));
  }
};
struct by_index {
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[0], 0.0, 1.0));
  }
};
}  // namespace

int main() {
#if defined(EMBER_FAIL_SAME_NAME)
  constexpr auto ps = ember::params(mu, ember::param<"mu">(ember::positive));
  (void)ps;
#elif defined(EMBER_FAIL_NOT_LISTED)
  auto U = ember::model<double>(ember::params(sigma), body{});
  ember::vec<double, 1> x{{0.5}}, g;
  (void)U.value_and_grad(x, g);
#elif defined(EMBER_FAIL_UNNAMED_MODEL)
  auto U = ember::model<1, double>(body{});
  ember::vec<double, 1> x{{0.5}};
  (void)U.value(x);
#elif defined(EMBER_FAIL_SIMPLEX_OF_ONE)
  constexpr auto w = ember::param<"w", 1>(ember::simplex);
  (void)w;
#elif defined(EMBER_FAIL_CHOLESKY_NOT_SQUARE)
  constexpr auto L = ember::param<"L", 3, 2>(ember::cholesky_corr);
  (void)L;
#elif defined(EMBER_FAIL_INDEX_IN_NAMED)
  auto U = ember::model<double>(ember::params(mu), by_index{});
  ember::vec<double, 1> x{{0.5}};
  (void)U.value(x);
#elif defined(EMBER_FAIL_NAME)
  constexpr auto s = ember::param<"sigma state">(ember::positive);
  (void)s;
#elif defined(EMBER_FAIL_BOUNDS)
  constexpr auto b = ember::param<"b">(ember::bounded(2.0, 1.0));
  (void)b;
#endif
}
