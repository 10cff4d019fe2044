// Resources (issue 27): the memory check uses the smallest of physical memory, the process's
// cgroup limits (v1 and v2, every level) and its rlimits; a `.block` near 2⁶³ and a thread count
// the process cannot create are handled; the tracked sums do not depend on the thread count.
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include "support/message_of.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

using ember::vec;
using ember_test::message_of;
namespace fs = std::filesystem;

namespace {

constexpr int D = 4;

auto pipe() {
  return ember::mala(ember::gaussian(vec<float, D>{{0.f, 1.f, 2.f, 3.f}}, 1.f), {.step_size = 0.4}) | ember::record() |
         ember::track(ember::moments, ember::acceptance, ember::mean_energy);
}

void write_file(fs::path const& p, std::string const& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// Runs the hidden test case `name` of this binary in a child process after `prepare()` (which sets
// a limit or joins a cgroup), so that its first look at the limits (read once per process) sees
// them and the limits never touch the other tests; true when it passed.
template <class F>
bool child_passes(char const* name, F prepare) {
  std::fflush(nullptr);
  pid_t const pid = ::fork();
  if (pid == 0) {
    if (!prepare()) _exit(3);
    ::execl("/proc/self/exe", "resources_child", name, static_cast<char*>(nullptr));
    _exit(4);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool asan = true;
#else
constexpr bool asan = false;
#endif
#else
constexpr bool asan = false;
#endif

}  // namespace

TEST_CASE("cgroup memory limits are read at every level of v1 and v2 hierarchies", "[resources]") {
  fs::path const root = fs::temp_directory_path() / ("ember_cgroup_test_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string const r = root.string();
  // v2: unified at <root>/unified, the process in /a/b; a's limit (3 GiB) is below b's ("max").
  write_file(root / "unified/a/memory.max", "3221225472\n");
  write_file(root / "unified/a/b/memory.max", "max\n");
  std::string const mountinfo_v2 = "30 25 0:26 / " + r + "/unified rw,nosuid - cgroup2 cgroup2 rw\n";
  CHECK(ember::detail::cgroup_memory_limit("0::/a/b\n", mountinfo_v2) == 3221225472.0L);
  // v1: the memory controller mounted at <root>/memory, the process in /x/y, y limited to 1 GiB;
  // the hierarchy's "no limit" (2⁶³ − 4096) at x is ignored.
  write_file(root / "memory/x/memory.limit_in_bytes", "9223372036854771712\n");
  write_file(root / "memory/x/y/memory.limit_in_bytes", "1073741824\n");
  std::string const mountinfo_v1 =
      "31 25 0:27 / " + r + "/memory rw,nosuid - cgroup cgroup rw,memory\n"
      "32 25 0:28 / " + r + "/cpu rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n";
  CHECK(ember::detail::cgroup_memory_limit("9:cpu,cpuacct:/x/y\n4:memory:/x/y\n", mountinfo_v1) == 1073741824.0L);
  // A container that sees its own cgroup as the mount's root ("/x" mounted, the process in /x/y).
  std::string const mountinfo_bind = "31 25 0:27 /x " + r + "/memory/x rw - cgroup cgroup rw,memory\n";
  CHECK(ember::detail::cgroup_memory_limit("4:memory:/x/y\n", mountinfo_bind) == 1073741824.0L);
  // Nothing set, nothing mounted, garbage: no limit.
  CHECK(ember::detail::cgroup_memory_limit("", "") == std::numeric_limits<long double>::infinity());
  CHECK(ember::detail::cgroup_memory_limit("0::/nowhere\n", mountinfo_v2) == std::numeric_limits<long double>::infinity());
  CHECK(ember::detail::cgroup_memory_limit("garbage", "garbage - cgroup2") == std::numeric_limits<long double>::infinity());
  fs::remove_all(root);
}

TEST_CASE("child: under a 2 GiB RLIMIT_AS", "[.][child]") {
  auto const m = ember::detail::usable_memory();
  CHECK(m.bytes <= (long double)(std::int64_t(1) << 31));
  CHECK_THAT(m.what, Catch::Contains("RLIMIT_AS"));
  // 10⁶ chains × 1,000 kept draws × 4 floats = 16 GB recorded.
  CHECK_THAT(message_of<std::length_error>([] { ember::sample(pipe(), {.chains = 1'000'000, .steps = 1000, .progress = false}); }),
             Catch::StartsWith("ember::sample: this run needs") && Catch::Contains("RLIMIT_AS"));
}

TEST_CASE("a run larger than RLIMIT_AS is refused before any work with the limit named", "[resources]") {
  if (asan) {
    WARN("skipped under AddressSanitizer, which reserves more address space than any small RLIMIT_AS");
    return;
  }
  CHECK(child_passes("child: under a 2 GiB RLIMIT_AS", [] {
    rlimit lim{rlim_t(1) << 31, rlim_t(1) << 31};
    return ::setrlimit(RLIMIT_AS, &lim) == 0;
  }));
}

TEST_CASE("child: in a 512 MiB memory cgroup", "[.][child]") {
  auto const m = ember::detail::usable_memory();
  CHECK(m.bytes == 536870912.0L);
  CHECK_THAT(m.what, Catch::Contains("cgroup"));
  // The host cache keeps at most an eighth of what the process may use.
  CHECK(ember::host_cache().limit_bytes <= std::size_t(536870912) / 8);
  // 200,000 chains × 1,000 kept draws × 4 floats = 800 MB: over the limit, refused (not OOM-killed).
  CHECK_THAT(message_of<std::length_error>([] { ember::sample(pipe(), {.chains = 200'000, .steps = 1000, .progress = false}); }),
             Catch::StartsWith("ember::sample: this run needs") && Catch::Contains("cgroup"));
}

TEST_CASE("inside a memory cgroup a too-large run is refused instead of OOM-killed", "[resources]") {
  // Needs a writable cgroup v1 memory hierarchy or a v2 one with the memory controller (root in
  // a container or a VM, as CI is); elsewhere skipped with a message.
  std::string const name = "ember_test_" + std::to_string(::getpid());
  // A child of this process's own memory cgroup (v1) or cgroup (v2), else of the hierarchy's root.
  std::string own_v1, own_v2;
  {
    std::ifstream f("/proc/self/cgroup");
    for (std::string line; std::getline(f, line);) {
      auto const b = line.find(':', line.find(':') + 1);
      if (line.find(":memory:") != std::string::npos) own_v1 = line.substr(b + 1);
      if (line.rfind("0::", 0) == 0) own_v2 = line.substr(3);
    }
  }
  fs::path dir;
  for (auto [base, file] : {std::pair{"/sys/fs/cgroup/memory" + own_v1, "memory.limit_in_bytes"},
                            std::pair{std::string("/sys/fs/cgroup/memory"), "memory.limit_in_bytes"},
                            std::pair{"/sys/fs/cgroup" + own_v2, "memory.max"}}) {
    std::error_code ec;
    fs::path const d = fs::path(base) / name;
    if (!fs::exists(fs::path(base) / "cgroup.procs") || !fs::create_directory(d, ec)) continue;
    if (fs::exists(d / file) && std::ofstream(d / file) << "536870912") {
      dir = d;
      break;
    }
    fs::remove(d, ec);
  }
  if (dir.empty()) {
    WARN("skipped: no writable memory cgroup here");
    return;
  }
  bool const ok = child_passes("child: in a 512 MiB memory cgroup", [&] { return bool(std::ofstream(dir / "cgroup.procs") << ::getpid()); });
  std::error_code ec;
  fs::remove(dir, ec);  // empty again once the child has exited
  CHECK(ok);
}

TEST_CASE("a .block near 2^63 gives the draws of the automatic partition", "[resources][backend]") {
  auto const opt = ember::sample_options<float, D>{.chains = 50, .steps = 30, .seed = 9, .progress = false};
  auto const ref = ember::sample(pipe(), opt);
  for (std::int64_t block : {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max() - 15,
                             std::int64_t(1) << 62, std::int64_t(50), std::int64_t(1)}) {
    INFO("block " << block);
    auto const r = ember::sample(pipe(), opt, ember::backend::cpu{.block = block});
    auto a = r.samples().data(), b = ref.samples().data();
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("a thread count the process cannot create is capped, with the same draws", "[resources][backend]") {
  auto const opt = ember::sample_options<float, D>{.chains = 40, .steps = 20, .seed = 9, .progress = false};
  auto const ref = ember::sample(pipe(), opt, ember::backend::cpu{.threads = 1});
  auto const r = ember::sample(pipe(), opt, ember::backend::cpu{.threads = 1'000'000'000});
  auto a = r.samples().data(), b = ref.samples().data();
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("the tracked sums have the same bits on 1 to 8 threads", "[resources][backend]") {
  // 2,000 chains: 125 batches of 16, so the automatic partition would differ with the thread
  // count if it followed it (8T blocks).
  auto const opt = ember::sample_options<float, D>{.chains = 2000, .steps = 20, .seed = 4, .progress = false};
  auto const ref = ember::sample(pipe(), opt, ember::backend::cpu{.threads = 1});
  for (int threads : {2, 3, 5, 8}) {
    INFO(threads << " threads");
    auto const r = ember::sample(pipe(), opt, ember::backend::cpu{.threads = threads});
    REQUIRE(r.trace().mean.size() == ref.trace().mean.size());
    bool same = true;
    for (std::size_t k = 0; k < r.trace().mean.size(); ++k)
      for (int d = 0; d < D; ++d)
        same = same && r.trace().mean[k][d] == ref.trace().mean[k][d] && r.trace().variance[k][d] == ref.trace().variance[k][d];
    for (std::size_t k = 0; k < r.trace().energy.size(); ++k)
      same = same && r.trace().energy[k] == ref.trace().energy[k] && r.trace().acceptance[k] == ref.trace().acceptance[k];
    CHECK(same);
  }
}

TEST_CASE("summarize with a thread count the process cannot create is capped, with the same summary", "[resources]") {
  auto const r = ember::sample(pipe(), {.chains = 40, .steps = 40, .seed = 3, .progress = false});
  auto const a = ember::summarize(r, {.threads = 1}), b = ember::summarize(r, {.threads = 2'000'000'000});
  for (int d = 0; d < D; ++d) {
    CHECK(a.dims[d].mean == b.dims[d].mean);
    CHECK(a.dims[d].ess == b.dims[d].ess);
    CHECK(a.dims[d].rhat == b.dims[d].rhat);
  }
}
