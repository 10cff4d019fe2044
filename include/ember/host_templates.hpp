#pragma once
/// \file
/// Host code that every translation unit of a program would compile alike, compiled once.
///
/// ember is header-only, so every unit compiles what it uses. Some of that depends on no energy
/// and no sampler of the unit's, only on the scalar type, and is the same in every unit:
///  - a summary's diagnostics and text (`summarize`'s columns, its warnings and table) and
///    `save_npz`'s writer: about 2 s of g++ -O1 per unit that prints or saves a run, 4 s at -O3;
///  - the host-memory checks of every run (backend/detail/host_memory.hpp): 0.4 s at -O1;
///  - the CSV and .npy readers of `dataset<float>` and `dataset<double>` (0.3 s).
/// A program can compile them once:
///  - define `EMBER_EXTERN_HOST_TEMPLATES` in every unit, which makes the declarations below
///    `extern template` (the units then call the one instance instead of compiling their own);
///  - in exactly one unit compiled by the host compiler (a .cpp), include this header and write
///    `EMBER_INSTANTIATE_HOST_TEMPLATES` at namespace scope (that unit may define the macro too).
/// `ember_quick_compile(<target>)` does both for a user's target (the library `ember_host_code`
/// holds the one unit; cmake/ember_quick_compile.cmake), `ember_add_benchmark_matrix` for a
/// matrix's units. The functions above that are not templates by nature are templates with one
/// defaulted parameter so that they can be declared here. Without the macro nothing changes.
/// Host code only: the device pass of a CUDA unit sees none of it, so the one unit is a .cpp (a
/// .cu unit would also build it without the C++ units' OpenMP and -march).

#if !defined(__CUDA_ARCH__)
#include <ember/backend/detail/host_memory.hpp>
#include <ember/data/dataset.hpp>
#include <ember/diagnostics/summary.hpp>
#include <ember/io/save_npz.hpp>

#if defined(EMBER_EXTERN_HOST_TEMPLATES)
namespace ember {
extern template class dataset<float>;
extern template class dataset<double>;
namespace detail {
extern template std::string with_commas<void>(long double);
extern template std::string read_small_file<void>(std::string const&);
extern template long double cgroup_memory_limit<void>(std::string const&, std::string const&);
extern template memory_limit usable_memory<void>();
extern template void require_host_memory<void>(long double, char const*, std::string const&, char const*);
extern template void summarize_draws<float>(summary_table&, float const*, std::vector<std::int64_t> const&, int);
extern template void summarize_draws<double>(summary_table&, double const*, std::vector<std::int64_t> const&, int);
extern template void summarize_final_states<float>(summary_table&, float const*, std::vector<std::int64_t> const&);
extern template void summarize_final_states<double>(summary_table&, double const*, std::vector<std::int64_t> const&);
extern template void chain_bfmi_of<float>(summary_table&, float const*, std::vector<std::int64_t> const&);
extern template void chain_bfmi_of<double>(summary_table&, double const*, std::vector<std::int64_t> const&);
extern template std::vector<std::string> summary_warnings<summary_table>(summary_table const&);
extern template void print_summary<summary_table>(std::ostream&, summary_table const&);
extern template void write_npz<float>(npz_run<float> const&, std::string const&, summary_options const&,
                                      summary_table const&, std::function<void(npz_writer&)> const&);
extern template void write_npz<double>(npz_run<double> const&, std::string const&, summary_options const&,
                                       summary_table const&, std::function<void(npz_writer&)> const&);
}  // namespace detail
}  // namespace ember
#endif

#if defined(__CUDACC__)
#define EMBER_INSTANTIATE_HOST_TEMPLATES                                                                   \
  static_assert(false, "ember: EMBER_INSTANTIATE_HOST_TEMPLATES belongs in a .cpp unit: nvcc's host pass "  \
                       "would build the one instance without the C++ units' OpenMP and -march flags");
#else
#define EMBER_INSTANTIATE_HOST_TEMPLATES                                                                   \
  template class ember::dataset<float>;                                                                   \
  template class ember::dataset<double>;                                                                  \
  template std::string ember::detail::with_commas<void>(long double);                                       \
  template std::string ember::detail::read_small_file<void>(std::string const&);                            \
  template long double ember::detail::cgroup_memory_limit<void>(std::string const&, std::string const&);    \
  template ember::detail::memory_limit ember::detail::usable_memory<void>();                                \
  template void ember::detail::require_host_memory<void>(long double, char const*, std::string const&,      \
                                                         char const*);                                      \
  template void ember::detail::summarize_draws<float>(ember::summary_table&, float const*,                   \
                                                      std::vector<std::int64_t> const&, int);               \
  template void ember::detail::summarize_draws<double>(ember::summary_table&, double const*,                 \
                                                       std::vector<std::int64_t> const&, int);              \
  template void ember::detail::summarize_final_states<float>(ember::summary_table&, float const*,            \
                                                             std::vector<std::int64_t> const&);             \
  template void ember::detail::summarize_final_states<double>(ember::summary_table&, double const*,          \
                                                              std::vector<std::int64_t> const&);            \
  template void ember::detail::chain_bfmi_of<float>(ember::summary_table&, float const*,                     \
                                                    std::vector<std::int64_t> const&);                      \
  template void ember::detail::chain_bfmi_of<double>(ember::summary_table&, double const*,                   \
                                                     std::vector<std::int64_t> const&);                     \
  template std::vector<std::string> ember::detail::summary_warnings<ember::summary_table>(                   \
      ember::summary_table const&);                                                                         \
  template void ember::detail::print_summary<ember::summary_table>(std::ostream&, ember::summary_table const&); \
  template void ember::detail::write_npz<float>(ember::detail::npz_run<float> const&, std::string const&,     \
                                                ember::summary_options const&, ember::summary_table const&,  \
                                                std::function<void(ember::npz_writer&)> const&);             \
  template void ember::detail::write_npz<double>(ember::detail::npz_run<double> const&, std::string const&,   \
                                                 ember::summary_options const&, ember::summary_table const&, \
                                                 std::function<void(ember::npz_writer&)> const&);
#endif
#endif
