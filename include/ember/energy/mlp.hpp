#pragma once
/// \file
/// Neural energies: `mlp<T, In, Act, H₁, …, H_L>` is the energy U: ℝ^In → ℝ of a multilayer
/// perceptron with L hidden dense layers of widths H₁ … H_L (fixed at compile time), activation
/// `Act` (energy/activation.hpp, `ember::nn`) after each, and a dense output layer of width 1:
///
///     h₀ = x,   hₗ = φ(Wₗ hₗ₋₁ + bₗ) [+ hₗ₋₁ with skip connections],   U(x) = w_out·h_L + b_out,
///
/// as `torch.nn.Sequential(Linear, Act, …, Linear(H_L, 1))` computes it. Its parameters live in an
/// `mlp_weights<T>` (owned, read from a PyTorch `state_dict` saved as .npz), which the energy
/// views and must outlive (as a `dataset` outlives a regression; docs/neural.md).
///
/// Cost per chain: U is Σₗ Hₗ₋₁Hₗ + H_L multiply-adds and L·H activations; ∇U (backpropagation
/// through the layers, with the activations' slopes kept from the forward pass) adds the same
/// multiply-adds again, so a gradient costs about two values whatever In is. Chains in a SIMD
/// batch share the weights: each weight is loaded (broadcast) once per batch, and a layer's
/// outputs are computed `block` at a time, so one load of a batch's hidden unit feeds `block`
/// multiply-adds held in registers.
///
/// On a GPU a chain's network is evaluated by a team of threads (core/team.hpp; `backend::cuda`
/// gives an mlp a team of up to 32 automatically, one member per four units of its widest layer):
/// member r owns units r, r + W, r + 2W, … of every hidden layer. A layer's forward pass multiplies
/// each member's own inputs by their weights (consecutive members, consecutive weights of a row:
/// coalesced loads) into partial sums that a reduce-scatter of shuffles completes in the unit's
/// owner; backwards, each ∂/∂a is broadcast by shuffle and the members add Wᵀ's products for their
/// own inputs. The energy and the input gradient reach every member with the same bits (butterfly
/// sums, an all-gather). One thread per chain kept a warp per 32 chains with its activations in
/// local memory; a team keeps a warp per chain busy (bench/results/2026-11-29-gpu-h200.md). So in
/// a team every member must evaluate the network together, on the same input: an mlp called from
/// code whose members do different work (inside a model's `add_rows`, say) is not supported.
///
/// `add_param_grad` gives ∂U/∂θ summed over a set of points with coefficients (what contrastive
/// divergence and score matching train with), in the layout of `mlp_weights::parameters()`.
/// Models `DifferentiableEnergy`.

#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/math.hpp>
#include <ember/core/team.hpp>
#include <ember/core/vec.hpp>
#include <ember/data/data_view.hpp>
#include <ember/energy/activation.hpp>
#include <ember/energy/detail/check.hpp>
#include <ember/io/npz.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(__CUDACC__)
#include <ember/core/simd.hpp>
#endif

namespace ember {

/// One dense layer's parameters as `torch.nn.Linear` holds them: `weight` out × in, row-major,
/// and `bias` of length out (empty: no bias, i.e. zeros).
template <std::floating_point T>
struct dense_layer {
  std::string name;  ///< for messages: the state_dict prefix ("net.0")
  int out = 0, in = 0;
  std::vector<T> weight, bias;
};

/// The parameters θ of a dense network, owned, in one flat vector: W₀, b₀, W₁, b₁, … (each
/// weight out × in, row-major), so an optimiser updates θ as one array and
/// `mlp::add_param_grad` writes ∂U/∂θ in the same order. An `mlp` energy views these values: a
/// change to `parameters()` is seen by every energy built from them, and they must outlive it.
template <std::floating_point T>
class mlp_weights {
 public:
  /// A layer's name, shape and where its weight and bias start in `parameters()`.
  struct layer {
    std::string name;
    int out = 0, in = 0;
    std::size_t weight = 0, bias = 0;
  };

  mlp_weights() = default;

  /// From layers in the order the network applies them. Throws std::invalid_argument if a
  /// layer's sizes disagree with its shape, a value is not finite, or a layer's input width is
  /// not the previous layer's output width.
  explicit mlp_weights(std::vector<dense_layer<T>> const& layers) {
    if (layers.empty()) throw std::invalid_argument("ember::mlp_weights: no layers");
    for (std::size_t l = 0; l < layers.size(); ++l) {
      auto const& d = layers[l];
      std::string const who = "ember::mlp_weights: layer " + std::to_string(l) + " ('" + d.name + "')";
      if (d.out <= 0 || d.in <= 0) throw std::invalid_argument(who + " has shape " + shape(d.out, d.in) + "; both must be positive");
      if (d.weight.size() != std::size_t(d.out) * std::size_t(d.in))
        throw std::invalid_argument(who + " has " + std::to_string(d.weight.size()) + " weights; its shape " + shape(d.out, d.in) +
                                    " needs " + std::to_string(std::size_t(d.out) * std::size_t(d.in)));
      if (!d.bias.empty() && d.bias.size() != std::size_t(d.out))
        throw std::invalid_argument(who + " has " + std::to_string(d.bias.size()) + " biases; its " + std::to_string(d.out) +
                                    " outputs need as many (or none)");
      if (l > 0 && d.in != layers[l - 1].out)
        throw std::invalid_argument(who + " takes " + std::to_string(d.in) + " inputs, but layer " + std::to_string(l - 1) + " ('" +
                                    layers[l - 1].name + "') gives " + std::to_string(layers[l - 1].out));
      layer s{d.name, d.out, d.in, theta_.size(), theta_.size() + d.weight.size()};
      for (std::size_t i = 0; i < d.weight.size(); ++i)
        detail::require_finite(d.weight[i], "ember::mlp_weights", [&] { return "layer " + std::to_string(l) + "'s weight " + std::to_string(i); });
      for (std::size_t i = 0; i < d.bias.size(); ++i)
        detail::require_finite(d.bias[i], "ember::mlp_weights", [&] { return "layer " + std::to_string(l) + "'s bias " + std::to_string(i); });
      theta_.insert(theta_.end(), d.weight.begin(), d.weight.end());
      if (d.bias.empty())
        theta_.insert(theta_.end(), std::size_t(d.out), T(0));
      else
        theta_.insert(theta_.end(), d.bias.begin(), d.bias.end());
      layers_.push_back(std::move(s));
    }
  }

