# Checks that every code block of a doc page that is marked with a source file,
#   <!-- snippet: path/relative/to/repo -->
#   ```cpp          (or ```python, ```cmake)
#   ...
#   ```
# occurs verbatim in that file. Run: cmake -DDOC=<page> -DROOT=<repo> -P check_snippets.cmake
file(READ ${DOC} text)
# CMake lists split at ';', which C++ is full of: compare with a stand-in.
string(REPLACE ";" "<semicolon>" text "${text}")
string(REGEX MATCHALL "<!-- snippet: [^ ]+ -->\n```(cpp|python|cmake)\n[^`]*```" blocks "${text}")
list(LENGTH blocks n)
if(n EQUAL 0)
  message(FATAL_ERROR "${DOC}: no marked snippets")
endif()
foreach(block IN LISTS blocks)
  string(REGEX REPLACE "<!-- snippet: ([^ ]+) -->.*" "\\1" path "${block}")
  string(REGEX REPLACE "<!-- snippet: [^ ]+ -->\n```[a-z]+\n(.*)```" "\\1" code "${block}")
  file(READ ${ROOT}/${path} source)
  string(REPLACE ";" "<semicolon>" source "${source}")
  string(FIND "${source}" "${code}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${DOC}: a snippet marked as from ${path} is not in that file:\n${code}")
  endif()
endforeach()
message(STATUS "${DOC}: ${n} snippets found in their sources")
