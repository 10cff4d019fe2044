#pragma once
/// \file
/// Training a neural energy by contrastive divergence, with TorchEBM's semantics
/// (`torchebm.losses.ContrastiveDivergence`, 0.8.9) and ember's samplers for the negatives.
///
/// One `step()`:
///  1. a batch of B data points drawn uniformly with replacement;
///  2. B start states: the data batch itself (CD-k), or, with `.persistent`, B states of a replay
///     buffer (stratified: one uniformly from each of B equal strata of its S states, the strata
///     rotated by a uniform start; TorchEBM's strata never read the last S mod B), of which
///     max(1, ⌊B·new_sample_ratio⌋) chosen at random get 0.01·N added; the buffer starts as
///     0.01·N and is advanced `init_steps` Langevin steps before the first step;
///  3. k Langevin steps from those states, x ← x − η∇E(x) + s√(2η)ξ (η = step_size,
///     s = noise_scale), run by ember's fused ULA through SIMD batches of chains: ULA on E/s² with
///     step size ηs²; the negatives are constants for the gradient (no gradient through the
///     sampler, as TorchEBM);
///  4. with a persistent buffer, the B negatives written back first-in first-out at a pointer that
///     moves by B (not where they were read);
///  5. the loss L = mean E(data) − mean E(neg) + α(mean E(data)² + mean E(neg)²) (α =
///     energy_reg_weight) and its gradient in θ (`mlp::add_param_grad`, one pass over each set
///     with each point's coefficient from its energy), clipped to `max_grad_norm` if set, then one
///     optimiser step (`adam` or `sgd`, train/optimizer.hpp) on the weights in place.
/// A loss or gradient that is not finite stops training with an exception naming the step
/// (TorchEBM replaces such a loss by 0.1 and goes on); the weights are then as before that step.
///
/// Every random number is Philox under (seed, step, index), so a run in pieces, or continued from
/// `save`/`load`, gives the same weights bit for bit. The negatives come from a fresh run of the
/// sampler per step, started from their states, so no energy or gradient cached under the old
/// weights is ever used. The CD loss is not a convergence signal (it is a difference of energies
/// whose offset is free): watch the energy gap's stability and a distance between model samples
/// and held-out data (`energy_distance`).

#include <ember/core/rng.hpp>
#include <ember/data/data_view.hpp>
#include <ember/energy/expression.hpp>
#include <ember/energy/mlp.hpp>
#include <ember/io/npz.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/sample.hpp>
#include <ember/train/energy_distance.hpp>
#include <ember/train/optimizer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember {

/// TorchEBM's defaults, but `step_size` (its LangevinDynamics default is 1e-3; its CD examples use
/// 0.1, as here).
struct cd_options {
  std::int64_t batch = 256;        ///< B: data points and negatives per step
  int k_steps = 10;                ///< Langevin steps per negative per step
  double step_size = 0.1;          ///< η
  double noise_scale = 1.0;        ///< s: x ← x − η∇E + s√(2η)ξ
  bool persistent = false;         ///< negatives from a replay buffer (else from the data batch)
  std::int64_t buffer_size = 10000;
  int init_steps = 100;            ///< Langevin steps over the new buffer before the first step
  double new_sample_ratio = 0.05;  ///< share of a batch's starts perturbed by 0.01·N
  double energy_reg_weight = 0.001;  ///< α of α(mean E(data)² + mean E(neg)²)
  double max_grad_norm = 0;        ///< clip the gradient's norm to this (0: no clipping)
};

/// What one training step measured.
struct cd_report {
  std::int64_t step = 0;        ///< steps done, this one included
  double loss = 0;              ///< L, the regulariser included
  double data_energy = 0;       ///< mean E over the data batch
  double negative_energy = 0;   ///< mean E over the negatives
  double grad_norm = 0;         ///< ‖∂L/∂θ‖ before clipping
  double seconds = 0;           ///< wall time of the step (sampling, gradient, update)
  /// mean E(data) − mean E(neg): the CD part of the loss; it should settle near a small value,
  /// not fall without end.
  double gap() const { return data_energy - negative_energy; }
};