  /// Layers of widths `widths` (input first, output last), every weight and bias uniform in
  /// ±1/√in as `torch.nn.Linear` initialises them (other random numbers than torch's: a
  /// SplitMix64 stream from `seed`, the same on every machine).
  static mlp_weights uniform(std::vector<int> const& widths, std::uint64_t seed) {
    if (widths.size() < 2) throw std::invalid_argument("ember::mlp_weights::uniform: needs at least two widths (input and output)");
    std::vector<dense_layer<T>> layers;
    std::uint64_t s = seed;
    auto next = [&s] {  // SplitMix64, 53 bits in [0, 1)
      std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return double((z ^ (z >> 31)) >> 11) * 0x1p-53;
    };
    for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
      dense_layer<T> d{std::to_string(l), widths[l + 1], widths[l], {}, {}};
      if (d.out <= 0 || d.in <= 0) throw std::invalid_argument("ember::mlp_weights::uniform: every width must be positive");
      double const bound = 1 / std::sqrt(double(d.in));
      d.weight.resize(std::size_t(d.out) * std::size_t(d.in));
      d.bias.resize(std::size_t(d.out));
      for (auto& w : d.weight) w = T(bound * (2 * next() - 1));
      for (auto& b : d.bias) b = T(bound * (2 * next() - 1));
      layers.push_back(std::move(d));
    }
    return mlp_weights(layers);
  }

  /// Reads a PyTorch `state_dict` saved as .npz (`numpy.savez(path, **{k: v.numpy() …})`, see
  /// tools/export_torch_mlp.py): arrays named `<prefix>weight` (2-D, out × in) and
  /// `<prefix>bias` (1-D, optional), float32 or float64. The layers are taken in the order of
  /// `layer_names` (their prefixes without the dot: "net.0", "net.2", …) or, when it is empty,
  /// in natural order of their prefixes (numbers compared as numbers: `nn.Sequential`'s 0, 2, 4,
  /// …, 10). Throws std::runtime_error for an unreadable file and std::invalid_argument for an
  /// entry that is neither a weight nor a bias, a missing weight, or a bad shape, naming it.
  static mlp_weights from_npz(std::string const& path, std::vector<std::string> const& layer_names = {}) {
    auto const arrays = read_npz(path);
    std::string const who = "ember::mlp_weights::from_npz: " + path;
    std::map<std::string, std::pair<npy_array const*, npy_array const*>> by_prefix;  // weight, bias
    for (auto const& entry : arrays) {
      std::string const& key = entry.first;  // not a structured binding: clang 14 cannot capture one
      npy_array const& a = entry.second;
      auto const ends = [&](std::string const& s) { return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0; };
      std::string prefix;
      bool weight = false;
      if (key == "weight" || ends(".weight")) {
        prefix = key.substr(0, key.size() - 6), weight = true;
      } else if (key == "bias" || ends(".bias")) {
        prefix = key.substr(0, key.size() - 4);
      } else {
        throw std::invalid_argument(who + ": entry '" + detail::printable(key) +
                                    "' is neither a layer's weight nor its bias (an mlp holds dense layers only)");
      }
      if (!prefix.empty() && prefix.back() == '.') prefix.pop_back();
      (weight ? by_prefix[prefix].first : by_prefix[prefix].second) = &a;
    }
    std::vector<std::string> order = layer_names;
    if (order.empty()) {
      for (auto const& [p, wb] : by_prefix) order.push_back(p);
      std::sort(order.begin(), order.end(), natural_less);
    } else if (order.size() != by_prefix.size()) {
      throw std::invalid_argument(who + " holds " + std::to_string(by_prefix.size()) + " layers, but " + std::to_string(order.size()) +
                                  " names were given");
    }
    std::vector<dense_layer<T>> layers;
    for (auto const& p : order) {
      auto it = by_prefix.find(p);
      if (it == by_prefix.end()) throw std::invalid_argument(who + " has no layer '" + p + "' (no entry '" + p + ".weight')");
      auto [w, b] = it->second;
      if (!w) throw std::invalid_argument(who + ": layer '" + p + "' has a bias but no weight");
      if (w->shape.size() != 2)
        throw std::invalid_argument(who + ": '" + p + ".weight' has " + std::to_string(w->shape.size()) +
                                    " dimensions; a dense layer's weight has 2 (out × in)");
      if (b && (b->shape.size() != 1 || b->shape[0] != w->shape[0]))
        throw std::invalid_argument(who + ": '" + p + ".bias' has shape " + shape_of(b->shape) + "; the layer's " +
                                    std::to_string(w->shape[0]) + " outputs need (" + std::to_string(w->shape[0]) + ",)");
      dense_layer<T> d{p, int(w->shape[0]), int(w->shape[1]), values(*w, who + ": '" + p + ".weight'"), {}};
      if (b) d.bias = values(*b, who + ": '" + p + ".bias'");
      layers.push_back(std::move(d));
    }
    return mlp_weights(layers);
  }

  /// Writes the layers as .npz, `<name>.weight` and `<name>.bias`, which `from_npz` reads back
  /// and `torch.nn.Module.load_state_dict` takes (through tools/export_torch_mlp.py's loader).
  void write_npz(std::string const& path) const {
    npz_writer z(path);
    for (auto const& l : layers_) {
      std::size_t const ws[2] = {std::size_t(l.out), std::size_t(l.in)}, bs[1] = {std::size_t(l.out)};
      z.add(l.name + ".weight", theta_.data() + l.weight, std::span<std::size_t const>(ws));
      z.add(l.name + ".bias", theta_.data() + l.bias, std::span<std::size_t const>(bs));
    }
    z.close();
  }

