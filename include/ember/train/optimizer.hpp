#pragma once
/// \file
/// Optimisers over a flat parameter vector θ (an `mlp_weights::parameters()`), as `torch.optim`
/// defines them with their defaults:
///  - `adam{.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0}`:
///    m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², θ ← θ − lr·(m/(1 − β₁ᵗ)) / (√(v/(1 − β₂ᵗ)) + ε),
///    with weight decay added to g (L2, not AdamW);
///  - `sgd{.lr = 1e-2, .momentum = 0, .weight_decay = 0}`: b ← μb + g (b = g at the first step),
///    θ ← θ − lr·b.
/// The state (moments, step count) is an `optimizer_state` of doubles, kept by the trainer and
/// saved in its checkpoints. Also here: `clip_grad_norm`, torch.nn.utils.clip_grad_norm_.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

struct adam {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
};
struct sgd {
  double lr = 1e-2, momentum = 0, weight_decay = 0;
};

/// An optimiser's state for θ of `n` parameters: first and second moments (Adam), or the
/// momentum buffer (SGD, in `m`), and the number of steps taken.
struct optimizer_state {
  std::vector<double> m, v;
  std::int64_t steps = 0;
};

namespace detail {
inline void require_rate(double lr, char const* who) {
  if (!(lr > 0) || !std::isfinite(lr)) throw std::invalid_argument(std::string(who) + ": the learning rate must be positive and finite");
}
// θ and g of one length, and a state that is new (empty) or of that length in the moments it uses.
inline void require_sizes(std::size_t theta, std::size_t g, std::vector<double> const& m, std::vector<double> const* v, char const* who) {
  if (g != theta)
    throw std::invalid_argument(std::string(who) + ": a gradient of " + std::to_string(g) + " entries for " + std::to_string(theta) + " parameters");
  bool const fresh = m.empty() && (!v || v->empty());
  if (!fresh && (m.size() != theta || (v && v->size() != theta)))
    throw std::invalid_argument(std::string(who) + ": an optimizer_state for another number of parameters (or another optimiser)");
}
}  // namespace detail

/// One Adam step: updates θ in place from its gradient g.
template <class T>
void optimizer_step(adam const& o, optimizer_state& s, std::span<T> theta, std::span<T const> g) {
  detail::require_rate(o.lr, "ember::adam");
  detail::require_sizes(theta.size(), g.size(), s.m, &s.v, "ember::adam");
  if (!(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1 && o.eps > 0))
    throw std::invalid_argument("ember::adam: needs 0 <= beta1, beta2 < 1 and eps > 0");
  if (s.m.empty()) s.m.assign(theta.size(), 0.0), s.v.assign(theta.size(), 0.0);
  ++s.steps;
  double const c1 = 1 - std::pow(o.beta1, double(s.steps)), c2 = 1 - std::pow(o.beta2, double(s.steps));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    double const gi = double(g[i]) + o.weight_decay * double(theta[i]);
    s.m[i] = o.beta1 * s.m[i] + (1 - o.beta1) * gi;
    s.v[i] = o.beta2 * s.v[i] + (1 - o.beta2) * gi * gi;
    theta[i] = T(double(theta[i]) - o.lr * (s.m[i] / c1) / (std::sqrt(s.v[i] / c2) + o.eps));
  }
}

/// One SGD step (with momentum if asked).
template <class T>
void optimizer_step(sgd const& o, optimizer_state& s, std::span<T> theta, std::span<T const> g) {
  detail::require_rate(o.lr, "ember::sgd");
  detail::require_sizes(theta.size(), g.size(), s.m, nullptr, "ember::sgd");
  if (!(o.momentum >= 0)) throw std::invalid_argument("ember::sgd: the momentum must be non-negative");
  bool const first = s.m.empty();
  if (first) s.m.assign(theta.size(), 0.0);
  ++s.steps;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    double gi = double(g[i]) + o.weight_decay * double(theta[i]);
    if (o.momentum > 0) gi = s.m[i] = first ? gi : o.momentum * s.m[i] + gi;
    theta[i] = T(double(theta[i]) - o.lr * gi);
  }
}

/// Scales g so that its Euclidean norm is at most `max_norm` (nothing if it is already); returns
/// the norm before. A non-finite norm is returned as it is and g is left alone. (torch's
/// clip_grad_norm_ divides by norm + 10⁻⁶; this scales to exactly `max_norm`.)
template <class T>
double clip_grad_norm(std::span<T> g, double max_norm) {
  double s = 0;
  for (T x : g) s += double(x) * double(x);
  double const norm = std::sqrt(s);
  if (std::isfinite(norm) && max_norm > 0 && norm > max_norm)
    for (T& x : g) x = T(double(x) * (max_norm / norm));
  return norm;
}

}  // namespace ember
