// .npy files: header bytes as NEP 1 specifies them, and values through ember's reader and NumPy.
#include "numpy_check.hpp"

#include <ember/io/npy.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

TEST_CASE("npy headers: magic, version, 64-byte alignment and the dict NumPy writes", "[io][npy]") {
  std::array<std::size_t, 2> shape{2, 3};
  std::string h = ember::npy_header("<f4", shape);
  CHECK(h.size() % 64 == 0);
  CHECK(h.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(std::size_t((unsigned char)h[8]) + 256 * std::size_t((unsigned char)h[9]) == h.size() - 10);
  CHECK(h.substr(10, 60).starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  CHECK(h.back() == '\n');
  CHECK(ember::npy_header("<i8", std::array<std::size_t, 1>{5}).find("'shape': (5,)") != std::string::npos);
  CHECK(ember::npy_header("<f8", std::span<std::size_t const>{}).find("'shape': ()") != std::string::npos);
  CHECK(ember::npy_descr<float>() == "<f4");
  CHECK(ember::npy_descr<double>() == "<f8");
  CHECK(ember::npy_descr<std::int32_t>() == "<i4");
  CHECK(ember::npy_descr<std::uint8_t>() == "|u1");
  CHECK(ember::npy_descr<bool>() == "|b1");
}

TEST_CASE("npy files read back with ember's reader, any shape and type", "[io][npy]") {
  auto dir = std::filesystem::temp_directory_path() / "ember_npy_test";
  std::filesystem::create_directories(dir);
  std::vector<double> d(2 * 3 * 4);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = 0.1 * double(i) - 1;
  ember::write_npy((dir / "d.npy").string(), d.data(), std::array<std::size_t, 3>{2, 3, 4});
  auto a = ember::read_npy((dir / "d.npy").string());
  CHECK(a.descr == "<f8");
  CHECK(a.shape == std::vector<std::size_t>{2, 3, 4});
  CHECK(a.as<double>() == d);
  CHECK_THROWS(a.as<float>());
  std::vector<std::int32_t> i{-7, 0, 2147483647};
  ember::write_npy((dir / "i.npy").string(), i.data(), std::array<std::size_t, 1>{3});
  CHECK(ember::read_npy((dir / "i.npy").string()).as<std::int32_t>() == i);
  float s = 2.5f;
  ember::write_npy((dir / "s.npy").string(), &s, std::span<std::size_t const>{});
  auto sa = ember::read_npy((dir / "s.npy").string());
  CHECK(sa.shape.empty());
  CHECK(sa.as<float>() == std::vector<float>{2.5f});
}

TEST_CASE("numpy.load reads ember's .npy files, and ember reads numpy.save's", "[io][npy][numpy]") {
  if (!ember_test::numpy_available()) return;
  auto dir = std::filesystem::temp_directory_path() / "ember_npy_numpy";
  std::filesystem::create_directories(dir);
  std::vector<float> f(3 * 5);
  for (std::size_t k = 0; k < f.size(); ++k) f[k] = float(k) * 0.25f - 1.f;
  ember::write_npy((dir / "f.npy").string(), f.data(), std::array<std::size_t, 2>{3, 5});
  std::vector<std::int64_t> n{1, -2, 3};
  ember::write_npy((dir / "n.npy").string(), n.data(), std::array<std::size_t, 1>{3});
  // NumPy checks the values it reads and writes its own files, which ember then reads.
  std::string script = "import numpy as np, sys\n"
                       "d = sys.argv[0].rsplit('/', 1)[0]\n"
                       "f = np.load(d + '/f.npy'); n = np.load(d + '/n.npy')\n"
                       "assert f.dtype == np.float32 and f.shape == (3, 5), (f.dtype, f.shape)\n"
                       "assert (f == (np.arange(15, dtype=np.float32) * 0.25 - 1).reshape(3, 5)).all()\n"
                       "assert n.dtype == np.int64 and list(n) == [1, -2, 3]\n"
                       "np.save(d + '/back.npy', np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 8)\n"
                       "np.save(d + '/flags.npy', np.array([True, False, True]))\n";
  REQUIRE(ember_test::run_python(script, (dir / "check.py").string()) == 0);
  auto back = ember::read_npy((dir / "back.npy").string());
  CHECK(back.shape == std::vector<std::size_t>{2, 3, 4});
  auto v = back.as<double>();
  for (std::size_t k = 0; k < v.size(); ++k) CHECK(v[k] == double(k) / 8);
  CHECK(ember::read_npy((dir / "flags.npy").string()).as<bool>() == std::vector<bool>{true, false, true});
}
