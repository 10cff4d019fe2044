// A benchmark matrix of the consumer's own (tests/consumer/CMakeLists.txt): one of ember's
// reference targets and MAMS, named as a user's header names its own.
#pragma once

#include <ember/benchmark/measure.hpp>
#include <ember/targets/standard_normal.hpp>

namespace mine {
inline ember::benchmark::target<ember::targets::standard_normal> const normal{"standard_normal"};
inline ember::benchmark::mams const mams{};
}  // namespace mine
