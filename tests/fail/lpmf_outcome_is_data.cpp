// A discrete log-density's outcome given as a parameter (a dual the energy differentiates).
#include <ember/distributions.hpp>

int main() {
  ember::dual<double, 1> y(1.0), eta(0.3);
  return int(ember::bernoulli_logit_lpmf(y, eta).val);
}
