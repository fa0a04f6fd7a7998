// Tests of LibTorch's module idiom (nn/module_holder.h, nn/module.h): holders (empty, aliasing,
// register_module by value), variadic Sequential, named_parameters as an OrderedDict (access,
// registration order, PyTorch's dotted names), named_modules and apply (each module once), and
// LibTorch's by-value `Tensor forward(Tensor x)` reached through holders, containers and hooks.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// A user module written as LibTorch's tutorials write one: holders as members, assigned from
// register_module by value, a by-value forward.
struct MlpImpl : nn::Module {
  MlpImpl(std::int64_t in, std::int64_t hidden, std::int64_t out) {
    fc1 = register_module("fc1", nn::Linear(in, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, out));
  }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"  // clang: it hides Module::forward
  Tensor forward(Tensor x) {
    return fc2(relu(fc1(x)));
  }
#pragma GCC diagnostic pop
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
LEANGRAD_MODULE(Mlp);

// The by-value spelling without any holder member, and a forward of two tensors.
struct ScaleImpl : nn::Module {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
  Tensor forward(Tensor x) {
    return x * 3.0;
  }
#pragma GCC diagnostic pop
};
LEANGRAD_MODULE(Scale);

struct BlendImpl : nn::Module {
  using Module::forward;
  Tensor forward(const Tensor& a, const Tensor& b) { return a * 0.25 + b * 0.75; }
};
LEANGRAD_MODULE(Blend);

// ---- Holders ----------------------------------------------------------------------------------

TEST(ModuleHolder, NullptrHolderIsEmptyAndUsingItNamesTheModuleType) {
  nn::Linear fc{nullptr};
  EXPECT_TRUE(fc.is_empty());
  const Tensor x = ones({2, 3});
  for (const std::string& what :
       {test::error_message([&] { fc(x); }), test::error_message([&] { (void)fc->weight; }),
        test::error_message([&] { (void)fc.ptr(); }), test::error_message([&] { (void)*fc; })}) {
    EXPECT_CONTAINS(what, "empty module holder leangrad::nn::Linear");
    EXPECT_CONTAINS(what, "leangrad::nn::LinearImpl");
    EXPECT_CONTAINS(what, "nullptr");
  }
  Mlp mlp = nullptr;
  EXPECT_CONTAINS(test::error_message([&] { mlp(x); }),
                  "empty module holder leangrad::(anonymous namespace)::Mlp");
  // An empty holder converts to a null nn::Module pointer, which register_module refuses.
  nn::Module parent("Parent");
  EXPECT_CONTAINS(test::error_message([&] { parent.register_module("fc", fc); }),
                  "empty module holder");
  fc = nn::Linear(3, 4);
  EXPECT_FALSE(fc.is_empty());
  EXPECT_EQ(fc(x).shape(), (Shape{2, 4}));
}

TEST(ModuleHolder, DefaultConstructedHolderMakesTheModule) {
  nn::ReLU relu;
  nn::Sequential seq;
  EXPECT_FALSE(relu.is_empty());
  EXPECT_FALSE(seq.is_empty());
  EXPECT_EQ(relu->name(), "ReLU");
  EXPECT_TRUE(seq->is_empty());
}

TEST(ModuleHolder, CopyingAHolderAliasesTheModule) {
  nn::Linear a(2, 3);
  nn::Linear b = a;  // NOLINT(performance-unnecessary-copy-initialization): the alias under test
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a.ptr(), b.ptr());
  {
    NoGradGuard no_grad;
    b->weight.fill_(0.5);
  }
  EXPECT_TRUE(test::all_close(a->weight, std::vector<double>(6, 0.5), 0, 0));
  b = nn::Linear(2, 3);  // re-seating b leaves a's module alone
  EXPECT_NE(a.get(), b.get());
  EXPECT_TRUE(test::all_close(a->weight, std::vector<double>(6, 0.5), 0, 0));
  // A holder made from a shared_ptr holds that very module.
  auto impl = std::make_shared<nn::LinearImpl>(4, 1);
  nn::Linear from_ptr(impl);
  EXPECT_EQ(from_ptr.get(), impl.get());
  static_assert(std::is_same_v<nn::Linear::ContainedType, nn::LinearImpl>);
  static_assert(std::is_same_v<Mlp::Impl, MlpImpl>);
}

