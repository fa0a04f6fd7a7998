// einsum (autograd/einsum.h): values against a reference loop written here (every assignment of
// the labels, the product of the operands' elements summed into the output's), first and second
// derivatives by finite differences, the implicit output's order and the broadcasting rules as
// torch.einsum 1.13 has them, and a clear error for each kind of bad equation.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <leangrad/autograd/einsum.h>
#include <leangrad/autograd/functions.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::gradcheck;
using test::gradgradcheck;
using test::to_vector;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// einsum by its definition, in double: terms and output of letters only (no "..."); a dim of size
// 1 broadcasts against its label's size. Returns the output's elements in row-major order.
std::vector<double> reference(const std::vector<std::string>& terms, const std::string& output,
                              const Inputs& operands) {
  std::map<char, std::int64_t> size;
  for (std::size_t i = 0; i < terms.size(); ++i)
    for (std::size_t d = 0; d < terms[i].size(); ++d)
      size[terms[i][d]] = std::max(size[terms[i][d]], operands[i].size(static_cast<int>(d)));
  std::vector<char> labels;
  for (const auto& [label, n] : size)
    labels.push_back(label);
  std::vector<std::vector<double>> values;
  for (const Tensor& x : operands)
    values.push_back(to_vector(x));
  std::int64_t out_numel = 1;
  for (const char c : output)
    out_numel *= size[c];
  std::vector<double> out(static_cast<std::size_t>(out_numel), 0.0);
  std::map<char, std::int64_t> at;
  bool empty = false;  // a label of size 0: nothing to sum
  for (const char c : labels) {
    at[c] = 0;
    empty = empty || size[c] == 0;
  }
  while (!empty) {
    double product = 1.0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < terms[i].size(); ++d) {
        const std::int64_t n = operands[i].size(static_cast<int>(d));
        flat = flat * n + (n == 1 ? 0 : at[terms[i][d]]);
      }
      product *= values[i][static_cast<std::size_t>(flat)];
    }
    std::int64_t flat = 0;
    for (const char c : output)
      flat = flat * size[c] + at[c];
    out[static_cast<std::size_t>(flat)] += product;
    // The next assignment, the last label fastest.
    std::size_t k = labels.size();
    while (k > 0 && ++at[labels[k - 1]] == size[labels[k - 1]]) {
      at[labels[k - 1]] = 0;
      --k;
    }
    if (k == 0) break;
  }
  return out;
}

Tensor input(const Shape& shape, std::uint64_t seed) {
  return uniform_input(shape, -1.0, 1.0, seed);
}

struct Case {
  const char* equation;
  std::vector<Shape> shapes;
  // The same sum with every "..." written as letters, and its output.
  std::vector<std::string> terms;
  std::string output;
  Shape out_shape;
};

const Case kCases[] = {
    {"ij,jk->ik", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik", {3, 5}},
    {"ij,jk", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik", {3, 5}},  // implicit output
    {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {"bij", "bjk"}, "bik", {2, 3, 5}},
    {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, {"bhqd", "bhkd"}, "bhqk", {2, 2, 3, 5}},
    {"i,i->", {{4}, {4}}, {"i", "i"}, "", {}},
    {"i,j->ij", {{3}, {4}}, {"i", "j"}, "ij", {3, 4}},
    {"ij->ji", {{3, 4}}, {"ij"}, "ji", {4, 3}},
    {"ijk->", {{2, 3, 4}}, {"ijk"}, "", {}},
    {"ijk->j", {{2, 3, 4}}, {"ijk"}, "j", {3}},
    {"ii->i", {{4, 4}}, {"ii"}, "i", {4}},
    {"ii", {{4, 4}}, {"ii"}, "", {}},  // trace
    {"iji->j", {{3, 2, 3}}, {"iji"}, "j", {2}},
    {"iii->i", {{3, 3, 3}}, {"iii"}, "i", {3}},
    {"ij,ij->ij", {{3, 4}, {3, 4}}, {"ij", "ij"}, "ij", {3, 4}},
    {"abc,cd,de->abe", {{2, 3, 4}, {4, 5}, {5, 2}}, {"abc", "cd", "de"}, "abe", {2, 3, 2}},
    {"ab,bc,ca->", {{2, 3}, {3, 4}, {4, 2}}, {"ab", "bc", "ca"}, "", {}},
    {"ij,kj,j->ik", {{3, 4}, {2, 4}, {4}}, {"ij", "kj", "j"}, "ik", {3, 2}},
    // Upper case labels, and the implicit output's order: ASCII, so 'A' before 'a' (torch 1.13
    // gives shape (4, 3) for "ba,Ab" with these shapes).
    {"bA,Ab->", {{2, 3}, {3, 2}}, {"bA", "Ab"}, "", {}},
    {"ba,Ab", {{2, 3}, {4, 2}}, {"ba", "Ab"}, "Aa", {4, 3}},
    // A label of size 1 in one operand broadcasts (torch 1.13 takes these).
    {"ij,jk->ik", {{3, 1}, {4, 5}}, {"ij", "jk"}, "ik", {3, 5}},
    {"ij,ij->i", {{3, 1}, {1, 4}}, {"ij", "ij"}, "i", {3}},
    // "...": broadcast, kept, summed when the output lacks it, and first in an implicit output.
    {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}}, {"xyij", "yjk"}, "xyik", {2, 5, 3, 6}},
    {"...ij,...jk", {{2, 3, 4}, {4, 6}}, {"xij", "jk"}, "xik", {2, 3, 6}},
    {"...ij->ij", {{2, 5, 3, 4}}, {"xyij"}, "ij", {3, 4}},
    {"i...->...", {{3, 2, 4}}, {"ixy"}, "xy", {2, 4}},
    {"...->...", {{2, 3}}, {"xy"}, "xy", {2, 3}},
    {" i j , j k -> i k ", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik", {3, 5}},  // spaces
    {",i->i", {{}, {4}}, {"", "i"}, "i", {4}},                             // a 0-d operand
    {"ij,jk->ik", {{3, 0}, {0, 5}}, {"ij", "jk"}, "ik", {3, 5}},           // an empty sum: 0
};

TEST(Einsum, MatchesTheReferenceLoop) {
  std::uint64_t seed = 1;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.equation);
    Inputs operands;
    for (const Shape& shape : c.shapes)
      operands.push_back(input(shape, seed++));
    const Tensor out = einsum(c.equation, operands);
    EXPECT_EQ(out.shape(), c.out_shape);
    EXPECT_EQ(out.dtype(), kFloat64);
    // Sums of at most 60 products of numbers below 1 in magnitude: a few units of roundoff.
    EXPECT_TRUE(all_close(out, reference(c.terms, c.output, operands), 0, 1e-13));
  }
}

