// ember/eigen.hpp: draws and final states as Eigen::Map views over the result's own memory, and
// start states from an Eigen matrix through .init, both without copies.
#include <ember/ember.hpp>
#include <ember/eigen.hpp>

#include "support/message_of.hpp"

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <cstdint>

using ember::vec;
using ember_test::message_of;

TEST_CASE("Eigen views of draws and final states show the result's values in place", "[eigen]") {
  constexpr int D = 3;
  std::int64_t const C = 7;
  ember::harmonic<float, D> U;
  auto r = ember::sample(ember::ula(U, {.step_size = 0.1}) | ember::record(), {.chains = C, .steps = 5, .seed = 2});
  // [eigen_views]
  auto trace = ember::eigen::chain(r, 2);    // kept × 3 view: row k is draw k of chain 2
  auto x0 = ember::eigen::coordinate(r, 0);  // kept × chains view: x₀ of every draw
  Eigen::Matrix<float, 3, Eigen::Dynamic> last = ember::eigen::final_states(r);  // a copy: column c is chain c
  double mean_x0 = x0.cast<double>().mean();
  // [eigen_views]
  double sum = 0;
  for (std::int64_t k = 0; k < r.kept(); ++k)
    for (std::int64_t c = 0; c < C; ++c) {
      sum += r.samples()(k, c, 0);
      auto at_k = ember::eigen::draw(r, k);
      for (int d = 0; d < D; ++d) {
        REQUIRE(at_k(d, c) == r.samples()(k, c, d));
        REQUIRE(ember::eigen::coordinate(r, d)(k, c) == r.samples()(k, c, d));
        REQUIRE(ember::eigen::chain(r, c)(k, d) == r.samples()(k, c, d));
      }
    }
  CHECK(mean_x0 == Approx(sum / double(r.kept() * C)).epsilon(1e-12));
  for (std::int64_t c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d) {
      REQUIRE(last(d, c) == r.final_state(c)[d]);
      REQUIRE(trace(r.kept() - 1, d) == r.samples()(r.kept() - 1, 2, d));
    }
  // Views, not copies: they point into the result.
  CHECK(ember::eigen::draw(r, 3).data() == &r.samples().data()[std::size_t(3 * D * C)]);
  CHECK(ember::eigen::coordinate(r, 2).data() == &r.samples().data()[std::size_t(2 * C)]);
  CHECK(ember::eigen::chain(r, 4).data() == &r.samples().data()[4]);
  CHECK(ember::eigen::final_states(r).data() == r.final_states().data());
  // Indices are checked.
  CHECK(message_of<std::out_of_range>([&] { (void)ember::eigen::chain(r, C); }) ==
        "ember::eigen::chain: chain 7 is not in [0, 7)");
  CHECK(message_of<std::out_of_range>([&] { (void)ember::eigen::draw(r, -1); }) ==
        "ember::eigen::draw: draw -1 is not in [0, 5)");
  auto unrecorded = ember::sample(ember::ula(U, {.step_size = 0.1}), {.chains = C, .steps = 1, .seed = 2});
  CHECK(message_of<std::invalid_argument>([&] { (void)ember::eigen::coordinate(unrecorded, 0); }) ==
        "ember::eigen::coordinate: the run recorded no draws (add record() to the pipeline)");
}

TEST_CASE(".init takes an Eigen matrix of start states, one per column or per row-major row", "[eigen]") {
  constexpr int D = 3;
  std::int64_t const C = 40;
  ember::harmonic<float, D> U;
  // [eigen_init]
  Eigen::Matrix<float, 3, Eigen::Dynamic> starts(3, C);  // one start state per column
  for (std::int64_t c = 0; c < C; ++c) starts.col(c) << 10.f * float(c), -3.f * float(c), 0.5f;
  auto r = ember::sample(ember::ula(U, {.step_size = 1e-4}), {.chains = C, .steps = 0, .seed = 3, .init = starts});
  // [eigen_init]
  // No transitions: the final states are the start states, bit for bit.
  for (std::int64_t c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d) REQUIRE(r.final_state(c)[d] == starts(d, c));
  // A row-major chains × D matrix holds the same states contiguously; the same run, the same bits.
  Eigen::Matrix<float, Eigen::Dynamic, 3, Eigen::RowMajor> rows = starts.transpose();
  auto r2 = ember::sample(ember::ula(U, {.step_size = 0.1}) | ember::record(),
                          {.chains = C, .steps = 3, .seed = 3, .init = rows});
  auto r3 = ember::sample(ember::ula(U, {.step_size = 0.1}) | ember::record(),
                          {.chains = C, .steps = 3, .seed = 3, .init = starts});
  CHECK(std::equal(r2.samples().data().begin(), r2.samples().data().end(), r3.samples().data().begin()));
  // The natural chains × D column-major matrix stores coordinates, not states, contiguously:
  // refused with a sentence, as are other shapes.
  Eigen::MatrixXf by_chain = starts.transpose();
  CHECK(message_of<std::invalid_argument>([&] {
          ember::sample(ember::ula(U, {.step_size = 0.1}), {.chains = C, .steps = 1, .init = by_chain});
        }) == "ember: .init takes one start state of 3 values per column of a column-major matrix, stored "
              "contiguously; got a 40 x 3 matrix (a chains x 3 column-major matrix needs .transpose() into a "
              "named 3 x chains matrix)");
  Eigen::MatrixXf four(4, C);
  CHECK_THAT(message_of<std::invalid_argument>([&] {
               ember::sample(ember::ula(U, {.step_size = 0.1}), {.chains = C, .steps = 1, .init = four});
             }),
             Catch::StartsWith("ember: .init takes one start state of 3 values per column of a column-major matrix"));
  // A matrix of the right shape but another chain count is refused by sample's own check.
  Eigen::Matrix<float, 3, Eigen::Dynamic> few = starts.leftCols(5);
  CHECK_THAT(message_of<std::invalid_argument>([&] {
               ember::sample(ember::ula(U, {.step_size = 0.1}), {.chains = C, .steps = 1, .init = few});
             }),
             Catch::Contains(".init has 5"));
}
