// .npy files: header bytes as NEP 1 specifies them, and values through ember's reader and NumPy.
#include "numpy_check.hpp"

#include <ember/io/npy.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
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
  ember_test::scratch_dir const dir("ember_npy_test");
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
  ember_test::scratch_dir const dir("ember_npy_numpy");
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

namespace {
// A .npy image of format `major`.0 with header dict `dict` (padded as NumPy pads it) and `data`.
std::string npy_image(std::string dict, std::string const& data = "", int major = 1) {
  std::size_t const pre = major == 1 ? 10 : 12;
  while ((pre + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string b = "\x93NUMPY";
  b += char(major);
  b += char(0);
  for (std::size_t i = 0; i < pre - 8; ++i) b += char((dict.size() >> (8 * i)) & 0xff);
  return b + dict + data;
}
std::string parse_refusal(std::string const& image) {
  try {
    ember::parse_npy(image.data(), image.size());
    FAIL_CHECK("accepted");
  } catch (std::runtime_error const& e) {
    std::string m = e.what();
    CHECK(m.rfind("ember::parse_npy: ", 0) == 0);
    return m;
  }
  return "";
}
}  // namespace

TEST_CASE("parse_npy refuses wrapped counts, negative dimensions, unknown versions and bad types", "[io][npy]") {
  auto dict = [](std::string const& descr, std::string const& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  };
  std::string const eight(8, '\0');
  // 2^32 · 2^32 wraps to 0 elements; 2^61 elements of 8 bytes wrap to 0 bytes.
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(4294967296, 4294967296)"))), Catch::Contains("element count overflows"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(2305843009213693952,)"))), Catch::Contains("byte count overflows"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(99999999999999999999,)"))), Catch::Contains("too large"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(-1,)"), eight)), Catch::Contains("negative dimension"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(1,)"), eight, 4)), Catch::Contains("version 4.0"));
  auto v7 = npy_image(dict("<f8", "(1,)"), eight);
  v7[7] = 1;  // version 1.1
  CHECK_THAT(parse_refusal(v7), Catch::Contains("version 1.1"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f0", "(5,)"))), Catch::Contains("type string '<f0'"));
  CHECK_THAT(parse_refusal(npy_image(dict("zz", "(5,)"))), Catch::Contains("type string 'zz'"));
  CHECK_THAT(parse_refusal(npy_image(dict("<c16", "(1,)"), eight + eight)), Catch::Contains("type string '<c16'"));
  CHECK_THAT(parse_refusal(npy_image(dict(">f8", "(1,)"), eight)), Catch::Contains("big-endian"));
  CHECK_THAT(parse_refusal(npy_image(dict("|f8", "(1,)"), eight)), Catch::Contains("byte order"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(1)"), eight)), Catch::Contains("not a tuple"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(1, x)"), eight)), Catch::Contains("not a tuple of integers"));
  CHECK_THAT(parse_refusal(npy_image("{'descr': '<f8', 'shape': (1,), }", eight)), Catch::Contains("lacks"));
  CHECK_THAT(parse_refusal(npy_image("{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }", eight)),
             Catch::Contains("not True or False"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(1,)") + "junk", eight)), Catch::Contains("after its dict"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(2,)"), eight)), Catch::Contains("declares 16 bytes of data but 8 follow"));
  CHECK_THAT(parse_refusal(npy_image(dict("<f8", "(1,)"), eight + "x")), Catch::Contains("declares 8 bytes of data but 9 follow"));
  std::string const v2 = npy_image(dict("<f8", "(1,)"), eight, 2);
  CHECK_THAT(parse_refusal(v2.substr(0, 11)), Catch::Contains("preamble"));
  std::string huge = v2;
  huge[11] = char(0x7f);  // a 2 GiB header in a small file
  CHECK_THAT(parse_refusal(huge), Catch::Contains("only"));
  CHECK_THAT(parse_refusal("\x93NUMPY"), Catch::Contains("not a .npy file"));
  // What NumPy may also write is read: format 2.0 and 3.0, '=' for the native order, spaces
  // anywhere, Python 2's 3L, a one-byte type with '<', no trailing comma.
  double const x = 2.5;
  std::string const xb(reinterpret_cast<char const*>(&x), 8);
  for (auto const& image : {v2, npy_image(dict("=f8", "(1,)"), xb, 3), npy_image("{ \"descr\" : '<f8' ,'shape':( 1L , ),'fortran_order':False}", xb)}) {
    auto a = ember::parse_npy(image.data(), image.size());
    CHECK(a.descr == "<f8");
    CHECK(a.shape == std::vector<std::size_t>{1});
  }
  auto u = npy_image(dict("<u1", "(2, 0)"));
  CHECK(ember::parse_npy(u.data(), u.size()).descr == "|u1");
  CHECK(ember::parse_npy(u.data(), u.size()).size() == 0);
  // as<T> reads no more than the array holds, whatever its shape says.
  ember::npy_array bad{"<f8", {4}, std::vector<char>(8)};
  CHECK_THROWS_WITH(bad.as<double>(), Catch::StartsWith("ember::npy_array::as: the array holds 8 bytes"));
  // read_npy names the file.
  ember_test::scratch_dir const dir("ember_npy_bad");
  auto const path = (dir / "bad.npy").string();
  {
    std::ofstream f(path, std::ios::binary);
    auto b = npy_image(dict("<f8", "(-3,)"));
    f.write(b.data(), std::streamsize(b.size()));
  }
  CHECK_THROWS_WITH(ember::read_npy(path), Catch::StartsWith("ember::read_npy: " + path + ": ") && Catch::Contains("negative"));
}
