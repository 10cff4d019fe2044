#pragma once
/// \file
/// `run_matrix(report, targets, samplers, precisions, backends, axes)`: ember's compile-time
/// benchmark generator. The first four arguments are Boost.Hana tuples: target values
/// (`benchmark::target`), sampler factories (benchmark/samplers.hpp or a user's own), precision
/// types (`hana::tuple_t<float, double>`) and backend types (`hana::tuple_t<backend::cpu>`).
/// Their cartesian product is formed at compile time with `hana::cartesian_product`, and
/// `hana::for_each` instantiates `measure` (measure.hpp) once per configuration, so each becomes
/// its own fused loop; configurations that make no sense are skipped with their reason.
///
/// All of it in one translation unit suits a small matrix. For a suite, the CMake function
/// `ember_add_benchmark_matrix` (cmake/ember_benchmark_matrix.cmake) forms the same product in
/// CMake and gives every configuration its own translation unit calling `measure` directly
/// (docs/benchmarking.md, docs/design.md).

#include <ember/benchmark/measure.hpp>

#include <boost/hana/cartesian_product.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

namespace ember::benchmark {

/// The configurations: a Hana tuple of (target, sampler, precision, backend) tuples.
template <class Targets, class Samplers, class Precisions, class Backends>
constexpr auto configurations(Targets const& targets, Samplers const& samplers, Precisions const& precisions,
                              Backends const& backends) {
  return boost::hana::cartesian_product(boost::hana::make_tuple(targets, samplers, precisions, backends));
}

/// Measures every configuration of the product for every chain count of `axes`, into `out`.
template <class Targets, class Samplers, class Precisions, class Backends>
report& run_matrix(report& out, Targets const& targets, Samplers const& samplers, Precisions const& precisions,
                   Backends const& backends, run_axes const& axes) {
  boost::hana::for_each(configurations(targets, samplers, precisions, backends), [&](auto const& configuration) {
    boost::hana::unpack(configuration, [&](auto const&... parts) { measure(out, parts..., axes); });
  });
  return out;
}

}  // namespace ember::benchmark
