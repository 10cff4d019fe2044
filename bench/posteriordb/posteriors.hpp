#pragma once
/// \file
/// posteriordb reference posteriors (https://github.com/stan-dev/posteriordb, BSD-3-Clause) as
/// ember energies, for tests and benchmarks against posteriordb's reference draws (Stan NUTS,
/// 10 chains x 1,000 draws; moments derived in reference/<name>.json, see README.md).
///
/// Each posterior is a class template over the energy's precision T (float or double; the
/// Gaussian-process posteriors and the regressions on unscaled predictors want double) with
///
///   static constexpr int dim;                     // D, the unconstrained dimension
///   static constexpr char const* name;            // posteriordb's posterior name
///   static constexpr char const* data_file;       // file under data/ (posteriordb's data name)
///   explicit P(std::string const& data_dir);      // reads data_dir/data_file (throws if absent or wrong)
///   auto energy() const;                          // custom_energy<D, T>: U(y) = −log p(params(y)) − log|J(y)|
///   std::int64_t rows() const;                    // observations in the data
///   static std::vector<std::string> parameter_names();      // constrained, as posteriordb names them
///   static std::vector<std::string> unconstrained_names();  // the energy's coordinates
///   std::vector<double> constrain(vec<double, D> const& y) const;  // y -> parameters (same order as names)
///
/// The energy is written in the UNCONSTRAINED coordinates y the sampler moves in, with the
/// log-Jacobian of every transform included, and with the priors exactly as the Stan program
/// states them (an improper flat prior where the program states none); additive constants are
/// dropped. It is a generic lambda over `vec<S, D>`, so its gradient comes from dual numbers.
/// The lambda holds pointers into the posterior object's data: the posterior object must outlive
/// every copy of the energy (as with ember's targets that own datasets).
///
/// `for_each_posterior<T>(data_dir, f)` calls `f(p)` for one object of every posterior.

#include <ember/ember.hpp>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember::posteriordb {

// ---------------------------------------------------------------------------------------------
// A small JSON reader: enough for posteriordb's data files and reference/*.json (objects,
// arrays, numbers, strings, true/false/null). Arrays of arrays are kept as nested values.
namespace json {

struct member;
struct value {
  enum kind_t { null, boolean, number, string, array, object } kind = null;
  double num = 0;
  bool b = false;
  std::string str;
  std::vector<value> items;
  // A struct of its own rather than std::pair: a pair of an incomplete type is ill-formed, which
  // clang with libstdc++ refuses (a vector of an incomplete class is fine since C++17).
  std::vector<member> members;

  bool has(std::string const& k) const;
  value const& operator[](std::string const& k) const;
  double as_number() const {
    if (kind != number) throw std::runtime_error("posteriordb json: expected a number");
    return num;
  }
  /// A number or an array (of arrays) of numbers, flattened row-major.
  std::vector<double> as_numbers() const {
    std::vector<double> out;
    flatten(out);
    return out;
  }

 private:
  void flatten(std::vector<double>& out) const {
    if (kind == number)
      out.push_back(num);
    else if (kind == array)
      for (auto const& v : items) v.flatten(out);
    else
      throw std::runtime_error("posteriordb json: expected numbers");
  }
};
struct member {
  std::string first;
  value second;
};
inline bool value::has(std::string const& k) const {
  for (auto const& m : members)
    if (m.first == k) return true;
  return false;
}
inline value const& value::operator[](std::string const& k) const {
  for (auto const& m : members)
    if (m.first == k) return m.second;
  throw std::runtime_error("posteriordb json: no member \"" + k + "\"");
}

class parser {
 public:
  explicit parser(std::string s) : s_(std::move(s)) {}
  value parse() {
    value v = parse_value();
    skip();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  std::string s_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(char const* what) const {
    throw std::runtime_error(std::string("posteriordb json: ") + what + " at offset " + std::to_string(i_));
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::string parse_string() {
    if (!eat('"')) fail("expected a string");
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        ++i_;
        if (i_ >= s_.size()) fail("bad escape");
        char c = s_[i_];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;  // \uXXXX is not needed here
      } else {
        out += s_[i_];
      }
      ++i_;
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }
  value parse_value() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    value v;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.kind = value::object;
      if (eat('}')) return v;
      do {
        std::string k = parse_string();
        if (!eat(':')) fail("expected ':'");
        v.members.push_back(member{std::move(k), parse_value()});
      } while (eat(','));
      if (!eat('}')) fail("expected '}'");
    } else if (c == '[') {
      ++i_;
      v.kind = value::array;
      if (eat(']')) return v;
      do v.items.push_back(parse_value());
      while (eat(','));
      if (!eat(']')) fail("expected ']'");
    } else if (c == '"') {
      v.kind = value::string;
      v.str = parse_string();
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 5, "false") == 0) {
      v.kind = value::boolean;
      v.b = s_[i_] == 't';
      i_ += v.b ? 4 : 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      char const* begin = s_.c_str() + i_;
      char* end = nullptr;
      v.kind = value::number;
      v.num = std::strtod(begin, &end);
      if (end == begin) fail("expected a value");
      i_ += std::size_t(end - begin);
    }
    return v;
  }
};

inline value read_file(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("posteriordb: cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parser(ss.str()).parse();
}

}  // namespace json

