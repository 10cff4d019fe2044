// Fuzzes ember::dataset<double>::from_csv: seeds with and without a header, comments, blank
// lines, CRLF, quotes, a UTF-8 byte-order mark.
#include "fuzz.hpp"

#include <ember/data/dataset.hpp>

namespace {

ember_fuzz::reader make_reader() {
  ember_fuzz::reader r;
  r.name = "csv";
  r.seeds = {"a,b,c\n1,2,3\n4.5,-6e-1,7\n",
             "1,2\n3,4\n",
             "# source: somewhere\n# licence: CC0\nx\n1\n\n2\n",
             "\"x\", \"y\"\r\n1,2\r\n3,4\r\n",
             "\xEF\xBB\xBF" "1.5,2.5\n-3,4e10\n",
             ",a,b\n0,1,2\n1,3,4\n"};
  r.tokens = {",", "\n", "\r\n", "\r", "\xEF\xBB\xBF", "#", "nan", "inf", "-inf", "1e999", "-1e-999", "1e308", "3.4e38",
              "-", "\"", "0x1p3", " ", "\t", "1.5", "e", "x", ",,", "\n\n", std::string(1, '\0')};
  std::string const path = r.scratch = ember_fuzz::scratch_path("csv");
  r.target = [path](std::string const& b) {
    ember_fuzz::write_file(path, b);
    auto d = ember::dataset<double>::from_csv(path);
    if (d.values().size() != std::size_t(d.rows()) * std::size_t(d.cols())) throw std::logic_error("fuzz: a dataset of the wrong size");
    if (!d.names().empty() && d.names().size() != std::size_t(d.cols())) throw std::logic_error("fuzz: names for other columns");
    return true;
  };
  return r;
}

}  // namespace

EMBER_FUZZ_MAIN(make_reader)
