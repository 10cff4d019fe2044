// ember's own benchmark suite (issue 13): the reference targets of ember/targets/ and the sampler
// factories the matrix crosses them with. bench/matrix/CMakeLists.txt names these objects in
// ember_add_benchmark_matrix; this header is precompiled once and shared by every configuration.
#pragma once

#include <ember/benchmark/measure.hpp>
#include <ember/targets/banana.hpp>
#include <ember/targets/breast_cancer_logistic.hpp>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/neal_funnel_noncentred.hpp>
#include <ember/targets/rosenbrock_pairs.hpp>
#include <ember/targets/rotated_gaussian.hpp>
#include <ember/targets/standard_normal.hpp>
#include <ember/targets/two_mode_mixture.hpp>

#include <string>

namespace suite {
namespace bm = ember::benchmark;
namespace tg = ember::targets;

inline bm::target<tg::standard_normal> const standard_normal{"standard_normal"};
inline bm::target<tg::ill_conditioned_gaussian> const ill_conditioned_gaussian{"ill_conditioned_gaussian"};
inline bm::target<tg::rotated_gaussian> const rotated_gaussian{"rotated_gaussian"};
// The centred funnel is a documented failure of fixed-step samplers: it must read unhealthy.
inline bm::target<tg::neal_funnel> const neal_funnel{"neal_funnel"};
inline bm::target<tg::neal_funnel_noncentred> const neal_funnel_noncentred{"neal_funnel_noncentred"};
inline bm::target<tg::banana> const banana{"banana"};
inline bm::target<tg::rosenbrock_pairs> const rosenbrock_pairs{"rosenbrock_pairs"};
inline bm::target<tg::two_mode_mixture> const two_mode_mixture{"two_mode_mixture"};
inline bm::target<tg::eight_schools> const eight_schools{"eight_schools"};
// 569 data rows per gradient: fewer chains keep the suite within minutes on 2 cores.
inline auto const breast_cancer_logistic = [] {
  auto t = bm::make_target<tg::breast_cancer_logistic>("breast_cancer_logistic",
                                                       std::string(EMBER_DATA_DIR "/breast_cancer.csv"));
  t.max_chains = 32;
  return t;
}();

inline bm::adapted_mala const mala{};
inline bm::adapted_hmc const hmc{.integrator_steps = 16, .jitter = 0.2};
inline bm::chees_hmc const chees_hmc{};
inline bm::adapted_nuts const nuts{};
inline bm::adapted_nuts_dense const nuts_dense{};
inline bm::mams const mams{};
// ULA at a step where its bias shows: N(0, σ²) becomes N(0, σ²/(1 − η/2σ²)), +8 % on the standard
// normal and ×4 on the ill-conditioned Gaussian's narrowest coordinate (σ² = 0.1).
inline bm::ula_sampler const ula{.step_size = 0.15};
}  // namespace suite
