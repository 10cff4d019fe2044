#pragma once
/// \file
/// Training a neural energy by denoising score matching (Vincent 2011), as TorchEBM's
/// `DenoisingScoreMatching` (0.8.9) computes it, and with several noise levels (Song & Ermon
/// 2019's weighting). One `step()`:
///  1. a batch of B data points xᵢ drawn uniformly with replacement;
///  2. for each, a noise level σᵢ (the one of `.sigmas`, or one of several drawn uniformly) and
///     noise εᵢ ~ N(0, I): x̃ᵢ = xᵢ + σᵢεᵢ, target tᵢ = εᵢ/σᵢ (the noisy density's −∇log);
///  3. the loss L = ½ (1/B) Σᵢ λᵢ‖∇ₓE(x̃ᵢ) − tᵢ‖², λᵢ = 1 with one level and σᵢ² with several
///     (each level's term then of comparable size), and its gradient in θ through
///     `mlp::add_param_grad_of_input_grad` with directions λᵢ(∇ₓE(x̃ᵢ) − tᵢ)/B;
///  4. the gradient clipped to `max_grad_norm` if set, one optimiser step on the weights.
/// No sampler runs in training: the energy learns the data smoothed by σ, whose samples (by
/// Langevin steps well below σ², e.g. `sample(ula(net, {.step_size = σ²/10}), …)`) approach
/// the data as σ falls. Every draw is Philox under (seed, step, index), so a run continued from
/// `save`/`load` gives the same weights bit for bit; a loss or gradient that is not finite stops
/// training with an exception naming the step, the weights as before it.

#include <ember/core/rng.hpp>
#include <ember/data/data_view.hpp>
#include <ember/energy/mlp.hpp>
#include <ember/io/npz.hpp>
#include <ember/train/optimizer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember {

struct dsm_options {
  std::int64_t batch = 256;
  /// Noise levels σ: one (TorchEBM's default 0.01) or several, each point drawing one.
  std::vector<double> sigmas = {0.01};
  double max_grad_norm = 0;  ///< clip the gradient's norm to this (0: no clipping)
};

struct dsm_report {
  std::int64_t step = 0;  ///< steps done, this one included
  double loss = 0;        ///< L of the batch
  double grad_norm = 0;   ///< ‖∂L/∂θ‖ before clipping
  double seconds = 0;     ///< wall time of the step
};

/// Denoising score matching for the network `Net` (an `mlp`) whose parameters are `weights`
/// (updated in place), on `data` (a host view that must outlive the trainer).
template <class Net, class Optimizer = adam>
class denoising_score_matching {
 public:
  using T = typename Net::value_type;
  static constexpr int D = Net::dim;

  denoising_score_matching(Net const& net, mlp_weights<T>& weights, data_view<T> data, dsm_options o = {}, Optimizer opt = {},
                           std::uint64_t seed = 0)
      : net_(net), weights_(weights), data_(data), o_(std::move(o)), opt_(opt), seed_(seed) {
    std::string const who = "ember::denoising_score_matching: ";
    if (net.weight[0].data != weights.weight_view(0).data)
      throw std::invalid_argument(who + "the network does not view these weights (build it from them: Net(weights))");
    if (data.cols != D)
      throw std::invalid_argument(who + "the data has " + std::to_string(data.cols) + " columns; the network takes " + std::to_string(D));
    if (data.rows < 1 || data.space != memory_space::host) throw std::invalid_argument(who + "the data must be at least one row in host memory");
    for (std::int64_t r = 0; r < data.rows; ++r)
      for (int d = 0; d < D; ++d)
        if (!std::isfinite(double(data(r, d)))) throw std::invalid_argument(who + "data row " + std::to_string(r) + " is not finite");
    if (o_.batch < 1) throw std::invalid_argument(who + ".batch must be at least 1");
    if (o_.sigmas.empty()) throw std::invalid_argument(who + ".sigmas needs at least one noise level");
    for (double s : o_.sigmas)
      if (!(s > 0) || !std::isfinite(s)) throw std::invalid_argument(who + "every noise level must be positive and finite");
    if (!(o_.max_grad_norm >= 0)) throw std::invalid_argument(who + ".max_grad_norm must not be negative");
  }