namespace detail {

inline json::value read_data(std::string const& dir, char const* file) { return json::read_file(dir + "/" + file); }

inline std::vector<double> column(json::value const& d, char const* k, std::size_t n) {
  auto v = d[k].as_numbers();
  if (v.size() != n)
    throw std::runtime_error(std::string("posteriordb: data column ") + k + " has " + std::to_string(v.size()) +
                             " values, expected " + std::to_string(n));
  return v;
}

inline std::vector<std::string> indexed(char const* base, int n) {
  std::vector<std::string> out;
  for (int k = 1; k <= n; ++k) out.push_back(std::string(base) + "[" + std::to_string(k) + "]");
  return out;
}

template <class T>
std::vector<T> cast(std::vector<double> const& v) {
  return std::vector<T>(v.begin(), v.end());
}

inline double logistic(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

// −log of the half-Cauchy(0, c) density of σ = eˢ, without constants: log(1 + σ²/c²).
template <class S, class T>
S half_cauchy(S const& s, T c) {
  return log1p(exp(S(T(2)) * s) * T(1 / (double(c) * double(c))));
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Linear regression y ~ normal(X β, σ), σ = eˢ, coordinates (β₁..β_K, s). Prior: a functor
// `prior(x)` over the coordinates returning −log p(β, σ) (no Jacobian). The Jacobian term −s
// and the likelihood n s + Σ rᵢ²/(2σ²) are added here.
namespace detail {

struct flat_prior {
  template <class V>
  auto operator()(V const& x) const {
    using S = std::decay_t<decltype(x[0])>;
    return S(0);
  }
};
template <int K>
struct half_cauchy_sigma_prior {  // sigma ~ cauchy(0, c), sigma > 0
  double c;
  template <class V>
  auto operator()(V const& x) const {
    using S = std::decay_t<decltype(x[0])>;
    using T = element_t<S>;
    return half_cauchy(x[K], T(c));
  }
};

template <class T, int K, class Prior>
class linear_regression_posterior {
 public:
  static constexpr int dim = K + 1;

  std::int64_t rows() const { return n_; }

  auto energy() const {
    return custom_energy<dim, T>([X = X_.data(), y = y_.data(), n = n_, prior = prior_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S s = x[K];
      S ss = S(T(0));
      for (std::int64_t i = 0; i < n; ++i) {
        S eta = x[0] * X[i * K];
        for (int k = 1; k < K; ++k) eta = eta + x[k] * X[i * K + k];
        S r = eta - y[i];
        ss = ss + r * r;
      }
      // n log σ + Σ r²/(2σ²) + prior − log J (J = eˢ)
      return ss * (T(0.5) * exp(T(-2) * s)) + T(double(n)) * s + prior(x) - s;
    });
  }

  std::vector<double> constrain(vec<double, dim> const& y) const {
    std::vector<double> out(std::begin(y.v), std::end(y.v));
    out[K] = std::exp(y[K]);
    return out;
  }

 protected:
  // X is n × K row-major with the intercept column as the Stan program builds it.
  void set(std::vector<double> const& X, std::vector<double> const& y, Prior p) {
    n_ = std::int64_t(y.size());
    if (X.size() != y.size() * K) throw std::runtime_error("posteriordb: design matrix of the wrong size");
    X_ = cast<T>(X);
    y_ = cast<T>(y);
    prior_ = p;
  }
  static std::vector<std::string> beta_names(std::vector<std::string> b) {
    b.push_back("sigma");
    return b;
  }
  static std::vector<std::string> beta_unames(std::vector<std::string> b) {
    b.push_back("log(sigma)");
    return b;
  }

  std::vector<T> X_, y_;
  std::int64_t n_ = 0;
  Prior prior_{};
};

}  // namespace detail


namespace detail {
inline std::vector<std::string> names(std::vector<std::string> a, std::vector<std::string> const& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
template <int K>
struct blr_prior {  // beta ~ normal(0, 10), sigma ~ normal(0, 10) with sigma > 0
  template <class V>
  auto operator()(V const& x) const {
    using S = std::decay_t<decltype(x[0])>;
    using T = element_t<S>;
    S b2 = x[0] * x[0];
    for (int k = 1; k < K; ++k) b2 = b2 + x[k] * x[k];
    return (b2 + exp(T(2) * x[K])) * T(1.0 / 200);
  }
};
struct kilpisjarvi_prior {  // alpha ~ normal(m_a, s_a), beta ~ normal(m_b, s_b)
  double ma, sa, mb, sb;
  template <class V>
  auto operator()(V const& x) const {
    using S = std::decay_t<decltype(x[0])>;
    using T = element_t<S>;
    S a = (x[0] - T(ma)) * T(1 / sa), b = (x[1] - T(mb)) * T(1 / sb);
    return T(0.5) * (a * a + b * b);
  }
};
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Linear regressions.

/// kidiq-kidscore_interaction: kid_score ~ normal(β₁ + β₂ mom_hs + β₃ mom_iq + β₄ mom_hs·mom_iq, σ),
/// σ ~ cauchy(0, 2.5), β flat. Unscaled predictors (mom_iq ≈ 100): strongly correlated β.
template <class T = double>
class kidiq_interaction : public detail::linear_regression_posterior<T, 4, detail::half_cauchy_sigma_prior<4>> {
 public:
  static constexpr char const* name = "kidiq-kidscore_interaction";
  static constexpr char const* data_file = "kidiq.json";
  explicit kidiq_interaction(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto ks = detail::column(d, "kid_score", n), hs = detail::column(d, "mom_hs", n), iq = detail::column(d, "mom_iq", n);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) X.insert(X.end(), {1.0, hs[i], iq[i], hs[i] * iq[i]});
    this->set(X, ks, {2.5});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 4), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 4), {"log(sigma)"}); }
};

/// kidiq-kidscore_momiq: kid_score ~ normal(β₁ + β₂ mom_iq, σ), σ ~ cauchy(0, 2.5), β flat.
template <class T = double>
class kidiq_momiq : public detail::linear_regression_posterior<T, 2, detail::half_cauchy_sigma_prior<2>> {
 public:
  static constexpr char const* name = "kidiq-kidscore_momiq";
  static constexpr char const* data_file = "kidiq.json";
  explicit kidiq_momiq(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto ks = detail::column(d, "kid_score", n), iq = detail::column(d, "mom_iq", n);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) X.insert(X.end(), {1.0, iq[i]});
    this->set(X, ks, {2.5});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 2), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 2), {"log(sigma)"}); }
};

