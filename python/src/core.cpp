// ember._core: the fixed set of energies and samplers that `import ember` needs no compiler for
// (python/include/ember/python.hpp is the binding layer; python/ember/ the Python side).
#include <ember/python.hpp>
#include <ember/targets/banana.hpp>

void bind_nn(nanobind::module_& m);       // python/src/nn.cpp
void bind_targets(nanobind::module_& m);  // python/src/targets.cpp

namespace py = ember::python;

namespace {

// Eight schools (non-centred) as a named model: the README's, the model users meet first.
struct eight_schools_body {
  static constexpr auto mu = ember::param<"mu">();
  static constexpr auto tau = ember::param<"tau">(ember::positive);
  static constexpr auto theta_trans = ember::param<"theta_trans", 8>();
  static constexpr auto params = ember::params(theta_trans, mu, tau);
  std::span<double const> y, sigma;

  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[mu], 0.0, 5.0));
    m.add(ember::cauchy_lpdf(m[tau], 0.0, 5.0));  // half-Cauchy (τ > 0), up to the constant log 2
    for (int j = 0; j < 8; ++j) {
      m.add(ember::normal_lpdf(m[theta_trans][j], 0.0, 1.0));
      m.add(ember::normal_lpdf(y[j], m[mu] + m[tau] * m[theta_trans][j], sigma[j]));
    }
  }
};
struct eight_schools_model {
  static constexpr char const* doc =
      "Eight schools, non-centred, as a named model (mu, tau > 0, theta_trans[8]); data: y and sigma (8 each)";
  static auto make(py::data const& d) {
    return ember::model<double>(eight_schools_body{d.vector("y", 8), d.vector("sigma", 8)});
  }
};

}  // namespace

NB_MODULE(_core, m) {
  using namespace ember::python;
  bind_runs(m);
  bind_nn(m);
  bind_energy<eight_schools_model, chees_hmc_sampler, nuts_sampler, mams_sampler, mala_sampler>(m, "EightSchools");
  // The C++ side of bench/python/overhead.py: `reps` calls of the pipeline ember.sample(banana,
  // sampler="ula", step_size=0.01, chains=4, warmup=0, draws=1) runs, timed in C++ (mean seconds).
  m.def("_bench_cpp_sample", [](int reps) {
    auto const U = ember::targets::banana<double>{}.energy();
    auto const t0 = std::chrono::steady_clock::now();
    double sink = 0;
    for (int i = 0; i < reps; ++i) {
      auto r = ember::sample(ember::ula(U, {.step_size = 0.01}) | ember::thin(1) | ember::record(),
                             {.chains = 4, .steps = 1, .seed = std::uint64_t(i), .progress = false});
      sink += r.samples()(0, 0, 0);
    }
    auto const dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return nanobind::make_tuple(dt / reps, sink);
  });
  bind_targets(m);
}
