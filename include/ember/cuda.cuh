#pragma once
/// \file
/// The one header a `.cu` translation unit includes: everything of ember/library.hpp and the CUDA
/// backend, `backend::cuda` (backend/cuda.cuh). A run includes no backend (run/run.hpp), so the
/// backends come in the same way: ember.hpp brings the CPU's, this header the GPU's; a .cu unit
/// sees no CPU backend (its pipelines run on backend::cuda; CPU references live in .cpp units).

#include <ember/library.hpp>
#include <ember/backend/cuda.cuh>