/// kidiq_with_mom_work-kidscore_interaction_z: predictors centred and divided by 2 sd (sd with
/// N − 1, as Stan's sd()), their product as the interaction; no priors (flat β and σ).
template <class T = double>
class kidiq_interaction_z : public detail::linear_regression_posterior<T, 4, detail::flat_prior> {
 public:
  static constexpr char const* name = "kidiq_with_mom_work-kidscore_interaction_z";
  static constexpr char const* data_file = "kidiq_with_mom_work.json";
  explicit kidiq_interaction_z(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto ks = detail::column(d, "kid_score", n), hs = detail::column(d, "mom_hs", n), iq = detail::column(d, "mom_iq", n);
    auto z = [n](std::vector<double> v) {
      double m = 0, q = 0;
      for (double a : v) m += a;
      m /= double(n);
      for (double a : v) q += (a - m) * (a - m);
      double sd = std::sqrt(q / double(n - 1));
      for (double& a : v) a = (a - m) / (2 * sd);
      return v;
    };
    auto zh = z(hs), zi = z(iq);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) X.insert(X.end(), {1.0, zh[i], zi[i], zh[i] * zi[i]});
    this->set(X, ks, {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 4), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 4), {"log(sigma)"}); }
};

/// posteriordb's `blr` model on a data set with X (N × 5) and y: β ~ normal(0, 10), σ ~ normal(0, 10)
/// with σ > 0, y ~ normal(Xβ, σ) (no intercept).
template <class T, char const* Name, char const* File>
class blr_posterior : public detail::linear_regression_posterior<T, 5, detail::blr_prior<5>> {
 public:
  static constexpr char const* name = Name;
  static constexpr char const* data_file = File;
  explicit blr_posterior(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    if (d["D"].as_number() != 5) throw std::runtime_error("posteriordb: blr data with D != 5");
    auto X = detail::column(d, "X", n * 5);  // rows of 5, row-major as in the JSON
    this->set(X, detail::column(d, "y", n), {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 5), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 5), {"log(sigma)"}); }
};
namespace detail {
inline constexpr char sblrc_name[] = "sblrc-blr";
inline constexpr char sblrc_file[] = "sblrc.json";
inline constexpr char sblri_name[] = "sblri-blr";
inline constexpr char sblri_file[] = "sblri.json";
}  // namespace detail
/// sblrc-blr: simulated, 100 rows, predictors with sd ≈ 200 and posterior correlations 0.8.
template <class T = double>
using sblrc_blr = blr_posterior<T, detail::sblrc_name, detail::sblrc_file>;
/// sblri-blr: as sblrc with independent coefficients.
template <class T = double>
using sblri_blr = blr_posterior<T, detail::sblri_name, detail::sblri_file>;

/// earnings-earn_height: earn ~ normal(β₁ + β₂ height, σ), flat priors; earn in dollars
/// (σ ≈ 19,000), height in inches: a badly scaled posterior.
template <class T = double>
class earn_height : public detail::linear_regression_posterior<T, 2, detail::flat_prior> {
 public:
  static constexpr char const* name = "earnings-earn_height";
  static constexpr char const* data_file = "earnings.json";
  explicit earn_height(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto e = detail::column(d, "earn", n), h = detail::column(d, "height", n);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) X.insert(X.end(), {1.0, h[i]});
    this->set(X, e, {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 2), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 2), {"log(sigma)"}); }
};

/// earnings-logearn_interaction: log(earn) ~ normal(β₁ + β₂ height + β₃ male + β₄ height·male, σ), flat.
template <class T = double>
class logearn_interaction : public detail::linear_regression_posterior<T, 4, detail::flat_prior> {
 public:
  static constexpr char const* name = "earnings-logearn_interaction";
  static constexpr char const* data_file = "earnings.json";
  explicit logearn_interaction(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto e = detail::column(d, "earn", n), h = detail::column(d, "height", n), m = detail::column(d, "male", n);
    std::vector<double> X, y;
    for (std::size_t i = 0; i < n; ++i) {
      X.insert(X.end(), {1.0, h[i], m[i], h[i] * m[i]});
      y.push_back(std::log(e[i]));
    }
    this->set(X, y, {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 4), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 4), {"log(sigma)"}); }
};

/// kilpisjarvi_mod-kilpisjarvi: y ~ normal(α + β x, σ) with x the year + 2000 (≈ 4,000), so α and
/// β are almost perfectly correlated; α ~ normal(pmualpha, psalpha), β ~ normal(pmubeta, psbeta)
/// from the data file, σ flat. Needs double.
template <class T = double>
class kilpisjarvi : public detail::linear_regression_posterior<T, 2, detail::kilpisjarvi_prior> {
 public:
  static constexpr char const* name = "kilpisjarvi_mod-kilpisjarvi";
  static constexpr char const* data_file = "kilpisjarvi_mod.json";
  explicit kilpisjarvi(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto x = detail::column(d, "x", n), y = detail::column(d, "y", n);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) X.insert(X.end(), {1.0, x[i]});
    this->set(X, y,
              {d["pmualpha"].as_number(), d["psalpha"].as_number(), d["pmubeta"].as_number(), d["psbeta"].as_number()});
  }
  static std::vector<std::string> parameter_names() { return {"alpha", "beta", "sigma"}; }
  static std::vector<std::string> unconstrained_names() { return {"alpha", "beta", "log(sigma)"}; }
};

/// mesquite-mesquite: weight ~ normal(β₁ + β₂ diam1 + β₃ diam2 + β₄ canopy_height + β₅ total_height
/// + β₆ density + β₇ group, σ), flat priors; 46 rows.
template <class T = double>
class mesquite : public detail::linear_regression_posterior<T, 7, detail::flat_prior> {
 public:
  static constexpr char const* name = "mesquite-mesquite";
  static constexpr char const* data_file = "mesquite.json";
  explicit mesquite(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto d1 = detail::column(d, "diam1", n), d2 = detail::column(d, "diam2", n), ch = detail::column(d, "canopy_height", n),
         th = detail::column(d, "total_height", n), de = detail::column(d, "density", n), g = detail::column(d, "group", n);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) X.insert(X.end(), {1.0, d1[i], d2[i], ch[i], th[i], de[i], g[i]});
    this->set(X, detail::column(d, "weight", n), {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 7), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 7), {"log(sigma)"}); }
};

