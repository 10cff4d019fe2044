// 06_benchmark_matrix: your own energy against two samplers in both precisions, every combination
// compiled into its own fused loop and measured: ESS/s, ESS per gradient, gradients to b² < 0.01
// and the health gates, as one JSON line per configuration and a table (docs/benchmarking.md).
#include <ember/benchmark/matrix.hpp>
#include <ember/ember.hpp>

#include <iostream>

namespace bm = ember::benchmark;
namespace hana = boost::hana;

// A target: an energy and the moments a sound sampler reproduces. U(x) = Σᵢ x⁴ᵢ/4, each xᵢ
// independent with density ∝ exp(−x⁴/4): E xᵢ = 0, E xᵢ² = 2 Γ(3/4)/Γ(1/4).
template <class T>
struct quartic {
  static constexpr int dim = 4;
  auto energy() const {
    return ember::custom_energy<dim, T>([](auto const& x) {
      auto u = x[0] * x[0] * x[0] * x[0];
      for (int i = 1; i < dim; ++i) u = u + x[i] * x[i] * x[i] * x[i];
      return T(0.25) * u;
    });
  }
  template <class S>
  ember::vec<double, dim> reported(ember::vec<S, dim> const& x) const {
    return {double(x[0]), double(x[1]), double(x[2]), double(x[3])};
  }
  ember::targets::reference_moments<dim> reference() const {
    ember::targets::reference_moments<dim> m;
    m.second.fill(0.6759782400672848);
    return m;
  }
};

int main() {
  bm::report out;  // JSON lines to standard output
  bm::run_matrix(out, hana::make_tuple(bm::target<quartic>{"quartic"}),
                 hana::make_tuple(bm::adapted_mala{}, bm::chees_hmc{}), hana::tuple_t<float, double>,
                 hana::tuple_t<ember::backend::cpu>, {.chains = {64}, .warmup = 500, .draws = 1000});
  out.print_table(std::cout);
}
