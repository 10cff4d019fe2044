// bench/bayes_suite.hpp on backend::cpu (every core of this machine).
#include "bayes_suite.hpp"

#include <ember/backend/cpu.hpp>

int main(int argc, char** argv) {
  return bayes_suite::run<ember::backend::cpu>(argc, argv, [](int) { return nullptr; });
}