/// mesquite-logmesquite_logvash: log(weight) ~ normal(β₁ + β₂ log(d1 d2 ch) + β₃ log(d1 d2)
/// + β₄ log(d1/d2) + β₅ log(total_height) + β₆ group, σ), flat priors.
template <class T = double>
class logmesquite_logvash : public detail::linear_regression_posterior<T, 6, detail::flat_prior> {
 public:
  static constexpr char const* name = "mesquite-logmesquite_logvash";
  static constexpr char const* data_file = "mesquite.json";
  explicit logmesquite_logvash(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto d1 = detail::column(d, "diam1", n), d2 = detail::column(d, "diam2", n), ch = detail::column(d, "canopy_height", n),
         th = detail::column(d, "total_height", n), g = detail::column(d, "group", n), w = detail::column(d, "weight", n);
    std::vector<double> X, y;
    for (std::size_t i = 0; i < n; ++i) {
      X.insert(X.end(), {1.0, std::log(d1[i] * d2[i] * ch[i]), std::log(d1[i] * d2[i]), std::log(d1[i] / d2[i]),
                         std::log(th[i]), g[i]});
      y.push_back(std::log(w[i]));
    }
    this->set(X, y, {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 6), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 6), {"log(sigma)"}); }
};

/// nes2000-nes: partyid7 ~ normal(β₁ + β₂ real_ideo + β₃ race_adj + β₄ [age 30-44] + β₅ [45-64]
/// + β₆ [65+] + β₇ educ1 + β₈ gender + β₉ income, σ), flat priors; 476 rows.
template <class T = double>
class nes2000 : public detail::linear_regression_posterior<T, 9, detail::flat_prior> {
 public:
  static constexpr char const* name = "nes2000-nes";
  static constexpr char const* data_file = "nes2000.json";
  explicit nes2000(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    auto n = std::size_t(d["N"].as_number());
    auto ideo = detail::column(d, "real_ideo", n), race = detail::column(d, "race_adj", n),
         age = detail::column(d, "age_discrete", n), educ = detail::column(d, "educ1", n),
         gender = detail::column(d, "gender", n), income = detail::column(d, "income", n);
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i)
      X.insert(X.end(), {1.0, ideo[i], race[i], age[i] == 2 ? 1.0 : 0.0, age[i] == 3 ? 1.0 : 0.0, age[i] == 4 ? 1.0 : 0.0,
                         educ[i], gender[i], income[i]});
    this->set(X, detail::column(d, "partyid7", n), {});
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("beta", 9), {"sigma"}); }
  static std::vector<std::string> unconstrained_names() { return detail::names(detail::indexed("beta", 9), {"log(sigma)"}); }
};

// ---------------------------------------------------------------------------------------------
/// eight_schools-eight_schools_noncentered: coordinates (θ̃₁..θ̃₈, μ, s = log τ); θ = μ + τθ̃,
/// θ̃ ~ normal(0, 1), y ~ normal(θ, σ), μ ~ normal(0, 5), τ ~ cauchy(0, 5) with τ > 0.
/// Reported as posteriordb's draws name them: θ₁..θ₈, μ, τ.
template <class T = double>
class eight_schools_noncentered {
 public:
  static constexpr int dim = 10;
  static constexpr char const* name = "eight_schools-eight_schools_noncentered";
  static constexpr char const* data_file = "eight_schools.json";
  explicit eight_schools_noncentered(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    if (d["J"].as_number() != 8) throw std::runtime_error("posteriordb: eight_schools needs J = 8");
    auto y = detail::column(d, "y", 8), s = detail::column(d, "sigma", 8);
    for (int j = 0; j < 8; ++j) {
      y_[j] = T(y[j]);
      sd_[j] = T(s[j]);
      inv_sd_[j] = T(1 / s[j]);
    }
  }
  std::int64_t rows() const { return 8; }
  /// The same posterior as a model body (reverse-mode gradient), written as the Stan program reads.
  struct body {
    std::array<T, 8> y, sigma;
    template <class M>
    void operator()(M& m) const {
      auto const tau = m.positive(m[9]);
      m.add(normal_lpdf(m[8], 0.0, 5.0));
      m.add(cauchy_lpdf(tau, 0.0, 5.0));
      for (int j = 0; j < 8; ++j) {
        m.add(normal_lpdf(m[j], 0.0, 1.0));
        m.add(normal_lpdf(y[j], m[8] + tau * m[j], sigma[j]));
      }
    }
  };
  auto model() const { return ember::model<dim, T>(body{y_, sd_}); }
  auto energy() const {
    return custom_energy<dim, T>([y = y_, w = inv_sd_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S mu = x[8], s = x[9], tau = exp(s);
      S u = mu * mu * T(1.0 / 50) + detail::half_cauchy(s, T(5)) - s;
      for (int j = 0; j < 8; ++j) {
        S r = (mu + tau * x[j] - y[j]) * w[j];
        u = u + T(0.5) * (x[j] * x[j] + r * r);
      }
      return u;
    });
  }
  static std::vector<std::string> parameter_names() { return detail::names(detail::indexed("theta", 8), {"mu", "tau"}); }
  static std::vector<std::string> unconstrained_names() {
    return detail::names(detail::indexed("theta_trans", 8), {"mu", "log(tau)"});
  }
  std::vector<double> constrain(vec<double, dim> const& x) const {
    std::vector<double> out(10);
    double tau = std::exp(x[9]);
    for (int j = 0; j < 8; ++j) out[j] = x[8] + tau * x[j];
    out[8] = x[8];
    out[9] = tau;
    return out;
  }

 private:
  std::array<T, 8> y_{}, sd_{}, inv_sd_{};
};

// ---------------------------------------------------------------------------------------------
// Time series.

