#pragma once
/// \file
/// Target `breast_cancer_logistic`: Bayesian logistic regression on the Breast Cancer Wisconsin
/// (Diagnostic) data, data/breast_cancer.csv (569 rows; source and licence in its header lines).
/// The 30 features are standardised (mean 0, sd 1 with n − 1) and a column of ones is put in
/// front: X is 569 × 31; y = benign (0/1). β ~ N(0, I₃₁), yᵢ ~ Bernoulli(σ(xᵢ·β)):
///
///     U(β) = Σᵢ softplus(xᵢ·β) − yᵢ xᵢ·β + |β|²/2     (ember::logistic_regression, normal_prior{1}).
///
/// Reference by importance sampling (scripts/reference/breast_cancer.py: a Student-t proposal
/// fitted in a first round, 2,000,000 draws, importance-sampling ESS 612,680), with its own
/// standard errors; cross-checked against a long ember run (tests/targets, docs/models.md).
/// The target owns its data sets: keep it alive while its energy is in use.

#include <ember/data/dataset.hpp>
#include <ember/energy/prior.hpp>
#include <ember/energy/regression.hpp>
#include <ember/targets/reference.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace ember::targets {

template <class T = float>
class breast_cancer_logistic {
 public:
  static constexpr int dim = 31;

  /// Reads `csv_path` (data/breast_cancer.csv of the ember repository), standardises it and adds
  /// the intercept column. Throws if the file is missing or not 569 × 31.
  explicit breast_cancer_logistic(std::string const& csv_path) {
    auto raw = dataset<T>::from_csv(csv_path);
    if (raw.rows() != 569 || raw.cols() != 31)
      throw std::invalid_argument("ember::targets::breast_cancer_logistic: " + csv_path + " is " +
                                  std::to_string(raw.rows()) + " x " + std::to_string(raw.cols()) +
                                  ", expected 569 x 31");
    auto features = raw.columns(0, 30);
    scaling_ = features.standardize();
    std::vector<T> x;
    x.reserve(569 * 31);
    for (std::int64_t i = 0; i < 569; ++i) {
      x.push_back(T(1));
      for (int j = 0; j < 30; ++j) x.push_back(features(i, j));
    }
    x_ = dataset<T>(std::move(x), 569, 31);
    y_ = raw.column(30);
  }

  /// The posterior's energy; holds views of this object's data sets.
  auto energy() const { return logistic_regression<dim>(x_.view(), y_.view(), normal_prior{1.0}); }
  dataset<T> const& design() const { return x_; }
  dataset<T> const& response() const { return y_; }
  /// Means and sds removed from the 30 feature columns.
  column_scaling const& scaling() const { return scaling_; }

  template <class S>
  vec<double, dim> reported(vec<S, dim> const& b) const {
    vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(b[i]);
    return r;
  }

  /// The posterior mode (Newton's method in double), a good start state.
  static vec<T, dim> mode() {
    constexpr double m[dim] = {0.18014657, -0.35418438, -0.38593012, -0.34293071, -0.44210757, -0.15547307,
                               0.56792317, -0.86904016, -0.96823312, 0.073464835, 0.31160901, -1.2953587,
                               0.26943544, -0.66684008, -1.0301984, -0.28104848, 0.74316385, 0.11339146,
                               -0.32035604, 0.29021149, 0.67161962, -1.0307904, -1.3129725, -0.8262109,
                               -1.0298307, -0.67279628, 0.048678865, -0.87220392, -0.91158019, -0.88432415,
                               -0.48377316};
    vec<T, dim> v;
    for (int i = 0; i < dim; ++i) v[i] = T(m[i]);
    return v;
  }

  reference_moments<dim> reference() const {
    reference_moments<dim> m;
    m.mean = {0.20590012, -0.47020899, -0.4741666, -0.45962143, -0.55051918, -0.24073789,
              0.58378157, -0.96094815, -1.0682, 0.10685695, 0.44969763, -1.4376251,
              0.32267007, -0.78272643, -1.1799548, -0.43481254, 0.72932231, 0.31649104,
              -0.33259418, 0.3007838, 0.81973852, -1.1305962, -1.4936229, -0.91427163,
              -1.1196637, -0.72232356, -0.024387135, -0.98414556, -1.035204, -1.0539077,
              -0.53088424};
    m.second = {0.21032997, 1.0184414, 0.53239259, 1.024077, 1.137365, 0.44276826,
              0.97815733, 1.6051528, 1.8312349, 0.27303289, 0.66357418, 2.6863178,
              0.35363984, 1.238309, 2.2465633, 0.40430197, 0.97683426, 0.48758695,
              0.55725507, 0.37068345, 1.1590039, 2.1224274, 2.6464295, 1.6821163,
              2.1252394, 0.90258087, 0.60769385, 1.5487139, 1.6976835, 1.4176751,
              0.78750273};
    m.mean_se = {0.00051604491, 0.0011361826, 0.00069603701, 0.0011113088, 0.0011394479, 0.00077823855,
              0.0010034628, 0.0010436598, 0.0010474177, 0.00064352386, 0.0008673072, 0.0010057876,
              0.00062518801, 0.0010134779, 0.0011678763, 0.00062471979, 0.00085750874, 0.0008281332,
              0.00085078437, 0.00068445542, 0.00090578347, 0.0011512435, 0.00080223213, 0.0011539724,
              0.0011484718, 0.00079427035, 0.00099978863, 0.00095584427, 0.00099849285, 0.00069721423,
              0.00089627387};
    m.second_se = {0.0003592717, 0.0017369416, 0.00087935333, 0.001700532, 0.0018712363, 0.00075724187,
              0.0016240899, 0.0023172966, 0.0025368399, 0.00048132039, 0.0011390276, 0.0031332258,
              0.00061346544, 0.0019511121, 0.003130486, 0.00075244519, 0.0014606174, 0.0010705315,
              0.00094468291, 0.00064921292, 0.0018522129, 0.0029642328, 0.0024638777, 0.0025321367,
              0.0028699636, 0.0013567231, 0.0010780337, 0.0021004656, 0.0023488642, 0.0016088715,
              0.0012942357};
    m.method = "importance sampling (2,000,000 draws, ESS 612,680), scripts/reference/breast_cancer.py";
    return m;
  }

 private:
  dataset<T> x_, y_;
  column_scaling scaling_;
};

}  // namespace ember::targets
