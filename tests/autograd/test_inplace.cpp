// In-place ops on tensors autograd records (Note [In-place ops in the graph] in
// autograd/tensor_methods.cpp): gradients through relu_, add_, sub_, mul_, div_, copy_, fill_ and
// zero_ checked against central differences in float64, a ResNet-style block with ReLU(inplace)
// and `out += identity`, and the cases that stay refused. The in-place activations, the bit-for-bit
// comparisons with the out-of-place ops and the memory the graph keeps are in
// test_inplace_activations.cpp.
#include <gtest/gtest.h>

#include <string>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using autograd::grad;

TEST(InPlaceRecorded, ReluOnANonLeafMatchesTheOutOfPlaceOp) {
  Tensor x = test::away_from_zero_input({3, 4}, 0.2, 1.0, 31);
  Tensor y = x * 1.5;
  Tensor& same = y.relu_();
  EXPECT_EQ(&same, &y);
  EXPECT_TRUE(y.equal(relu(x * 1.5)));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "ReluBackward");
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.relu_();
        return h * h;
      },
      {x}));
}

TEST(InPlaceRecorded, ArithmeticWithTensorsAndNumbers) {
  Tensor x = test::uniform_input({2, 3}, -1.0, 1.0, 32);
  Tensor w = test::uniform_input({3}, 0.5, 1.5, 33);  // broadcast over rows; kept away from 0
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.0;  // a non-leaf
        h.mul_(in[1]);           // saves self: computed on a copy of h
        h.add_(in[1], 0.5);
        h.sub_(in[0]);
        h.div_(in[1] + 2.0);  // saves self too
        h.mul_(3.0);
        h.add_(1.0);
        h.sub_(0.25);
        h.div_(2.0);
        h *= h;
        return h;
      },
      {x, w}));
}

TEST(InPlaceRecorded, AGradientWrittenIntoABufferMakesItRequireGrad) {
  Tensor w = test::uniform_input({3}, -1.0, 1.0, 34);
  Tensor buffer = zeros({2, 3}, kFloat64);
  buffer += w;  // broadcast; buffer did not require grad
  ASSERT_TRUE(buffer.requires_grad());
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor b = zeros({2, 3}, kFloat64);
        b.copy_(in[0]);  // broadcast copy: the gradient sums over the rows
        b += in[0] * 2.0;
        b.mul_(in[0]);
        return b;
      },
      {w}));
}

TEST(InPlaceRecorded, FillAndZeroCutTheGradientOfWhatWasThere) {
  Tensor x = test::uniform_input({4}, -1.0, 1.0, 35);
  Tensor y = x * 2.0;
  y.zero_();
  ASSERT_TRUE(y.requires_grad());
  (y + x * 3.0).sum().backward();
  test::expect_close(x.grad(), {3.0, 3.0, 3.0, 3.0}, 0.0, 0.0);
  Tensor z = x * 2.0;
  z.fill_(5.0);
  test::expect_close(z, {5.0, 5.0, 5.0, 5.0}, 0.0, 0.0);
  // x still reaches z's graph, with a zero gradient (PyTorch's FillBackward gives zeros too).
  test::expect_close(grad({z.sum()}, {x})[0], {0.0, 0.0, 0.0, 0.0}, 0.0, 0.0);
}

// A residual block as ResNets write it: ReLU(inplace) twice and `out += identity`.
TEST(InPlaceRecorded, ResidualBlockWithInPlaceReluAndAdd) {
  Tensor x = test::uniform_input({1, 2, 5, 5}, -1.0, 1.0, 36);
  Tensor w1 = test::uniform_input({2, 2, 3, 3}, -0.5, 0.5, 37);
  Tensor w2 = test::uniform_input({2, 2, 3, 3}, -0.5, 0.5, 38);
  auto block = [](const std::vector<Tensor>& in) {
    Tensor out = conv2d(in[0], in[1], Tensor(), {1, 1}, {1, 1});
    out.relu_();
    out = conv2d(out, in[2], Tensor(), {1, 1}, {1, 1});
    out += in[0];
    out.relu_();
    return out;
  };
  EXPECT_TRUE(test::gradcheck(block, {x, w1, w2}));
  // The same block written out of place gives the same gradients, bit for bit.
  Tensor y = block({x, w1, w2});
  const std::vector<Tensor> g_in_place = grad({y.sum()}, {x, w1, w2});
  Tensor h = relu(conv2d(x, w1, Tensor(), {1, 1}, {1, 1}));
  Tensor y2 = relu(conv2d(h, w2, Tensor(), {1, 1}, {1, 1}) + x);
  const std::vector<Tensor> g_out_of_place = grad({y2.sum()}, {x, w1, w2});
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(g_in_place[i].equal(g_out_of_place[i])) << "input " << i;
}

TEST(InPlaceRecorded, RefusedWhereTheGraphWouldBeWrong) {
  Tensor x = test::uniform_input({2}, -1.0, 1.0, 39);
  std::string m = test::error_message([&] { x.relu_(); });  // a leaf that requires grad
  EXPECT_NE(m.find("leaf"), std::string::npos) << m;
  Tensor y = x * 2.0;
  {
    const Tensor view = y.view({1, 2});
    m = test::error_message([&] { y.add_(1.0); });
    EXPECT_NE(m.find("live view"), std::string::npos) << m;
  }
  y.add_(1.0);  // the view is gone: recorded now
  Tensor z = x * 2.0;
  Tensor saved_by_mul = z * z;  // MulBackward saves z
  z.add_(1.0);
  m = test::error_message([&] { saved_by_mul.sum().backward(); });
  EXPECT_NE(m.find("MulBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("in-place"), std::string::npos) << m;
}

}  // namespace
}  // namespace leangrad