/// arK-arK: AR(5), y_t ~ normal(α + Σ_k β_k y_{t−k}, σ) for t > K; α, β ~ normal(0, 10),
/// σ ~ cauchy(0, 2.5) with σ > 0. Coordinates (α, β₁..β₅, log σ); T = 200.
template <class T = double>
class arK {
 public:
  static constexpr int K = 5;
  static constexpr int dim = K + 2;
  static constexpr char const* name = "arK-arK";
  static constexpr char const* data_file = "arK.json";
  explicit arK(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    if (d["K"].as_number() != K) throw std::runtime_error("posteriordb: arK needs K = 5");
    n_ = std::int64_t(d["T"].as_number());
    y_ = detail::cast<T>(detail::column(d, "y", std::size_t(n_)));
  }
  std::int64_t rows() const { return n_; }
  /// The same posterior as a model body (reverse-mode gradient), written as the Stan program reads.
  struct body {
    T const* y;
    std::int64_t n;
    template <class M>
    void operator()(M& m) const {
      auto const sigma = let(m, m.positive(m[K + 1]));  // the rows' scale: 1/σ and log σ once
      for (int k = 0; k <= K; ++k) m.add(normal_lpdf(m[k], 0.0, 10.0));
      m.add(cauchy_lpdf(sigma, 0.0, 2.5));
      m.add_rows(n - K, [&](std::int64_t r) {
        std::int64_t const t = r + K;
        auto const mu = m[0] + m[1] * y[t - 1] + m[2] * y[t - 2] + m[3] * y[t - 3] + m[4] * y[t - 4] + m[5] * y[t - 5];
        return normal_lpdf(y[t], mu, sigma);
      });
    }
  };
  auto model() const { return ember::model<dim, T>(body{y_.data(), n_}); }
  auto energy() const {
    return custom_energy<dim, T>([y = y_.data(), n = n_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S s = x[K + 1];
      S ss = S(T(0));
      for (std::int64_t t = K; t < n; ++t) {
        S mu = x[0];
        for (int k = 0; k < K; ++k) mu = mu + x[1 + k] * y[t - k - 1];
        S r = y[t] - mu;
        ss = ss + r * r;
      }
      S pr = x[0] * x[0];
      for (int k = 0; k < K; ++k) pr = pr + x[1 + k] * x[1 + k];
      return ss * (T(0.5) * exp(T(-2) * s)) + T(double(n - K)) * s + pr * T(1.0 / 200) + detail::half_cauchy(s, T(2.5)) - s;
    });
  }
  static std::vector<std::string> parameter_names() {
    return detail::names(detail::names({"alpha"}, detail::indexed("beta", K)), {"sigma"});
  }
  static std::vector<std::string> unconstrained_names() {
    return detail::names(detail::names({"alpha"}, detail::indexed("beta", K)), {"log(sigma)"});
  }
  std::vector<double> constrain(vec<double, dim> const& x) const {
    std::vector<double> out(std::begin(x.v), std::end(x.v));
    out[dim - 1] = std::exp(x[dim - 1]);
    return out;
  }

 private:
  std::vector<T> y_;
  std::int64_t n_ = 0;
};

/// arma-arma11: ARMA(1, 1); ν₁ = μ + φμ, ν_t = μ + φ y_{t−1} + θ err_{t−1}, err_t = y_t − ν_t ~
/// normal(0, σ); μ ~ normal(0, 10), φ, θ ~ normal(0, 2), σ ~ cauchy(0, 2.5), σ > 0. T = 200.
template <class T = double>
class arma11 {
 public:
  static constexpr int dim = 4;
  static constexpr char const* name = "arma-arma11";
  static constexpr char const* data_file = "arma.json";
  explicit arma11(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    n_ = std::int64_t(d["T"].as_number());
    y_ = detail::cast<T>(detail::column(d, "y", std::size_t(n_)));
  }
  std::int64_t rows() const { return n_; }
  auto energy() const {
    return custom_energy<dim, T>([y = y_.data(), n = n_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S mu = x[0], phi = x[1], theta = x[2], s = x[3];
      S err = y[0] - (mu + phi * mu);
      S ss = err * err;
      for (std::int64_t t = 1; t < n; ++t) {
        err = y[t] - (mu + phi * y[t - 1] + theta * err);
        ss = ss + err * err;
      }
      S pr = mu * mu * T(1.0 / 200) + (phi * phi + theta * theta) * T(1.0 / 8) + detail::half_cauchy(s, T(2.5));
      return ss * (T(0.5) * exp(T(-2) * s)) + T(double(n)) * s + pr - s;
    });
  }
  static std::vector<std::string> parameter_names() { return {"mu", "phi", "theta", "sigma"}; }
  static std::vector<std::string> unconstrained_names() { return {"mu", "phi", "theta", "log(sigma)"}; }
  std::vector<double> constrain(vec<double, dim> const& x) const { return {x[0], x[1], x[2], std::exp(x[3])}; }

 private:
  std::vector<T> y_;
  std::int64_t n_ = 0;
};

/// garch-garch11: y_t ~ normal(μ, σ_t), σ₁ = sigma1 (data), σ_t² = α₀ + α₁ (y_{t−1} − μ)² + β₁ σ_{t−1}²;
/// α₀ > 0, 0 < α₁ < 1, 0 < β₁ < 1 − α₁, flat priors on that region (α₀'s is improper).
/// Coordinates (μ, a, b, c): α₀ = eᵃ, α₁ = logistic(b), β₁ = (1 − α₁) logistic(c) (Stan's
/// lower/upper transform with the upper bound 1 − α₁), log J = a + log α₁(1 − α₁) + log(1 − α₁)
/// + log u(1 − u), u = logistic(c). T = 200.
template <class T = double>
class garch11 {
 public:
  static constexpr int dim = 4;
  static constexpr char const* name = "garch-garch11";
  static constexpr char const* data_file = "garch.json";
  explicit garch11(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    n_ = std::int64_t(d["T"].as_number());
    y_ = detail::cast<T>(detail::column(d, "y", std::size_t(n_)));
    sigma1_ = T(d["sigma1"].as_number());
  }
  std::int64_t rows() const { return n_; }
  auto energy() const {
    return custom_energy<dim, T>([y = y_.data(), n = n_, sigma1 = sigma1_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S mu = x[0], a = x[1], b = x[2], c = x[3];
      S alpha0 = exp(a), alpha1 = sigmoid(b), beta1 = sigmoid(-b) * sigmoid(c);
      S v = S(sigma1 * sigma1);  // σ_t², t = 1
      S r = y[0] - mu;
      S u = r * r * T(0.5 / (double(sigma1) * double(sigma1)));  // + log σ₁, a constant
      for (std::int64_t t = 1; t < n; ++t) {
        v = alpha0 + alpha1 * r * r + beta1 * v;
        r = y[t] - mu;
        u = u + T(0.5) * (log(v) + r * r / v);
      }
      // − log J; log α₁ = −softplus(−b), log(1 − α₁) = −softplus(b), likewise for c
      S logj = a - softplus(-b) - T(2) * softplus(b) - softplus(-c) - softplus(c);
      return u - logj;
    });
  }
  static std::vector<std::string> parameter_names() { return {"mu", "alpha0", "alpha1", "beta1"}; }
  static std::vector<std::string> unconstrained_names() {
    return {"mu", "log(alpha0)", "logit(alpha1)", "logit(beta1/(1-alpha1))"};
  }
  std::vector<double> constrain(vec<double, dim> const& x) const {
    double a1 = detail::logistic(x[2]);
    return {x[0], std::exp(x[1]), a1, (1 - a1) * detail::logistic(x[3])};
  }

