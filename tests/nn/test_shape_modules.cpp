// unflatten, nn::Unflatten and nn::Identity: the shapes torch.unflatten gives (sizes with -1,
// negative dims, empty dims), the elements in their order, gradients through the view, and the
// modules in a Sequential. Bad sizes: the Views table of tests/misuse/test_misuse_tensors.cpp.
#include <gtest/gtest.h>

#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

Tensor counting(const Shape& shape) {
  return arange(static_cast<double>(shape_numel(shape)), TensorOptions().dtype(kFloat64))
      .reshape(shape);
}

TEST(Unflatten, ShapesAndElementsAreTorchs) {
  struct Case {
    Shape input;
    std::int64_t dim;
    Shape sizes;
    Shape want;  // torch.unflatten's shape
  };
  const std::vector<Case> cases = {
      {{2, 12}, 1, {3, 4}, {2, 3, 4}},       {{2, 12}, -1, {2, -1, 3}, {2, 2, 2, 3}},
      {{12, 5}, 0, {-1, 6}, {2, 6, 5}},      {{2, 0, 3}, 1, {0, 4}, {2, 0, 4, 3}},
      {{2, 0, 3}, 1, {5, -1}, {2, 5, 0, 3}}, {{7}, 0, {7, 1}, {7, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    const Tensor x = counting(c.input);
    const Tensor y = x.unflatten(c.dim, c.sizes);
    EXPECT_EQ(y.shape(), c.want);
    EXPECT_EQ(test::to_vector(y), test::to_vector(x));  // row-major order is unchanged
  }
}

TEST(Unflatten, GradientsFlowBackThroughTheView) {
  const Tensor x = counting({3, 8}).requires_grad_();
  const Tensor w = mul(counting({3, 2, 4}), 0.5);
  sum(mul(unflatten(x, 1, {2, 4}), w)).backward();
  EXPECT_EQ(test::to_vector(x.grad()), test::to_vector(w));
}

TEST(Unflatten, ModulesInASequential) {
  // The MLP-to-image round trip: (N, 784) -> (N, 1, 28, 28) -> Identity -> (N, 784).
  nn::Sequential model(nn::Unflatten(nn::UnflattenOptions(1, {1, 28, 28})), nn::Identity(),
                       nn::Flatten());
  const Tensor x = counting({2, 784});
  const Tensor image = model->ptr<nn::Unflatten>(0)->forward(x);
  EXPECT_EQ(image.shape(), (Shape{2, 1, 28, 28}));
  const Tensor back = model->forward(x);
  EXPECT_EQ(back.shape(), x.shape());
  EXPECT_EQ(test::to_vector(back), test::to_vector(x));
  EXPECT_TRUE(model->ptr<nn::Identity>(1)->forward(x).is_same(x));
  EXPECT_EQ(model->ptr<nn::Unflatten>(0)->extra_repr(), "dim=1, unflattened_size=[1, 28, 28]");
  EXPECT_TRUE(model->parameters().empty());
}

}  // namespace
}  // namespace leangrad