TEST(ModuleHolder, RegisterModuleByValueAssignsTheMemberAndNamesTheChild) {
  manual_seed(1);
  Mlp mlp(4, 8, 2);
  EXPECT_EQ(mlp->named_children().keys(), (std::vector<std::string>{"fc1", "fc2"}));
  EXPECT_EQ(mlp->named_children()["fc1"].get(), mlp->fc1.get());  // the member is the child
  EXPECT_EQ(mlp->fc1->weight.shape(), (Shape{8, 4}));
  EXPECT_EQ(mlp->parameters().size(), 4u);
  // The returned pointer and the holder's module are one object.
  nn::Module parent("Parent");
  nn::Linear fc(3, 3);
  std::shared_ptr<nn::LinearImpl> registered = parent.register_module("fc", fc);
  EXPECT_EQ(registered.get(), fc.get());
  EXPECT_TRUE(parent.named_parameters()["fc.weight"].is_same(fc->weight));
}

TEST(ModuleHolder, AsFindsTheConcreteTypeByHolderOrModuleType) {
  Mlp mlp(2, 3, 1);
  nn::Module& first = *mlp->named_children()[0].value();
  ASSERT_NE(first.as<nn::Linear>(), nullptr);
  EXPECT_EQ(first.as<nn::Linear>(), mlp->fc1.get());
  EXPECT_EQ(first.as<nn::LinearImpl>(), mlp->fc1.get());
  EXPECT_EQ(first.as<nn::ReLU>(), nullptr);
  EXPECT_NE(static_cast<const nn::Module&>(*mlp).as<Mlp>(), nullptr);
}

TEST(ModuleHolder, EveryBuiltInModuleHasAHolder) {
  // Each line: the holder's value construction, LibTorch's spelling.
  const std::vector<std::shared_ptr<nn::Module>> modules = {
      nn::Linear(2, 3),
      nn::Conv2d(nn::Conv2dOptions(1, 2, 3)),
      nn::GroupNorm(nn::GroupNormOptions(1, 2)),
      nn::TanhExp(),
      nn::ReLU(),
      nn::Sigmoid(),
      nn::Tanh(),
      nn::Dropout(0.1),
      nn::MaxPool2d(2),
      nn::AvgPool2d(nn::AvgPool2dOptions(2)),
      nn::PixelShuffle(2),
      nn::PixelUnshuffle(2),
      nn::Flatten(),
      nn::Sequential(),
      nn::ModuleList(),
      nn::CrossEntropyLoss(),
      nn::NLLLoss(),
      nn::MSELoss(),
      nn::L1Loss(),
  };
  std::vector<std::string> names;
  for (const auto& m : modules)
    names.push_back(m->name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"Linear", "Conv2d", "GroupNorm", "TanhExp", "ReLU", "Sigmoid",
                                      "Tanh", "Dropout", "MaxPool2d", "AvgPool2d", "PixelShuffle",
                                      "PixelUnshuffle", "Flatten", "Sequential", "ModuleList",
                                      "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss"}));
  // Losses take (input, target) through the holder.
  nn::MSELoss mse;
  EXPECT_TRUE(test::all_close(mse(ones({3}), zeros({3})), {1.0}, 0, 0));
}

// ---- Sequential and ModuleList -----------------------------------------------------------------

