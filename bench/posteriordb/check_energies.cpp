// check_energies: checks the posteriordb energies of posteriors.hpp without Python.
//
//   check_energies [DIR]                       DIR = bench/posteriordb (data/ and reference/ under it)
//   check_energies DIR --eval POINTS OUT       U, ∇U and the constrained parameters at given points
//
// Without --eval, for every posterior (double precision):
//   1. the names: parameter_names() and unconstrained_names() equal, in order, the constrained
//      and unconstrained entries of reference/<name>.json;
//   2. the energy is finite at 6 points around the reference posterior (y = mean + sd·z, z a fixed
//      pattern in [−2, 2], in the unconstrained coordinates, reference/<name>.json's moments);
//   3. the dual-number gradient matches central differences there (Richardson-extrapolated from
//      h = 2·10⁻³ sd and h/2 per coordinate): |g − g_fd|·sd ≤ 10⁻⁶ (1 + |g|·sd + |U|·10⁻⁴), the
//      error in U per posterior sd (10⁻⁴ for gp_pois_regr, whose energy is noisy; see below);
//   4. a SIMD batch of distinct points gives, lane by lane, the one-chain value and gradient
//      (to 10⁻¹² relative; 10⁻⁶ for gp_pois_regr): no lane of a batch leaks into another (issue 26, point 5);
//   5. the same energy in float: the largest relative error of U(y) − U(y₀) and of ∇U against
//      double is printed (information, not a failure: see README.md).
// Exit status 0 when 1–4 hold for every posterior.
//
// With --eval, POINTS has lines "name y_1 ... y_D"; OUT gets lines
// "name U g_1 ... g_D | p_1 ... p_P" (P constrained parameters), for check_posteriors.py.
#include "posteriors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace pdb = ember::posteriordb;

namespace {

struct ref_coords {
  std::vector<std::string> names;
  std::vector<double> mean, sd;
};

ref_coords read_section(pdb::json::value const& r, char const* section) {
  ref_coords out;
  for (auto const& [k, v] : r[section].members) {
    out.names.push_back(k);
    out.mean.push_back(v["mean"].as_number());
    out.sd.push_back(v["sd"].as_number());
  }
  return out;
}

// A fixed pattern of z values in [−2, 2]: point p, coordinate i.
double pattern(int p, int i) {
  if (p == 0) return 0.0;
  unsigned h = 2654435761u * unsigned(p * 131 + i * 7 + 1);
  h ^= h >> 13;
  h *= 2246822519u;
  h ^= h >> 16;
  return -2.0 + 4.0 * double(h % 10007) / 10006.0;
}

template <class P>
bool check_one(P& p, std::string const& dir) {
  constexpr int D = P::dim;
  bool ok = true;
  auto fail = [&](std::string const& what) {
    std::printf("  FAIL %s: %s\n", P::name, what.c_str());
    ok = false;
  };
  auto ref = pdb::json::read_file(dir + "/reference/" + P::name + ".json");
  auto con = read_section(ref, "constrained");
  auto unc = read_section(ref, "unconstrained");
  if (con.names != P::parameter_names()) fail("parameter names differ from reference/" + std::string(P::name) + ".json");
  if (unc.names != P::unconstrained_names()) fail("unconstrained names differ from the reference file");
  if (int(unc.names.size()) != D) fail("dimension differs from the reference file");
  if (!ok) return false;

  auto U = p.energy();
  // gp_pois_regr factorises a kernel matrix whose smallest pivots are near Stan's jitter 10⁻¹⁰,
  // so its energy carries rounding noise of ~10⁻⁸ relative (the same in Stan): differences and a
  // batch's other order of operations agree only to that noise. Every other posterior: 10⁻⁶, 10⁻¹².
  bool const noisy = std::string(P::name) == "gp_pois_regr-gp_pois_regr";
  double const loose = noisy ? 1e-4 : 1e-6, lane_tol = noisy ? 1e-6 : 1e-12;
  constexpr int NP = 6;
  std::vector<ember::vec<double, D>> pts(NP);
  for (int k = 0; k < NP; ++k)
    for (int i = 0; i < D; ++i) pts[k][i] = unc.mean[i] + unc.sd[i] * pattern(k, i);

  double worst_fd = 0;
  for (auto const& y : pts) {
    ember::vec<double, D> g;
    double u = U.value_and_grad(y, g);
    double u2 = U.value(y);
    if (!std::isfinite(u)) fail("U not finite");
    if (!(std::fabs(u - u2) <= lane_tol * (1 + std::fabs(u))))
      fail("value() differs from value_and_grad() by " + std::to_string(std::fabs(u - u2)));
    for (int i = 0; i < D; ++i) {
      // Central differences at h and h/2, Richardson-extrapolated (truncation error O(h⁴)).
      auto central = [&](double h) {
        auto a = y, b = y;
        a[i] += h;
        b[i] -= h;
        return (U.value(a) - U.value(b)) / (2 * h);
      };
      double h = 2e-3 * unc.sd[i];
      double fd = (4 * central(h / 2) - central(h)) / 3;
      double err = std::fabs(g[i] - fd) * unc.sd[i];
      double tol = loose * (1 + std::fabs(g[i]) * unc.sd[i] + 1e-4 * std::fabs(u));
      worst_fd = std::max(worst_fd, err / tol);
      if (!(err <= tol)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "gradient %d: dual %.10g, differences %.10g", i, g[i], fd);
        fail(buf);
      }
    }
  }

