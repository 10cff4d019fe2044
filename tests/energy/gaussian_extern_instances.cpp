// The one unit of gaussian_extern_cuda_test that instantiates ember's host templates
// (ember/host_templates.hpp), for the .cu unit beside it, which only declares them.
#include <ember/host_templates.hpp>

EMBER_INSTANTIATE_HOST_TEMPLATES