TEST(SequentialHolder, VariadicForwardEqualsTheManualChain) {
  manual_seed(2);
  nn::Sequential seq(nn::Linear(6, 5), nn::ReLU(), nn::Linear(5, 3), Scale());
  ASSERT_EQ(seq->size(), 4u);
  const auto fc1 = seq->ptr<nn::LinearImpl>(0);
  const auto fc2 = seq->ptr<nn::Linear>(2);  // a holder type names its module type
  const Tensor x = randn({4, 6});            // (B, in_features)
  const Tensor expected =
      linear(relu(linear(x, fc1->weight, fc1->bias)), fc2->weight, fc2->bias) * 3.0;
  EXPECT_TRUE(test::all_close(seq(x), test::to_vector(expected), 0, 0));
  EXPECT_TRUE(test::all_close(seq->forward(x), test::to_vector(expected), 0, 0));
  // Holders, shared_ptrs and a nested Sequential mix; iteration gives the modules in order.
  nn::Sequential outer(seq, std::make_shared<nn::TanhImpl>());
  EXPECT_TRUE(test::all_close(outer(x), test::to_vector(tanh(expected)), 0, 0));
  std::vector<std::string> kinds;
  for (const auto& module : *outer)
    kinds.push_back(module->name());
  EXPECT_EQ(kinds, (std::vector<std::string>{"Sequential", "Tanh"}));
  EXPECT_CONTAINS(test::error_message([&] { seq->ptr<nn::Linear>(1); }), "Sequential[1] is a ReLU");
}

TEST(SequentialHolder, ModuleListTakesModulesByValue) {
  nn::ModuleList list(nn::Linear(2, 2), nn::Linear(2, 2));
  list->push_back(Mlp(2, 4, 2));
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(list[2]->name(), "leangrad::(anonymous namespace)::MlpImpl");
  Tensor x = ones({1, 2});
  for (const auto& block : *list)
    x = (*block)(x);  // the by-value forward of MlpImpl too
  EXPECT_EQ(x.shape(), (Shape{1, 2}));
  EXPECT_EQ(list->named_parameters().size(), 8u);
}

// ---- named_parameters, named_modules, apply ----------------------------------------------------

struct TreeImpl : nn::Module {
  TreeImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 2, 3)));
    head = register_module(
        "head", nn::Sequential(nn::Flatten(), nn::Linear(8, 4), nn::ReLU(), nn::Linear(4, 2)));
    scale = register_parameter("scale", ones({1}));
    register_buffer("steps", zeros({}));
  }
  Tensor forward(const Tensor& x) override { return head(conv(x)) * scale; }
  nn::Conv2d conv{nullptr};
  nn::Sequential head{nullptr};
  Tensor scale;
};
LEANGRAD_MODULE(Tree);

TEST(NamedParameters, OrderedDictAccessInRegistrationOrderWithPyTorchNames) {
  Tree tree;
  auto params = tree->named_parameters();
  // Own parameters first, then each child's in registration order, as PyTorch's.
  const std::vector<std::string> expected = {"scale",         "conv.weight", "conv.bias",
                                             "head.1.weight", "head.1.bias", "head.3.weight",
                                             "head.3.bias"};
  EXPECT_EQ(params.keys(), expected);
  ASSERT_EQ(params.size(), expected.size());
  EXPECT_TRUE(params["conv.weight"].is_same(tree->conv->weight));
  EXPECT_TRUE(params["head.3.bias"].is_same(tree->head->ptr<nn::LinearImpl>(3)->bias));
  ASSERT_NE(params.find("head.1.weight"), nullptr);
  EXPECT_TRUE(params.find("head.1.weight")->is_same(tree->head->ptr<nn::LinearImpl>(1)->weight));
  EXPECT_EQ(params.find("head.2.weight"), nullptr);  // ReLU has none
  EXPECT_TRUE(params.contains("scale"));
  EXPECT_FALSE(params.contains("steps"));  // a buffer
  const std::string missing = test::error_message([&] { params["conv.wieght"]; });
  EXPECT_CONTAINS(missing, "TreeImpl parameter 'conv.wieght' is not defined");
  EXPECT_CONTAINS(missing, "'conv.weight'");
  // Items: key()/value(), and pairs for structured bindings; the values are the parameters.
  std::size_t i = 0;
  for (const auto& item : params) {
    EXPECT_EQ(item.key(), expected[i]);
    EXPECT_TRUE(item.value().is_same(params[i].value()));
    EXPECT_TRUE(item->requires_grad());
    ++i;
  }
  for (auto& [name, tensor] : params)
    EXPECT_TRUE(tensor.is_same(params[name])) << name;
  EXPECT_EQ(params.front().key(), "scale");
  EXPECT_EQ(params.back().key(), "head.3.bias");
  EXPECT_EQ(tree->named_buffers().keys(), (std::vector<std::string>{"steps"}));
  EXPECT_EQ(tree->named_parameters(/*recurse=*/false).keys(), (std::vector<std::string>{"scale"}));
  // state_dict: parameters then buffers, the same names.
  EXPECT_EQ(tree->state_dict().size(), expected.size() + 1);
}

