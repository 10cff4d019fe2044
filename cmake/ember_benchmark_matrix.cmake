# ember_add_benchmark_matrix(<name> HEADER <header>
#                            TARGETS <objects...> SAMPLERS <objects...>
#                            PRECISIONS <float|double...> [BACKENDS <cpu|cuda...>]
#                            [CPU_BUDGET_S 3] [CUDA_BUDGET_S 12] [MPI])
#
# One executable <name> measuring every configuration (target, sampler, precision, backend) of
# the product of the lists, each in its OWN generated translation unit, so a 2-core build
# compiles them in parallel and no unit is large. TARGETS and SAMPLERS name objects that HEADER
# defines (benchmark::target values and sampler factories; see docs/benchmarking.md); HEADER is
# precompiled once and shared by all units. A `cuda` configuration becomes a .cu unit where
# nvcc is enabled and a .cpp one elsewhere, where `measure` reports it skipped at compile time.
#
# Every unit is compiled under a launcher that records its user + system CPU seconds; the
# executable prints them beside each configuration, and after each link the build prints them
# with the budget check (CPU_BUDGET_S per CPU configuration, CUDA_BUDGET_S per CUDA one).
#
# With MPI (where ember::mpi is defined) the executable shares the configurations out over the
# ranks of `mpirun -np R <name> ...`, rank 0 writing the JSON lines and the table in order.
#
# Run `<name> --help` for the run-time axes (chain counts, warm-up, draws, seed, a filter).

