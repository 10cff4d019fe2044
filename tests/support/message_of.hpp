#pragma once
// The message of the exception of type E that `f` throws, or a note that it threw none (an
// exception of another type propagates, so the test fails on it).
#include <exception>
#include <string>

namespace ember_test {

template <class E = std::exception, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (E const& e) {
    return e.what();
  }
  return "no exception of the expected type";
}

}  // namespace ember_test
