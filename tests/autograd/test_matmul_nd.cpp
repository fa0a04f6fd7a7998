// matmul of operands beyond 3-d (Note [Batched matmul beyond 3-d] in autograd/functions.cpp):
// values against a reference loop in double with torch.matmul's broadcasting rules, gradients
// against finite differences. The kernel's own cases (1-d to 3-d) are
// tests/kernels/test_matmul.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/shape.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

std::string describe(const Shape& a, const Shape& b) {
  std::ostringstream out;
  out << a << " @ " << b;
  return out.str();
}

Tensor values(const Shape& shape, double seed) {
  std::vector<double> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(seed + 0.7 * static_cast<double>(i)) * 2.0;
  return test::make_tensor(v, shape, kFloat64);
}

// torch.matmul written out: a 1-d left operand is a row (removed from the result), a 1-d right
// operand a column; the batch dims (all but the last two) broadcast from the right.
struct Reference {
  Shape shape;
  std::vector<double> data;
};
Reference reference_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const std::int64_t n = sa[sa.size() - 2], k = sa.back(), p = sb.back();
  const std::size_t batch_dims = std::max(sa.size(), sb.size()) - 2;
  Shape batch(batch_dims);
  for (std::size_t d = 0; d < batch_dims; ++d) {
    const std::size_t from_right = batch_dims - d;  // 1 = the batch dim next to the matrix
    const std::int64_t da = sa.size() - 2 >= from_right ? sa[sa.size() - 2 - from_right] : 1;
    const std::int64_t db = sb.size() - 2 >= from_right ? sb[sb.size() - 2 - from_right] : 1;
    batch[d] = da == 1 ? db : da;  // 1 broadcasts (to 0 too)
  }
  const std::vector<double> va = test::to_vector(a), vb = test::to_vector(b);
  // The offset of batch index `idx` (row-major over `batch`) in an operand of shape s.
  auto batch_offset = [&](const Shape& s, std::int64_t idx) {
    std::int64_t offset = 0, stride = s[s.size() - 2] * s.back();
    for (std::size_t d = batch_dims; d-- > 0;) {
      const std::int64_t i = idx % batch[d];
      idx /= batch[d];
      const std::size_t from_right = batch_dims - d;
      if (s.size() - 2 < from_right) continue;
      const std::int64_t size = s[s.size() - 2 - from_right];
      offset += (size == 1 ? 0 : i) * stride;
      stride *= size;
    }
    return offset;
  };
  Reference r;
  const std::int64_t batch_numel = shape_numel(batch);
  for (std::int64_t bi = 0; bi < batch_numel; ++bi) {
    const std::int64_t oa = batch_offset(sa, bi), ob = batch_offset(sb, bi);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < p; ++j) {
        double acc = 0;
        for (std::int64_t l = 0; l < k; ++l)
          acc += va[oa + i * k + l] * vb[ob + l * p + j];
        r.data.push_back(acc);
      }
  }
  r.shape = batch;
  if (a.dim() > 1) r.shape.push_back(n);
  if (b.dim() > 1) r.shape.push_back(p);
  return r;
}

TEST(MatmulBeyond3d, MatchesTheReferenceLoop) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 1, 3, 4}, {5, 4, 2}},     // batch dims broadcast both ways
      {{2, 3, 4, 5}, {5}},           // a vector on the right
      {{4}, {2, 3, 4, 5}},           // a vector on the left
      {{2, 3, 4, 5}, {5, 6}},        // a matrix on the right (not copied)
      {{3, 5}, {2, 2, 5, 4}},        // a matrix on the left
      {{1, 2, 3, 4}, {2, 1, 4, 3}},  // attention's (B, H, T, D) @ (B, H, D, T) shape
      {{2, 1, 1, 3, 2}, {4, 1, 2, 3}},
      {{0, 2, 3, 4}, {4, 2}},  // an empty batch
  };
  for (const auto& [shape_a, shape_b] : cases) {
    SCOPED_TRACE(describe(shape_a, shape_b));
    const Tensor a = values(shape_a, 0.3), b = values(shape_b, 1.9);
    const Tensor out = matmul(a, b);
    const Reference want = reference_matmul(a, b);
    ASSERT_EQ(out.shape(), want.shape);
    // Each element is a sum of k products of numbers below 4 in magnitude: within (k + 1) u 4^2 k
    // of the exact sum, and so of the double loop's.
    const double k = static_cast<double>(shape_a.back());
    const std::vector<double> got = test::to_vector(out);
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want.data[i], 2 * (k + 1) * 0x1p-53 * 16 * k) << "element " << i;
  }
}

TEST(MatmulBeyond3d, GradientsMatchFiniteDifferences) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 1, 3, 2}, {3, 2, 2}}, {{2, 2, 2, 3}, {3}}, {{3}, {2, 1, 3, 2}}, {{1, 2, 2, 3}, {3, 2}}};
  for (const auto& [shape_a, shape_b] : cases) {
    SCOPED_TRACE(describe(shape_a, shape_b));
    Tensor a = values(shape_a, 0.1).requires_grad_();
    Tensor b = values(shape_b, 2.2).requires_grad_();
    EXPECT_TRUE(test::gradcheck(
        [](const std::vector<Tensor>& in) {
          const Tensor y = matmul(in[0], in[1]);
          return y * y;
        },
        {a, b}));
  }
}

}  // namespace
}  // namespace leangrad
