#pragma once
/// \file
/// `targets::hier_logit<T>`: a three-level hierarchical logistic regression (rows in counties in
/// states, non-centred), 60 parameters, as a model body (ad/model.hpp): the model a Bayesian user
/// brings (../shared/models/hier_logit/README.md states it in NumPyro), and the benchmark of
/// issue 35 for reverse-mode gradients.
///
///     yᵢ ~ Bernoulli(logit⁻¹(α[countyᵢ] + xᵢ·β)),  α_j = μ + σ_state u[state_j] + σ_county z_j,
///     μ ~ N(0, 2.5²), σ_state, σ_county ~ HalfNormal(1), β_k, u_s, z_j ~ N(0, 1).
///
/// Position: μ, log σ_state, log σ_county, β (3), u (6), z (48); `reported(x)` gives σ instead of
/// log σ. The data come from `.npy` files (the shared simulate.py's layout) or from
/// `simulated(seed, n)`, ember's own generator of the same structure.

#include <ember/ad/model.hpp>
#include <ember/core/rng.hpp>
#include <ember/data/dataset.hpp>
#include <ember/io/npy.hpp>
#include <ember/distributions.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::targets {

/// The model's body: reads X (n × 3), y (n), county (n, in [0, 48)) and state (48, in [0, 6)).
template <class T>
struct hier_logit_body {
  static constexpr auto alpha0 = param<"alpha0">();
  static constexpr auto sigma_state = param<"sigma_state">(positive);
  static constexpr auto sigma_county = param<"sigma_county">(positive);
  static constexpr auto beta = param<"beta", 3>();
  static constexpr auto u = param<"u", 6>();
  static constexpr auto z = param<"z", 48>();
  static constexpr auto params = ember::params(alpha0, sigma_state, sigma_county, beta, u, z);
  data_view<T> X, y, county, state;

  template <class M>
  EMBER_HD void operator()(M& m) const {
    m.add(normal_lpdf(m[alpha0], 0.0, 2.5));
    m.add(normal_lpdf(m[sigma_state], 0.0, 1.0) + normal_lpdf(m[sigma_county], 0.0, 1.0));  // half-normal, up to log 2
    m.add(normal_lpdf(m[beta], 0.0, 1.0) + normal_lpdf(m[u], 0.0, 1.0) + normal_lpdf(m[z], 0.0, 1.0));
    auto const alpha = let<48>(m, [&](int j) { return m[alpha0] + m[sigma_state] * m[u][int(state.data[j])] + m[sigma_county] * m[z][j]; });
    m.add_rows(X.rows, [&](std::int64_t i) { return bernoulli_logit_lpmf(y.data[i], alpha[int(county.data[i])] + dot(X.row(i), m[beta])); });
  }

  template <class F>
  void for_each_view(F&& f) {
    f(X);
    f(y);
    f(county);
    f(state);
  }
};

template <class T = float>
class hier_logit {
 public:
  using body_type = hier_logit_body<T>;
  static constexpr int dim = decltype(body_type::params)::free_dim;

  /// From tables already loaded: X (n × 3), y (n × 1, 0/1), county (n × 1, integers in [0, 48)),
  /// state (48 × 1, integers in [0, 6)). Throws on any other shape or value.
  hier_logit(dataset<T> X, dataset<T> y, dataset<T> county, dataset<T> state)
      : X_(std::move(X)), y_(std::move(y)), county_(std::move(county)), state_(std::move(state)) {
    auto bad = [](std::string const& what) {
      throw std::invalid_argument("ember::targets::hier_logit: " + what);
    };
    std::int64_t const n = X_.rows();
    if (X_.cols() != 3 || n < 1) bad("X must have 3 columns and at least one row");
    if (y_.rows() != n || y_.cols() != 1 || county_.rows() != n || county_.cols() != 1)
      bad("y and county must be columns with as many rows as X");
    if (state_.rows() != 48 || state_.cols() != 1) bad("state must be a column of 48 values (one per county)");
    for (std::int64_t i = 0; i < n; ++i) {
      T const c = county_(i, 0), yy = y_(i, 0);
      if (!(c >= 0 && c < 48 && c == std::floor(c))) bad("county of row " + std::to_string(i) + " is not an integer in [0, 48)");
      if (!(yy == 0 || yy == 1)) bad("y of row " + std::to_string(i) + " is not 0 or 1");
    }
    for (int j = 0; j < 48; ++j) {
      T const s = state_(j, 0);
      if (!(s >= 0 && s < 6 && s == std::floor(s))) bad("state of county " + std::to_string(j) + " is not an integer in [0, 6)");
    }
  }

