// The checkpoint byte stream's cursor (detail/checkpoint.hpp): no read, array or count can pass
// the end of the bytes, whatever the lengths in them say, and nothing is allocated for a length
// before it is checked against the bytes left.
#include <ember/detail/checkpoint.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
template <class V>
std::string bytes_of(V v) {
  return std::string(reinterpret_cast<char const*>(&v), sizeof v);
}
}  // namespace

TEST_CASE("byte_reader refuses every read past the end, with no overflow in its checks", "[checkpoint]") {
  using ember::detail::byte_reader;
  using Catch::Contains;
  std::string const three = "abc";
  // A cursor past the end (as run::load starts at 8) must not wrap `size - pos` into room to read.
  byte_reader past{three, "x.ember", 8};
  CHECK_THROWS_WITH(past.get<std::uint32_t>(), Contains("x.ember is truncated"));
  CHECK_THROWS_AS(past.get_vector<char>(), std::runtime_error);
  byte_reader r{three, "x.ember", 0};
  CHECK_THROWS_WITH(r.get<std::uint64_t>(), Contains("truncated"));
  CHECK(r.pos == 0);
  // Array lengths that would pass the end, or wrap n · sizeof(V), are refused before allocating.
  for (std::uint64_t n : {std::uint64_t(1) << 62, ~std::uint64_t(0), ~std::uint64_t(0) - 15, std::uint64_t(3)}) {
    std::string const b = bytes_of(n) + "0123456789abcdef";
    byte_reader v{b, "y.ember", 0};
    CHECK_THROWS_WITH(v.get_vector<double>(), Contains("y.ember is truncated or corrupt") && Contains("would pass its end"));
  }
  std::string const two = bytes_of(std::uint64_t(2)) + bytes_of(1.5) + bytes_of(-2.0);
  byte_reader ok{two, "z.ember", 0};
  CHECK(ok.get_vector<double>() == std::vector<double>{1.5, -2.0});
  CHECK(ok.pos == two.size());
  // A count (of chains) is positive and leaves its bytes per item in what follows.
  for (std::int64_t n : {std::int64_t(0), std::int64_t(-1), std::int64_t(1) << 62, std::int64_t(3)}) {
    std::string const b = bytes_of(n) + std::string(50, '\0');
    byte_reader c{b, "c.ember", 0};
    CHECK_THROWS_AS(c.get_count(25), std::runtime_error);
  }
  std::string const b = bytes_of(std::int64_t(2)) + std::string(50, '\0');
  byte_reader c{b, "c.ember", 0};
  CHECK(c.get_count(25) == 2);
}