TEST(NamedModules, EveryModuleOnceInOrderWithDottedNames) {
  Tree tree;
  const auto modules = tree->named_modules();
  EXPECT_EQ(modules.keys(),
            (std::vector<std::string>{"", "conv", "head", "head.0", "head.1", "head.2", "head.3"}));
  EXPECT_EQ(modules[""].get(), tree.get());
  EXPECT_EQ(tree->named_modules("model").keys()[2], "model.head");
  EXPECT_EQ(tree->modules(/*include_self=*/false).size(), 6u);
  // A module registered twice (tied) is listed once, under its first name.
  nn::Module shared_parent("Parent");
  nn::Linear tied(2, 2);
  shared_parent.register_module("a", tied);
  shared_parent.register_module("b", tied);
  EXPECT_EQ(shared_parent.named_modules("", /*include_self=*/false).keys(),
            (std::vector<std::string>{"a"}));
  // Listing itself needs a shared_ptr; the message names the module.
  EXPECT_CONTAINS(test::error_message([&] { shared_parent.named_modules(); }),
                  "Parent: named_modules");
}

TEST(ModuleApply, VisitsEveryModuleOnceSelfFirst) {
  Tree tree;
  std::map<const nn::Module*, int> visits;
  std::vector<std::string> order;
  tree->apply([&](nn::Module& m) {
    ++visits[&m];
    order.push_back(m.name());
  });
  EXPECT_EQ(visits.size(), 7u);
  for (const auto& [module, count] : visits)
    EXPECT_EQ(count, 1) << module->name();
  EXPECT_EQ(order.front(), "leangrad::(anonymous namespace)::TreeImpl");
  EXPECT_EQ(order, (std::vector<std::string>{"leangrad::(anonymous namespace)::TreeImpl", "Conv2d",
                                             "Sequential", "Flatten", "Linear", "ReLU", "Linear"}));
  // The named form; LibTorch's init idiom through as<>.
  std::vector<std::string> names;
  tree->apply([&](const std::string& name, nn::Module& m) {
    names.push_back(name);
    if (auto* fc = m.as<nn::Linear>()) nn::init::zeros_(fc->bias);
  });
  EXPECT_EQ(names, tree->named_modules().keys());
  EXPECT_TRUE(
      test::all_close(tree->head->ptr<nn::LinearImpl>(1)->bias, std::vector<double>(4, 0.0), 0, 0));
  // A module shared by two parents' paths is visited once; apply needs no shared_ptr.
  nn::Module parent("Parent");
  nn::ReLU relu;
  parent.register_module("a", relu);
  parent.register_module("b", nn::Sequential(relu));
  int relu_visits = 0;
  parent.apply([&](nn::Module& m) { relu_visits += m.as<nn::ReLU>() != nullptr; });
  EXPECT_EQ(relu_visits, 1);
}

// ---- LibTorch's by-value forward ----------------------------------------------------------------