 private:
  std::vector<T> y_;
  std::int64_t n_ = 0;
  T sigma1_{};
};

// ---------------------------------------------------------------------------------------------
/// low_dim_gauss_mix-low_dim_gauss_mix: y_n ~ θ normal(μ₁, σ₁) + (1 − θ) normal(μ₂, σ₂), ordered μ,
/// σ_k > 0, 0 < θ < 1; σ ~ normal(0, 2), μ ~ normal(0, 2), θ ~ beta(5, 5). Coordinates
/// (μ₁, m, s₁, s₂, t): μ₂ = μ₁ + eᵐ, σ_k = e^{s_k}, θ = logistic(t). N = 1,000.
template <class T = double>
class low_dim_gauss_mix {
 public:
  static constexpr int dim = 5;
  static constexpr char const* name = "low_dim_gauss_mix-low_dim_gauss_mix";
  static constexpr char const* data_file = "low_dim_gauss_mix.json";
  explicit low_dim_gauss_mix(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    n_ = std::int64_t(d["N"].as_number());
    y_ = detail::cast<T>(detail::column(d, "y", std::size_t(n_)));
  }
  std::int64_t rows() const { return n_; }
  /// The same posterior as a model body (reverse-mode gradient), written as the Stan program reads.
  struct body {
    T const* y;
    std::int64_t n;
    template <class M>
    void operator()(M& m) const {
      // Everything the rows share is a let: one adjoint each, 1/σ and log σ once.
      auto const mu2 = let(m, m[0] + m.positive(m[1]));  // ordered: μ₂ = μ₁ + eᵐ
      auto const sigma1 = let(m, m.positive(m[2]));
      auto const sigma2 = let(m, m.positive(m[3]));
      auto const log_theta = let(m, -softplus(-m[4]));  // θ = logistic(t)
      auto const log_1m_theta = let(m, -softplus(m[4]));
      m.add(log_theta + log_1m_theta);                                          // its log-Jacobian
      m.add(normal_lpdf(sigma1, 0.0, 2.0));
      m.add(normal_lpdf(sigma2, 0.0, 2.0));
      m.add(normal_lpdf(m[0], 0.0, 2.0));
      m.add(normal_lpdf(mu2, 0.0, 2.0));
      m.add(4.0 * (log_theta + log_1m_theta));  // beta(5, 5), up to its constant
      m.add_rows(n, [&](std::int64_t i) {
        return log_sum_exp(log_theta + normal_lpdf(y[i], m[0], sigma1), log_1m_theta + normal_lpdf(y[i], mu2, sigma2));
      });
    }
  };
  auto model() const { return ember::model<dim, T>(body{y_.data(), n_}); }
  auto energy() const {
    return custom_energy<dim, T>([y = y_.data(), n = n_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S mu1 = x[0], mu2 = x[0] + exp(x[1]), s1 = x[2], s2 = x[3], t = x[4];
      S w1 = exp(-s1), w2 = exp(-s2);
      S lt = -softplus(-t), l1t = -softplus(t);  // log θ, log(1 − θ)
      S c1 = lt - s1, c2 = l1t - s2;
      S ll = S(T(0));
      for (std::int64_t i = 0; i < n; ++i) {
        S z1 = (y[i] - mu1) * w1, z2 = (y[i] - mu2) * w2;
        S t[2] = {c1 - T(0.5) * z1 * z1, c2 - T(0.5) * z2 * z2};
        // log(eᵃ + eᵇ) shifted by the larger term: a + softplus(b − a) would lose b entirely when
        // a ≈ −10¹⁹ (σ₁ → 0 far from a point), and the sampler found those false minima of U.
        ll = ll + log_sum_exp(t);
      }
      S pr = (exp(T(2) * s1) + exp(T(2) * s2) + mu1 * mu1 + mu2 * mu2) * T(1.0 / 8) - T(4) * (lt + l1t);
      S logj = x[1] + s1 + s2 + lt + l1t;
      return pr - ll - logj;
    });
  }
  static std::vector<std::string> parameter_names() { return {"mu[1]", "mu[2]", "sigma[1]", "sigma[2]", "theta"}; }
  static std::vector<std::string> unconstrained_names() {
    return {"mu[1]", "log(mu[2]-mu[1])", "log(sigma[1])", "log(sigma[2])", "logit(theta)"};
  }
  std::vector<double> constrain(vec<double, dim> const& x) const {
    return {x[0], x[0] + std::exp(x[1]), std::exp(x[2]), std::exp(x[3]), detail::logistic(x[4])};
  }

