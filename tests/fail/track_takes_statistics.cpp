// Must not compile: track() is given something that is not a tracked statistic (no name,
// sums(dim) or term<I>(chain)), and says so in one sentence.
#include <ember/ember.hpp>

struct not_a_statistic {
  double value = 0;
};

int main() {
  auto t = ember::track(ember::moments, not_a_statistic{});
  (void)t;
}