  std::vector<layer> const& layers() const { return layers_; }
  /// θ: every weight and bias, layer by layer (W₀, b₀, W₁, b₁, …).
  std::span<T> parameters() { return theta_; }
  std::span<T const> parameters() const { return theta_; }
  /// Layer l's weight (out × in) and bias (out × 1) as views, for an energy.
  data_view<T> weight_view(int l) const { return {theta_.data() + layers_[std::size_t(l)].weight, layers_[std::size_t(l)].out, layers_[std::size_t(l)].in}; }
  data_view<T> bias_view(int l) const { return {theta_.data() + layers_[std::size_t(l)].bias, layers_[std::size_t(l)].out, 1}; }

 private:
  std::vector<T> theta_;
  std::vector<layer> layers_;

  static std::string shape(int out, int in) { return std::to_string(out) + " × " + std::to_string(in); }
  static std::string shape_of(std::vector<std::size_t> const& s) {
    std::string r = "(";
    for (std::size_t i = 0; i < s.size(); ++i) r += std::to_string(s[i]) + (s.size() == 1 ? "," : i + 1 < s.size() ? ", " : "");
    return r + ")";
  }
  static std::vector<T> values(npy_array const& a, std::string const& what) {
    if (a.descr == npy_descr<float>()) {
      auto v = a.as<float>();
      return std::vector<T>(v.begin(), v.end());
    }
    if (a.descr == npy_descr<double>()) {
      auto v = a.as<double>();
      return std::vector<T>(v.begin(), v.end());
    }
    throw std::invalid_argument(what + " holds " + detail::printable(a.descr) + "; weights must be float32 or float64");
  }
  // "net.10" after "net.2": runs of digits compared as numbers, the rest as text.
  static bool natural_less(std::string const& a, std::string const& b) {
    std::size_t i = 0, j = 0;
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    while (i < a.size() && j < b.size()) {
      if (digit(a[i]) && digit(b[j])) {
        std::size_t i2 = i, j2 = j;
        while (i2 < a.size() && digit(a[i2])) ++i2;
        while (j2 < b.size() && digit(b[j2])) ++j2;
        std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
        x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
        y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
        if (x.size() != y.size()) return x.size() < y.size();
        if (x != y) return x < y;
        i = i2, j = j2;
      } else {
        if (a[i] != b[j]) return a[i] < b[j];
        ++i, ++j;
      }
    }
    return a.size() - i < b.size() - j;
  }
};

/// Options of an `mlp` beside its activation.
struct mlp_options {
  /// Residual connections: hₗ = φ(Wₗhₗ₋₁ + bₗ) + hₗ₋₁ for every hidden layer after the first
  /// whose width equals the previous one's.
  bool skip = false;
};

/// The energy of a multilayer perceptron (see the file comment): input width `In`, activation
/// `Act`, hidden widths `Hidden...`, one output. Trivially copyable (views of the weights);
/// `for_each_view` exposes them so a CUDA run copies them to the device.
template <class T, int In, class Act, int... Hidden>
struct mlp {
  static_assert(std::floating_point<T>, "ember::mlp's value type must be float or double");
  static_assert(sizeof...(Hidden) >= 1, "ember::mlp needs at least one hidden layer: mlp<T, In, Act, H1, H2, ...>");
  static_assert(In > 0 && ((Hidden > 0) && ...), "ember::mlp's widths must be positive");
  static_assert(nn::activation_for<Act, T>,
                "ember::mlp's activation must have value(a) and value_and_slope(a, d), as those in ember::nn (energy/activation.hpp)");

  using value_type = T;
  using activation_type = Act;
  static constexpr int dim = In;
  /// Hidden layers; layer `depth` is the output layer.
  static constexpr int depth = int(sizeof...(Hidden));
  /// Widths of h₀ = x, h₁, …, h_L and the output.
  static constexpr int width[depth + 2] = {In, Hidden..., 1};
  /// Outputs computed together in a layer's forward pass (inputs in its backward pass).
  static constexpr int block = 8;
  /// SIMD batches of points whose per-layer values `add_param_grad` keeps before adding their
  /// outer products into the gradient.
  static constexpr int param_chunk = 16;

  data_view<T> weight[depth + 1];  ///< layer l: width[l+1] × width[l]
  data_view<T> bias[depth + 1];    ///< layer l: width[l+1] × 1
  Act act{};
  bool skip = false;

  /// Views the layers of `w`, which must be this network's: one sentence per mismatch, all of
  /// them in one std::invalid_argument.
  explicit mlp(mlp_weights<T> const& w, mlp_options const& o = {}, Act a = {}) : act(a), skip(o.skip) {
    auto const& ls = w.layers();
    std::string err;
    if (int(ls.size()) != depth + 1)
      err += "the weights have " + std::to_string(ls.size()) + " layers; this network needs " + std::to_string(depth + 1) + " (" +
             std::to_string(depth) + " hidden and the output).";
    for (int l = 0; l < depth + 1 && l < int(ls.size()); ++l)
      if (ls[std::size_t(l)].out != width[l + 1] || ls[std::size_t(l)].in != width[l])
        err += std::string(err.empty() ? "" : " ") + "Layer " + std::to_string(l) + " ('" + ls[std::size_t(l)].name + "') is " +
               std::to_string(ls[std::size_t(l)].out) + " × " + std::to_string(ls[std::size_t(l)].in) + "; this network needs " +
               std::to_string(width[l + 1]) + " × " + std::to_string(width[l]) + " (out × in, as torch.nn.Linear stores it).";
    if (!err.empty()) throw std::invalid_argument("ember::mlp: " + err);
    for (int l = 0; l <= depth; ++l) weight[l] = w.weight_view(l), bias[l] = w.bias_view(l);
  }

  template <class F>
  void for_each_view(F&& f) {
    for (int l = 0; l <= depth; ++l) f(weight[l]), f(bias[l]);
  }
  /// What a GPU team deals out among its members (energy/for_each_view.hpp, `team_blocks`): pairs
  /// of units of the widest hidden layer, so the automatic team (at least two blocks a member)
  /// leaves each member at least four units; none below 16 units (a team of 2 would evaluate the
  /// whole network twice).
  std::int64_t team_blocks() const { return max_hidden >= 16 ? max_hidden / 2 : 0; }

