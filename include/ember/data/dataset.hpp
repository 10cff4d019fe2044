#pragma once
/// \file
/// `dataset<T>`: a host table of `rows × cols` values (`float` or `double`), row-major, that owns
/// its memory. Built from a `std::vector`, a `std::span`, a CSV file or a NumPy `.npy` file;
/// energies never hold a dataset, only its `view()` (a `data_view<T>`: pointer, rows, cols,
/// memory space), so the dataset must outlive every energy built from it (docs/models.md).
/// Every reader checks its input and throws `std::invalid_argument` (bad shape, a value that is
/// not a number, a ragged CSV row, an unsupported .npy type) or `std::runtime_error` (a file that
/// cannot be opened), naming the file, line or entry.

#include <ember/data/data_view.hpp>
#include <ember/io/npy.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ember {

/// Column means and standard deviations removed by `dataset::standardize`.
struct column_scaling {
  std::vector<double> mean, sd;
};

/// An owning, row-major host table: element (i, j) at `values()[i·cols + j]`.
template <std::floating_point T>
class dataset {
 public:
  dataset() = default;

  /// Takes `values` (row-major, rows·cols of them). Throws if the size does not match or a value
  /// is not finite.
  dataset(std::vector<T> values, std::int64_t rows, int cols) : v_(std::move(values)), rows_(rows), cols_(cols) {
    check_shape("ember::dataset");
  }
  /// Copies `values` (row-major).
  dataset(std::span<T const> values, std::int64_t rows, int cols)
      : dataset(std::vector<T>(values.begin(), values.end()), rows, cols) {}

