// nn::Functional (nn/functional_module.h): a function as a step of a Sequential, arguments bound
// after the input, no parameters of its own; an empty function refused.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/core/error.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/functional_module.h>
#include <leangrad/nn/linear.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

TEST(FunctionalModule, IsAStepOfASequential) {
  manual_seed(4740);
  nn::Linear first(4, 6), last(6, 3);
  nn::Sequential net(first, nn::Functional(leangrad::relu), last);
  const Tensor x = test::uniform_input({5, 4}, -2, 2, 4741).detach().to(kFloat32);
  const Tensor want = last(relu(first(x)));
  EXPECT_TRUE(test::all_close(net(x), test::to_vector(want), 0, 0));
  std::vector<std::string> names;
  for (const auto& [name, p] : net->named_parameters())
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ((*net)[1]->name(), "Functional");
}

TEST(FunctionalModule, BindsArgumentsAfterTheInput) {
  const Tensor x = test::uniform_input({3, 7}, -2, 2, 4742).detach();
  nn::Functional soft(leangrad::elu, 0.5);
  EXPECT_TRUE(test::all_close(soft(x), test::to_vector(elu(x, 0.5)), 0, 0));
  EXPECT_FALSE(test::all_close(soft(x), test::to_vector(elu(x, 1.0)), 0, 0));
  nn::Functional scale([](const Tensor& t) { return mul(t, 3.0); });
  EXPECT_TRUE(test::all_close(scale(x), test::to_vector(mul(x, 3.0)), 0, 0));
  // Autograd runs through it.
  EXPECT_TRUE(test::gradcheck([&](const std::vector<Tensor>& in) { return soft(in[0]); },
                              {test::uniform_input({2, 3}, -1, 1, 4743)}));
}

TEST(FunctionalModule, RefusesAnEmptyFunction) {
  const std::string message =
      test::error_message([] { nn::Functional none(nn::FunctionalImpl::Function{}); });
  EXPECT_NE(message.find("Functional: expected a function, got an empty one"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace leangrad
