// .npz archives: CRC-32 against its check value, zip records readable by ember and by NumPy
// (Python's zipfile verifies every CRC), zip64 included.
#include "numpy_check.hpp"

#include <ember/io/npz.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

TEST_CASE("crc32 gives the standard check value and continues across pieces", "[io][npz]") {
  // The CRC-32 of "123456789" is 0xCBF43926 (the check value of the ISO 3309 / zip CRC).
  std::string s = "123456789";
  CHECK(ember::detail::crc32_update(0, s.data(), s.size()) == 0xCBF43926u);
  CHECK(ember::detail::crc32_update(0, "", 0) == 0u);
  // Slicing-by-8 against the bytewise loop, for lengths that leave every remainder.
  std::string long_text;
  for (int i = 0; i < 1000; ++i) long_text += char(i * 37 + 11);
  for (std::size_t split : {0, 1, 7, 8, 9, 500, 999}) {
    auto a = ember::detail::crc32_update(0, long_text.data(), split);
    auto b = ember::detail::crc32_update(a, long_text.data() + split, long_text.size() - split);
    std::uint32_t bytewise = 0xffffffffu;
    for (unsigned char c : long_text) bytewise = ember::detail::crc32_table().t[0][(bytewise ^ c) & 0xff] ^ (bytewise >> 8);
    CHECK(b == ~bytewise);
  }
}

namespace {
void write_sample(std::string const& path, bool zip64) {
  ember::npz_writer z(path, zip64);
  std::vector<double> a(6);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i) * 1.5;
  z.add("a", a.data(), std::array<std::size_t, 2>{2, 3});
  std::vector<std::int32_t> b{4, -5, 6, 7};
  z.add("b", b.data(), std::array<std::size_t, 1>{4});
  z.add_scalar("c", 3.25f);
  // A streamed array bigger than one 4 MiB chunk of the writer.
  z.add_streamed<float>("big", std::array<std::size_t, 1>{1'500'000}, [](float* buf, std::size_t first, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) buf[i] = float((first + i) % 1000);
  });
  z.close();
}
}  // namespace

TEST_CASE("npz archives read back with ember's reader, with and without zip64", "[io][npz]") {
  auto dir = std::filesystem::temp_directory_path() / "ember_npz_test";
  std::filesystem::create_directories(dir);
  for (bool zip64 : {false, true}) {
    auto path = (dir / (zip64 ? "z64.npz" : "z.npz")).string();
    write_sample(path, zip64);
    auto m = ember::read_npz(path);
    REQUIRE(m.size() == 4);
    CHECK(m["a"].shape == std::vector<std::size_t>{2, 3});
    CHECK(m["a"].as<double>() == std::vector<double>{0, 1.5, 3, 4.5, 6, 7.5});
    CHECK(m["b"].as<std::int32_t>() == std::vector<std::int32_t>{4, -5, 6, 7});
    CHECK(m["c"].shape.empty());
    CHECK(m["c"].as<float>() == std::vector<float>{3.25f});
    auto big = m["big"].as<float>();
    REQUIRE(big.size() == 1'500'000);
    bool ok = true;
    for (std::size_t i = 0; i < big.size(); ++i) ok &= big[i] == float(i % 1000);
    CHECK(ok);
    // A flipped data byte is caught by the CRC.
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(200);
      char c;
      f.seekg(200);
      f.get(c);
      f.seekp(200);
      f.put(char(c ^ 1));
    }
    CHECK_THROWS_WITH(ember::read_npz(path), Catch::Contains("CRC-32 mismatch"));
  }
}

TEST_CASE("numpy.load reads ember's npz archives, zip64 included", "[io][npz][numpy]") {
  if (!ember_test::numpy_available()) return;
  auto dir = std::filesystem::temp_directory_path() / "ember_npz_numpy";
  std::filesystem::create_directories(dir);
  write_sample((dir / "z.npz").string(), false);
  write_sample((dir / "z64.npz").string(), true);
  std::string script = "import numpy as np, sys, zipfile\n"
                       "d = sys.argv[0].rsplit('/', 1)[0]\n"
                       "for name in ('z.npz', 'z64.npz'):\n"
                       "    assert zipfile.ZipFile(d + '/' + name).testzip() is None  # every CRC\n"
                       "    m = np.load(d + '/' + name)\n"
                       "    assert sorted(m.files) == ['a', 'b', 'big', 'c'], m.files\n"
                       "    assert (m['a'] == np.arange(6).reshape(2, 3) * 1.5).all() and m['a'].dtype == np.float64\n"
                       "    assert list(m['b']) == [4, -5, 6, 7] and m['b'].dtype == np.int32\n"
                       "    assert m['c'].shape == () and m['c'] == np.float32(3.25)\n"
                       "    assert (m['big'] == (np.arange(1500000) % 1000).astype(np.float32)).all()\n";
  CHECK(ember_test::run_python(script, (dir / "check.py").string()) == 0);
}