  /// Reads a comma-separated file (a UTF-8 byte-order mark at its start is skipped). Its first
  /// line is a header if a field is neither a number nor empty (its names, empty ones included,
  /// go to `names()`); every other line must have the same number of fields, each a number. An
  /// empty field in a row of numbers is refused naming its line and field, never read as a
  /// missing value or taken for a header. Blank lines and lines starting with `#` (comments:
  /// source, licence) are skipped.
  static dataset from_csv(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("ember::dataset::from_csv: cannot open " + path);
    dataset d;
    std::string line;
    std::int64_t lineno = 0;
    std::vector<T> vals;
    int cols = -1;
    bool header = false;
    auto at_line = [&](std::string const& why) {
      return std::invalid_argument("ember::dataset::from_csv: " + path + " line " + std::to_string(lineno) + ": " + why);
    };
    while (std::getline(in, line)) {
      ++lineno;
      if (lineno == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#') continue;
      std::vector<std::string> fields = split(line);
      std::vector<double> nums;
      bool numeric = true;
      std::size_t empty = 0;  // the first empty field, from 1
      for (std::size_t k = 0; k < fields.size() && numeric; ++k) {
        double x;
        if (fields[k].empty())
          empty = empty ? empty : k + 1;
        else if (!parse(fields[k], x))
          numeric = false;
        else
          nums.push_back(x);
      }
      if (!numeric) {
        if (cols < 0 && !header) {
          header = true;
          d.names_ = fields;
          continue;
        }
        throw at_line("a field is not a number");
      }
      if (empty) throw at_line("field " + std::to_string(empty) + " is empty (missing values are not supported)");
      if (nums.size() > std::size_t(std::numeric_limits<int>::max())) throw at_line("more fields than an int can count");
      if (cols < 0) {
        cols = int(nums.size());
        if (header && int(d.names_.size()) != cols)
          throw std::invalid_argument("ember::dataset::from_csv: " + path + ": the header has " +
                                      std::to_string(d.names_.size()) + " names for " + std::to_string(cols) +
                                      " columns");
      } else if (int(nums.size()) != cols) {
        throw std::invalid_argument("ember::dataset::from_csv: " + path + " line " + std::to_string(lineno) +
                                    " has " + std::to_string(nums.size()) + " fields, the first row has " +
                                    std::to_string(cols));
      }
      for (double x : nums) vals.push_back(T(x));
    }
    if (in.bad()) throw std::runtime_error("ember::dataset::from_csv: cannot read " + path);
    if (cols <= 0) throw std::invalid_argument("ember::dataset::from_csv: " + path + " has no rows of numbers");
    d.rows_ = std::int64_t(vals.size()) / cols;
    d.cols_ = cols;
    d.v_ = std::move(vals);
    d.check_shape(("ember::dataset::from_csv: " + path).c_str());
    return d;
  }

  /// Reads a NumPy `.npy` file (format 1.0–3.0) holding a 1-D or 2-D array of little-endian
  /// float32, float64, int32 or int64, C or Fortran order; converts to T. A 1-D array of n values
  /// is n rows × 1 column. The header is read and checked first (io/npy.hpp,
  /// `detail::parse_npy_header`), and the sizes it declares are compared with the file's, with
  /// checked arithmetic, before anything is allocated: the file must hold exactly those values.
  static dataset from_npy(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("ember::dataset::from_npy: cannot open " + path);
    std::string const who = "ember::dataset::from_npy: " + path;
    auto fail = [&](std::string const& why) { return std::invalid_argument(who + ": " + why); };
    in.seekg(0, std::ios::end);
    std::streamoff const size = in.tellg();
    in.seekg(0);
    if (size < 0 || !in) throw std::runtime_error(who + ": cannot find its size (is it a regular file?)");
    std::size_t const n = std::size_t(size);
    char pre[12];
    std::size_t const got = n < sizeof pre ? n : sizeof pre;
    if (!in.read(pre, std::streamsize(got))) throw std::runtime_error(who + ": cannot read it");
    std::size_t const end = detail::npy_header_end<std::invalid_argument>(pre, got, n, who);  // end <= n
    std::string header(end, '\0');
    if (!in.seekg(0) || !in.read(header.data(), std::streamsize(end))) throw std::runtime_error(who + ": cannot read it");
    detail::npy_layout const L = detail::parse_npy_header<std::invalid_argument>(header.data(), end, who);
    if (L.shape.empty() || L.shape.size() > 2) throw fail("only 1-D and 2-D arrays are supported");
    std::string const& descr = L.descr;
    if (descr != "<f8" && descr != "<f4" && descr != "<i8" && descr != "<i4")
      throw fail("unsupported dtype '" + descr + "' (little-endian f4, f8, i4, i8 only)");
    std::size_t const rows = L.shape[0], cols = L.shape.size() == 2 ? L.shape[1] : 1;
    if (rows == 0 || cols == 0)
      throw fail("rows and cols must be positive, got " + std::to_string(rows) + " x " + std::to_string(cols));
    if (cols > std::size_t(std::numeric_limits<int>::max()) || rows > std::size_t(std::numeric_limits<std::int64_t>::max()))
      throw fail("the shape " + std::to_string(rows) + " x " + std::to_string(cols) + " is too large for a dataset");
    std::size_t const count = L.count;  // rows · cols, checked; L.data_bytes = count · item, checked
    if (L.data_bytes > n - end)
      throw fail("the file holds fewer than the " + std::to_string(count) + " values its header announces");
    if (L.data_bytes < n - end)
      throw fail("the file holds " + std::to_string(n - end - L.data_bytes) + " bytes after the " + std::to_string(count) +
                 " values its header announces");
    std::vector<T> vals(count);
    auto read_as = [&]<class U>(U*) {
      std::vector<U> raw(count);
      if (!in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(L.data_bytes)))
        throw fail("the file holds fewer than the " + std::to_string(count) + " values its header announces");
      for (std::size_t i = 0; i < count; ++i) vals[i] = T(raw[i]);
    };
    if (descr == "<f8")
      read_as((double*)nullptr);
    else if (descr == "<f4")
      read_as((float*)nullptr);
    else if (descr == "<i8")
      read_as((std::int64_t*)nullptr);
    else
      read_as((std::int32_t*)nullptr);
    if (L.fortran_order && cols > 1) {
      std::vector<T> t(count);
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) t[i * cols + j] = vals[j * rows + i];
      vals.swap(t);
    }
    dataset d;
    d.v_ = std::move(vals);
    d.rows_ = std::int64_t(rows);
    d.cols_ = int(cols);
    d.check_shape(who.c_str());
    return d;
  }

  std::int64_t rows() const { return rows_; }
  int cols() const { return cols_; }
  /// Element (i, j).
  T operator()(std::int64_t i, int j) const { return v_[std::size_t(i * cols_ + j)]; }
  /// The row-major values.
  std::vector<T> const& values() const { return v_; }
  /// Column names from a CSV header (empty otherwise).
  std::vector<std::string> const& names() const { return names_; }

  /// A view of the whole table, in host memory. Valid while this dataset lives and is not
  /// modified or moved from; so a temporary's view (`dataset<float>::from_npy(p).view()`, which
  /// would point into freed memory as soon as the statement ends) does not compile.
  data_view<T> view() const& { return {v_.data(), rows_, cols_, memory_space::host}; }
  template <class Never = void>
  data_view<T> view() const&& {
    static_assert(sizeof(Never*) == 0,
                  "ember::dataset::view: the view of a temporary dataset would point into memory freed at the end of "
                  "the statement; keep the dataset in a variable and take its view");
    return {};
  }

  /// A new dataset of columns [first, last).
  dataset columns(int first, int last) const {
    if (first < 0 || last > cols_ || first >= last)
      throw std::invalid_argument("ember::dataset::columns: [" + std::to_string(first) + ", " + std::to_string(last) +
                                  ") is not a non-empty range of the " + std::to_string(cols_) + " columns");
    std::vector<T> out;
    out.reserve(std::size_t(rows_) * std::size_t(last - first));
    for (std::int64_t i = 0; i < rows_; ++i)
      for (int j = first; j < last; ++j) out.push_back((*this)(i, j));
    dataset d(std::move(out), rows_, last - first);
    if (!names_.empty()) d.names_.assign(names_.begin() + first, names_.begin() + last);
    return d;
  }
  /// Column j as a rows × 1 dataset.
  dataset column(int j) const { return columns(j, j + 1); }

  /// Centres every column to mean 0 and scales it to standard deviation 1 (the n − 1 form),
  /// in place; returns the means and sds removed. A constant column is refused.
  column_scaling standardize() {
    column_scaling s;
    if (rows_ < 2) throw std::invalid_argument("ember::dataset::standardize needs at least two rows");
    for (int j = 0; j < cols_; ++j) {
      double m = 0, q = 0;
      for (std::int64_t i = 0; i < rows_; ++i) m += double((*this)(i, j));
      m /= double(rows_);
      for (std::int64_t i = 0; i < rows_; ++i) q += std::pow(double((*this)(i, j)) - m, 2);
      double sd = std::sqrt(q / double(rows_ - 1));
      if (!(sd > 0))
        throw std::invalid_argument("ember::dataset::standardize: column " + std::to_string(j) + " is constant");
      for (std::int64_t i = 0; i < rows_; ++i) {
        T& x = v_[std::size_t(i * cols_ + j)];
        x = T((double(x) - m) / sd);
      }
      s.mean.push_back(m);
      s.sd.push_back(sd);
    }
    return s;
  }

 private:
  std::vector<T> v_;
  std::int64_t rows_ = 0;
  int cols_ = 0;
  std::vector<std::string> names_;

  void check_shape(char const* who) const {
    if (rows_ <= 0 || cols_ <= 0)
      throw std::invalid_argument(std::string(who) + ": rows and cols must be positive, got " + std::to_string(rows_) +
                                  " x " + std::to_string(cols_));
    if (std::int64_t(v_.size()) != rows_ * std::int64_t(cols_))
      throw std::invalid_argument(std::string(who) + ": " + std::to_string(v_.size()) + " values for " +
                                  std::to_string(rows_) + " x " + std::to_string(cols_));
    for (std::size_t k = 0; k < v_.size(); ++k)
      if (!std::isfinite(double(v_[k])))
        throw std::invalid_argument(std::string(who) + ": entry (" + std::to_string(std::int64_t(k) / cols_) + ", " +
                                    std::to_string(std::int64_t(k) % cols_) + ") is not finite");
  }
  static std::vector<std::string> split(std::string const& line) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : line) {
      if (ch == ',') {
        out.push_back(trim(cur));
        cur.clear();
      } else {
        cur += ch;
      }
    }
    out.push_back(trim(cur));
    return out;
  }
  static std::string trim(std::string const& s) {
    auto a = s.find_first_not_of(" \t\"");
    if (a == std::string::npos) return "";
    auto b = s.find_last_not_of(" \t\"");
    return s.substr(a, b - a + 1);
  }
  static bool parse(std::string const& f, double& x) {
    if (f.empty()) return false;
    char* end = nullptr;
    x = std::strtod(f.c_str(), &end);
    return end == f.c_str() + f.size();
  }
};

}  // namespace ember