/// Contrastive divergence for the network `Net` (an `mlp`) whose parameters are `weights`
/// (updated in place), on `data` (rows of Net::dim values; a view: the data must outlive the
/// trainer). See the file comment.
template <class Net, class Optimizer = adam, class Backend = backend::cpu>
class contrastive_divergence {
 public:
  using T = typename Net::value_type;
  static constexpr int D = Net::dim;

  contrastive_divergence(Net const& net, mlp_weights<T>& weights, data_view<T> data, cd_options const& o = {}, Optimizer opt = {},
                         std::uint64_t seed = 0, Backend const& backend = {})
      : net_(net), weights_(weights), data_(data), o_(o), opt_(opt), seed_(seed), backend_(backend) {
    std::string const who = "ember::contrastive_divergence: ";
    if (net.weight[0].data != weights.weight_view(0).data)
      throw std::invalid_argument(who + "the network does not view these weights (build it from them: Net(weights))");
    if (data.cols != D)
      throw std::invalid_argument(who + "the data has " + std::to_string(data.cols) + " columns; the network takes " + std::to_string(D));
    if (data.rows < 1) throw std::invalid_argument(who + "the data has no rows");
    if (data.space != memory_space::host) throw std::invalid_argument(who + "the data must be in host memory");
    for (std::int64_t r = 0; r < data.rows; ++r)
      for (int d = 0; d < D; ++d)
        if (!std::isfinite(double(data(r, d))))
          throw std::invalid_argument(who + "data row " + std::to_string(r) + " is not finite");
    if (o.batch < 2) throw std::invalid_argument(who + ".batch must be at least 2");
    if (o.k_steps < 1) throw std::invalid_argument(who + ".k_steps must be at least 1");
    if (!(o.step_size > 0) || !std::isfinite(o.step_size)) throw std::invalid_argument(who + ".step_size must be positive and finite");
    if (!(o.noise_scale > 0) || !std::isfinite(o.noise_scale)) throw std::invalid_argument(who + ".noise_scale must be positive and finite");
    if (o.persistent && o.buffer_size < 1) throw std::invalid_argument(who + ".buffer_size must be at least 1");
    if (o.init_steps < 0) throw std::invalid_argument(who + ".init_steps must not be negative");
    if (!(o.new_sample_ratio >= 0 && o.new_sample_ratio <= 1)) throw std::invalid_argument(who + ".new_sample_ratio must be in [0, 1]");
    if (!(o.energy_reg_weight >= 0)) throw std::invalid_argument(who + ".energy_reg_weight must not be negative");
    if (!(o.max_grad_norm >= 0)) throw std::invalid_argument(who + ".max_grad_norm must not be negative");
  }

