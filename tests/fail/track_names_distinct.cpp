// Must not compile: two tracked statistics share a name, so the trace could not tell them apart.
#include <ember/ember.hpp>

struct my_moments {
  static constexpr char const* name = "moments";
  static constexpr int sums(int) { return 1; }
  template <int I, class Chain>
  double term(Chain const& c) const {
    return double(c.x[0]);
  }
};

int main() {
  auto t = ember::track(ember::moments, my_moments{});
  (void)t;
}
