#pragma once
/// \file
/// `mass_windows`: Stan's warm-up schedule for metric adaptation. Of W warm-up transitions, the
/// first 75 (init buffer) only adapt the step size, the last 50 (term buffer) likewise, and those
/// between are cut into slow windows of 25, 50, 100, … transitions, the last one stretched to the
/// term buffer. At the end of each window the metric is set from that window's draws and
/// step-size adaptation restarts. When W < 150 the buffers are 15 % and 10 % of W (Stan's rule).

#include <cstdint>
#include <vector>

namespace ember {

struct mass_windows {
  std::vector<std::int64_t> ends;  ///< last transition (inclusive) of each slow window
  std::int64_t first = 0;          ///< first transition of the first window

  explicit mass_windows(std::int64_t W = 0) {
    std::int64_t init = 75, term = 50, base = 25;
    if (W < init + term + base) {
      init = W * 15 / 100;
      term = W / 10;
      base = W - init - term;
    }
    if (base <= 0) return;
    first = init;
    std::int64_t const last = W - term;  // exclusive end of the slow phase
    std::int64_t start = init, size = base;
    while (start < last) {
      std::int64_t end = start + size;
      // Stretch the window to the term buffer when the next one would not fit whole.
      if (end + 2 * size > last) end = last;
      ends.push_back(end - 1);
      start = end;
      size *= 2;
    }
  }
  /// Whether transition t's draws feed a metric estimate.
  bool collects(std::int64_t t) const { return !ends.empty() && t >= first && t <= ends.back(); }
  /// Whether a window closes after transition t.
  bool closes(std::int64_t t) const {
    for (auto e : ends)
      if (e == t) return true;
    return false;
  }
};

}  // namespace ember