  /// One training step (see the file comment).
  cd_report step() {
    auto const t0 = std::chrono::steady_clock::now();
    std::size_t const B = std::size_t(o_.batch);
    if (o_.persistent && buffer_.empty()) init_buffer();
    auto const draw = [&](std::size_t i, int p) { return make_chain_rng<double>(seed_, std::uint32_t(i), std::uint32_t(step_)).template uniform_from<4>(user(p), 0); };

    // 1. The data batch.
    std::vector<T> x(B * D);
    for (std::size_t i = 0; i < B; ++i) {
      auto const r = std::min<std::int64_t>(std::int64_t(draw(i, 0)[0] * double(data_.rows)), data_.rows - 1);
      for (int d = 0; d < D; ++d) x[i * D + std::size_t(d)] = data_(r, d);
    }
    // 2. The starts.
    std::vector<vec<T, D>> starts(B);
    if (!o_.persistent) {
      for (std::size_t i = 0; i < B; ++i)
        for (int d = 0; d < D; ++d) starts[i][d] = x[i * D + std::size_t(d)];
    } else {
      std::size_t const S = buffer_.size();
      if (S < B) {
        for (std::size_t i = 0; i < B; ++i) starts[i] = buffer_[std::min(S - 1, std::size_t(draw(i, 1)[0] * double(S)))];
      } else {
        // Stratified: one state from each of B strata of ⌊S/B⌋ or ⌈S/B⌉ states, the strata
        // rotated by a uniform start so that every state can be read (TorchEBM's strata of
        // ⌊S/B⌋ from 0 never read the last S mod B states).
        std::size_t const rot = std::min(S - 1, std::size_t(draw(B, 1)[1] * double(S)));
        for (std::size_t i = 0; i < B; ++i) {
          std::size_t const lo = i * S / B, hi = (i + 1) * S / B;
          starts[i] = buffer_[(rot + lo + std::min(hi - lo - 1, std::size_t(draw(i, 1)[0] * double(hi - lo)))) % S];
        }
      }
      if (o_.new_sample_ratio > 0) {
        std::size_t const fresh = std::max<std::size_t>(1, std::size_t(double(B) * o_.new_sample_ratio));
        std::vector<std::size_t> perm(B);
        for (std::size_t i = 0; i < B; ++i) perm[i] = i;
        for (std::size_t i = 0; i < fresh; ++i) {  // the first `fresh` of a Fisher–Yates shuffle
          std::size_t const j = i + std::min(B - i - 1, std::size_t(draw(i, 2)[0] * double(B - i)));
          std::swap(perm[i], perm[j]);
          auto const z = make_chain_rng<double>(seed_, std::uint32_t(i), std::uint32_t(step_)).template normal<D, false>(user(3));
          for (int d = 0; d < D; ++d) starts[perm[i]][d] = T(double(starts[perm[i]][d]) + 0.01 * z[d]);
        }
      }
    }
    // 3. The negatives.
    std::vector<T> neg = langevin(starts, o_.k_steps, stream_seed(1));
    // 5. The loss and its gradient (before the buffer changes, so a failed step changes nothing).
    std::vector<T> grad(weights_.parameters().size(), T(0)), ed(B), en(B);
    double const inv = 1.0 / double(B), two_a = 2 * o_.energy_reg_weight * inv;
    net_.add_param_grad(std::span<T const>(x), [&](std::size_t, T u) { return T(inv + two_a * double(u)); }, std::span<T>(grad), std::span<T>(ed));
    net_.add_param_grad(std::span<T const>(neg), [&](std::size_t, T u) { return T(-inv + two_a * double(u)); }, std::span<T>(grad), std::span<T>(en));
    cd_report rep;
    double sd = 0, sn = 0, sd2 = 0, sn2 = 0;
    for (std::size_t i = 0; i < B; ++i) sd += double(ed[i]), sn += double(en[i]), sd2 += double(ed[i]) * double(ed[i]), sn2 += double(en[i]) * double(en[i]);
    rep.data_energy = sd * inv;
    rep.negative_energy = sn * inv;
    rep.loss = rep.data_energy - rep.negative_energy + o_.energy_reg_weight * (sd2 + sn2) * inv;
    rep.grad_norm = clip_grad_norm(std::span<T>(grad), o_.max_grad_norm);
    if (!std::isfinite(rep.loss) || !std::isfinite(rep.grad_norm))
      throw std::runtime_error("ember::contrastive_divergence: step " + std::to_string(step_ + 1) + ": the loss (" + std::to_string(rep.loss) +
                               ") or its gradient (norm " + std::to_string(rep.grad_norm) +
                               ") is not finite: the energy diverged (a smaller learning rate, step size or a gradient clip may help); the "
                               "weights are as before this step");
    // 4. The buffer, first in, first out.
    if (o_.persistent) {
      std::size_t const S = buffer_.size();
      for (std::size_t i = B > S ? B - S : 0; i < B; ++i) {
        for (int d = 0; d < D; ++d) buffer_[ptr_][d] = neg[i * D + std::size_t(d)];
        ptr_ = (ptr_ + 1) % S;
      }
      if (B >= S) ptr_ = 0;
    }
    optimizer_step(opt_, state_, weights_.parameters(), std::span<T const>(grad));
    ++step_;
    rep.step = step_;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }

  /// Draws `n` samples of the current energy: `steps` Langevin steps (the trainer's η and s) from
  /// starts uniform over the data's bounding box, widened by a fifth on each side; rows of D.
  std::vector<T> sample_model(std::int64_t n, int steps, std::uint64_t seed) const {
    if (n < 1 || steps < 1) throw std::invalid_argument("ember::contrastive_divergence::sample_model: needs n >= 1 and steps >= 1");
    double lo[D], hi[D];
    for (int d = 0; d < D; ++d) {
      lo[d] = hi[d] = double(data_(0, d));
      for (std::int64_t r = 1; r < data_.rows; ++r) lo[d] = std::min(lo[d], double(data_(r, d))), hi[d] = std::max(hi[d], double(data_(r, d)));
      double const w = (hi[d] - lo[d]) / 5 + 1e-3;
      lo[d] -= w, hi[d] += w;
    }
    std::vector<vec<T, D>> starts(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      auto const u = make_chain_rng<double>(seed, std::uint32_t(i), 0).template uniform_from<D>(user(4), 0);
      for (int d = 0; d < D; ++d) starts[std::size_t(i)][d] = T(lo[d] + (hi[d] - lo[d]) * u[d]);
    }
    return langevin(starts, steps, seed);
  }