  // A posterior also written as a model body (reverse mode): the same gradient as the lambda's
  // duals, and the same U up to a constant (the normalisations the lambda leaves out). Both are
  // sums of the same terms in another order: 10⁻¹⁰ of the terms' scale covers their rounding
  // (about n·ε·Σ|terms|) with room, and a wrong partial is off by its own size.
  double model_err = -1;
  if constexpr (requires { p.model(); }) {
    auto const M = p.model();
    double offset = 0;
    model_err = 0;
    for (std::size_t k = 0; k < pts.size(); ++k) {
      ember::vec<double, D> g, gm;
      double const u = U.value_and_grad(pts[k], g), um = M.value_and_grad(pts[k], gm);
      if (k == 0) offset = um - u;
      double const tol = 1e-10 * (1 + std::fabs(u) * (1 + double(p.rows())));
      model_err = std::max(model_err, std::fabs((um - u) - offset) / tol);
      if (!(std::fabs(M.value(pts[k]) - um) <= tol)) fail("the model's value() differs from its value_and_grad()");
      for (int i = 0; i < D; ++i) {
        double const e = std::fabs(gm[i] - g[i]) * unc.sd[i];
        double const gt = 1e-10 * (1 + std::fabs(g[i]) * unc.sd[i] + std::fabs(u) * 1e-2);
        model_err = std::max(model_err, e / gt);
      }
    }
    if (!(model_err <= 1)) fail("the model body's reverse-mode gradient or value differs from the lambda's, " +
                                std::to_string(model_err) + " of the tolerance");
  }

  // A batch of W distinct points against W one-chain evaluations.
  using B = ember::simd_batch<double>;
  constexpr int W = int(B::size);
  double lane_err = 0;
  {
    ember::vec<B, D> yb;
    for (int i = 0; i < D; ++i) {
      alignas(64) double lanes[W];
      for (int l = 0; l < W; ++l) lanes[l] = unc.mean[i] + unc.sd[i] * pattern(10 + l, i);
      yb[i] = B::load_aligned(lanes);
    }
    ember::vec<B, D> gb;
    B ub = U.value_and_grad(yb, gb);
    B vb = U.value(yb);
    alignas(64) double uo[W], vo[W], go[D][W];
    ub.store_aligned(uo);
    vb.store_aligned(vo);
    for (int i = 0; i < D; ++i) gb[i].store_aligned(go[i]);
    for (int l = 0; l < W; ++l) {
      ember::vec<double, D> y, g;
      for (int i = 0; i < D; ++i) y[i] = unc.mean[i] + unc.sd[i] * pattern(10 + l, i);
      double u = U.value_and_grad(y, g);
      lane_err = std::max(lane_err, std::fabs(uo[l] - u) / (1 + std::fabs(u)));
      lane_err = std::max(lane_err, std::fabs(vo[l] - u) / (1 + std::fabs(u)));
      for (int i = 0; i < D; ++i) lane_err = std::max(lane_err, std::fabs(go[i][l] - g[i]) / (1 + std::fabs(g[i])));
    }
    if (!(lane_err < lane_tol)) fail("a SIMD batch differs from one-chain evaluations, relative " + std::to_string(lane_err));
  }