  /// U(x): the forward pass.
  template <class S>
  EMBER_HD EMBER_HOT_CALLEE S value(vec<S, In> const& x) const {
#if defined(__CUDA_ARCH__)
    if constexpr (detail::splits_rows<S>)
      if (team const t = team_for<S>(); t.size >= 4) return team_dispatch<false>(x, static_cast<vec<S, In>*>(nullptr), t);
#endif
    S buf[2][max_hidden];
    S const* in = x.v;
    int cur = 0;
    [&]<int... l>(std::integer_sequence<int, l...>) {
      ((forward<l, false>(in, buf[cur], static_cast<S*>(nullptr)), in = buf[cur], cur ^= 1), ...);
    }(std::make_integer_sequence<int, depth>{});
    return output(in);
  }

  /// U(x) and ∇U(x): the forward pass keeping each activation's slope, then backpropagation.
  template <class S>
  EMBER_HD EMBER_HOT_CALLEE S value_and_grad(vec<S, In> const& x, vec<S, In>& g) const {
#if defined(__CUDA_ARCH__)
    // A team of 4-32 (a team of 2 evaluates the whole network in both members, as one thread).
    if constexpr (detail::splits_rows<S>)
      if (team const t = team_for<S>(); t.size >= 4) return team_dispatch<true>(x, &g, t);
#endif
    S buf[2][max_hidden];
    S slope[hidden_total];
    S const* in = x.v;
    int cur = 0;
    [&]<int... l>(std::integer_sequence<int, l...>) {
      ((forward<l>(in, buf[cur], slope + slope_offset(l)), in = buf[cur], cur ^= 1), ...);
    }(std::make_integer_sequence<int, depth>{});
    S const u = output(in);
    // ∂U/∂h_L = w_out; then through each hidden layer from the last.
    S* gh = buf[cur];
    T const* wo = weight[depth].data;
    constexpr int last = width[depth];
    for (int j = 0; j < last; ++j) gh[j] = S(wo[j]);
    [&]<int... r>(std::integer_sequence<int, r...>) {
      ((backward<depth - 1 - r>(buf, cur, slope, g.v)), ...);
    }(std::make_integer_sequence<int, depth>{});
    return u;
  }

#if !defined(__CUDACC__)
  /// Adds Σᵢ cᵢ ∂U(xᵢ)/∂θ to `grad` (in `mlp_weights::parameters()`'s layout: W₀, b₀, W₁, b₁, …)
  /// over the rows xᵢ of `points` (n × In, row-major) with coefficients `c` (n of them), and
  /// returns Σᵢ cᵢ U(xᵢ).
  T add_param_grad(std::span<T const> points, std::span<T const> c, std::span<T> grad) const {
    if (points.size() != c.size() * std::size_t(In))
      throw std::invalid_argument("ember::mlp::add_param_grad: " + std::to_string(points.size()) + " point values for " + std::to_string(c.size()) +
                                  " coefficients; each point has " + std::to_string(In));
    return add_param_grad(points, [&](std::size_t i, T) { return c[i]; }, grad);
  }

  /// The same with each point's coefficient computed from its energy, cᵢ = coefficient(i, U(xᵢ))
  /// (a loss that is a function of the energies, such as contrastive divergence with an α·U²
  /// term), writing U(xᵢ) into `energies` unless it is empty. Points go through SIMD batches of
  /// chains; each parameter's sum is gathered over `param_chunk` batches before it is added to `grad`.
  template <class C>
    requires std::is_invocable_r_v<T, C&, std::size_t, T>
  T add_param_grad(std::span<T const> points, C&& coefficient, std::span<T> grad, std::span<T> energies = {}) const {
    using B = simd_batch<T>;
    constexpr int W = int(B::size);
    std::size_t const n = points.size() / std::size_t(In);
    if (points.size() % std::size_t(In) != 0)
      throw std::invalid_argument("ember::mlp::add_param_grad: " + std::to_string(points.size()) + " point values are not a whole number of points of " +
                                  std::to_string(In));
    if (grad.size() != std::size_t(parameters))
      throw std::invalid_argument("ember::mlp::add_param_grad: the gradient has " + std::to_string(grad.size()) +
                                  " entries; this network has " + std::to_string(parameters) + " parameters");
    if (!energies.empty() && energies.size() != n)
      throw std::invalid_argument("ember::mlp::add_param_grad: room for " + std::to_string(energies.size()) + " energies, for " + std::to_string(n) +
                                  " points");
    constexpr int chunk = param_chunk;
    // Per batch of a chunk: every layer's input (h₀ = x, h₁, …, h_L) and the gradient with
    // respect to every layer's pre-activation (layers 0 … L), unit-major: [unit][batch].
    std::vector<B> h(std::size_t(inputs_total) * chunk), ga(std::size_t(outputs_total) * chunk);
    double total = 0;
    for (std::size_t first = 0; first < n; first += std::size_t(chunk) * W) {
      int const batches = int(std::min<std::size_t>(chunk, (n - first + W - 1) / W));
      for (int b = 0; b < batches; ++b) {
        alignas(64) T xs[In][W];
        alignas(64) T us[W];
        alignas(64) T cs[W];
        std::size_t const base = first + std::size_t(b * W);
        for (int lane = 0; lane < W; ++lane) {
          std::size_t const i = std::min(base + std::size_t(lane), n - 1);  // padding lanes repeat the last point
          for (int j = 0; j < In; ++j) xs[j][lane] = points[i * In + std::size_t(j)];
        }
        B hb[inputs_total], gb[outputs_total], slope[hidden_total];
        for (int j = 0; j < In; ++j) hb[j] = B::load_aligned(xs[j]);
        [&]<int... l>(std::integer_sequence<int, l...>) {
          (forward<l>(hb + input_offset(l), hb + input_offset(l + 1), slope + slope_offset(l)), ...);
        }(std::make_integer_sequence<int, depth>{});
        output(hb + input_offset(depth)).store_aligned(us);
        for (int lane = 0; lane < W; ++lane) {
          std::size_t const i = base + std::size_t(lane);
          cs[lane] = i < n ? T(coefficient(i, us[lane])) : T(0);  // padding lanes add nothing
          if (i < n) {
            total += double(cs[lane]) * double(us[lane]);
            if (!energies.empty()) energies[i] = us[lane];
          }
        }
        gb[output_offset(depth)] = B::load_aligned(cs);  // ∂(cU)/∂(output pre-activation)
        // ∂/∂hₗ = Wₗᵀ gₗ (+ ∂/∂hₗ₊₁ through a skip), then ∂/∂aₗ = that ⊙ φ′(aₗ), from the last.
        B gh[max_hidden];
        [&]<int... r>(std::integer_sequence<int, r...>) {
          ((param_backward<depth - 1 - r>(gb, slope, gh)), ...);
        }(std::make_integer_sequence<int, depth>{});
        for (int j = 0; j < inputs_total; ++j) h[std::size_t(j) * chunk + std::size_t(b)] = hb[j];
        for (int k = 0; k < outputs_total; ++k) ga[std::size_t(k) * chunk + std::size_t(b)] = gb[k];
      }
      // ∂/∂Wₗ[k][j] += Σ_b gₗ[k]·hₗ[j], ∂/∂bₗ[k] += Σ_b gₗ[k], lanes summed once per chunk.
      for (int l = 0; l <= depth; ++l) accumulate(l, batches, ga.data(), h.data(), grad);
    }
    return T(total);
  }

