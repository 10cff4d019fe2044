// bench/bayes_suite.hpp on backend::cuda, the logistic regression with one thread per chain and
// with the automatic team (core/team.hpp).
#include <ember/cuda.cuh>

#include "bayes_suite.hpp"

int main(int argc, char** argv) {
  return bayes_suite::run<ember::backend::cuda>(argc, argv,
                                                [](int w) { return ember::backend::cuda{.threads_per_chain = w}; });
}
