#pragma once
/// \file
/// The default progress line of a run on stderr, rewritten in place, shown only on a terminal
/// (`sample_options::progress`; `on_progress` receives the same `progress_report`).

#include <ember/sample_options.hpp>

#include <cstdio>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace ember::detail {

// The default progress line on stderr, rewritten in place.
inline void print_progress(progress_report const& r, bool last) {
  std::fprintf(stderr, "\rember: %s %lld/%lld transitions, %.1f s, ~%.0f s left, acceptance %.3f, %lld divergent%s",
               r.warming_up ? "warm-up" : "sampling", (long long)r.done, (long long)r.total, r.seconds,
               r.seconds_left, r.acceptance, (long long)r.divergent_transitions, last ? "\n" : "   ");
  std::fflush(stderr);
}
inline bool stderr_is_terminal() {
#if defined(__unix__) || defined(__APPLE__)
  return isatty(2) != 0;
#else
  return false;
#endif
}

}  // namespace ember::detail
