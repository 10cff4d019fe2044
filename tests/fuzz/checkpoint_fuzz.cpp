// Fuzzes the checkpoint reader: ember::detail::read_checked_file and the byte_reader walk of
// run::load, through run::load itself, on checkpoints that run::save wrote for three pipelines
// (MALA; HMC with step-size, mass and ChEES warm-up and tracked moments; MALA with per-chain
// step sizes), at several points of their runs. Three mutated inputs in four get their checksum
// mended, so that mutations reach the fields behind it. Each input is loaded by the pipeline it
// was written for (one that refuses it as another pipeline's passes it on).
#include "fuzz.hpp"

#include <ember/ember.hpp>

#include <cstdint>
#include <cstring>

namespace {

using ember::vec;
constexpr int D = 3;

auto energy() { return ember::gaussian(vec<float, D>{{0.5f, -1.f, 2.f}}, 1.5f); }
auto mala_pipe() { return ember::mala(energy(), {.step_size = 0.3}) | ember::record(); }
auto hmc_pipe() {
  return ember::hmc(energy(), {.integrator_steps = 3}) | ember::warmup(20, ember::step_size(), ember::diagonal_mass(), ember::chees()) |
         ember::record() | ember::track(ember::moments);
}
auto per_chain_pipe() {
  return ember::mala(energy(), {}) | ember::warmup(10, ember::step_size(ember::per_chain), ember::diagonal_mass()) | ember::record();
}

template <class Pipe>
void save_seeds(Pipe const& pipe, std::vector<std::string>& out, std::string const& path) {
  for (std::int64_t t : {0, 4, 25}) {
    auto r = ember::start(pipe, {.chains = 5, .seed = 7});
    r.advance(t);
    r.save(path);
    out.push_back(ember_fuzz::read_file(path));
  }
}

// The checksum: FNV-1a of everything before the last 8 bytes.
void mend_checksum(std::string& b, std::mt19937_64&) {
  if (b.size() < 8) return;
  std::uint64_t const h = ember::detail::fnv1a(b.data(), b.size() - 8);
  std::memcpy(b.data() + b.size() - 8, &h, 8);
}

// Loads `path` with the first pipeline that does not refuse it as another pipeline's.
template <class Pipe, class... More>
void load(std::string const& path, Pipe const& pipe, More const&... more) {
  using Run = decltype(ember::start(pipe, {.chains = 1}));
  try {
    auto r = Run::load(pipe, path);
    if (r.transitions() < 0) throw std::logic_error("fuzz: a negative transition count was loaded");
  } catch (std::runtime_error const& e) {
    if constexpr (sizeof...(More) > 0)
      if (std::strstr(e.what(), "different pipeline") != nullptr) return load(path, more...);
    throw;
  }
}

ember_fuzz::reader make_reader() {
  ember_fuzz::reader r;
  r.name = "checkpoint";
  std::string const path = r.scratch = ember_fuzz::scratch_path("checkpoint");
  save_seeds(mala_pipe(), r.seeds, path);
  save_seeds(hmc_pipe(), r.seeds, path);
  save_seeds(per_chain_pipe(), r.seeds, path);
  r.tokens = {"EMBERRUN", "ember 0.6.0", std::string(8, '\xff'), std::string(8, '\0'), std::string("\x01\0\0\0", 4)};
  r.fix = mend_checksum;
  r.printable_messages = false;  // run::load quotes the version bytes of the file (run/checkpoint.hpp); counted, not failed
  r.target = [path](std::string const& b) {
    ember_fuzz::write_file(path, b);
    load(path, mala_pipe(), hmc_pipe(), per_chain_pipe());
    return true;
  };
  return r;
}

}  // namespace

EMBER_FUZZ_MAIN(make_reader)