  /// U(xᵢ) and ∇ₓU(xᵢ) at the rows xᵢ of `points` (n × In), through SIMD batches: into
  /// `grads` (n × In) and, unless it is empty, `energies` (n).
  void values_and_grads(std::span<T const> points, std::span<T> grads, std::span<T> energies = {}) const {
    using B = simd_batch<T>;
    constexpr int W = int(B::size);
    std::size_t const n = points.size() / std::size_t(In);
    if (points.size() % std::size_t(In) != 0 || grads.size() != points.size() || (!energies.empty() && energies.size() != n))
      throw std::invalid_argument("ember::mlp::values_and_grads: " + std::to_string(points.size()) + " point values, room for " +
                                  std::to_string(grads.size()) + " gradient values and " + std::to_string(energies.size()) +
                                  " energies; points of " + std::to_string(In) + " need as many gradient values and one energy each");
    for (std::size_t first = 0; first < n; first += W) {
      alignas(64) T lanes[In][W];
      for (int lane = 0; lane < W; ++lane)
        for (int j = 0; j < In; ++j) lanes[j][lane] = points[std::min(first + std::size_t(lane), n - 1) * In + std::size_t(j)];
      vec<B, In> x, g;
      for (int j = 0; j < In; ++j) x[j] = B::load_aligned(lanes[j]);
      alignas(64) T u[W];
      value_and_grad(x, g).store_aligned(u);
      for (int j = 0; j < In; ++j) g[j].store_aligned(lanes[j]);
      for (int lane = 0; lane < W && first + std::size_t(lane) < n; ++lane) {
        for (int j = 0; j < In; ++j) grads[(first + std::size_t(lane)) * In + std::size_t(j)] = lanes[j][lane];
        if (!energies.empty()) energies[first + std::size_t(lane)] = u[lane];
      }
    }
  }