  dsm_report step() {
    auto const t0 = std::chrono::steady_clock::now();
    std::size_t const B = std::size_t(o_.batch), L = o_.sigmas.size();
    std::vector<T> xt(B * D), target(B * D), lambda(B);
    for (std::size_t i = 0; i < B; ++i) {
      auto const rng = make_chain_rng<double>(seed_, std::uint32_t(i), std::uint32_t(step_));
      auto const u = rng.template uniform_from<4>(user(0), 0);
      auto const eps = rng.template normal<D, false>(user(1));
      std::int64_t const r = std::min<std::int64_t>(std::int64_t(u[0] * double(data_.rows)), data_.rows - 1);
      double const sigma = o_.sigmas[std::min(L - 1, std::size_t(u[1] * double(L)))];
      lambda[i] = T(L > 1 ? sigma * sigma : 1.0);
      for (int d = 0; d < D; ++d) {
        xt[i * D + std::size_t(d)] = T(double(data_(r, d)) + sigma * eps[d]);
        target[i * D + std::size_t(d)] = T(eps[d] / sigma);
      }
    }
    std::vector<T> g(B * D), dir(B * D), grad(weights_.parameters().size(), T(0));
    net_.values_and_grads(std::span<T const>(xt), std::span<T>(g));
    dsm_report rep;
    double loss = 0;
    for (std::size_t i = 0; i < B; ++i)
      for (int d = 0; d < D; ++d) {
        std::size_t const k = i * D + std::size_t(d);
        double const res = double(g[k]) - double(target[k]);
        loss += double(lambda[i]) * res * res;
        dir[k] = T(double(lambda[i]) * res / double(B));
      }
    rep.loss = 0.5 * loss / double(B);
    net_.add_param_grad_of_input_grad(std::span<T const>(xt), std::span<T const>(dir), std::span<T>(grad));
    rep.grad_norm = clip_grad_norm(std::span<T>(grad), o_.max_grad_norm);
    if (!std::isfinite(rep.loss) || !std::isfinite(rep.grad_norm))
      throw std::runtime_error("ember::denoising_score_matching: step " + std::to_string(step_ + 1) + ": the loss (" + std::to_string(rep.loss) +
                               ") or its gradient (norm " + std::to_string(rep.grad_norm) +
                               ") is not finite (a smaller learning rate or a gradient clip may help); the weights are as before this step");
    optimizer_step(opt_, state_, weights_.parameters(), std::span<T const>(grad));
    ++step_;
    rep.step = step_;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }

  /// Writes θ, the optimiser's state, the step count and the settings a continuation must share.
  void save(std::string const& path) const {
    npz_writer z(path);
    auto const th = weights_.parameters();
    std::size_t const nt[1] = {th.size()}, nm[1] = {state_.m.size()}, nv[1] = {state_.v.size()};
    z.add("theta", th.data(), std::span<std::size_t const>(nt));
    z.add("optimizer_m", state_.m.data(), std::span<std::size_t const>(nm));
    z.add("optimizer_v", state_.v.data(), std::span<std::size_t const>(nv));
    std::int64_t const ints[] = {step_, state_.steps};
    std::size_t const ni[1] = {std::size(ints)};
    z.add("counters", ints, std::span<std::size_t const>(ni));
    auto const fp = fingerprint();
    std::size_t const nf[1] = {fp.size()};
    z.add("settings", fp.data(), std::span<std::size_t const>(nf));
    z.close();
  }

  /// Continues from a file `save` wrote for a trainer of the same network, options, optimiser and
  /// seed; refuses any other with one sentence and changes nothing then.
  void load(std::string const& path) {
    auto const a = read_npz(path);
    std::string const who = "ember::denoising_score_matching::load: " + path + " ";
    for (char const* k : {"theta", "optimizer_m", "optimizer_v", "counters", "settings"})
      if (!a.count(k)) throw std::invalid_argument(who + "has no '" + k + "' (not a score-matching checkpoint)");
    auto theta = a.at("theta").as<T>();
    auto m = a.at("optimizer_m").as<double>(), v = a.at("optimizer_v").as<double>();
    auto const c = a.at("counters").as<std::int64_t>();
    std::size_t const P = weights_.parameters().size();
    if (theta.size() != P)
      throw std::invalid_argument(who + "holds " + std::to_string(theta.size()) + " parameters; this network has " + std::to_string(P));
    if (a.at("settings").as<double>() != fingerprint())
      throw std::invalid_argument(who + "was written by a trainer with other options, another optimiser or its settings, or another seed");
    bool const adam_state = std::is_same_v<Optimizer, adam>;
    if (!(m.empty() && v.empty()) && (m.size() != P || v.size() != (adam_state ? P : 0)))
      throw std::invalid_argument(who + "has an optimiser state of the wrong size");
    if (c.size() != 2 || c[0] < 0 || c[1] < 0) throw std::invalid_argument(who + "has damaged counters");
    std::copy(theta.begin(), theta.end(), weights_.parameters().begin());
    state_.m = std::move(m);
    state_.v = std::move(v);
    state_.steps = c[1];
    step_ = c[0];
  }

  std::int64_t steps_done() const { return step_; }

 private:
  Net net_;
  mlp_weights<T>& weights_;
  data_view<T> data_;
  dsm_options o_;
  Optimizer opt_;
  std::uint64_t seed_;
  optimizer_state state_;
  std::int64_t step_ = 0;

  static purpose user(int k) { return purpose(std::uint32_t(purpose::user) + 48 + std::uint32_t(k)); }
  std::vector<double> fingerprint() const {
    std::vector<double> f{3.0, double(o_.batch), o_.max_grad_norm, double(seed_ >> 32), double(seed_ & 0xFFFFFFFFu), double(o_.sigmas.size())};
    f.insert(f.end(), o_.sigmas.begin(), o_.sigmas.end());
    if constexpr (std::is_same_v<Optimizer, adam>)
      f.insert(f.end(), {1.0, opt_.lr, opt_.beta1, opt_.beta2, opt_.eps, opt_.weight_decay});
    else
      f.insert(f.end(), {2.0, opt_.lr, opt_.momentum, opt_.weight_decay});
    return f;
  }
};

}  // namespace ember