 private:
  std::vector<T> y_;
  std::int64_t n_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Gaussian processes on N = 11 points (exponentiated-quadratic kernel, Cholesky inside the energy).
namespace detail {
/// Lower Cholesky factor of the N × N matrix K (row-major, lower triangle read) in place, for any
/// scalar type; the diagonal's logs summed into `logdet_half` (Σ log Lᵢᵢ).
template <int N, class S>
void cholesky(S (&K)[N][N], S& logdet_half) {
  logdet_half = S(element_t<S>(0));
  for (int j = 0; j < N; ++j) {
    S d = K[j][j];
    for (int k = 0; k < j; ++k) d = d - K[j][k] * K[j][k];
    S l = sqrt(d);
    K[j][j] = l;
    logdet_half = logdet_half + log(l);
    S inv = S(element_t<S>(1)) / l;
    for (int i = j + 1; i < N; ++i) {
      S a = K[i][j];
      for (int k = 0; k < j; ++k) a = a - K[i][k] * K[j][k];
      K[i][j] = a * inv;
    }
  }
}
}  // namespace detail

/// gp_pois_regr-gp_regr: y ~ multi_normal(0, K + σ I), K_ij = α² exp(−(x_i − x_j)²/(2ρ²)) (σ, not
/// σ², is added to the diagonal, as the Stan program has it); ρ ~ gamma(25, 4), α ~ normal(0, 2),
/// σ ~ normal(0, 1), all > 0. Coordinates (log ρ, log α, log σ).
template <class T = double>
class gp_regr {
 public:
  static constexpr int N = 11;
  static constexpr int dim = 3;
  static constexpr char const* name = "gp_pois_regr-gp_regr";
  static constexpr char const* data_file = "gp_pois_regr.json";
  explicit gp_regr(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    if (d["N"].as_number() != N) throw std::runtime_error("posteriordb: gp_regr needs N = 11");
    auto x = detail::column(d, "x", N), y = detail::column(d, "y", N);
    for (int i = 0; i < N; ++i) {
      y_[i] = T(y[i]);
      for (int j = 0; j < N; ++j) half_d2_[i * N + j] = T(-0.5 * (x[i] - x[j]) * (x[i] - x[j]));
    }
  }
  std::int64_t rows() const { return N; }
  auto energy() const {
    return custom_energy<dim, T>([y = y_, h = half_d2_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S lr = x[0], la = x[1], ls = x[2];
      S inv_r2 = exp(T(-2) * lr), a2 = exp(T(2) * la), sigma = exp(ls);
      S K[N][N];
      for (int i = 0; i < N; ++i) {
        for (int j = 0; j < i; ++j) K[i][j] = a2 * exp(h[i * N + j] * inv_r2);
        K[i][i] = a2 + sigma;
      }
      S half_logdet;
      detail::cholesky(K, half_logdet);
      S q = S(T(0));  // |L⁻¹ y|² by forward substitution
      S z[N];
      for (int i = 0; i < N; ++i) {
        S a = S(y[i]);
        for (int k = 0; k < i; ++k) a = a - K[i][k] * z[k];
        z[i] = a / K[i][i];
        q = q + z[i] * z[i];
      }
      // gamma(25, 4) on ρ = e^{lr} with its Jacobian: −25 lr + 4ρ; normal(0, 2) on α, normal(0, 1) on σ
      S pr = T(4) * exp(lr) - T(25) * lr + a2 * T(1.0 / 8) - la + T(0.5) * sigma * sigma - ls;
      return half_logdet + T(0.5) * q + pr;
    });
  }
  static std::vector<std::string> parameter_names() { return {"rho", "alpha", "sigma"}; }
  static std::vector<std::string> unconstrained_names() { return {"log(rho)", "log(alpha)", "log(sigma)"}; }
  std::vector<double> constrain(vec<double, dim> const& x) const { return {std::exp(x[0]), std::exp(x[1]), std::exp(x[2])}; }

 private:
  std::array<T, N> y_{};
  std::array<T, N * N> half_d2_{};
};

/// gp_pois_regr-gp_pois_regr: k_i ~ poisson_log(f_i), f = L f̃, L L' = K + 10⁻¹⁰ I (K as in gp_regr),
/// f̃ ~ normal(0, 1), ρ ~ gamma(25, 4), α ~ normal(0, 2). Coordinates (log ρ, log α, f̃₁..f̃₁₁);
/// reported as posteriordb's draws name them: ρ, α, f₁..f₁₁. Needs double (the kernel matrix is
/// near-singular; Stan's jitter of 10⁻¹⁰ is below float's resolution).
template <class T = double>
class gp_pois_regr {
 public:
  static constexpr int N = 11;
  static constexpr int dim = N + 2;
  static constexpr char const* name = "gp_pois_regr-gp_pois_regr";
  static constexpr char const* data_file = "gp_pois_regr.json";
  explicit gp_pois_regr(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    if (d["N"].as_number() != N) throw std::runtime_error("posteriordb: gp_pois_regr needs N = 11");
    auto x = detail::column(d, "x", N), k = detail::column(d, "k", N);
    for (int i = 0; i < N; ++i) {
      k_[i] = T(k[i]);
      x_[i] = x[i];
      for (int j = 0; j < N; ++j) half_d2_[i * N + j] = T(-0.5 * (x[i] - x[j]) * (x[i] - x[j]));
    }
  }
  std::int64_t rows() const { return N; }
  auto energy() const {
    return custom_energy<dim, T>([k = k_, h = half_d2_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S lr = x[0], la = x[1];
      S inv_r2 = exp(T(-2) * lr), a2 = exp(T(2) * la);
      S K[N][N];
      for (int i = 0; i < N; ++i) {
        for (int j = 0; j < i; ++j) K[i][j] = a2 * exp(h[i * N + j] * inv_r2);
        K[i][i] = a2 + T(1e-10);
      }
      S half_logdet;
      detail::cholesky(K, half_logdet);
      S u = T(4) * exp(lr) - T(25) * lr + a2 * T(1.0 / 8) - la;
      for (int i = 0; i < N; ++i) {
        S f = S(T(0));
        for (int j = 0; j <= i; ++j) f = f + K[i][j] * x[2 + j];
        u = u + exp(f) - k[i] * f + T(0.5) * x[2 + i] * x[2 + i];
      }
      return u;
    });
  }
  static std::vector<std::string> parameter_names() { return detail::names({"rho", "alpha"}, detail::indexed("f", N)); }
  static std::vector<std::string> unconstrained_names() {
    return detail::names({"log(rho)", "log(alpha)"}, detail::indexed("f_tilde", N));
  }
  std::vector<double> constrain(vec<double, dim> const& x) const {
    double rho = std::exp(x[0]), alpha = std::exp(x[1]);
    double K[N][N];
    for (int i = 0; i < N; ++i)
      for (int j = 0; j <= i; ++j)
        K[i][j] = alpha * alpha * std::exp(-0.5 * (x_[i] - x_[j]) * (x_[i] - x_[j]) / (rho * rho)) + (i == j ? 1e-10 : 0.0);
    double hl;
    detail::cholesky(K, hl);
    std::vector<double> out{rho, alpha};
    for (int i = 0; i < N; ++i) {
      double f = 0;
      for (int j = 0; j <= i; ++j) f += K[i][j] * x[2 + j];
      out.push_back(f);
    }
    return out;
  }