  /// Adds ∂/∂θ Σᵢ vᵢ·∇ₓU(xᵢ) to `grad` (parameters()' layout) over the rows xᵢ of `points` and
  /// vᵢ of `directions` (both n × In): the parameter gradient of a loss that reads the input
  /// gradient, as score matching's ½‖∇ₓU(x̃) − t‖² does (with vᵢ = ∇ₓU(x̃ᵢ) − tᵢ). Computed as
  /// the derivative along vᵢ of ∂U(xᵢ)/∂θ (mixed partials commute): the forward and backward
  /// passes of `add_param_grad` on dual numbers of SIMD batches seeded with vᵢ, about 2–3 times
  /// its cost.
  void add_param_grad_of_input_grad(std::span<T const> points, std::span<T const> directions, std::span<T> grad) const {
    using B = simd_batch<T>;
    using Dl = dual<B, 1>;
    constexpr int W = int(B::size), chunk = param_chunk;
    std::size_t const n = points.size() / std::size_t(In);
    if (points.size() % std::size_t(In) != 0 || directions.size() != points.size())
      throw std::invalid_argument("ember::mlp::add_param_grad_of_input_grad: " + std::to_string(points.size()) + " point values and " +
                                  std::to_string(directions.size()) + " direction values; both must be n points of " + std::to_string(In));
    if (grad.size() != std::size_t(parameters))
      throw std::invalid_argument("ember::mlp::add_param_grad_of_input_grad: the gradient has " + std::to_string(grad.size()) +
                                  " entries; this network has " + std::to_string(parameters) + " parameters");
    // Per chunk: values and tangents of every layer's input and pre-activation gradient.
    std::vector<B> h(std::size_t(inputs_total) * chunk), ht(h.size()), ga(std::size_t(outputs_total) * chunk), gt(ga.size());
    for (std::size_t first = 0; first < n; first += std::size_t(chunk) * W) {
      int const batches = int(std::min<std::size_t>(chunk, (n - first + W - 1) / W));
      for (int b = 0; b < batches; ++b) {
        alignas(64) T xs[In][W];
        alignas(64) T vs[In][W];
        std::size_t const base = first + std::size_t(b * W);
        for (int lane = 0; lane < W; ++lane) {
          std::size_t const i = std::min(base + std::size_t(lane), n - 1);
          bool const live = base + std::size_t(lane) < n;  // padding lanes: direction 0, adding nothing
          for (int j = 0; j < In; ++j) {
            xs[j][lane] = points[i * In + std::size_t(j)];
            vs[j][lane] = live ? directions[i * In + std::size_t(j)] : T(0);
          }
        }
        Dl hb[inputs_total], gb[outputs_total], slope[hidden_total];
        for (int j = 0; j < In; ++j) {
          hb[j].val = B::load_aligned(xs[j]);
          hb[j].d[0] = B::load_aligned(vs[j]);
        }
        [&]<int... l>(std::integer_sequence<int, l...>) {
          (forward<l>(hb + input_offset(l), hb + input_offset(l + 1), slope + slope_offset(l)), ...);
        }(std::make_integer_sequence<int, depth>{});
        gb[output_offset(depth)] = Dl(B(T(1)));
        Dl gh[max_hidden];
        [&]<int... r>(std::integer_sequence<int, r...>) {
          ((param_backward<depth - 1 - r>(gb, slope, gh)), ...);
        }(std::make_integer_sequence<int, depth>{});
        for (int j = 0; j < inputs_total; ++j) h[std::size_t(j) * chunk + std::size_t(b)] = hb[j].val, ht[std::size_t(j) * chunk + std::size_t(b)] = hb[j].d[0];
        for (int k = 0; k < outputs_total; ++k) ga[std::size_t(k) * chunk + std::size_t(b)] = gb[k].val, gt[std::size_t(k) * chunk + std::size_t(b)] = gb[k].d[0];
      }
      // (gₗ[k]·hₗ[j])′ = gₗ′[k]·hₗ[j] + gₗ[k]·hₗ′[j]; a bias's, gₗ′[k].
      for (int l = 0; l <= depth; ++l) {
        accumulate(l, batches, gt.data(), h.data(), grad);
        accumulate(l, batches, ga.data(), ht.data(), grad, false);
      }
    }
  }
#endif

#if !defined(__CUDACC__)
 private:
  // Layer l's share of add_param_grad: for every (k, j), Σ over the chunk's batches of
  // gₗ[k]·hₗ[j], then its lanes added into grad. Tiles of 4 outputs × 2 inputs keep 8 sums in
  // registers (6 loads per 8 multiply-adds instead of 16), and the 8 tiles' lanes are added by
  // one horizontal pass (xsimd::haddp).
  template <class B>
  void accumulate(int l, int batches, B const* ga, B const* h, std::span<T> grad, bool biases = true) const {
    constexpr int chunk = param_chunk, W = int(B::size);
    static_assert(W <= 8 || W % 8 == 0, "ember::mlp::add_param_grad: a SIMD batch of at most 8 lanes or a multiple of 8");
    std::size_t const off = param_offset(l);
    int const O = width[l + 1], I = width[l];
    auto const g_row = [&](int k) { return ga + std::size_t(output_offset(l) + k) * chunk; };
    auto const h_row = [&](int j) { return h + std::size_t(input_offset(l) + j) * chunk; };
    auto const dot = [&](int k, int j) {
      B const *gk = g_row(k), *hj = h_row(j);
      B s = gk[0] * hj[0];
      for (int b = 1; b < batches; ++b) s = gk[b] * hj[b] + s;
      return xsimd::hadd(s);
    };
    for (int k = 0; k < O && biases; ++k) {
      B const* gk = g_row(k);
      B sb = gk[0];
      for (int b = 1; b < batches; ++b) sb = sb + gk[b];
      grad[off + std::size_t(O) * std::size_t(I) + std::size_t(k)] += xsimd::hadd(sb);
    }
    int const O4 = O / 4 * 4, I2 = I / 2 * 2;
    for (int k = 0; k < O4; k += 4)
      for (int j = 0; j < I2; j += 2) {
        B s[8];
        B const *g0 = g_row(k), *g1 = g_row(k + 1), *g2 = g_row(k + 2), *g3 = g_row(k + 3), *h0 = h_row(j), *h1 = h_row(j + 1);
        s[0] = g0[0] * h0[0], s[1] = g0[0] * h1[0], s[2] = g1[0] * h0[0], s[3] = g1[0] * h1[0];
        s[4] = g2[0] * h0[0], s[5] = g2[0] * h1[0], s[6] = g3[0] * h0[0], s[7] = g3[0] * h1[0];
        for (int b = 1; b < batches; ++b) {
          B const a0 = g0[b], a1 = g1[b], a2 = g2[b], a3 = g3[b], x0 = h0[b], x1 = h1[b];
          s[0] = a0 * x0 + s[0], s[1] = a0 * x1 + s[1], s[2] = a1 * x0 + s[2], s[3] = a1 * x1 + s[3];
          s[4] = a2 * x0 + s[4], s[5] = a2 * x1 + s[5], s[6] = a3 * x0 + s[6], s[7] = a3 * x1 + s[7];
        }
        alignas(64) T sum[8];
        if constexpr (W == 8) {
          xsimd::haddp(s).store_aligned(sum);
        } else {
          for (int t = 0; t < 8; ++t) sum[t] = xsimd::hadd(s[t]);
        }
        for (int t = 0; t < 8; ++t) grad[off + std::size_t(k + t / 2) * std::size_t(I) + std::size_t(j + t % 2)] += sum[t];
      }
    // The edges the tiles leave: rows past a multiple of 4, the last column of an odd width.
    for (int k = 0; k < O; ++k)
      for (int j = (k < O4 ? I2 : 0); j < I; ++j) grad[off + std::size_t(k) * std::size_t(I) + std::size_t(j)] += dot(k, j);
  }

 public:
#endif
  /// The number of parameters, Σₗ (width[l+1]·width[l] + width[l+1]).
  static constexpr int parameters = [] {
    int p = 0;
    for (int l = 0; l <= depth; ++l) p += width[l + 1] * width[l] + width[l + 1];
    return p;
  }();

 private:
  static constexpr int max_hidden = [] {
    int m = 0;
    for (int l = 1; l <= depth; ++l) m = width[l] > m ? width[l] : m;
    return m;
  }();
  static constexpr int hidden_total = [] {
    int s = 0;
    for (int l = 1; l <= depth; ++l) s += width[l];
    return s;
  }();
  static constexpr int inputs_total = In + hidden_total;  // h₀ … h_L
  static constexpr int outputs_total = hidden_total + 1;  // a₁ … a_L and the output
  EMBER_HD static constexpr int slope_offset(int l) {               // φ′(a of hidden layer l), l = 0 … L−1
    int s = 0;
    for (int i = 0; i < l; ++i) s += width[i + 1];
    return s;
  }
  EMBER_HD static constexpr int input_offset(int l) { return l == 0 ? 0 : In + slope_offset(l - 1); }  // hₗ
  EMBER_HD static constexpr int output_offset(int l) { return slope_offset(l); }                   // layer l's pre-activation
  EMBER_HD static constexpr std::size_t param_offset(int l) {
    std::size_t p = 0;
    for (int i = 0; i < l; ++i) p += std::size_t(width[i + 1]) * std::size_t(width[i] + 1);
    return p;
  }
  // Whether hidden layer l has a skip connection (a residual) when `skip` is set.
  EMBER_HD static constexpr bool can_skip(int l) { return l > 0 && l < depth && width[l + 1] == width[l]; }

