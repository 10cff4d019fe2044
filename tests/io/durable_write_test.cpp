// Writes that cannot lose data (issue 27): every file ember writes (a checkpoint, a .npy, a .npz)
// goes to a temporary, is checked through its close, fsynced and renamed. On /dev/full and on a
// full file system (a 64 KiB tmpfs mounted by the test; skipped with a message where it cannot
// mount one) the writer throws a sentence naming the file and the reason, the file that was there
// keeps its bytes, and no temporary is left behind.
#include <ember/ember.hpp>
#include <ember/io/npy.hpp>
#include <ember/io/npz.hpp>
#include <ember/io/save_npz.hpp>

#include <catch2/catch.hpp>

#include "support/message_of.hpp"

#include <sys/mount.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

using ember::vec;
using ember_test::message_of;
namespace fs = std::filesystem;

namespace {

constexpr int D = 2;

auto pipe() { return ember::mala(ember::gaussian(vec<float, D>{{0.f, 1.f}}, 1.f), {.step_size = 0.5}) | ember::record(); }

auto small_run(std::int64_t chains, std::int64_t steps) {
  auto r = ember::start(pipe(), {.chains = chains, .seed = 2, .progress = false});
  r.advance(steps);
  return r;
}

std::string bytes_of(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A 64 KiB tmpfs at a fresh directory, unmounted at the end; `ok` is false where the test may not mount.
struct small_tmpfs {
  std::string dir;
  bool ok = false;
  small_tmpfs() {
    dir = (fs::temp_directory_path() / ("ember_full_fs_" + std::to_string(::getpid()))).string();
    fs::create_directories(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~small_tmpfs() {
    if (ok) ::umount(dir.c_str());
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // Fills what is left with a filler file.
  void fill() const {
    std::ofstream f(dir + "/filler", std::ios::binary);
    std::vector<char> block(4096, 'x');
    for (int i = 0; i < 64 && f; ++i) f.write(block.data(), std::streamsize(block.size()));
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (auto const& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    return out;
  }
};

}  // namespace

TEST_CASE("writing to /dev/full throws a sentence naming the file and the reason", "[io][durable]") {
  using RE = std::runtime_error;
  std::vector<float> a(1000, 1.f);
  CHECK_THAT(message_of<RE>([&] { ember::write_npy("/dev/full", a.data(), std::array<std::size_t, 1>{a.size()}); }),
             Catch::StartsWith("ember::write_npy: writing /dev/full failed: No space left on device"));
  CHECK_THAT(message_of<RE>([&] {
               ember::npz_writer z("/dev/full");
               z.add("a", a.data(), std::array<std::size_t, 1>{a.size()});
               z.close();
             }),
             Catch::StartsWith("ember::npz_writer: writing /dev/full failed: No space left on device"));
  auto r = small_run(8, 10);
  CHECK_THAT(message_of<RE>([&] { r.save("/dev/full"); }),
             Catch::StartsWith("ember::run::save: writing /dev/full failed: No space left on device"));
  CHECK_THAT(message_of<RE>([&] { ember::save_npz(r.result(), "/dev/full"); }),
             Catch::StartsWith("ember::npz_writer: writing /dev/full failed"));
}

TEST_CASE("a failed write leaves the previous file intact and no temporary behind", "[io][durable]") {
  small_tmpfs t;
  if (!t.ok) {
    WARN("skipped: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN); the /dev/full case still runs");
    return;
  }
  using RE = std::runtime_error;
  std::string const ckpt = t.dir + "/run.ember", npy = t.dir + "/a.npy", npz = t.dir + "/r.npz";
  auto small = small_run(8, 10);
  small.save(ckpt);
  std::vector<float> a(100, 2.f);
  ember::write_npy(npy, a.data(), std::array<std::size_t, 1>{a.size()});
  ember::save_npz(small.result(), npz);
  auto const good_ckpt = bytes_of(ckpt), good_npy = bytes_of(npy), good_npz = bytes_of(npz);
  REQUIRE(good_ckpt.size() > 100);
  // A checkpoint that is still small (it sits in the writer's buffer until the end, where a
  // buffered stream would first see ENOSPC at close) on a file system that is now full.
  t.fill();
  auto bigger = small_run(8, 200);
  CHECK_THAT(message_of<RE>([&] { bigger.save(ckpt); }),
             Catch::StartsWith("ember::run::save: writing " + ckpt + ".tmp failed") &&
                 Catch::Contains("No space left on device"));
  std::vector<float> b(20'000, 3.f);
  CHECK_THAT(message_of<RE>([&] { ember::write_npy(npy, b.data(), std::array<std::size_t, 1>{b.size()}); }),
             Catch::StartsWith("ember::write_npy: writing " + npy + ".tmp failed"));
  CHECK_THAT(message_of<RE>([&] { ember::save_npz(bigger.result(), npz); }),
             Catch::StartsWith("ember::npz_writer: writing " + npz + ".tmp failed"));
  CHECK(bytes_of(ckpt) == good_ckpt);
  CHECK(bytes_of(npy) == good_npy);
  CHECK(bytes_of(npz) == good_npz);
  auto const left = t.files();
  CHECK(left.size() == 4);  // the three files and the filler, no .tmp
  for (auto const& f : left) CHECK(f.find(".tmp") == std::string::npos);
  // The previous checkpoint still loads, and room made again lets the save through.
  CHECK_NOTHROW(decltype(small)::load(pipe(), ckpt));
  fs::remove(t.dir + "/filler");
  bigger.save(ckpt);
  CHECK(bytes_of(ckpt) != good_ckpt);
}

TEST_CASE("an npz_writer destroyed by an exception leaves the previous archive", "[io][durable]") {
  std::string const path = "durable_test_unwound.npz";
  std::vector<double> v{1, 2, 3};
  {
    ember::npz_writer z(path);
    z.add("v", v.data(), std::array<std::size_t, 1>{3});
  }
  auto const good = bytes_of(path);
  try {
    ember::npz_writer z(path);
    z.add("v", v.data(), std::array<std::size_t, 1>{3});
    throw std::logic_error("the caller fails midway");
  } catch (std::logic_error const&) {
  }
  CHECK(bytes_of(path) == good);
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK(ember::read_npz(path).at("v").as<double>() == v);
  std::remove(path.c_str());
}