  /// The files simulate.py writes in `dir`: X.npy, y.npy, county.npy, state_of_county.npy.
  static hier_logit from_npy(std::string const& dir) {
    return {dataset<T>::from_npy(dir + "/X.npy"), dataset<T>::from_npy(dir + "/y.npy"),
            dataset<T>::from_npy(dir + "/county.npy"), dataset<T>::from_npy(dir + "/state_of_county.npy")};
  }

  /// n rows drawn from the model at μ = −0.5, σ_state = 0.7, σ_county = 0.5, β = (0.8, −0.5,
  /// 0.3), u and z standard normal; 8 counties per state. Deterministic in `seed`.
  static hier_logit simulated(std::uint64_t seed = 1, std::int64_t n = 2000) {
    // Normals and uniforms from ember's Philox streams (core/rng.hpp), not <random>'s
    // distributions, whose algorithms differ between standard libraries: the same data everywhere.
    std::uint32_t block = 0;
    int next = 4;
    vec<double, 4> four{};
    auto normal = [&] {
      if (next == 4) {
        four = make_chain_rng<double>(seed, 0, block++).template normal<4, false>(purpose::user);
        next = 0;
      }
      return four[next++];
    };
    std::vector<T> X(static_cast<std::size_t>(3 * n)), y(static_cast<std::size_t>(n)), county(static_cast<std::size_t>(n)), state(48);
    double u[6], z[48], alpha[48];
    for (double& v : u) v = normal();
    for (double& v : z) v = normal();
    for (int j = 0; j < 48; ++j) {
      state[std::size_t(j)] = T(j / 8);
      alpha[j] = -0.5 + 0.7 * u[j / 8] + 0.5 * z[j];
    }
    double const beta[3] = {0.8, -0.5, 0.3};
    for (std::int64_t i = 0; i < n; ++i) {
      auto const un = make_chain_rng<double>(seed, 1, std::uint32_t(i)).template uniform<2>(purpose::user);  // in (0, 1]
      int const c = int(std::ceil(un[0] * 48)) - 1;
      double eta = alpha[c];
      for (int k = 0; k < 3; ++k) {
        X[std::size_t(3 * i + k)] = T(normal());
        eta += beta[k] * double(X[std::size_t(3 * i + k)]);
      }
      county[std::size_t(i)] = T(c);
      y[std::size_t(i)] = T(un[1] < 1 / (1 + std::exp(-eta)) ? 1 : 0);
    }
    return {dataset<T>(std::move(X), n, 3), dataset<T>(std::move(y), n, 1), dataset<T>(std::move(county), n, 1),
            dataset<T>(std::move(state), 48, 1)};
  }

  /// Writes the tables as `from_npy` reads them: X.npy (n × 3), y.npy, county.npy (n), and
  /// state_of_county.npy (48), in float64.
  void save_npy(std::string const& dir) const {
    auto write = [&](std::string const& name, dataset<T> const& d, bool matrix) {
      std::vector<double> v;
      for (std::int64_t i = 0; i < d.rows(); ++i)
        for (int c = 0; c < d.cols(); ++c) v.push_back(double(d(i, c)));
      std::vector<std::size_t> shape{std::size_t(d.rows())};
      if (matrix) shape.push_back(std::size_t(d.cols()));
      write_npy(dir + "/" + name, v.data(), shape);
    };
    write("X.npy", X_, true);
    write("y.npy", y_, false);
    write("county.npy", county_, false);
    write("state_of_county.npy", state_, false);
  }

  body_type body() const { return {X_.view(), y_.view(), county_.view(), state_.view()}; }
  /// The posterior's energy, reverse-mode gradients; holds views of this object's data.
  auto energy() const { return model<T>(body()); }

  /// μ, σ_state, σ_county, β, u, z (σ = e^{log σ}).
  template <class S>
  vec<double, dim> reported(vec<S, dim> const& x) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    r[1] = std::exp(r[1]);
    r[2] = std::exp(r[2]);
    return r;
  }

  std::int64_t rows() const { return X_.rows(); }

 private:
  dataset<T> X_, y_, county_, state_;
};

}  // namespace ember::targets
