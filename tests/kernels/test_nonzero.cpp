// The CPU kernel under nonzero and masked_select (kernels/cpu/nonzero.h, Note [True positions in
// two passes]) on raw bytes: every nonzero byte is true, whatever its value (0x80 and 0x7f test
// the two halves of the word's test), every length of a tail from every offset, masks across
// chunks, and the multi-indices of a shape against division.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/cpu/nonzero.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// The positions of the nonzero bytes, by a loop.
std::vector<std::int64_t> expected_positions(const std::uint8_t* bytes, std::int64_t n) {
  std::vector<std::int64_t> positions;
  for (std::int64_t i = 0; i < n; ++i)
    if (bytes[i] != 0) positions.push_back(i);
  return positions;
}

std::vector<std::int64_t> positions_of(const std::uint8_t* bytes, std::int64_t n) {
  const std::int64_t count = kernels::cpu::count_true(bytes, n);
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  kernels::cpu::true_positions(bytes, n, {}, out.data());
  return out;
}

TEST(NonzeroKernel, EveryNonzeroByteIsTrueAtEveryLengthAndOffset) {
  std::mt19937 rng(5);
  const std::uint8_t kinds[] = {0, 0, 0, 1, 0x80, 0x7f, 0xff, 0x01};
  std::vector<std::uint8_t> bytes(64 + 48);
  for (std::uint8_t& b : bytes)
    b = kinds[rng() % 8];
  for (std::int64_t offset = 0; offset < 8; ++offset)
    for (std::int64_t n = 0; n <= 48; ++n) {
      SCOPED_TRACE("offset " + std::to_string(offset) + " length " + std::to_string(n));
      EXPECT_EQ(positions_of(bytes.data() + offset, n),
                expected_positions(bytes.data() + offset, n));
    }
}

TEST(NonzeroKernel, MasksAcrossChunks) {
  std::mt19937 rng(6);
  for (int per_mille : {0, 1, 500, 1000}) {
    SCOPED_TRACE(std::to_string(per_mille) + " per mille");
    std::vector<std::uint8_t> bytes(3 * 65536 + 11);
    for (std::uint8_t& b : bytes)
      b = static_cast<int>(rng() % 1000) < per_mille ? static_cast<std::uint8_t>(1 + rng() % 255)
                                                     : 0;
    const auto n = static_cast<std::int64_t>(bytes.size());
    EXPECT_EQ(positions_of(bytes.data(), n), expected_positions(bytes.data(), n));
  }
}

// Rows of (count, rank) indices against each position divided out, with steps within a row,
// across rows (carried over more than one dim) and over many rows (divided afresh).
TEST(NonzeroKernel, IndicesOfAShapeAreThePositionsDividedOut) {
  std::mt19937 rng(7);
  for (const std::vector<std::int64_t>& sizes :
       {std::vector<std::int64_t>{70000}, std::vector<std::int64_t>{3, 1, 40000},
        std::vector<std::int64_t>{2, 3, 5, 7, 11, 13}, std::vector<std::int64_t>{1000, 2}}) {
    std::int64_t n = 1;
    for (std::int64_t s : sizes)
      n *= s;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n));
    for (std::uint8_t& b : bytes)
      b = rng() % 7 == 0 ? 1 : (rng() % 50 == 0 ? 0x80 : 0);
    const std::vector<std::int64_t> flat = expected_positions(bytes.data(), n);
    const auto rank = static_cast<std::int64_t>(sizes.size());
    std::vector<std::int64_t> expected;
    for (std::int64_t p : flat) {
      std::vector<std::int64_t> index(sizes.size());
      for (std::int64_t d = rank - 1; d >= 0; --d) {
        index[static_cast<std::size_t>(d)] = p % sizes[static_cast<std::size_t>(d)];
        p /= sizes[static_cast<std::size_t>(d)];
      }
      expected.insert(expected.end(), index.begin(), index.end());
    }
    ASSERT_EQ(kernels::cpu::count_true(bytes.data(), n), static_cast<std::int64_t>(flat.size()));
    std::vector<std::int64_t> got(expected.size());
    kernels::cpu::true_positions(bytes.data(), n, sizes, got.data());
    EXPECT_EQ(got, expected);
  }
}

// The entry refuses what autograd's nonzero never hands it: a mask that is not bool, or none.
TEST(NonzeroKernel, TheEntryRefusesAFloatMaskAndAnUndefinedOne) {
  EXPECT_NE(test::error_message([] {
              ops::nonzero(zeros({2, 3}), false);
            }).find("nonzero: expected a bool mask, got float32 (shape [2, 3])"),
            std::string::npos);
  EXPECT_NE(test::error_message([] { ops::nonzero(Tensor(), true); })
                .find("nonzero: expected a "
                      "defined mask"),
            std::string::npos);
}

}  // namespace
}  // namespace leangrad
