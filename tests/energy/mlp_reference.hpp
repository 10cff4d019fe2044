#pragma once
// A plain long-double dense network for the neural-energy tests (mlp_test.cpp,
// mlp_dynamic_test.cpp): loops in the order of the formulas, with the magnitudes that bound the
// rounding of ember's float or double computation of the same quantities.
#include <ember/energy/mlp.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace ember_test {

using LD = long double;

// A uniform number in [0, 1) from a SplitMix64 state, for test points.
inline double uniform01(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return double((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

// A plain long-double network (loops in the order of the formulas) with the magnitudes that
// bound the rounding of ember's float or double computation of the same quantities: with every
// weight, input and activation replaced by its absolute value (and each activation's own
// rounding counted as 1 + |a|, the size of the terms its formulas add), a sum of n terms is
// off by at most γₙ ≈ n·u times its absolute sum, and those errors pass through the layers like
// the values do. Each check allows (Σ widths + 16)·u_T times that magnitude.
template <class Act>
struct reference {
  struct layer {
    int out, in;
    std::vector<LD> w, b;
  };
  std::vector<layer> layers;
  Act act;
  bool skip;

  template <class T>
  reference(ember::mlp_weights<T> const& mw, Act a, bool s) : act(a), skip(s) {
    auto const th = mw.parameters();
    for (auto const& l : mw.layers())
      layers.push_back({l.out, l.in, std::vector<LD>(th.begin() + std::ptrdiff_t(l.weight), th.begin() + std::ptrdiff_t(l.bias)),
                        std::vector<LD>(th.begin() + std::ptrdiff_t(l.bias), th.begin() + std::ptrdiff_t(l.bias + std::size_t(l.out)))});
  }

  struct result {
    LD u, u_mag;
    std::vector<LD> g, g_mag, theta, theta_mag;  // ∇ₓU, ∇_θU and their magnitudes
  };

  result eval(std::vector<LD> const& x) const {
    int const L = int(layers.size());
    std::vector<std::vector<LD>> h{x}, hm{abs(x)}, slope(std::size_t(L), std::vector<LD>{}), smag(std::size_t(L), std::vector<LD>{});
    for (int l = 0; l + 1 < L; ++l) {
      auto const& ly = layers[std::size_t(l)];
      std::vector<LD> out(std::size_t(ly.out)), om(std::size_t(ly.out));
      for (int k = 0; k < ly.out; ++k) {
        LD a = ly.b[std::size_t(k)], am = std::fabs(a);
        for (int j = 0; j < ly.in; ++j) {
          a += ly.w[std::size_t(k * ly.in + j)] * h.back()[std::size_t(j)];
          am += std::fabs(ly.w[std::size_t(k * ly.in + j)]) * hm.back()[std::size_t(j)];
        }
        LD d = 0;
        out[std::size_t(k)] = act.value_and_slope(a, d);
        slope[std::size_t(l)].push_back(d);
        om[std::size_t(k)] = std::fabs(d) * am + 1 + std::fabs(a) + std::fabs(out[std::size_t(k)]);
        smag[std::size_t(l)].push_back(std::fabs(d) + 1 + std::fabs(a) + am);
        if (skip && l > 0 && ly.out == ly.in) {
          out[std::size_t(k)] += h.back()[std::size_t(k)];
          om[std::size_t(k)] += hm.back()[std::size_t(k)];
        }
      }
      h.push_back(out);
      hm.push_back(om);
    }
    auto const& o = layers.back();
    result r{o.b[0], std::fabs(o.b[0]), {}, {}, {}, {}};
    for (int j = 0; j < o.in; ++j) {
      r.u += o.w[std::size_t(j)] * h.back()[std::size_t(j)];
      r.u_mag += std::fabs(o.w[std::size_t(j)]) * hm.back()[std::size_t(j)];
    }
    // Backward: ∂U/∂a of each layer (the output's is 1), and magnitudes alike.
    std::vector<std::vector<LD>> ga(std::size_t(L), std::vector<LD>{}), gm(std::size_t(L), std::vector<LD>{});
    ga[std::size_t(L - 1)] = {1};
    gm[std::size_t(L - 1)] = {1};
    std::vector<LD> gh, ghm;  // ∂U/∂h of the layer above's input
    for (int l = L - 1; l >= 0; --l) {
      auto const& ly = layers[std::size_t(l)];
      std::vector<LD> gin(std::size_t(ly.in), 0), ginm(std::size_t(ly.in), 0);
      for (int k = 0; k < ly.out; ++k)
        for (int j = 0; j < ly.in; ++j) {
          gin[std::size_t(j)] += ly.w[std::size_t(k * ly.in + j)] * ga[std::size_t(l)][std::size_t(k)];
          ginm[std::size_t(j)] += std::fabs(ly.w[std::size_t(k * ly.in + j)]) * gm[std::size_t(l)][std::size_t(k)];
        }
      if (skip && l > 0 && l + 1 < L && ly.out == ly.in)
        for (int j = 0; j < ly.in; ++j) gin[std::size_t(j)] += gh[std::size_t(j)], ginm[std::size_t(j)] += ghm[std::size_t(j)];
      gh = gin, ghm = ginm;
      if (l == 0) break;
      for (int j = 0; j < ly.in; ++j) {
        ga[std::size_t(l - 1)].push_back(gin[std::size_t(j)] * slope[std::size_t(l - 1)][std::size_t(j)]);
        gm[std::size_t(l - 1)].push_back(ginm[std::size_t(j)] * smag[std::size_t(l - 1)][std::size_t(j)]);
      }
    }
    r.g = gh, r.g_mag = ghm;
    for (int l = 0; l < L; ++l) {
      auto const& ly = layers[std::size_t(l)];
      for (int k = 0; k < ly.out; ++k)
        for (int j = 0; j < ly.in; ++j) {
          r.theta.push_back(ga[std::size_t(l)][std::size_t(k)] * h[std::size_t(l)][std::size_t(j)]);
          r.theta_mag.push_back(gm[std::size_t(l)][std::size_t(k)] * hm[std::size_t(l)][std::size_t(j)]);
        }
      for (int k = 0; k < ly.out; ++k) r.theta.push_back(ga[std::size_t(l)][std::size_t(k)]), r.theta_mag.push_back(gm[std::size_t(l)][std::size_t(k)]);
    }
    return r;
  }

  static std::vector<LD> abs(std::vector<LD> v) {
    for (auto& e : v) e = std::fabs(e);
    return v;
  }
};

}  // namespace ember_test
