// ember._core's neural energies for PyTorch training loops (ember.nn): networks of any hidden
// widths and activation (mlp<float, In, nn::any, dynamic>, as fast as a network compiled for its
// shape: docs/neural.md) for the input widths below. Its own unit so that two cores build the
// fixed set in parallel.
#include <ember/python.hpp>

#include <string>

namespace {

template <int... In>
void bind_inputs(nanobind::module_& m, std::integer_sequence<int, In...>) {
  (ember::python::bind_mlp<In>(m, ("MLP_in" + std::to_string(In)).c_str()), ...);
}

}  // namespace

void bind_nn(nanobind::module_& m) {
  // Input widths compiled in (python/ember/nn.py's INPUT_WIDTHS reads them from the module): the 1-3-D data of
  // energy-model tutorials, small feature vectors, and 28 x 28 images.
  bind_inputs(m, std::integer_sequence<int, 1, 2, 3, 4, 8, 16, 32, 64, 784>{});
}