# Script mode, after each link: print the compile times and the budget check.
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED EMBER_BENCHMARK_TIMES)
  file(GLOB files ${EMBER_BENCHMARK_TIMES}/*.time)
  set(over 0)
  set(count 0)
  foreach(f IN LISTS files)
    get_filename_component(id ${f} NAME)
    string(REGEX REPLACE "\\.(cpp|cu|hxx\\.cxx)\\.time$" "" id ${id})
    file(STRINGS ${f} line LIMIT_COUNT 1 REGEX "^[0-9.]+ [0-9.]+$")
    if(NOT line)
      continue()
    endif()
    string(REPLACE " " ";" parts "${line}")
    list(GET parts 0 user)
    list(GET parts 1 sys)
    # CMake's math is integer-only: work in milliseconds (time prints two decimals).
    string(REGEX REPLACE "^([0-9]+)\\.([0-9][0-9]).*" "\\1\\20" u_ms ${user})
    string(REGEX REPLACE "^([0-9]+)\\.([0-9][0-9]).*" "\\1\\20" s_ms ${sys})
    math(EXPR ms "${u_ms} + ${s_ms}")
    if(id MATCHES "^(main|skipped_without_nvcc)$")
      continue()
    endif()
    if(id STREQUAL "shared_host_code")
      message(STATUS "${id} (host code the configurations share, compiled once): ${ms} ms")
      continue()
    endif()
    if(id STREQUAL "cmake_pch")
      message(STATUS "${id} (shared precompiled header): ${ms} ms")
      continue()
    endif()
    math(EXPR count "${count} + 1")
    if(id MATCHES "__cuda$")
      set(budget ${EMBER_BENCHMARK_CUDA_BUDGET_MS})
    else()
      set(budget ${EMBER_BENCHMARK_CPU_BUDGET_MS})
    endif()
    if(ms GREATER budget)
      math(EXPR over "${over} + 1")
      message(STATUS "${id}: ${ms} ms  OVER BUDGET (${budget} ms)")
    else()
      message(STATUS "${id}: ${ms} ms")
    endif()
  endforeach()
  message(STATUS "compile-time budget: ${over} of ${count} configurations over budget")
  return()
endif()

include_guard(GLOBAL)
set(EMBER_BENCHMARK_MATRIX_DIR ${CMAKE_CURRENT_LIST_DIR})

function(ember_add_benchmark_matrix name)
  # Boost.Hana is needed only by a matrix: looked for here, so find_package(ember) works without it.
  find_path(EMBER_HANA_INCLUDE_DIR boost/hana.hpp)
  if(NOT EMBER_HANA_INCLUDE_DIR)
    message(FATAL_ERROR "ember_add_benchmark_matrix(${name}) needs Boost.Hana (boost/hana.hpp); set EMBER_HANA_INCLUDE_DIR")
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "MPI" "HEADER;CPU_BUDGET_S;CUDA_BUDGET_S" "TARGETS;SAMPLERS;PRECISIONS;BACKENDS")
  # MPI: the configurations shared out over the ranks of an mpirun (ember/mpi.hpp's mpi::drive).
  if(arg_MPI AND NOT TARGET ember::mpi)
    message(FATAL_ERROR "ember_add_benchmark_matrix(${name} MPI) needs ember::mpi, which ember defines where MPI is found "
                        "(Debian: libopenmpi-dev)")
  endif()
  if(arg_MPI)
    set(driver_header ember/mpi.hpp)
    set(driver ember::mpi::drive)
  else()
    set(driver_header ember/benchmark/driver.hpp)
    set(driver ember::benchmark::drive)
  endif()
  foreach(required HEADER TARGETS SAMPLERS PRECISIONS)
    if(NOT arg_${required})
      message(FATAL_ERROR "ember_add_benchmark_matrix(${name}): ${required} is required")
    endif()
  endforeach()
  if(NOT arg_BACKENDS)
    set(arg_BACKENDS cpu)
  endif()
  foreach(p IN LISTS arg_PRECISIONS)
    if(NOT p MATCHES "^(float|double)$")
      message(FATAL_ERROR "ember_add_benchmark_matrix(${name}): PRECISIONS takes float and double, not ${p}")
    endif()
  endforeach()
  foreach(b IN LISTS arg_BACKENDS)
    if(NOT b MATCHES "^(cpu|cuda)$")
      message(FATAL_ERROR "ember_add_benchmark_matrix(${name}): BACKENDS takes cpu and cuda, not ${b}")
    endif()
  endforeach()
  if(NOT arg_CPU_BUDGET_S)
    set(arg_CPU_BUDGET_S 3)
  endif()
  if(NOT arg_CUDA_BUDGET_S)
    set(arg_CUDA_BUDGET_S 12)
  endif()
  get_filename_component(header ${arg_HEADER} ABSOLUTE)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name}_configurations)
  set(times ${CMAKE_CURRENT_BINARY_DIR}/${name}_compile_times)
  file(MAKE_DIRECTORY ${times})
  set(nvcc OFF)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(CMAKE_CUDA_COMPILER AND "CUDA" IN_LIST languages)
    set(nvcc ON)
  endif()

  set(sources)
  set(skipped_body)
  set(declarations)
  set(calls)
  foreach(t IN LISTS arg_TARGETS)
    foreach(s IN LISTS arg_SAMPLERS)
      foreach(p IN LISTS arg_PRECISIONS)
        foreach(b IN LISTS arg_BACKENDS)
          # Ids without namespaces: neal_funnel__mala__float__cpu.
          string(REGEX REPLACE ".*::" "" t_name "${t}")
          string(REGEX REPLACE ".*::" "" s_name "${s}")
          string(MAKE_C_IDENTIFIER "${t_name}__${s_name}__${p}__${b}" id)
          set(call "ember::benchmark::measure(out, ${t}, ${s}, boost::hana::type_c<${p}>, boost::hana::type_c<ember::backend::${b}>, axes")
          if(b STREQUAL "cuda" AND NOT nvcc)
            # Skipped at compile time; nothing of them is compiled but the skip, so they share one unit.
            string(APPEND skipped_body "void ember_benchmark_${id}(ember::benchmark::report& out, ember::benchmark::run_axes const& axes) {\n  ${call});\n}\n")
            string(APPEND declarations
                   "void ember_benchmark_${id}(ember::benchmark::report&, ember::benchmark::run_axes const&);\n")
            string(APPEND calls "    {\"${id}\", ember_benchmark_${id}},\n")
            continue()
          endif()
          set(ext cpp)
          set(extra "")
          if(b STREQUAL "cuda")
            set(ext cu)
            set(extra "#include <ember/backend/cuda.cuh>\n")
          endif()
          set(source ${gen}/${id}.${ext})
          file(CONFIGURE OUTPUT ${source} CONTENT
"// Generated by ember_add_benchmark_matrix(${name}): configuration ${t} x ${s} x ${p} x ${b}.
#include <ember/host_templates.hpp>
#include \"${header}\"
${extra}
void ember_benchmark_${id}(ember::benchmark::report& out, ember::benchmark::run_axes const& axes) {
  ${call}, \"${id}\");
}
")
          list(APPEND sources ${source})
          string(APPEND declarations
                 "void ember_benchmark_${id}(ember::benchmark::report&, ember::benchmark::run_axes const&);\n")
          string(APPEND calls "    {\"${id}\", ember_benchmark_${id}},\n")
          if(ext STREQUAL "cu")
            set_source_files_properties(${source} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
          endif()
        endforeach()
      endforeach()
    endforeach()
  endforeach()
  if(skipped_body)
    set(source ${gen}/skipped_without_nvcc.cpp)
    file(CONFIGURE OUTPUT ${source} CONTENT "// Generated by ember_add_benchmark_matrix(${name}): the CUDA configurations of a build without nvcc.
#include \"${header}\"

${skipped_body}")
    list(APPEND sources ${source})
  endif()
  # Host code every configuration would otherwise compile again, instantiated once: summaries,
  # .npz writing, memory checks, dataset's readers (ember/host_templates.hpp).
  set(shared ${gen}/shared_host_code.cpp)
  file(CONFIGURE OUTPUT ${shared} CONTENT "// Generated by ember_add_benchmark_matrix(${name}): host code the configurations share.
#include <ember/host_templates.hpp>

EMBER_INSTANTIATE_HOST_TEMPLATES
")
  list(APPEND sources ${shared})
  set(main ${gen}/main.cpp)
  file(CONFIGURE OUTPUT ${main} CONTENT
"// Generated by ember_add_benchmark_matrix(${name}): runs every configuration, or those whose id
// contains --only's text, and prints one JSON line each and the table.
#include <${driver_header}>

${declarations}
int main(int argc, char** argv) {
  return ${driver}(argc, argv, \"${times}\", ${arg_CPU_BUDGET_S}, ${arg_CUDA_BUDGET_S}, {
${calls}  });
}
")
  set_source_files_properties(${main} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  add_executable(${name} ${main} ${sources})
  target_link_libraries(${name} PRIVATE ember::ember)
  if(arg_MPI)
    target_link_libraries(${name} PRIVATE ember::mpi)
  endif()
  # A matrix's CPU configurations run backend::cpu, which compiles the SIMD path only.
  target_compile_definitions(${name} PRIVATE EMBER_EXTERN_HOST_TEMPLATES)
  # Most of a configuration's code is host code that runs once per transition or per run (the
  # run object, its warm-up arithmetic, checks, copying the draws out); at -O3 it took two thirds
  # of a unit's compile time. Under GCC the units are compiled at -O1, and EMBER_HOT_O3 gives the
  # fused loops and the warm-up reduction, with everything they inline, -O3 back (core/config.hpp;
  # sampling and warm-up times measured level, docs/decisions/2026-11-23-benchmark-units-at-o1.md). main.cpp (the statistics
  # of every row) keeps -O3. For a CUDA unit's host pass the same needs nvcc's own -O (device code
  # is optimised by cicc and ptxas whatever -O says), which comes from CMAKE_CUDA_FLAGS_RELEASE;
  # -Xcompiler=-O1 would lose to it (nvcc passes it first), so bench/matrix/CMakeLists.txt sets
  # that directory variable instead.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_definitions(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:EMBER_HOT_O3>)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
    set_source_files_properties(${main} PROPERTIES COMPILE_OPTIONS -O3)
  endif()
  target_include_directories(${name} SYSTEM PRIVATE ${EMBER_HANA_INCLUDE_DIR})
  # host_templates.hpp first: its extern declarations precede every use in the header.
  target_precompile_headers(${name} PRIVATE <ember/host_templates.hpp> ${header})
  set_target_properties(${name} PROPERTIES CXX_COMPILER_LAUNCHER "${EMBER_BENCHMARK_MATRIX_DIR}/ember_time_compile.sh;${times}"
                                           CUDA_COMPILER_LAUNCHER "${EMBER_BENCHMARK_MATRIX_DIR}/ember_time_compile.sh;${times}")
  if(nvcc)
    target_link_libraries(${name} PRIVATE CUDA::cudart)
  endif()
  math(EXPR cpu_ms "${arg_CPU_BUDGET_S} * 1000")
  math(EXPR cuda_ms "${arg_CUDA_BUDGET_S} * 1000")
  add_custom_command(TARGET ${name} POST_BUILD
                     COMMAND ${CMAKE_COMMAND} -DEMBER_BENCHMARK_TIMES=${times} -DEMBER_BENCHMARK_CPU_BUDGET_MS=${cpu_ms}
                             -DEMBER_BENCHMARK_CUDA_BUDGET_MS=${cuda_ms} -P ${EMBER_BENCHMARK_MATRIX_DIR}/ember_benchmark_matrix.cmake
                     VERBATIM)
endfunction()
