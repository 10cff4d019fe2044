// ember._core's reference targets (ember.targets): ember/targets/ with their reference moments and
// reported coordinates, in float64, with the samplers a sampler developer compares; its own unit
// so that two cores build the fixed set in parallel.
#include <ember/python.hpp>
#include <ember/targets/banana.hpp>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/neal_funnel_noncentred.hpp>
#include <ember/targets/rosenbrock_pairs.hpp>
#include <ember/targets/rotated_gaussian.hpp>
#include <ember/targets/standard_normal.hpp>
#include <ember/targets/two_mode_mixture.hpp>

namespace {

namespace py = ember::python;

template <class Target>
struct target_factory {
  static auto make(py::data const& d) {
    if (!d.names().empty()) throw std::invalid_argument("ember: this target takes no data");
    return Target{}.energy();
  }
  static auto reference() { return Target{}.reference(); }
  static auto reported(ember::vec<double, Target::dim> const& x) {
    static Target const t{};  // built once: some targets build a rotation or a covariance
    return t.reported(x);
  }
};

template <class Target>
void bind(nanobind::module_& m, char const* name) {
  py::bind_energy<target_factory<Target>, py::chees_hmc_sampler, py::nuts_sampler, py::mams_sampler>(m, name);
}

}  // namespace

void bind_targets(nanobind::module_& m) {
  using namespace ember::targets;
  // The banana also with MALA and ULA (the Python tests' target for every sampler).
  py::bind_energy<target_factory<banana<double>>, py::chees_hmc_sampler, py::nuts_sampler, py::mams_sampler,
                  py::mala_sampler, py::ula_sampler>(m, "Banana");
  bind<standard_normal<double>>(m, "StandardNormal");
  bind<ill_conditioned_gaussian<double>>(m, "IllConditionedGaussian");
  bind<rotated_gaussian<double>>(m, "RotatedGaussian");
  bind<neal_funnel<double>>(m, "NealFunnel");
  bind<neal_funnel_noncentred<double>>(m, "NealFunnelNoncentred");
  bind<rosenbrock_pairs<double>>(m, "RosenbrockPairs");
  bind<two_mode_mixture<double>>(m, "TwoModeMixture");
  bind<eight_schools<double>>(m, "EightSchoolsTarget");
}
