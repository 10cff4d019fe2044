#pragma once
/// \file
/// The one header users include: every energy, kernel, stage and the CPU backend.
/// `backend::cuda` lives in `ember/backend/cuda.cuh`, for `.cu` translation units.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/math.hpp>
#include <ember/core/rng.hpp>
#include <ember/core/vec.hpp>
#include <ember/diagnostics/ess.hpp>
#include <ember/diagnostics/rhat.hpp>
#include <ember/energy/ackley.hpp>
#include <ember/energy/custom_energy.hpp>
#include <ember/energy/double_well.hpp>
#include <ember/energy/expression.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/energy/gaussian_mixture.hpp>
#include <ember/energy/harmonic.hpp>
#include <ember/energy/rastrigin.hpp>
#include <ember/energy/rosenbrock.hpp>
#include <ember/integrator/euler_maruyama.hpp>
#include <ember/integrator/palindromic.hpp>
#include <ember/kernel/hmc.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/kernel/metropolis.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/result.hpp>
#include <ember/sample.hpp>
