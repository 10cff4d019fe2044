# ember's dependencies as one INTERFACE target, ember::deps; shared by the build tree and by the
# installed package (emberConfig.cmake includes this file).
include_guard(GLOBAL)
find_package(OpenMP REQUIRED COMPONENTS CXX)
# Thrust (OMP system) from CUDA's CCCL; g++ needs only the headers.
find_path(EMBER_CCCL_INCLUDE_DIR thrust/version.h
          HINTS ENV CUDA_PATH /usr/local/cuda/include/cccl /usr/local/cuda/targets/x86_64-linux/include/cccl
          PATH_SUFFIXES cccl)
if(NOT EMBER_CCCL_INCLUDE_DIR)
  message(FATAL_ERROR "ember needs Thrust from CUDA's CCCL (looked in /usr/local/cuda/include/cccl); "
                      "set EMBER_CCCL_INCLUDE_DIR to the folder holding thrust/")
endif()
# Eigen (host only): factorisations in energies' constructors (gaussian's LLT) and Eigen inputs.
find_path(EMBER_EIGEN_INCLUDE_DIR Eigen/Cholesky HINTS /usr/include/eigen3 /usr/local/include/eigen3
          PATH_SUFFIXES eigen3)
if(NOT EMBER_EIGEN_INCLUDE_DIR)
  message(FATAL_ERROR "ember needs Eigen 3 (looked in /usr/include/eigen3); set EMBER_EIGEN_INCLUDE_DIR")
endif()
if(NOT TARGET ember::deps)
  add_library(ember_deps INTERFACE IMPORTED GLOBAL)
  add_library(ember::deps ALIAS ember_deps)
  target_include_directories(ember_deps SYSTEM INTERFACE ${EMBER_CCCL_INCLUDE_DIR} ${EMBER_EIGEN_INCLUDE_DIR})
  target_compile_definitions(ember_deps INTERFACE
                             $<$<COMPILE_LANGUAGE:CXX>:THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP>)
  target_link_libraries(ember_deps INTERFACE OpenMP::OpenMP_CXX)
  # One Eigen configuration in every translation unit. Eigen's vectorisation and alignment follow
  # -march, and a program whose .cpp files (-march=native) and .cu files (nvcc's host pass, no
  # -march) instantiate the same Eigen templates differently links a mix of the two (measured: a
  # crash in backend_cuda_test_nogpu). ember uses Eigen only to factorise once per energy, so
  # scalar Eigen with malloc's alignment costs nothing that matters. Users who need vectorised
  # Eigen elsewhere can undefine these, at the price of compiling all their files alike.
  target_compile_definitions(ember_deps INTERFACE EIGEN_DONT_VECTORIZE EIGEN_MAX_ALIGN_BYTES=16
                                                  EIGEN_MAX_STATIC_ALIGN_BYTES=16)
endif()
