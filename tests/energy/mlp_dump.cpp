// Evaluates ember's neural energies for mlp_numpy.py: reads a state_dict .npz (six Linear
// layers, 3 → 5 → 5 → 5 → 5 → 5 → 1, named as nn.Sequential names them) and points (n × 3,
// .npy), and writes, for every activation with and without skips, U and ∇ₓU at each point and
// Σᵢ cᵢ∇_θU (cᵢ from a .npy) into an .npz.
//
//     mlp_dump WEIGHTS.npz POINTS.npy COEFFS.npy OUT.npz
#include <ember/energy/mlp.hpp>
#include <ember/io/npy.hpp>
#include <ember/io/npz.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

std::vector<double> read_doubles(std::string const& path) { return ember::read_npy(path).as<double>(); }

template <class Act>
void dump(ember::npz_writer& z, ember::mlp_weights<double> const& w, std::vector<double> const& x, std::vector<double> const& c) {
  std::size_t const n = c.size();
  for (bool skip : {false, true}) {
    ember::mlp<double, 3, Act, 5, 5, 5, 5, 5> const U(w, {.skip = skip});
    std::vector<double> u(n), g(3 * n), theta(std::size_t(U.parameters), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      ember::vec<double, 3> p{{x[3 * i], x[3 * i + 1], x[3 * i + 2]}}, gi;
      u[i] = U.value_and_grad(p, gi);
      for (int j = 0; j < 3; ++j) g[3 * i + std::size_t(j)] = gi[j];
    }
    U.add_param_grad(x, c, theta);
    std::string const key = std::string(Act::name) + (skip ? "_skip" : "");
    std::size_t const s1[1] = {n}, s2[2] = {n, 3}, st[1] = {theta.size()};
    z.add(key + "_u", u.data(), std::span<std::size_t const>(s1));
    z.add(key + "_g", g.data(), std::span<std::size_t const>(s2));
    z.add(key + "_theta", theta.data(), std::span<std::size_t const>(st));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: mlp_dump WEIGHTS.npz POINTS.npy COEFFS.npy OUT.npz\n");
    return 2;
  }
  auto const w = ember::mlp_weights<double>::from_npz(argv[1]);
  auto const x = read_doubles(argv[2]), c = read_doubles(argv[3]);
  ember::npz_writer z(argv[4]);
  namespace nn = ember::nn;
  dump<nn::silu>(z, w, x, c);
  dump<nn::relu>(z, w, x, c);
  dump<nn::leaky_relu>(z, w, x, c);
  dump<nn::elu>(z, w, x, c);
  dump<nn::gelu>(z, w, x, c);
  dump<nn::gelu_tanh>(z, w, x, c);
  dump<nn::softplus>(z, w, x, c);
  dump<nn::tanh>(z, w, x, c);
  dump<nn::sigmoid>(z, w, x, c);
  z.close();
  return 0;
}
