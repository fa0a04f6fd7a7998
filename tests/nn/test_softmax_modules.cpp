// nn::Softmax, nn::LogSoftmax and nn::Softmin, and softmin: the modules give the functions'
// values bit for bit along the dim they are given (negative dims too), and softmin is softmax
// of -x (each row sums to 1 and orders its weights against the values). The functions
// themselves are checked against PyTorch in tests/kernels and tests/autograd.
#include <gtest/gtest.h>

#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

TEST(SoftmaxModules, GiveTheFunctionsValues) {
  const Tensor x = randn({3, 4, 5}, TensorOptions().dtype(kFloat64));
  for (const std::int64_t dim : {0, 1, -1}) {
    SCOPED_TRACE(dim);
    EXPECT_TRUE(equal(nn::Softmax(dim)(x), softmax(x, dim)));
    EXPECT_TRUE(equal(nn::LogSoftmax(nn::LogSoftmaxOptions(dim))(x), log_softmax(x, dim)));
    EXPECT_TRUE(equal(nn::Softmin(dim)(x), softmax(neg(x), dim)));
  }
  EXPECT_EQ(nn::Softmax(1)->extra_repr(), "dim=1");
}

TEST(Softmin, RowsSumToOneAndFavourTheSmallest) {
  const Tensor x = test::make_tensor({3, -1, 2, 0.5, 4, -2}, {2, 3}, kFloat64);
  const std::vector<double> w = test::to_vector(softmin(x, 1));
  for (int row = 0; row < 2; ++row) {
    const double* r = w.data() + 3 * row;
    EXPECT_NEAR(r[0] + r[1] + r[2], 1.0, 4 * 0x1p-53);
  }
  EXPECT_GT(w[1], w[2]);  // -1 < 2 < 3
  EXPECT_GT(w[2], w[0]);
  EXPECT_GT(w[5], w[3]);  // -2 < 0.5 < 4
  EXPECT_GT(w[3], w[4]);
  const Tensor leaf = x.clone().requires_grad_();
  EXPECT_TRUE(
      test::gradcheck([](const std::vector<Tensor>& in) { return softmin(in[0], 0); }, {leaf}));
}

}  // namespace
}  // namespace leangrad
