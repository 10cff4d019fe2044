#pragma once
/// \file
/// The one header a `.cu` translation unit includes: everything of ember.hpp and the CUDA
/// backend, `backend::cuda` (backend/cuda.cuh). A run includes no backend (run/run.hpp), so the
/// two backends come in the same way: ember.hpp brings the CPU's, this header the GPU's.

#include <ember/ember.hpp>
#include <ember/backend/cuda.cuh>
