# ember's dependencies as one INTERFACE target, ember::deps; shared by the build tree and by the
# installed package (emberConfig.cmake includes this file).
include_guard(GLOBAL)
# Instruction set. ember's fused loops are templates instantiated in the user's own translation
# units, so their SIMD width is whatever those units are compiled for: with no flags g++ targets
# SSE2 (batches of 4 floats) and a run is 3-4x slower than it could be. So every C++ unit that
# links ember::ember is compiled for the machine that builds it unless the user says otherwise:
# set EMBER_ARCH_FLAGS (before find_package(ember) or add_subdirectory, or with -D) to other
# flags, e.g. "-march=x86-64-v3" for a binary that must run on other machines, or to "" to
# choose flags yourself. Why this and not runtime dispatch: docs/design.md, "Instruction sets".
# .cu units are left alone: nvcc's host pass gets no -march, as before.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set(ember_arch_default "-march=native")
else()
  set(ember_arch_default "")
endif()
set(EMBER_ARCH_FLAGS "${ember_arch_default}" CACHE STRING
    "Target flags for every C++ unit that uses ember (default -march=native; empty for none)")
find_package(OpenMP REQUIRED COMPONENTS CXX)
# Eigen: optional. Only the opt-in ember/eigen.hpp includes it (draws as Eigen::Map views); ember's
# own headers take Eigen objects by their members and factorise without it (detail/dense.hpp).
# Where it is found its include directory comes with ember::deps, so `#include <ember/eigen.hpp>`
# just works; EMBER_WITH_EIGEN=OFF leaves it out (tests/consumer builds a program that way).
option(EMBER_WITH_EIGEN "Put Eigen's include directory on ember::ember's include path (for ember/eigen.hpp)" ON)
set(EMBER_HAVE_EIGEN OFF)
if(EMBER_WITH_EIGEN)
  find_path(EMBER_EIGEN_INCLUDE_DIR Eigen/Core HINTS /usr/include/eigen3 /usr/local/include/eigen3
            PATH_SUFFIXES eigen3)
  if(EMBER_EIGEN_INCLUDE_DIR)
    set(EMBER_HAVE_EIGEN ON)
  else()
    message(STATUS "ember: Eigen 3 not found (looked in /usr/include/eigen3): everything but the opt-in "
                   "ember/eigen.hpp works; set EMBER_EIGEN_INCLUDE_DIR to use it")
  endif()
endif()
if(NOT TARGET ember::deps)
  add_library(ember_deps INTERFACE IMPORTED GLOBAL)
  add_library(ember::deps ALIAS ember_deps)
  if(EMBER_HAVE_EIGEN)
    target_include_directories(ember_deps SYSTEM INTERFACE ${EMBER_EIGEN_INCLUDE_DIR})
  endif()
  target_link_libraries(ember_deps INTERFACE OpenMP::OpenMP_CXX)
  if(EMBER_ARCH_FLAGS)
    separate_arguments(ember_arch_list UNIX_COMMAND "${EMBER_ARCH_FLAGS}")
    target_compile_options(ember_deps INTERFACE "$<$<COMPILE_LANGUAGE:CXX>:${ember_arch_list}>")
  endif()
endif()