TEST(ByValueForward, WorksThroughHoldersContainersAndBaseCalls) {
  manual_seed(4);
  Mlp mlp(3, 5, 2);
  const Tensor x = randn({2, 3});
  const Tensor expected =
      linear(relu(linear(x, mlp->fc1->weight, mlp->fc1->bias)), mlp->fc2->weight, mlp->fc2->bias);
  EXPECT_TRUE(test::all_close(mlp(x), test::to_vector(expected), 0, 0));
  EXPECT_TRUE(test::all_close(mlp->forward(x), test::to_vector(expected), 0, 0));
  // Through nn::Module: its virtual forward and operator() reach MlpImpl's own forward.
  nn::Module& base = *mlp;
  EXPECT_TRUE(test::all_close(base.forward(x), test::to_vector(expected), 0, 0));
  EXPECT_TRUE(test::all_close(base(x), test::to_vector(expected), 0, 0));
  // Inside a Sequential and as a registered child of a module written the other way.
  nn::Sequential seq(mlp, Scale());
  EXPECT_TRUE(test::all_close(seq(x), test::to_vector(expected * 3.0), 0, 0));
  struct Outer : nn::Module {
    Outer() : Module("Outer") { inner = register_module("inner", std::make_shared<ScaleImpl>()); }
    Tensor forward(const Tensor& x) override { return (*children()[0])(x); }
    std::shared_ptr<ScaleImpl> inner;
  } outer;
  EXPECT_TRUE(test::all_close(outer.forward(x), test::to_vector(x * 3.0), 0, 0));
  // The holder's call runs the hooks around the by-value forward.
  int hook_calls = 0;
  mlp->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++hook_calls; });
  mlp(x);
  seq(x);
  EXPECT_EQ(hook_calls, 2);
  // Gradients flow through it.
  mlp(x).sum().backward();
  EXPECT_TRUE(mlp->fc1->weight.grad().defined());
}

TEST(ByValueForward, OtherForwardsAreCalledThroughTheHolderOnly) {
  Blend blend;
  EXPECT_TRUE(test::all_close(blend(ones({2}), zeros({2})), {0.25, 0.25}, 0, 0));
  // A one-tensor call through nn::Module has no forward to reach, and says so with the class.
  const std::string what = test::error_message([&] { (*blend)(ones({2})); });
  EXPECT_CONTAINS(
      what,
      "leangrad::(anonymous namespace)::BlendImpl: forward(const Tensor&) is not implemented");
}

TEST(ByValueForward, AModuleNeverSeenWithItsTypeIsReportedWithTheClassAndTheFix) {
  // Made with std::make_shared and handed over as an nn::Module: nothing bound its forward.
  std::shared_ptr<nn::Module> erased = std::make_shared<ScaleImpl>();
  nn::Sequential seq(erased);
  const std::string what = test::error_message([&] { seq(ones({2})); });
  for (const char* words :
       {"leangrad::(anonymous namespace)::ScaleImpl", "forward(const Tensor&) is not implemented",
        "Tensor forward(const Tensor& input) override", "LEANGRAD_MODULE"})
    EXPECT_CONTAINS(what, words);
}

// ---- Names in messages ------------------------------------------------------------------------

TEST(ModuleNames, UnnamedModulesAreCalledByTheirClass) {
  Tree tree;
  EXPECT_EQ(tree->name(), "leangrad::(anonymous namespace)::TreeImpl");
  EXPECT_CONTAINS(test::error_message([&] { tree->register_parameter("a.b", ones({1})); }),
                  "leangrad::(anonymous namespace)::TreeImpl: invalid parameter name 'a.b'");
  EXPECT_CONTAINS(test::error_message([&] { tree->load_state_dict({}); }),
                  "load_state_dict (strict) for leangrad::(anonymous namespace)::TreeImpl");
  std::ostringstream printed;
  printed << tree;
  EXPECT_EQ(printed.str().rfind("leangrad::(anonymous namespace)::TreeImpl(\n  (conv): Conv2d(", 0),
            0u)
      << printed.str();
}

}  // namespace
}  // namespace leangrad
