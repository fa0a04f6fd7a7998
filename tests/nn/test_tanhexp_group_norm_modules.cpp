// The modules of nn/activation.h and nn/group_norm.h: parameter names and PyTorch's default
// initialisation, the options builder, printing, and forward equal to the function it wraps.
#include <gtest/gtest.h>

#include <sstream>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/group_norm.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

template <typename M>  // a module or a holder
std::string printed(const M& m) {
  std::ostringstream out;
  out << m;
  return out.str();
}

TEST(ActivationNormModules, GroupNormParametersAndDefaultInit) {
  nn::GroupNorm gn(nn::GroupNormOptions(2, 6));
  const auto params = gn->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[1].first, "bias");
  EXPECT_EQ(params[0].second.shape(), (Shape{6}));
  EXPECT_TRUE(params[0].second.requires_grad());
  EXPECT_TRUE(all_close(params[0].second, std::vector<double>(6, 1.0), 0, 0));
  EXPECT_TRUE(all_close(params[1].second, std::vector<double>(6, 0.0), 0, 0));
  EXPECT_EQ(params[0].second.dtype(), kFloat32);
}

TEST(ActivationNormModules, GroupNormOptionsAndPrinting) {
  const nn::GroupNormOptions options = nn::GroupNormOptions(32, 64).eps(1e-3).affine(false);
  EXPECT_EQ(options.num_groups(), 32);
  EXPECT_EQ(options.num_channels(), 64);
  EXPECT_EQ(options.eps(), 1e-3);
  EXPECT_FALSE(options.affine());
  nn::GroupNorm no_affine(options);
  EXPECT_TRUE(no_affine->parameters().empty());
  EXPECT_EQ(printed(no_affine), "GroupNorm(32, 64, eps=0.001, affine=false)");
  EXPECT_EQ(printed(nn::GroupNorm(nn::GroupNormOptions(32, 64))),
            "GroupNorm(32, 64, eps=1e-05, affine=true)");
  EXPECT_THROW(nn::GroupNorm(nn::GroupNormOptions(4, 6)), Error);
}

TEST(ActivationNormModules, GroupNormForwardEqualsFunction) {
  nn::GroupNorm gn(nn::GroupNormOptions(2, 4).eps(1e-4));
  {
    NoGradGuard no_grad;
    gn->weight.copy_(make_tensor({0.5, 1.0, 1.5, 2.0}, {4}));
    gn->bias.copy_(make_tensor({-1.0, 0.0, 1.0, 2.0}, {4}));
  }
  const Tensor x = uniform_input({3, 4, 5}, -2.0, 2.0, 21).detach().to(kFloat32);
  const Tensor expected = group_norm(x, 2, gn->weight, gn->bias, 1e-4);
  EXPECT_TRUE(all_close(gn->forward(x), to_vector(expected), 0, 0));
  // Gradients reach the parameters.
  gn->forward(x).sum().backward();
  EXPECT_TRUE(gn->weight.grad().defined());
  EXPECT_TRUE(all_close(gn->bias.grad(), std::vector<double>(4, 15.0), 1e-6, 1e-6));
}

TEST(ActivationNormModules, ActivationsAreStatelessAndEqualTheirFunctions) {
  const Tensor x = uniform_input({4, 7}, -3.0, 3.0, 22).detach().to(kFloat32);
  nn::TanhExp tanhexp_module;
  nn::ReLU relu_module;
  nn::Sigmoid sigmoid_module;
  nn::Tanh tanh_module;
  EXPECT_TRUE(all_close(tanhexp_module->forward(x), to_vector(tanhexp(x)), 0, 0));
  EXPECT_TRUE(all_close(relu_module->forward(x), to_vector(relu(x)), 0, 0));
  EXPECT_TRUE(all_close(sigmoid_module->forward(x), to_vector(sigmoid(x)), 0, 0));
  EXPECT_TRUE(all_close(tanh_module->forward(x), to_vector(tanh(x)), 0, 0));
  for (const nn::Module* m : std::initializer_list<const nn::Module*>{
           tanhexp_module.get(), relu_module.get(), sigmoid_module.get(), tanh_module.get()}) {
    EXPECT_TRUE(m->parameters().empty());
  }
  EXPECT_EQ(printed(tanhexp_module), "TanhExp()");
  EXPECT_EQ(printed(relu_module), "ReLU()");
}

}  // namespace
}  // namespace leangrad::test
