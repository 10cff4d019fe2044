#pragma once
/// \file
/// The one header users include: every energy, kernel, stage and adapter (ember/library.hpp) and
/// the CPU backends, `backend::cpu` (SIMD batches of chains) and `backend::scalar` (one chain at a
/// time). `backend::cuda` comes with `ember/cuda.cuh` instead, for `.cu` translation units.

#include <ember/library.hpp>
#include <ember/backend/cpu.hpp>
