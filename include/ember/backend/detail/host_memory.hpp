#pragma once
// Host-memory checks shared by sample() and the backends: a request larger than the memory this
// process may use is refused before any work, with the byte count and the limit in the message.
//
// The memory a process may use is the smallest of: physical memory; the memory limit of its
// cgroup and of every cgroup above it (v2 `memory.max`, v1 `memory.limit_in_bytes`, found through
// /proc/self/cgroup and /proc/self/mountinfo, so a container or a systemd slice counts); and the
// address-space and data-segment limits (RLIMIT_AS, RLIMIT_DATA). A request over it would be
// OOM-killed or fail in the allocator midway; refusing it first loses nothing.
//
// The larger functions are templates with one defaulted parameter, `template <class = void>`, and
// are called as plain functions: a template can be declared `extern template`, so that a program
// compiles them once (ember/host_templates.hpp) instead of in every unit that runs a sampler.

#include <sys/resource.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ember::detail {

// 12345678 → "12,345,678"; any size, no integer conversion (values can exceed 2⁶⁴).
template <class = void>
std::string with_commas(long double v) {
  char digits[64];
  int n = std::snprintf(digits, sizeof digits, "%.0Lf", v);
  if (n < 0 || n >= int(sizeof digits)) return digits;
  std::string s;  // appended digit by digit (GCC 12 warns falsely on string::insert, -Wrestrict)
  s.reserve(std::size_t(n + n / 3));
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

inline long double physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return (pages > 0 && size > 0) ? (long double)pages * size : std::numeric_limits<long double>::max();
}

template <class = void>
std::string read_small_file(std::string const& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return f ? s.str() : std::string();
}

// The smallest memory limit of the cgroups of a process, given the text of its /proc/<pid>/cgroup
// and /proc/<pid>/mountinfo; +∞ where none is set or none can be read. The limit files are read at
// the mount points named in `mountinfo` (tests point them at a directory of their own).
template <class = void>
long double cgroup_memory_limit(std::string const& proc_cgroup, std::string const& mountinfo) {
  struct mount {
    std::string root, point;
    bool v2;
  };
  std::vector<mount> mounts;
  std::istringstream mi(mountinfo);
  for (std::string line; std::getline(mi, line);) {
    // id parent major:minor root mount-point options [optional fields] - fstype source super-options
    std::istringstream f(line);
    std::string id, parent, dev, root, point, opts, field;
    if (!(f >> id >> parent >> dev >> root >> point >> opts)) continue;
    while (f >> field && field != "-") {
    }
    std::string fstype, source, super;
    if (!(f >> fstype >> source >> super)) continue;
    if (fstype == "cgroup2")
      mounts.push_back({root, point, true});
    else if (fstype == "cgroup" && ("," + super + ",").find(",memory,") != std::string::npos)
      mounts.push_back({root, point, false});
  }
  long double limit = std::numeric_limits<long double>::infinity();
  std::istringstream pc(proc_cgroup);
  for (std::string line; std::getline(pc, line);) {
    // hierarchy-id:controllers:path ("0::/path" for v2)
    auto const a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string const controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    bool const v2 = line.compare(0, a, "0") == 0 && controllers.empty();
    bool const v1 = ("," + controllers + ",").find(",memory,") != std::string::npos;
    if (!v1 && !v2) continue;
    for (auto const& m : mounts) {
      if (m.v2 != v2) continue;
      // The path is relative to the hierarchy's root; the mount shows the part under m.root.
      std::string rel = path;
      if (m.root != "/") {
        if (rel.compare(0, m.root.size(), m.root) != 0) continue;
        rel = rel.substr(m.root.size());
      }
      // This cgroup and every one above it, up to the mount point.
      for (;;) {
        std::string const dir = m.point + (rel == "/" ? "" : rel);
        std::string const text = read_small_file(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
        if (!text.empty() && text.compare(0, 3, "max") != 0) {
          long double v = 0;
          try {
            v = std::stold(text);
          } catch (std::exception const&) {
            v = 0;
          }
          // v1 says "no limit" with a page-rounded 2⁶³ − 1.
          if (v > 0 && v < (long double)(std::int64_t(1) << 62) && v < limit) limit = v;
        }
        if (rel.empty() || rel == "/") break;
        auto const slash = rel.find_last_of('/');
        rel = slash == 0 ? "/" : rel.substr(0, slash);
      }
    }
  }
  return limit;
}

struct memory_limit {
  long double bytes;
  std::string what;  // "this machine's physical memory", "this process's cgroup limit", ...
};

// The memory this process may use (see the file comment), read once.
template <class = void>
memory_limit usable_memory() {
  static memory_limit const m = [] {
    memory_limit out{physical_memory_bytes(), "this machine's physical memory"};
    long double const cg = cgroup_memory_limit(read_small_file("/proc/self/cgroup"), read_small_file("/proc/self/mountinfo"));
    if (cg < out.bytes) out = {cg, "the memory limit of this process's cgroup"};
    for (auto [resource, name] : {std::pair{RLIMIT_AS, "RLIMIT_AS"}, std::pair{RLIMIT_DATA, "RLIMIT_DATA"}}) {
      rlimit r{};
      if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY && (long double)r.rlim_cur < out.bytes)
        out = {(long double)r.rlim_cur, std::string("this process's ") + name + " (ulimit)"};
    }
    return out;
  }();
  return m;
}

// A thread count the process can run: `asked` capped at 8 per processor (64 at least) and at
// OpenMP's thread limit, with a line on stderr when it was. A count the process cannot create
// would end it inside the OpenMP runtime (libgomp exits when pthread_create fails).
inline int capped_thread_count(int asked, char const* who) {
#ifdef _OPENMP
  long long const cap = std::min<long long>(omp_get_thread_limit(), std::max(64, 8 * omp_get_num_procs()));
  if (asked > cap) {
    std::fprintf(stderr, "%s: %d threads asked, more than this machine can run usefully; using %lld\n", who, asked, cap);
    return int(cap);
  }
#else
  (void)who;
#endif
  return asked;
}

// Throws std::length_error("<who>: this run needs N bytes of host memory (<what>), more than the M
// bytes of <limit>; <advice>") when bytes exceed the memory this process may use.
template <class = void>
void require_host_memory(long double bytes, char const* who, std::string const& what, char const* advice) {
  memory_limit const avail = usable_memory();
  if (bytes > avail.bytes)
    throw std::length_error(std::string(who) + ": this run needs " + with_commas(bytes) + " bytes of host memory (" +
                            what + "), more than the " + with_commas(avail.bytes) + " bytes of " + avail.what + "; " +
                            advice);
}

}  // namespace ember::detail