  // Hidden layer l: out[k] = φ(Wₗ in + bₗ)[k] (+ in[k] with a skip), keeping φ′ in slope if asked.
  template <int l, bool slopes = true, class S>
  EMBER_HD EMBER_INLINE void forward(S const* in, S* out, S* slope) const {
    constexpr int O = width[l + 1], I = width[l];
    affine<O, I>(weight[l].data, bias[l].data, in, out);
    nn::activate_layer<slopes>(act, out, slope, O);
    if constexpr (can_skip(l))
      if (skip)
        for (int k = 0; k < O; ++k) out[k] = out[k] + in[k];
  }

  template <class S>
  EMBER_HD EMBER_INLINE S output(S const* h) const {
    constexpr int I = width[depth];
    S u;
    affine<1, I>(weight[depth].data, bias[depth].data, h, &u);
    return u;
  }

  // Hidden layer l backwards, for the input gradient: buf[cur] holds ∂U/∂hₗ₊₁ on entry; writes
  // ∂U/∂hₗ into the other buffer (into g, ∂U/∂x, for l = 0) and flips cur to it.
  template <int l, class S>
  EMBER_HD EMBER_INLINE void backward(S (&buf)[2][max_hidden], int& cur, S const* slope, S* g) const {
    constexpr int O = width[l + 1], I = width[l];
    S* gh = buf[cur];              // ∂U/∂h_{l+1}
    S* gin = l == 0 ? g : buf[cur ^ 1];  // ∂U/∂hₗ
    S ga[O];
    for (int k = 0; k < O; ++k) ga[k] = gh[k] * slope[slope_offset(l) + k];
    affine_back<O, I>(weight[l].data, ga, gin);
    if constexpr (can_skip(l))
      if (skip)
        for (int j = 0; j < I; ++j) gin[j] = gin[j] + gh[j];
    cur ^= 1;
  }

  // The same for add_param_grad, whose per-layer gradients all stay: gb holds ∂/∂a of every
  // layer (the output's last), and ∂/∂a of hidden layer l comes from layer l + 1's. `gh` holds
  // ∂/∂hₗ₊₂ on entry (what a skip at layer l + 1 passes down) and ∂/∂hₗ₊₁ on exit.
  template <int l, class S>
  EMBER_INLINE void param_backward(S* gb, S const* slope, S* gh) const {
    constexpr int O = width[l + 2], I = width[l + 1];  // layer l + 1
    S gin[I];
    affine_back<O, I>(weight[l + 1].data, gb + output_offset(l + 1), gin);
    if constexpr (can_skip(l + 1))
      if (skip)
        for (int j = 0; j < I; ++j) gin[j] = gin[j] + gh[j];
    for (int j = 0; j < I; ++j) {
      gh[j] = gin[j];
      gb[output_offset(l) + j] = gin[j] * slope[slope_offset(l) + j];
    }
  }

#if defined(__CUDA_ARCH__)
  // ---- A GPU team of W members evaluating one chain (see the file comment) ----
  template <int W>
  EMBER_HD static constexpr int units(int n) { return (n + W - 1) / W; }
  template <int W>
  static constexpr int team_buffer = units<W>(In > max_hidden ? In : max_hidden);
  template <int W>
  EMBER_HD static constexpr int team_slope_offset(int l) {  // layer l's slopes among a member's
    int s = 0;
    for (int i = 0; i < l; ++i) s += units<W>(width[i + 1]);
    return s;
  }

  template <bool grad, class S>
  __device__ S team_dispatch(vec<S, In> const& x, vec<S, In>* g, team const& t) const {
    if (t.size == 32) return team_pass<32, grad>(x, g, t);
    if (t.size == 16) return team_pass<16, grad>(x, g, t);
    if (t.size == 8) return team_pass<8, grad>(x, g, t);
    return team_pass<4, grad>(x, g, t);
  }

  // The W partial sums p[0..W) of every member into member r's p[r] summed over the team: at
  // stage s members r and r ^ s swap halves of what is left, the member with bit s set keeping
  // the upper half (W − 1 shuffles in all).
  template <int W, class S>
  __device__ static S reduce_scatter(S (&p)[W], int r, unsigned mask) {
    EMBER_UNROLL
    for (int s = W / 2; s > 0; s >>= 1) {
      bool const upper = (r & s) != 0;
      EMBER_UNROLL
      for (int j = 0; j < s; ++j) {
        S const keep = upper ? p[j + s] : p[j];
        S const send = upper ? p[j] : p[j + s];
        p[j] = keep + __shfl_xor_sync(mask, send, s, W);
      }
    }
    return p[0];
  }

  // Layer l (I → O), member r holding in[k] = hₗ[r + W k]: out[c] = φ(a)[c W + r] and its slope.
  template <int l, int W, bool slopes, class S>
  __device__ void team_forward(S const* in, S* out, S* slope, int r, unsigned mask) const {
    constexpr int O = width[l + 1], I = width[l], UI = units<W>(I), UO = units<W>(O);
    T const* w = weight[l].data;
    for (int c = 0; c < UO; ++c) {
      S p[W];
      EMBER_UNROLL
      for (int q = 0; q < W; ++q) {
        int const o = c * W + q;
        S acc = S(T(0));
        if (o < O) {
          EMBER_UNROLL
          for (int k = 0; k < UI; ++k)
            if (r + W * k < I) acc = S(w[std::size_t(o) * I + std::size_t(r + W * k)]) * in[k] + acc;
        }
        p[q] = acc;
      }
      S a = reduce_scatter<W>(p, r, mask);
      int const o = c * W + r;
      if (o < O) {
        a = a + S(bias[l].data[o]);
        if constexpr (slopes)
          out[c] = act.value_and_slope(a, slope[c]);
        else
          out[c] = act.value(a);
        if constexpr (can_skip(l))
          if (skip) out[c] = out[c] + in[c];  // I == O: the same units
      } else {
        out[c] = S(T(0));
        if constexpr (slopes) slope[c] = S(T(0));
      }
    }
  }

