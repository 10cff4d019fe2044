# ctest cmake_quick_compile: a unit built with ember_quick_compile compiles none of the host code
# that ember_host_code holds. Arguments: -DNM (nm), -DOBJECTS (the unit's object files, ;-list),
# -DLIBRARY (ember_host_code's archive). No function below may be defined in the objects, and each
# must be defined in the library (an `inline` or a missing `extern template` would compile it again
# in every unit, unnoticed but for the time); those in `called` must be called by the objects, so
# that the check cannot pass on a unit that no longer needs them (examples/12_model prints a
# summary and saves an .npz file).
cmake_minimum_required(VERSION 3.25)
set(called "ember::detail::summarize_draws<double>" "ember::detail::print_summary<ember::summary_table>"
           "ember::detail::write_npz<double>" "ember::detail::usable_memory<void>"
           "ember::detail::require_host_memory<void>")
set(names ${called} "ember::detail::summary_warnings<ember::summary_table>" "ember::detail::cgroup_memory_limit<void>"
          "ember::detail::read_small_file<void>" "ember::detail::with_commas<void>")
list(FILTER OBJECTS INCLUDE REGEX "\\.o(bj)?$")  # not the precompiled header
execute_process(COMMAND ${NM} -C ${OBJECTS} OUTPUT_VARIABLE objects RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "nm failed on ${OBJECTS}")
endif()
execute_process(COMMAND ${NM} -C ${LIBRARY} OUTPUT_VARIABLE library RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REPLACE ";" "," objects "\n${objects}")
string(REPLACE ";" "," library "\n${library}")
foreach(name IN LISTS names)
  set(pattern "${name}")
  foreach(c . "(" ")" * +)
    string(REPLACE "${c}" "\\${c}" pattern "${pattern}")
  endforeach()
  if(name IN_LIST called AND NOT objects MATCHES "\n +U [^\n]*${pattern}\\(")
    message(FATAL_ERROR "${OBJECTS} does not call ${name}: the check would prove nothing")
  endif()
  if(objects MATCHES "\n[0-9a-f]+ [TtWw] [^\n]*${pattern}\\(")
    message(FATAL_ERROR "${OBJECTS} defines ${name}: ember_quick_compile's unit compiled host code again")
  endif()
  if(NOT library MATCHES "\n[0-9a-f]+ [TtWw] [^\n]*${pattern}\\(")
    message(FATAL_ERROR "${LIBRARY} does not define ${name}")
  endif()
endforeach()
list(LENGTH names n)
message(STATUS "${n} host functions compiled once, in ${LIBRARY}, and not in the unit")
