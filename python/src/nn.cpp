// ember._core's neural energies: the MLP shapes compiled in for PyTorch training loops
// (ember.nn); its own unit so that two cores build the fixed set in parallel.
#include <ember/python.hpp>

void bind_nn(nanobind::module_& m) {
  // TorchEBM's recipe network: 2 -> 128 -> 128 -> 1 with SiLU (docs/neural.md).
  ember::python::bind_mlp<2, ember::nn::silu, 128, 128>(m, "MLP_2_128_128_silu");
}