  // Layer l backwards: ga[c] = ∂U/∂a[c W + r] into gin[k] = ∂U/∂hₗ[r + W k].
  template <int l, int W, class S>
  __device__ void team_backward(S const* ga, S* gin, int r, unsigned mask) const {
    constexpr int O = width[l + 1], I = width[l], UI = units<W>(I), UO = units<W>(O);
    T const* w = weight[l].data;
    S acc[UI];
    EMBER_UNROLL
    for (int k = 0; k < UI; ++k) acc[k] = S(T(0));
    for (int c = 0; c < UO; ++c) {
      S const mine = ga[c];
      EMBER_UNROLL
      for (int q = 0; q < W; ++q) {
        int const o = c * W + q;  // the same in every member: every member shuffles
        if (o < O) {
          S const v = __shfl_sync(mask, mine, q, W);
          EMBER_UNROLL
          for (int k = 0; k < UI; ++k)
            if (r + W * k < I) acc[k] = S(w[std::size_t(o) * I + std::size_t(r + W * k)]) * v + acc[k];
        }
      }
    }
    EMBER_UNROLL
    for (int k = 0; k < UI; ++k) gin[k] = acc[k];
  }

  template <int W, bool grad, class S>
  __device__ S team_pass(vec<S, In> const& x, vec<S, In>* g, team const& t) const {
    int const r = t.rank;
    unsigned const lane = unsigned(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
    unsigned const mask = W == 32 ? 0xffffffffu : ((1u << unsigned(W)) - 1u) << (lane & ~unsigned(W - 1));
    S h[2][team_buffer<W>];
    S slope[grad ? team_slope_offset<W>(depth) : 1];
    for (int k = 0; k < units<W>(In); ++k) h[0][k] = r + W * k < In ? x[r + W * k] : S(T(0));  // x is in every member
    int cur = 0;
    [&]<int... l>(std::integer_sequence<int, l...>) {
      ((team_forward<l, W, grad>(h[cur], h[cur ^ 1], slope + (grad ? team_slope_offset<W>(l) : 0), r, mask), cur ^= 1), ...);
    }(std::make_integer_sequence<int, depth>{});
    constexpr int last = width[depth];
    T const* wo = weight[depth].data;
    S part = S(T(0));
    for (int k = 0; k < units<W>(last); ++k)
      if (r + W * k < last) part = S(wo[r + W * k]) * h[cur][k] + part;
    S const u = team_sum(t, part) + S(bias[depth].data[0]);
    if constexpr (grad) {
      // ∂U/∂h_L = w_out in h[cur]; each layer's ∂/∂a in ga, its ∂/∂hₗ into the other buffer.
      for (int k = 0; k < units<W>(last); ++k) h[cur][k] = r + W * k < last ? S(wo[r + W * k]) : S(T(0));
      S ga[team_buffer<W>];
      [&]<int... q>(std::integer_sequence<int, q...>) {
        (
            [&] {
              constexpr int l = depth - 1 - q;
              S const* sl = slope + team_slope_offset<W>(l);
              for (int c = 0; c < units<W>(width[l + 1]); ++c) ga[c] = h[cur][c] * sl[c];
              team_backward<l, W>(ga, h[cur ^ 1], r, mask);
              if constexpr (can_skip(l))
                if (skip)
                  for (int k = 0; k < units<W>(width[l]); ++k) h[cur ^ 1][k] = h[cur ^ 1][k] + h[cur][k];
              cur ^= 1;
            }(),
            ...);
      }(std::make_integer_sequence<int, depth>{});
      for (int i = 0; i < In; ++i) (*g)[i] = __shfl_sync(mask, h[cur][i / W], i % W, W);  // all-gather ∂U/∂x
    }
    return u;
  }
#endif

  // a = W h + b for an O × I weight, outputs `block` at a time.
  template <int O, int I, class S>
  EMBER_HD EMBER_INLINE static void affine(T const* w, T const* b, S const* h, S* a) {
    constexpr int full = O / block * block;
    for (int k = 0; k < full; k += block) affine_rows<block, I>(w + std::size_t(k) * I, b + k, h, a + k);
    if constexpr (O % block != 0) affine_rows<O % block, I>(w + std::size_t(full) * I, b + full, h, a + full);
  }
  template <int R, int I, class S>
  EMBER_HD EMBER_INLINE static void affine_rows(T const* w, T const* b, S const* h, S* a) {
    S acc[R];
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) acc[r] = S(b[r]);
    for (int j = 0; j < I; ++j) {
      S const hj = h[j];
      EMBER_UNROLL
      for (int r = 0; r < R; ++r) acc[r] = S(w[r * I + j]) * hj + acc[r];
    }
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) a[r] = acc[r];
  }
  // gin = Wᵀ ga for an O × I weight, inputs `block` at a time.
  template <int O, int I, class S>
  EMBER_HD EMBER_INLINE static void affine_back(T const* w, S const* ga, S* gin) {
    constexpr int full = I / block * block;
    for (int j = 0; j < full; j += block) affine_cols<block, O, I>(w + j, ga, gin + j);
    if constexpr (I % block != 0) affine_cols<I % block, O, I>(w + full, ga, gin + full);
  }
  template <int R, int O, int I, class S>
  EMBER_HD EMBER_INLINE static void affine_cols(T const* w, S const* ga, S* gin) {
    S acc[R];
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) acc[r] = S(T(0));
    for (int k = 0; k < O; ++k) {
      S const gk = ga[k];
      EMBER_UNROLL
      for (int r = 0; r < R; ++r) acc[r] = S(w[std::size_t(k) * I + r]) * gk + acc[r];
    }
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) gin[r] = acc[r];
  }
};

}  // namespace ember
