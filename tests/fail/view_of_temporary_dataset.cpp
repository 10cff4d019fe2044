// A temporary dataset's view would point into memory freed at the end of the statement.
#include <ember/data/dataset.hpp>

#include <vector>

int main() {
  auto v = ember::dataset<float>(std::vector<float>{1.f, 2.f}, 2, 1).view();
  return int(v.rows);
}