  // Float against double (information).
  double f_u = 0, f_g = 0;
  {
    pdb::rebind_t<P, float> q(dir + "/data");
    auto Uf = q.energy();
    ember::vec<float, D> y0f;
    for (int i = 0; i < D; ++i) y0f[i] = float(pts[0][i]);
    ember::vec<float, D> gf;
    double u0f = Uf.value_and_grad(y0f, gf);
    ember::vec<double, D> y0d, gd;
    for (int i = 0; i < D; ++i) y0d[i] = double(y0f[i]);
    double u0d = U.value_and_grad(y0d, gd);
    for (int k = 1; k < NP; ++k) {
      ember::vec<float, D> yf;
      ember::vec<double, D> yd, gdd;
      for (int i = 0; i < D; ++i) {
        yf[i] = float(pts[k][i]);
        yd[i] = double(yf[i]);
      }
      double uf = Uf.value_and_grad(yf, gf);
      double ud = U.value_and_grad(yd, gdd);
      double scale = std::fabs(ud - u0d) + 1;
      f_u = std::max(f_u, std::fabs((uf - u0f) - (ud - u0d)) / scale);
      double gn = 0, ge = 0;
      for (int i = 0; i < D; ++i) {
        gn = std::max(gn, std::fabs(gdd[i]) * unc.sd[i]);
        ge = std::max(ge, std::fabs(double(gf[i]) - gdd[i]) * unc.sd[i]);
      }
      f_g = std::max(f_g, ge / (gn + 1));
      if (!std::isfinite(uf)) f_u = INFINITY;
    }
  }

  std::printf("  %-46s D=%2d rows=%5lld  fd %.2g of tol, lanes %.1e, float: dU %.1e grad %.1e", P::name, D,
              (long long)p.rows(), worst_fd, lane_err, f_u, f_g);
  if (model_err >= 0) std::printf(", model %.2g of tol", model_err);
  std::printf("  %s\n", ok ? "ok" : "FAILED");
  return ok;
}

template <class P>
void eval_one(P& p, std::vector<std::pair<std::string, std::vector<double>>> const& pts, std::ostream& out) {
  constexpr int D = P::dim;
  auto U = p.energy();
  for (auto const& [name, v] : pts) {
    if (name != P::name) continue;
    if (int(v.size()) != D) throw std::runtime_error(std::string("--eval: wrong dimension for ") + P::name);
    ember::vec<double, D> y, g;
    for (int i = 0; i < D; ++i) y[i] = v[i];
    double u = U.value_and_grad(y, g);
    out << name;
    char buf[40];
    std::snprintf(buf, sizeof buf, " %.17g", u);
    out << buf;
    for (int i = 0; i < D; ++i) {
      std::snprintf(buf, sizeof buf, " %.17g", g[i]);
      out << buf;
    }
    out << " |";
    for (double c : p.constrain(y)) {
      std::snprintf(buf, sizeof buf, " %.17g", c);
      out << buf;
    }
    out << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : std::string(EMBER_POSTERIORDB_DIR);
  try {
    if (argc > 4 && std::string(argv[2]) == "--eval") {
      std::ifstream in(argv[3]);
      if (!in) throw std::runtime_error(std::string("cannot open ") + argv[3]);
      std::vector<std::pair<std::string, std::vector<double>>> pts;
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string name;
        if (!(ls >> name)) continue;
        std::vector<double> v;
        double a;
        while (ls >> a) v.push_back(a);
        pts.emplace_back(name, v);
      }
      std::ofstream out(argv[4]);
      pdb::for_each_posterior<double>(dir + "/data", [&](auto& p) { eval_one(p, pts, out); });
      return out ? 0 : 1;
    }
    int failed = 0, n = 0;
    std::printf("posteriordb energies (double): gradients against central differences, SIMD lanes (%d doubles), float\n",
                int(ember::simd_batch<double>::size));
    pdb::for_each_posterior<double>(dir + "/data", [&](auto& p) {
      ++n;
      if (!check_one(p, dir)) ++failed;
    });
    std::printf("%d of %d posteriors pass\n", n - failed, n);
    return failed == 0 && n == pdb::posterior_count ? 0 : 1;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "check_energies: %s\n", e.what());
    return 2;
  }
}