  /// Writes the training state: θ, the optimiser's state, the replay buffer and its pointer, the
  /// step count, and the options, optimiser settings and seed a continuation must share.
  void save(std::string const& path) const {
    npz_writer z(path);
    auto const th = weights_.parameters();
    std::size_t const nt[1] = {th.size()}, nm[1] = {state_.m.size()}, nv[1] = {state_.v.size()},
                      nb[2] = {buffer_.size(), std::size_t(D)};
    z.add("theta", th.data(), std::span<std::size_t const>(nt));
    z.add("optimizer_m", state_.m.data(), std::span<std::size_t const>(nm));
    z.add("optimizer_v", state_.v.data(), std::span<std::size_t const>(nv));
    z.add("buffer", buffer_.empty() ? nullptr : buffer_[0].v, std::span<std::size_t const>(nb));
    std::int64_t const ints[] = {step_, std::int64_t(ptr_), state_.steps};
    std::size_t const ni[1] = {std::size(ints)};
    z.add("counters", ints, std::span<std::size_t const>(ni));
    auto const fp = fingerprint();
    std::size_t const nf[1] = {fp.size()};
    z.add("settings", fp.data(), std::span<std::size_t const>(nf));
    z.close();
  }

  /// Continues from a file `save` wrote for a trainer of the same network, options, optimiser
  /// and seed; refuses any other file with one sentence and changes nothing then.
  void load(std::string const& path) {
    auto const a = read_npz(path);
    std::string const who = "ember::contrastive_divergence::load: " + path + " ";
    for (char const* k : {"theta", "optimizer_m", "optimizer_v", "buffer", "counters", "settings"})
      if (!a.count(k)) throw std::invalid_argument(who + "has no '" + k + "' (not a training checkpoint of this version)");
    // Everything read and checked first, so that a refused file changes nothing.
    auto theta = a.at("theta").as<T>();
    auto m = a.at("optimizer_m").as<double>(), v = a.at("optimizer_v").as<double>();
    auto const c = a.at("counters").as<std::int64_t>();
    auto const buf = a.at("buffer").as<T>();
    auto const settings = a.at("settings").as<double>();
    std::size_t const P = weights_.parameters().size();
    if (theta.size() != P)
      throw std::invalid_argument(who + "holds " + std::to_string(theta.size()) + " parameters; this network has " + std::to_string(P));
    if (settings != fingerprint())
      throw std::invalid_argument(who + "was written by a trainer with other options, another optimiser or its settings, or another seed");
    bool const fresh = m.empty() && v.empty();
    bool const adam_state = std::is_same_v<Optimizer, adam>;
    if (!fresh && (m.size() != P || v.size() != (adam_state ? P : 0)))
      throw std::invalid_argument(who + "has an optimiser state of the wrong size");
    if (c.size() != 3 || c[0] < 0 || c[2] < 0) throw std::invalid_argument(who + "has damaged counters");
    auto const& shape = a.at("buffer").shape;
    std::size_t const rows = shape.size() == 2 ? shape[0] : 0;
    if (shape.size() != 2 || shape[1] != std::size_t(D) || (rows != 0 && rows != std::size_t(o_.buffer_size)) || (rows == 0 && c[1] != 0) ||
        (rows != 0 && std::size_t(c[1]) >= rows))
      throw std::invalid_argument(who + "has a replay buffer of another shape, or a pointer outside it");
    std::copy(theta.begin(), theta.end(), weights_.parameters().begin());
    state_.m = std::move(m);
    state_.v = std::move(v);
    state_.steps = c[2];
    buffer_.assign(rows, vec<T, D>{});
    for (std::size_t i = 0; i < rows; ++i)
      for (int d = 0; d < D; ++d) buffer_[i][d] = buf[i * D + std::size_t(d)];
    step_ = c[0];
    ptr_ = std::size_t(c[1]);
  }

