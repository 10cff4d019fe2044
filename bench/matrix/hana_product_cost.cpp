// What forming a matrix's product costs the compiler, apart from the configurations themselves:
// 10 targets x 4 samplers x 2 precisions x 2 backends = 160 configurations, each passed to an
// external function template (so the product, not the body, is what is compiled). Built four ways
// by hana_product_cost.sh: no product (baseline), hana::cartesian_product + hana::for_each (what
// ember/benchmark/matrix.hpp does), nested hana::for_each, and a type-level product by index
// arithmetic over one std::index_sequence.
#include <boost/hana.hpp>

#include <cstddef>
#include <utility>

namespace hana = boost::hana;

template <int I>
struct target {};
template <int I>
struct sampler {};
struct cpu {};
struct cuda {};
template <class T, class S, class P, class B>
void measure(T const&, S const&, P, B);

int main() {
  auto ts = hana::make_tuple(target<0>{}, target<1>{}, target<2>{}, target<3>{}, target<4>{}, target<5>{},
                             target<6>{}, target<7>{}, target<8>{}, target<9>{});
  auto ss = hana::make_tuple(sampler<0>{}, sampler<1>{}, sampler<2>{}, sampler<3>{});
  auto ps = hana::tuple_t<float, double>;
  auto bs = hana::tuple_t<cpu, cuda>;
#if defined(PRODUCT_HANA)
  hana::for_each(hana::cartesian_product(hana::make_tuple(ts, ss, ps, bs)),
                 [](auto const& c) { hana::unpack(c, [](auto const&... p) { measure(p...); }); });
#elif defined(PRODUCT_NESTED)
  hana::for_each(ts, [&](auto const& t) {
    hana::for_each(ss, [&](auto const& s) {
      hana::for_each(ps, [&](auto p) { hana::for_each(bs, [&](auto b) { measure(t, s, p, b); }); });
    });
  });
#elif defined(PRODUCT_INDEX)
  constexpr std::size_t nt = hana::length(ts), ns = hana::length(ss), np = hana::length(ps), nb = hana::length(bs);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (measure(hana::at_c<I / (ns * np * nb)>(ts), hana::at_c<I / (np * nb) % ns>(ss), hana::at_c<I / nb % np>(ps),
             hana::at_c<I % nb>(bs)),
     ...);
  }(std::make_index_sequence<nt * ns * np * nb>{});
#endif
  (void)ts, (void)ss, (void)ps, (void)bs;
}