 private:
  std::array<T, N> k_{};
  std::array<double, N> x_{};
  std::array<T, N * N> half_d2_{};
};

// ---------------------------------------------------------------------------------------------
/// hmm_example-hmm_example: a two-state hidden Markov model with unit-variance Gaussian emissions,
/// marginalised by the forward algorithm (N = 100); transition rows θ₁, θ₂ ∈ simplex[2] (uniform),
/// μ positive_ordered with μ₁ ~ normal(3, 1), μ₂ ~ normal(10, 1). Coordinates (a, b, m₁, m₂):
/// θ₁ = (logistic(a), 1 − logistic(a)), θ₂ likewise with b, μ₁ = e^{m₁}, μ₂ = μ₁ + e^{m₂}.
template <class T = double>
class hmm_example {
 public:
  static constexpr int dim = 4;
  static constexpr char const* name = "hmm_example-hmm_example";
  static constexpr char const* data_file = "hmm_example.json";
  explicit hmm_example(std::string const& dir) {
    auto d = detail::read_data(dir, data_file);
    if (d["K"].as_number() != 2) throw std::runtime_error("posteriordb: hmm_example needs K = 2");
    n_ = std::int64_t(d["N"].as_number());
    y_ = detail::cast<T>(detail::column(d, "y", std::size_t(n_)));
  }
  std::int64_t rows() const { return n_; }
  auto energy() const {
    return custom_energy<dim, T>([y = y_.data(), n = n_](auto const& x) {
      using S = std::decay_t<decltype(x[0])>;
      S a = x[0], b = x[1];
      S mu1 = exp(x[2]), mu2 = mu1 + exp(x[3]);
      // log θ[j][k]: θ₁ = (σ(a), σ(−a)), θ₂ = (σ(b), σ(−b))
      S l11 = -softplus(-a), l12 = -softplus(a), l21 = -softplus(-b), l22 = -softplus(b);
      auto lse = [](S const& p, S const& q) {  // log(eᵖ + e^q), shifted by the larger (never p + softplus(q − p))
        S t[2] = {p, q};
        return log_sum_exp(t);
      };
      S r1 = y[0] - mu1, r2 = y[0] - mu2;
      S g1 = T(-0.5) * r1 * r1, g2 = T(-0.5) * r2 * r2;  // normal_lpdf without −log √(2π)
      for (std::int64_t t = 1; t < n; ++t) {
        r1 = y[t] - mu1;
        r2 = y[t] - mu2;
        S n1 = lse(g1 + l11, g2 + l21) - T(0.5) * r1 * r1;
        S n2 = lse(g1 + l12, g2 + l22) - T(0.5) * r2 * r2;
        g1 = n1;
        g2 = n2;
      }
      S m1 = mu1 - T(3), m2 = mu2 - T(10);
      S logj = l11 + l12 + l21 + l22 + x[2] + x[3];
      return T(0.5) * (m1 * m1 + m2 * m2) - lse(g1, g2) - logj;
    });
  }
  static std::vector<std::string> parameter_names() {
    return {"theta1[1]", "theta1[2]", "theta2[1]", "theta2[2]", "mu[1]", "mu[2]"};
  }
  static std::vector<std::string> unconstrained_names() {
    return {"logit(theta1[1])", "logit(theta2[1])", "log(mu[1])", "log(mu[2]-mu[1])"};
  }
  std::vector<double> constrain(vec<double, dim> const& x) const {
    double t1 = detail::logistic(x[0]), t2 = detail::logistic(x[1]), m1 = std::exp(x[2]);
    return {t1, 1 - t1, t2, 1 - t2, m1, m1 + std::exp(x[3])};
  }

 private:
  std::vector<T> y_;
  std::int64_t n_ = 0;
};

// ---------------------------------------------------------------------------------------------
/// Calls f(p) for one object of each posterior above (constructed from data_dir), in a fixed
/// order. f is generic: `[](auto& p) { auto U = p.energy(); ... }`.
template <class T = double, class F>
void for_each_posterior(std::string const& data_dir, F&& f) {
  auto run = [&](auto p) { f(p); };
  run(kidiq_interaction<T>(data_dir));
  run(kidiq_momiq<T>(data_dir));
  run(kidiq_interaction_z<T>(data_dir));
  run(sblrc_blr<T>(data_dir));
  run(sblri_blr<T>(data_dir));
  run(earn_height<T>(data_dir));
  run(logearn_interaction<T>(data_dir));
  run(kilpisjarvi<T>(data_dir));
  run(mesquite<T>(data_dir));
  run(logmesquite_logvash<T>(data_dir));
  run(nes2000<T>(data_dir));
  run(eight_schools_noncentered<T>(data_dir));
  run(arK<T>(data_dir));
  run(arma11<T>(data_dir));
  run(garch11<T>(data_dir));
  run(low_dim_gauss_mix<T>(data_dir));
  run(gp_regr<T>(data_dir));
  run(gp_pois_regr<T>(data_dir));
  run(hmm_example<T>(data_dir));
}

/// `rebind_t<P<double>, float>` is P<float>: the same posterior in another precision.
template <class P, class U>
struct rebind;
template <template <class> class X, class T, class U>
struct rebind<X<T>, U> {
  using type = X<U>;
};
template <template <class, char const*, char const*> class X, class T, char const* A, char const* B, class U>
struct rebind<X<T, A, B>, U> {
  using type = X<U, A, B>;
};
template <class P, class U>
using rebind_t = typename rebind<P, U>::type;

/// How many posteriors for_each_posterior visits.
inline constexpr int posterior_count = 19;

}  // namespace ember::posteriordb