  std::int64_t steps_done() const { return step_; }
  /// The replay buffer (empty before the first persistent step).
  std::vector<vec<T, D>> const& buffer() const { return buffer_; }
  optimizer_state const& optimizer() const { return state_; }

 private:
  Net net_;
  mlp_weights<T>& weights_;
  data_view<T> data_;
  cd_options o_;
  Optimizer opt_;
  std::uint64_t seed_;
  Backend backend_;
  optimizer_state state_;
  std::vector<vec<T, D>> buffer_;
  std::size_t ptr_ = 0;
  std::int64_t step_ = 0;

  // The trainer's own draws: Philox under its seed, above the purposes kernels use (user + 0..15,
  // under the runs' own keys anyway).
  static purpose user(int k) { return purpose(std::uint32_t(purpose::user) + 32 + std::uint32_t(k)); }
  // What must agree for a checkpoint to continue this trainer: the options, the optimiser and its
  // settings, the seed (split in two doubles, exactly).
  std::vector<double> fingerprint() const {
    std::vector<double> f{double(o_.batch), double(o_.k_steps), o_.step_size, o_.noise_scale, double(o_.persistent), double(o_.buffer_size),
                          double(o_.init_steps), o_.new_sample_ratio, o_.energy_reg_weight, o_.max_grad_norm,
                          double(seed_ >> 32), double(seed_ & 0xFFFFFFFFu)};
    if constexpr (std::is_same_v<Optimizer, adam>)
      f.insert(f.end(), {1.0, opt_.lr, opt_.beta1, opt_.beta2, opt_.eps, opt_.weight_decay});
    else
      f.insert(f.end(), {2.0, opt_.lr, opt_.momentum, opt_.weight_decay});
    return f;
  }
  std::uint64_t stream_seed(int k) const { return seed_ * 0x9E3779B97F4A7C15ull + std::uint64_t(step_) * 4 + std::uint64_t(k); }

  // `steps` Langevin steps from `starts` (x ← x − η∇E + s√(2η)ξ as ULA on E/s² with step ηs²);
  // the final states, rows of D. A chain that left the finite numbers stops training here.
  std::vector<T> langevin(std::vector<vec<T, D>> const& starts, int steps, std::uint64_t seed) const {
    double const s2 = o_.noise_scale * o_.noise_scale;
    auto const kernel = ula(net_ / s2, {.step_size = o_.step_size * s2});
    auto const r = sample(kernel, {.chains = std::int64_t(starts.size()), .steps = steps, .seed = seed, .init = starts, .progress = false}, backend_);
    // A chain whose next state was not finite (position, energy or gradient) is frozen at its
    // last finite state and counted: such a negative would be silently wrong, so training stops.
    if (r.divergent_chains() > 0)
      throw std::runtime_error("ember::contrastive_divergence: step " + std::to_string(step_ + 1) + ": " + std::to_string(r.divergent_chains()) +
                               " of " + std::to_string(starts.size()) +
                               " Langevin chains left the finite numbers (a smaller step size, or an energy that grows outside the data, "
                               "may help); the weights are as before this step");
    std::vector<T> out(starts.size() * D);
    for (std::size_t i = 0; i < starts.size(); ++i) {
      auto const f = r.final_state(std::int64_t(i));
      for (int d = 0; d < D; ++d) out[i * D + std::size_t(d)] = f[d];
    }
    return out;
  }

  void init_buffer() {
    std::vector<vec<T, D>> b(static_cast<std::size_t>(o_.buffer_size));
    for (std::size_t i = 0; i < b.size(); ++i) {
      auto const z = make_chain_rng<double>(seed_, std::uint32_t(i), 0xFFFFFFFFu).template normal<D, false>(user(5));
      for (int d = 0; d < D; ++d) b[i][d] = T(0.01 * z[d]);
    }
    if (o_.init_steps > 0) {
      auto const moved = langevin(b, o_.init_steps, stream_seed(2));
      for (std::size_t i = 0; i < b.size(); ++i)
        for (int d = 0; d < D; ++d) b[i][d] = moved[i * D + std::size_t(d)];
    }
    buffer_ = std::move(b);
    ptr_ = 0;
  }
};

}  // namespace ember
