// dataset: construction checks, CSV and .npy readers, columns and standardisation; data_view;
// for_each_view through expressions and kernels; the host/device memory-space checks.
#include <ember/energy/check_views.hpp>
#include <ember/data/dataset.hpp>
#include <ember/energy/for_each_view.hpp>

#include "support/message_of.hpp"
#include <ember/energy/gaussian.hpp>
#include <ember/energy/regression.hpp>
#include <ember/kernel/mala.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

using ember_test::message_of;

// The largest single allocation through operator new since it was last reset: a reader must not
// allocate what a small file's header claims before it has checked it against the file.
namespace {
std::atomic<std::size_t> largest_allocation{0};
}  // namespace
[[gnu::noinline]] void* operator new(std::size_t n) {
  for (auto seen = largest_allocation.load(); n > seen && !largest_allocation.compare_exchange_weak(seen, n);) {
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// Every other form too, so nothing this program frees comes from another allocator (the nothrow
// new that Catch2 uses would otherwise be AddressSanitizer's, freed here by free: a mismatch).
[[gnu::noinline]] void* operator new(std::size_t n, std::nothrow_t const&) noexcept {
  try {
    return ::operator new(n);
  } catch (...) {
    return nullptr;
  }
}
[[gnu::noinline]] void* operator new[](std::size_t n) { return ::operator new(n); }
[[gnu::noinline]] void* operator new[](std::size_t n, std::nothrow_t const& t) noexcept { return ::operator new(n, t); }
[[gnu::noinline]] void operator delete(void* p, std::nothrow_t const&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::nothrow_t const&) noexcept { std::free(p); }
// (Not inlined: GCC 12 would take an inlined malloc() or free() for a new/delete mismatch.)

namespace {

std::string temp_path(std::string const& name) { return "ember_dataset_test_" + name; }

void write_file(std::string const& path, std::string const& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// A version-1.0 .npy file: magic, header length (little-endian u16), header padded to 64 bytes.
template <class U>
void write_npy(std::string const& path, char const* descr, bool fortran, std::string const& shape,
               std::vector<U> const& v) {
  std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                  ", 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  unsigned char len[2] = {static_cast<unsigned char>(h.size() & 0xff), static_cast<unsigned char>(h.size() >> 8)};
  f.write(reinterpret_cast<char const*>(len), 2);
  f << h;
  f.write(reinterpret_cast<char const*>(v.data()), std::streamsize(v.size() * sizeof(U)));
}

}  // namespace

TEST_CASE("dataset owns a row-major table and gives a host view of it", "[data]") {
  ember::dataset<float> d(std::vector<float>{1, 2, 3, 4, 5, 6}, 2, 3);
  auto v = d.view();
  CHECK(v.rows == 2);
  CHECK(v.cols == 3);
  CHECK(v.space == ember::memory_space::host);
  CHECK(v(1, 0) == 4.f);
  CHECK(v.row(1)[2] == 6.f);
  CHECK(d.column(1).values() == std::vector<float>{2, 5});
  CHECK(d.columns(1, 3).values() == std::vector<float>{2, 3, 5, 6});
  std::vector<double> raw{1, 2, 3, 4};
  ember::dataset<double> s(std::span<double const>(raw), 4, 1);
  CHECK(s(3, 0) == 4.0);
}

TEST_CASE("dataset refuses bad shapes and non-finite values with a sentence", "[data]") {
  CHECK_THAT(message_of([] { ember::dataset<float>(std::vector<float>{1, 2, 3}, 2, 2); }),
             Catch::Contains("3 values for 2 x 2"));
  CHECK_THAT(message_of([] { ember::dataset<float>(std::vector<float>{1, NAN}, 1, 2); }),
             Catch::Contains("entry (0, 1) is not finite"));
  CHECK_THAT(message_of([] { ember::dataset<float>(std::vector<float>{}, 0, 2); }),
             Catch::Contains("must be positive"));
  ember::dataset<float> d(std::vector<float>{1, 2, 3, 4}, 2, 2);
  CHECK_THAT(message_of([&] { d.columns(1, 3); }), Catch::Contains("not a non-empty range"));
}

TEST_CASE("dataset reads CSV with and without a header and names the bad line", "[data]") {
  auto p = temp_path("a.csv");
  write_file(p, "a, b,\"c\"\n1,2,3\r\n\n4, 5.5 ,-6e-1\n");
  auto d = ember::dataset<double>::from_csv(p);
  CHECK(d.rows() == 2);
  CHECK(d.cols() == 3);
  CHECK(d.names() == std::vector<std::string>{"a", "b", "c"});
  CHECK(d(1, 1) == 5.5);
  CHECK(d(1, 2) == -0.6);
  write_file(p, "1,2\n3,4\n");
  CHECK(ember::dataset<float>::from_csv(p).values() == std::vector<float>{1, 2, 3, 4});
  write_file(p, "1,2\n3\n");
  CHECK_THAT(message_of([&] { ember::dataset<float>::from_csv(p); }),
             Catch::Contains("line 2 has 1 fields, the first row has 2"));
  write_file(p, "x,y\n1,2\n3,oops\n");
  CHECK_THAT(message_of([&] { ember::dataset<float>::from_csv(p); }), Catch::Contains("line 3: a field is not a number"));
  std::remove(p.c_str());
  CHECK_THAT(message_of([&] { ember::dataset<float>::from_csv(p); }), Catch::Contains("cannot open"));
}

TEST_CASE("dataset reads .npy files of every supported type and order", "[data]") {
  auto p = temp_path("a.npy");
  write_npy<double>(p, "<f8", false, "(2, 3)", {1, 2, 3, 4, 5, 6});
  auto d = ember::dataset<float>::from_npy(p);
  CHECK(d.rows() == 2);
  CHECK(d.cols() == 3);
  CHECK(d.values() == std::vector<float>{1, 2, 3, 4, 5, 6});
  // Fortran order stores column by column: the same table.
  write_npy<float>(p, "<f4", true, "(2, 3)", {1, 4, 2, 5, 3, 6});
  CHECK(ember::dataset<double>::from_npy(p).values() == std::vector<double>{1, 2, 3, 4, 5, 6});
  write_npy<std::int64_t>(p, "<i8", false, "(4,)", {0, 1, 1, 0});
  auto y = ember::dataset<float>::from_npy(p);
  CHECK(y.rows() == 4);
  CHECK(y.cols() == 1);
  write_npy<std::int32_t>(p, "<i4", false, "(2, 1)", {7, 9});
  CHECK(ember::dataset<double>::from_npy(p)(1, 0) == 9.0);
  write_npy<std::int16_t>(p, "<i2", false, "(2,)", {7, 9});
  CHECK_THAT(message_of([&] { ember::dataset<double>::from_npy(p); }), Catch::Contains("unsupported dtype '<i2'"));
  write_npy<double>(p, "<f8", false, "(3, 3)", {1, 2});
  CHECK_THAT(message_of([&] { ember::dataset<double>::from_npy(p); }), Catch::Contains("fewer than the 9 values"));
  write_file(p, "not numpy at all");
  CHECK_THAT(message_of([&] { ember::dataset<double>::from_npy(p); }), Catch::Contains("not a .npy file"));
  std::remove(p.c_str());
}

TEST_CASE("dataset::from_csv keeps a first row with an empty field or after a byte-order mark", "[data]") {
  auto p = temp_path("bom.csv");
  // A UTF-8 byte-order mark is not part of the first field: the row is data, or a header.
  write_file(p, "\xEF\xBB\xBF" "1,2\n3,4\n");
  auto d = ember::dataset<double>::from_csv(p);
  CHECK(d.rows() == 2);
  CHECK(d.names().empty());
  CHECK(d.values() == std::vector<double>{1, 2, 3, 4});
  write_file(p, "\xEF\xBB\xBF" "x,y\r\n1,2\r\n");
  CHECK(ember::dataset<double>::from_csv(p).names() == std::vector<std::string>{"x", "y"});
  // An empty field makes no header: the row is refused, naming the line and the field.
  write_file(p, "1,,3\n4,5,6\n");
  CHECK_THAT(message_of([&] { ember::dataset<double>::from_csv(p); }),
             Catch::StartsWith("ember::dataset::from_csv: " + p + " line 1: field 2 is empty"));
  write_file(p, ",,\n1,2,3\n");
  CHECK_THAT(message_of([&] { ember::dataset<double>::from_csv(p); }), Catch::Contains("line 1: field 1 is empty"));
  write_file(p, "# comment\nx,y\n\n1,2\n3,\n");
  CHECK_THAT(message_of([&] { ember::dataset<double>::from_csv(p); }), Catch::Contains("line 5: field 2 is empty"));
  // A header may have empty names (pandas writes one for its index column).
  write_file(p, ",a,b\n0,1,2\n");
  auto h = ember::dataset<float>::from_csv(p);
  CHECK(h.names() == std::vector<std::string>{"", "a", "b"});
  CHECK(h.rows() == 1);
  std::remove(p.c_str());
}

TEST_CASE("dataset::from_npy checks the header against the file before allocating", "[data]") {
  auto p = temp_path("bad.npy");
  auto refusal = [&] {
    largest_allocation = 0;
    std::string m = message_of<std::invalid_argument>([&] { ember::dataset<float>::from_npy(p); });
    CHECK(m.rfind("ember::dataset::from_npy: " + p + ": ", 0) == 0);
    CHECK(largest_allocation.load() < (std::size_t(1) << 20));
    return m;
  };
  // A 12-byte version-2.0 file whose header length says 2 GiB.
  write_file(p, std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12));
  CHECK_THAT(refusal(), Catch::Contains("declares 2147483647 bytes but only 0 follow"));
  // 2^28 float32 values (1 GiB) announced, none present.
  write_npy<float>(p, "<f4", false, "(268435456,)", {});
  CHECK_THAT(refusal(), Catch::Contains("fewer than the 268435456 values"));
  write_npy<float>(p, "<f4", false, "(-1, 3)", {1, 2, 3});
  CHECK_THAT(refusal(), Catch::Contains("negative dimension"));
  write_npy<float>(p, "<f4", false, "(4294967296, 4294967297)", {1, 2, 3});
  CHECK_THAT(refusal(), Catch::Contains("overflows"));
  write_npy<float>(p, "<f4", false, "(1, 4294967296)", {1, 2, 3});
  CHECK_THAT(refusal(), Catch::Contains("too large for a dataset"));
  write_npy<float>(p, "<f4", false, "(0, 3)", {});
  CHECK_THAT(refusal(), Catch::Contains("must be positive"));
  write_npy<float>(p, "<f4", false, "(2,)", {1, 2, 3});
  CHECK_THAT(refusal(), Catch::Contains("4 bytes after the 2 values"));
  write_npy<double>(p, ">f8", false, "(1,)", {1});
  CHECK_THAT(refusal(), Catch::Contains("big-endian"));
  write_npy<float>(p, "<f0", false, "(1,)", {1});
  CHECK_THAT(refusal(), Catch::Contains("type string '<f0'"));
  std::remove(p.c_str());
}

TEST_CASE("dataset standardises columns to mean 0 and sd 1", "[data]") {
  ember::dataset<double> d(std::vector<double>{1, 10, 2, 20, 3, 60}, 3, 2);
  auto s = d.standardize();
  CHECK(s.mean[0] == Approx(2));
  CHECK(s.mean[1] == Approx(30));
  CHECK(s.sd[0] == Approx(1));
  CHECK(s.sd[1] == Approx(std::sqrt(700.0)));
  for (int j = 0; j < 2; ++j) {
    double m = 0, q = 0;
    for (int i = 0; i < 3; ++i) m += d(i, j) / 3;
    for (int i = 0; i < 3; ++i) q += (d(i, j) - m) * (d(i, j) - m) / 2;
    CHECK(std::abs(m) < 1e-15);
    CHECK(q == Approx(1).epsilon(1e-14));
  }
  ember::dataset<double> c(std::vector<double>{1, 5, 2, 5}, 2, 2);
  CHECK_THAT(message_of([&] { c.standardize(); }), Catch::Contains("column 1 is constant"));
}

TEST_CASE("for_each_view finds the views in energies, expressions and kernels", "[data]") {
  ember::dataset<float> X(std::vector<float>{1, 0, 0, 1, 1, 1}, 3, 2), y(std::vector<float>{0, 1, 1}, 3, 1);
  auto L = ember::logistic_regression<2>(X.view(), y.view(), ember::normal_prior{1.0});
  ember::gaussian G(ember::vec<float, 2>{}, 1.f);
  CHECK(ember::count_views(L) == 2);
  CHECK(ember::count_views(G) == 0);
  auto expr = 0.5f * (L + G) + L;
  CHECK(ember::count_views(expr) == 4);
  auto k = ember::mala(expr, {.step_size = 0.1});
  CHECK(ember::count_views(k) == 4);
  // Repointing through the walker changes the copy it walks.
  auto copy = expr;
  ember::for_each_view(copy, [](auto& v) { v.space = ember::memory_space::device; });
  CHECK(copy.b.x.space == ember::memory_space::device);
  CHECK(expr.b.x.space == ember::memory_space::host);
  CHECK_NOTHROW(ember::require_host_views(k));
  CHECK_THAT(message_of([&] { ember::require_device_views(k); }),
             Catch::Contains("ember::backend::cuda: data view 0 of the energy points to host memory"));
  CHECK_NOTHROW(ember::require_device_views(copy));
  CHECK_THAT(message_of([&] { ember::require_host_views(copy); }), Catch::Contains("points to device memory"));
  CHECK_NOTHROW(ember::require_device_views(G));
}
