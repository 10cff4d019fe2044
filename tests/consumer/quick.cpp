// A user's program built with ember_quick_compile (tests/consumer/CMakeLists.txt): its unit calls
// the host code that ember_host_code compiles once (a summary, its text, an .npz file, the
// host-memory checks), so this links only if that library holds them.
#include <ember/ember.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

int main() {
  using namespace ember;
  auto res = sample(chees_hmc(harmonic<double, 3>{}) | record(), {.chains = 8, .steps = 500, .seed = 4});
  auto const s = res.summary();
  std::cout << s;
  auto const path = std::filesystem::temp_directory_path() / "ember_consumer_quick.npz";
  save_npz(res, path.string());
  bool const saved = std::filesystem::file_size(path) > 0;
  std::filesystem::remove(path);
  // N(0, 1) in each dimension: every mean within 5 of its Monte-Carlo standard errors.
  bool ok = saved && s.dim() == 3;
  for (auto const& row : s.dims) ok = ok && std::fabs(row.mean) < 5 * row.mcse;
  std::printf("consumer_quick: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
