// .npz archives: CRC-32 against its check value, zip records readable by ember and by NumPy
// (Python's zipfile verifies every CRC), zip64 included.
#include "numpy_check.hpp"

#include <ember/io/npz.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
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
  ember_test::scratch_dir const dir("ember_npz_test");
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
  ember_test::scratch_dir const dir("ember_npz_numpy");
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

namespace {
std::string file_bytes(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void put_le(std::string& b, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + std::size_t(i)] = char((v >> (8 * i)) & 0xff);
}
// read_npz's message for `bytes` as a file; fails the test if it does not throw std::runtime_error.
std::string npz_refusal(std::string const& bytes) {
  ember_test::scratch_dir const dir("ember_npz_refusal");
  auto const path = (dir / "ember_npz_bad.npz").string();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
  }
  try {
    auto m = ember::read_npz(path);
    FAIL_CHECK("accepted, with " << m.size() << " arrays");
  } catch (std::runtime_error const& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("read_npz refuses malformed archives with one sentence and reads nothing outside the file", "[io][npz]") {
  ember_test::scratch_dir const dir("ember_npz_good");
  auto const good = (dir / "good.npz").string();
  {
    ember::npz_writer z(good, true);  // zip64 extra fields in both headers
    std::vector<double> a{1, 2, 3};
    z.add("a", a.data(), std::array<std::size_t, 1>{3});
    z.add("b", a.data(), std::array<std::size_t, 1>{2});
  }
  std::string const bytes = file_bytes(good);
  REQUIRE(ember::read_npz(good).size() == 2);
  std::size_t const central = bytes.find("PK\x01\x02");  // the first central directory record
  REQUIRE(central != std::string::npos);
  // Each refusal is one short sentence naming the reader and the file (no bytes of the file).
  auto sentence = [&](std::string const& m) {
    CHECK(m.rfind("ember::read_npz: ", 0) == 0);
    CHECK(m.find("ember_npz_bad.npz") != std::string::npos);
    CHECK(m.size() < 300);
    CHECK(std::all_of(m.begin(), m.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
  };
  SECTION("a 30-byte local header that declares a 65,535-byte name") {
    std::string b(30, '\0');
    put_le(b, 0, 0x04034b50, 4);
    put_le(b, 26, 0xffff, 2);
    auto m = npz_refusal(b);
    sentence(m);
    CHECK_THAT(m, Catch::Contains("truncated"));
  }
  SECTION("a 65,535-byte name in the local header of a whole archive") {
    for (bool zip64 : {false, true}) {
      {
        ember::npz_writer z(good, zip64);
        float x = 1;
        z.add_scalar("a", x);
      }
      auto b = file_bytes(good);
      put_le(b, 26, 0xffff, 2);
      sentence(npz_refusal(b));
    }
  }
  SECTION("zip64 sizes of 2^64 - 16 (the bounds check must not wrap)") {
    auto b = bytes;
    put_le(b, 30 + 5 + 4, ~std::uint64_t(15), 8);            // the local zip64 sizes
    put_le(b, 30 + 5 + 12, ~std::uint64_t(15), 8);
    put_le(b, central + 46 + 5 + 4, ~std::uint64_t(15), 8);  // and the central ones
    put_le(b, central + 46 + 5 + 12, ~std::uint64_t(15), 8);
    sentence(npz_refusal(b));
  }
  SECTION("an extra field whose length runs past its header") {
    auto b = bytes;
    put_le(b, 30 + 5 + 2, 0xfff0, 2);
    sentence(npz_refusal(b));
  }
  SECTION("a file that is not a zip archive") {
    auto m = npz_refusal("this is a text file, not an archive; it is long enough to hold an end record");
    sentence(m);
    CHECK_THAT(m, Catch::Contains("not a zip archive"));
    CHECK_THAT(npz_refusal(""), Catch::Contains("not a zip archive"));
  }
  SECTION("an archive cut after its first entry, or anywhere else") {
    auto m = npz_refusal(bytes.substr(0, bytes.find("PK\x03\x04", 4)));
    sentence(m);
    CHECK_THAT(m, Catch::Contains("truncated"));
    for (std::size_t cut = 0; cut < bytes.size(); cut += 7) sentence(npz_refusal(bytes.substr(0, cut)));
  }
  SECTION("a local header that disagrees with its central record") {
    auto b = bytes;
    b[30] = 'x';  // the local name "x.npy", the central one "a.npy"
    CHECK_THAT(npz_refusal(b), Catch::Contains("names another entry"));
    b = bytes;
    put_le(b, 14, 0x12345678, 4);  // the local CRC
    CHECK_THAT(npz_refusal(b), Catch::Contains("disagrees"));
  }
  SECTION("two entries of one name") {
    auto b = bytes;
    for (auto at = b.find("b.npy"); at != std::string::npos; at = b.find("b.npy")) b[at] = 'a';
    auto m = npz_refusal(b);
    sentence(m);
    CHECK_THAT(m, Catch::Contains("two entries for the array 'a'"));
  }
  SECTION("an entry whose .npy data is longer than its header says") {
    std::string b = bytes;
    put_le(b, bytes.find("'shape': (3,)") + 10, '2', 1);  // shape (2,): 8 bytes too many, CRC mended below
    std::size_t const data = 30 + 5 + 20, size = bytes.find("PK\x03\x04", 4) - data;
    std::uint32_t const crc = ember::detail::crc32_update(0, b.data() + data, size);
    put_le(b, 14, crc, 4);
    put_le(b, central + 16, crc, 4);
    CHECK_THAT(npz_refusal(b), Catch::Contains("header declares 16 bytes of data but 24 follow"));
  }
  SECTION("an archive with no entries is read as empty") {
    { ember::npz_writer z(good); }
    CHECK(ember::read_npz(good).empty());
  }
}

TEST_CASE("ember reads numpy.savez's archives (zip64 local headers)", "[io][npz][numpy]") {
  if (!ember_test::numpy_available()) return;
  ember_test::scratch_dir const dir("ember_npz_savez");
  std::string script = "import numpy as np, sys\n"
                       "d = sys.argv[0].rsplit('/', 1)[0]\n"
                       "np.savez(d + '/s.npz', a=np.arange(6.0).reshape(2, 3) / 4, b=np.array([True, False]),\n"
                       "         c=np.float32(2.5), d=np.arange(5, dtype=np.int64) - 2)\n";
  REQUIRE(ember_test::run_python(script, (dir / "savez.py").string()) == 0);
  auto m = ember::read_npz((dir / "s.npz").string());
  REQUIRE(m.size() == 4);
  CHECK(m["a"].shape == std::vector<std::size_t>{2, 3});
  CHECK(m["a"].as<double>() == std::vector<double>{0, 0.25, 0.5, 0.75, 1, 1.25});
  CHECK(m["b"].as<bool>() == std::vector<bool>{true, false});
  CHECK(m["c"].as<float>() == std::vector<float>{2.5f});
  CHECK(m["d"].as<std::int64_t>() == std::vector<std::int64_t>{-2, -1, 0, 1, 2});
}
