# ctest driver for tests/consumer. Arguments: -DMODE (package | subdirectory), -DBUILD_TYPE
# (Release, Debug, or none: CMake's default, no optimisation flags), -DBUILD_DIR, -DSOURCE_DIR,
# -DWORK_DIR, -DCXX (the compiler ember's own build uses, so a clang build tests a clang
# consumer). package: install ember from the build tree into a scratch prefix and find_package
# it; subdirectory: add_subdirectory the source tree. Then build and run main.cpp.
file(REMOVE_RECURSE ${WORK_DIR})
set(config_args -DCMAKE_CXX_COMPILER=${CXX} -DEMBER_CONSUMER_MODE=${MODE})
if(NOT BUILD_TYPE STREQUAL "none")
  list(APPEND config_args -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
if(MODE STREQUAL "package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                  RESULT_VARIABLE r)
  if(r)
    message(FATAL_ERROR "install failed")
  endif()
  # ... without Eigen: only the opt-in ember/eigen.hpp needs it, and main.cpp does not include it.
  list(APPEND config_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DEMBER_WITH_EIGEN=OFF)
else()
  list(APPEND config_args -DEMBER_SOURCE_DIR=${SOURCE_DIR})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build ${config_args}
                RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "configuring the consumer (${MODE}, build type ${BUILD_TYPE}) failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "building the consumer (${MODE}, build type ${BUILD_TYPE}, -Wall -Wextra -Werror) failed")
endif()
foreach(program consumer consumer_quick)
  execute_process(COMMAND ${WORK_DIR}/build/${program} RESULT_VARIABLE r)
  if(r)
    message(FATAL_ERROR "the consumer's ${program} (${MODE}, build type ${BUILD_TYPE}) ran but failed its check")
  endif()
endforeach()