// float32 goes through the same products (matmul's float32 kernels).
TEST(Einsum, Float32MatchesTheReference) {
  const Inputs operands = {input({2, 3, 8}, 7).to(kFloat32), input({2, 8, 5}, 8).to(kFloat32)};
  const Tensor out = einsum("bij,bjk->bik", operands);
  EXPECT_EQ(out.dtype(), kFloat32);
  // Inner sums of 8 products below 1: 8 roundings of at most 8 in magnitude, and the inputs'.
  EXPECT_TRUE(all_close(out, reference({"bij", "bjk"}, "bik", operands), 0, 64 * 0x1p-24));
}

TEST(Einsum, GradientsMatchFiniteDifferences) {
  const struct {
    const char* equation;
    std::vector<Shape> shapes;
  } cases[] = {
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 2}}},
      {"ii->i", {{3, 3}}},
      {"iji->j", {{3, 2, 3}}},
      {"abc,cd,de->abe", {{2, 2, 3}, {3, 2}, {2, 2}}},
      {"...ij->ij", {{2, 2, 3, 2}}},
      {"ij,jk->ik", {{3, 1}, {2, 3}}},
      {"i,i->", {{4}, {4}}},
  };
  std::uint64_t seed = 100;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.equation);
    Inputs operands;
    for (const Shape& shape : c.shapes)
      operands.push_back(input(shape, seed++));
    const std::string equation = c.equation;
    // Cubed, so that the second derivative of a product of linear maps is not zero.
    const auto fn = [equation](const Inputs& in) { return einsum(equation, in).pow(3.0); };
    EXPECT_TRUE(gradcheck(fn, operands));
    EXPECT_TRUE(gradgradcheck(fn, operands));
  }
}

TEST(Einsum, BadEquationsAreClearErrors) {
  const Tensor a = input({3, 4}, 1);
  const Tensor b = input({4, 5}, 2);
  EXPECT_THROW_MSG(einsum("ij,jk->ik", {a}), "2 term(s) before \"->\", but 1 operand(s)");
  EXPECT_THROW_MSG(einsum("ij", {a, b}), "1 term(s) before \"->\", but 2 operand(s)");
  EXPECT_THROW_MSG(einsum("i1,jk", {a, b}), "invalid character '1' in operand 0's term");
  EXPECT_THROW_MSG(einsum("ij->i->j", {a}), "more than one \"->\"");
  EXPECT_THROW_MSG(einsum("i.j", {a}), "'.' outside an ellipsis");
  EXPECT_THROW_MSG(einsum("......", {a}), "more than one ellipsis");
  EXPECT_THROW_MSG(einsum("ijk", {a}), "operand 0's term has 3 label(s), but the operand has 2");
  EXPECT_THROW_MSG(einsum("ij,kj->ik", {a, b}), "label 'j' has size 4 in one place and 5");
  EXPECT_THROW_MSG(einsum("ij,jk->iz", {a, b}), "output label 'z' is in no operand's term");
  EXPECT_THROW_MSG(einsum("ij,jk->ii", {a, b}), "output label 'i' occurs more than once");
  EXPECT_THROW_MSG(einsum("ij->...", {a}), "the output has \"...\", but no operand's term does");
  EXPECT_THROW_MSG(einsum("ii->i", {a}), "label 'i' has size 3 in one place and 4 in operand 0");
  EXPECT_THROW_MSG(einsum("ii->i", {input({1, 4}, 5)}),
                   "label 'i' repeats in operand 0 over dims of sizes 1 and 4");
  EXPECT_THROW_MSG(einsum("...i,...i", {input({2, 3}, 3), input({5, 3}, 4)}),
                   "the dims \"...\" stands for do not broadcast");
  EXPECT_THROW_MSG(einsum("ij,jk", {a, b.to(kFloat32)}), "operands of one dtype");
  EXPECT_THROW_MSG(einsum("ij", {}), "at least one operand");
  EXPECT_THROW_MSG(einsum("ij,jk", {a, Tensor()}), "operand 1 is an undefined Tensor()");
  // Each names the op.
  EXPECT_THROW_MSG(einsum("ij,kj->ik", {a, b}), "einsum: ");
}

}  // namespace
}  // namespace leangrad
