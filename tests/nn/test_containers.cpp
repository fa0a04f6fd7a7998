// Tests of nn::Sequential, nn::ModuleList, nn::ModuleDict, nn::ParameterList and
// nn::ParameterDict (nn/container.h): children named by index or key, parameter and state-dict
// names as PyTorch forms them, forward equal to the chain written by hand, insertion order kept
// through replacement and removal.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/batch_norm.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/pooling.h>
#include <leangrad/optim/sgd.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

template <typename Named>  // NamedTensors or OrderedDict<std::string, Tensor>
std::vector<std::string> keys(const Named& named) {
  std::vector<std::string> out;
  for (const auto& [name, tensor] : named)
    out.push_back(name);
  return out;
}

// The classic Fashion-MNIST MLP, as torch.nn.Sequential(Flatten(), Linear(784, 128), ReLU(),
// Linear(128, 10)).
nn::Sequential classic_mlp() {
  return nn::Sequential(nn::Flatten(), nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
}

TEST(Sequential, StateDictKeysMatchPyTorch) {
  auto mlp = classic_mlp();
  EXPECT_EQ(mlp->size(), 4u);
  // torch: list(nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
  //        nn.Linear(128, 10)).state_dict())
  const std::vector<std::string> expected = {"1.weight", "1.bias", "3.weight", "3.bias"};
  EXPECT_EQ(keys(mlp->state_dict()), expected);
  EXPECT_EQ(keys(mlp->named_parameters()), expected);
  EXPECT_EQ(mlp->named_children()[2].first, "2");
}

// A module with a parameter, a buffer and children that hold buffers of their own.
struct MixedNetImpl : nn::Module {
  MixedNetImpl() {
    norm = register_module("norm", nn::BatchNorm2d(nn::BatchNorm2dOptions(3).affine(false)));
    seq =
        register_module("seq", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).bias(false)),
                                              nn::BatchNorm2d(4), nn::Flatten(), nn::Linear(4, 2)));
    scale = register_parameter("scale", zeros({2}));
    shift = register_buffer("shift", zeros({1}));
  }
  Tensor forward(const Tensor& x) override { return seq(norm(x)) * scale + shift; }
  nn::BatchNorm2d norm{nullptr};
  nn::Sequential seq{nullptr};
  Tensor scale, shift;
};
LEANGRAD_MODULE(MixedNet);

// PyTorch's state_dict goes module by module (own parameters, own buffers, then the children);
// leangrad listed every parameter before every buffer.
TEST(Module, StateDictOrderMatchesPyTorch) {
  // torch 1.13: class MixedNet(nn.Module) with, in this order, norm = nn.BatchNorm2d(3,
  // affine=False), seq = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4),
  // nn.Flatten(), nn.Linear(4, 2)), scale = nn.Parameter(torch.zeros(2)) and
  // register_buffer("shift", torch.zeros(1)); list(MixedNet().state_dict())
  const std::vector<std::string> expected = {"scale",
                                             "shift",
                                             "norm.running_mean",
                                             "norm.running_var",
                                             "norm.num_batches_tracked",
                                             "seq.0.weight",
                                             "seq.1.weight",
                                             "seq.1.bias",
                                             "seq.1.running_mean",
                                             "seq.1.running_var",
                                             "seq.1.num_batches_tracked",
                                             "seq.3.weight",
                                             "seq.3.bias"};
  MixedNet net;
  EXPECT_EQ(keys(net->state_dict()), expected);
  // A state dict in PyTorch's order loads back (strictly) into a fresh module.
  MixedNet copy;
  copy->load_state_dict(net->state_dict());
}

TEST(Sequential, ForwardEqualsManualChain) {
  manual_seed(0);
  nn::Linear fc1(6, 5);
  nn::Linear fc2(5, 3);
  nn::Sequential seq(fc1, nn::Tanh(), fc2);
  const Tensor x = randn({4, 6});  // (B, in_features)
  const Tensor expected = linear(tanh(linear(x, fc1->weight, fc1->bias)), fc2->weight, fc2->bias);
  EXPECT_TRUE(test::all_close(seq->forward(x), test::to_vector(expected), 0, 0));
  EXPECT_TRUE(test::all_close(seq(x), test::to_vector(expected), 0, 0));
}

TEST(Sequential, PushBackIndexingAndEmptyForward) {
  nn::Sequential seq;
  const Tensor x = randn({2, 3});
  EXPECT_TRUE(test::all_close(seq(x), test::to_vector(x), 0, 0));  // empty: the identity
  seq->push_back(nn::Linear(3, 4));
  seq->push_back(nn::ReLU());
  EXPECT_EQ(seq->size(), 2u);
  EXPECT_EQ(seq[1]->name(), "ReLU");
  EXPECT_EQ(seq->ptr<nn::LinearImpl>(0)->weight.shape(), (Shape{4, 3}));
  EXPECT_THROW(seq->ptr<nn::Linear>(1), Error);  // a holder type names its module type
  EXPECT_THROW(seq[2], Error);
  EXPECT_EQ(keys(seq->named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(seq(x).shape(), (Shape{2, 4}));
}

TEST(Sequential, NestedNamesAndTrainEval) {
  nn::Sequential inner(nn::Linear(2, 2), nn::ReLU());
  nn::Sequential outer(inner, nn::Linear(2, 1));
  EXPECT_EQ(keys(outer->state_dict()),
            (std::vector<std::string>{"0.0.weight", "0.0.bias", "1.weight", "1.bias"}));
  outer->eval();
  EXPECT_FALSE(inner->is_training());
  EXPECT_FALSE(inner->ptr<nn::Linear>(0)->is_training());
  std::ostringstream printed;
  printed << outer;
  EXPECT_NE(printed.str().find("(0): Sequential("), std::string::npos) << printed.str();
}

TEST(ModuleList, IndexNamesAndNoForward) {
  nn::ModuleList layers;
  for (int i = 0; i < 3; ++i)
    layers->push_back(nn::Linear(4, 4));
  EXPECT_EQ(layers->size(), 3u);
  EXPECT_EQ(
      keys(layers->named_parameters()),
      (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(layers->parameters().size(), 6u);
  EXPECT_EQ(layers[2]->name(), "Linear");
  EXPECT_THROW(layers->forward(randn({1, 4})), Error);
  // The usual use: a module holding a list of blocks under one name.
  struct Net : nn::Module {
    nn::ModuleList blocks = register_module("blocks", nn::ModuleList());
  } net;
  net.blocks->push_back(nn::Linear(2, 2));
  EXPECT_EQ(keys(net.state_dict()), (std::vector<std::string>{"blocks.0.weight", "blocks.0.bias"}));
}

// torch: d = nn.ModuleDict({"conv": nn.Conv2d(1, 2, 3), "act": nn.ReLU(), "fc": nn.Linear(2, 3)});
// list(d.state_dict()) == ["conv.weight", "conv.bias", "fc.weight", "fc.bias"]; d["conv"] = Linear
// keeps the key's place; del d["act"]; d.pop("fc").
TEST(ModuleDict, KeysOrderReplacementAndRemoval) {
  using Named = std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>;
  nn::ModuleDict dict(Named{{"conv", nn::Conv2d(nn::Conv2dOptions(1, 2, 3)).ptr()},
                            {"act", nn::ReLU().ptr()},
                            {"fc", nn::Linear(2, 3).ptr()}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"conv", "act", "fc"}));
  EXPECT_EQ(keys(dict->state_dict()),
            (std::vector<std::string>{"conv.weight", "conv.bias", "fc.weight", "fc.bias"}));
  EXPECT_TRUE(dict->contains("act"));
  EXPECT_EQ(dict->size(), 3u);
  EXPECT_EQ(dict->at<nn::LinearImpl>("fc")->options.out_features(), 3);
  EXPECT_THROW(dict->at<nn::LinearImpl>("conv"), Error);
  EXPECT_THROW((*dict)["missing"], Error);
  // Replacing keeps the place; the old module's parameters leave with it.
  dict->insert("conv", nn::Linear(5, 5));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"conv", "act", "fc"}));
  EXPECT_EQ((*dict)["conv"]->name(), "Linear");
  EXPECT_EQ(dict->parameters().size(), 4u);
  const std::shared_ptr<nn::Module> fc = dict->pop("fc");
  EXPECT_EQ(fc->name(), "Linear");
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"conv", "act"}));
  dict->update({{"head", nn::Linear(5, 1).ptr()}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"conv", "act", "head"}));
  EXPECT_EQ(keys(dict->named_parameters()),
            (std::vector<std::string>{"conv.weight", "conv.bias", "head.weight", "head.bias"}));
  std::vector<std::string> iterated;
  for (const auto& item : *dict)
    iterated.push_back(item.key());
  EXPECT_EQ(iterated, dict->keys());
  EXPECT_THROW(dict->forward(randn({1, 5})), Error);
  dict->clear();
  EXPECT_TRUE(dict->empty());
  EXPECT_TRUE(dict->parameters().empty());
}

// torch: nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(3))]) has
// state_dict keys "0", "1"; inside a module "scales.0", ...
TEST(ParameterList, IndexNamesAndRequiresGradKept) {
  nn::ParameterList list(std::vector<Tensor>{ones({2}).requires_grad_(), zeros({3})});
  list->append(full({4}, 2.0).requires_grad_());
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(keys(list->state_dict()), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_TRUE((*list)[0].requires_grad());
  EXPECT_FALSE((*list)[1].requires_grad());  // kept as given, as LibTorch's append
  EXPECT_TRUE(test::all_close((*list)[2], {2, 2, 2, 2}, 0, 0));
  EXPECT_THROW((*list)[3], Error);
  struct Net : nn::Module {
    nn::ParameterList scales = register_module("scales", nn::ParameterList());
  } net;
  net.scales->extend({ones({1}).requires_grad_(), ones({1}).requires_grad_()});
  EXPECT_EQ(keys(net.named_parameters()), (std::vector<std::string>{"scales.0", "scales.1"}));
  // The parameters train: an SGD step moves them.
  optim::SGD sgd(net.parameters(), optim::SGDOptions(0.5));
  sum(add(net.scales->at(0), net.scales->at(1))).backward();
  sgd.step();
  EXPECT_TRUE(test::all_close(net.scales->at(0), {0.5}, 0, 0));
  int count = 0;
  for (auto& [name, parameter] : *list)
    count += parameter.defined() ? 1 : 0;
  EXPECT_EQ(count, 3);
}

TEST(ParameterDict, KeysReplacementAndRemoval) {
  nn::ParameterDict dict(
      NamedTensors{{"scale", ones({2}).requires_grad_()}, {"shift", zeros({2})}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "shift"}));
  EXPECT_EQ(keys(dict->state_dict()), (std::vector<std::string>{"scale", "shift"}));
  dict->insert("scale", full({2}, 3.0));  // replaced in place
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "shift"}));
  EXPECT_TRUE(test::all_close(dict->get("scale"), {3, 3}, 0, 0));
  dict->update({{"bias", zeros({1})}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "shift", "bias"}));
  const Tensor shift = dict->pop("shift");
  EXPECT_EQ(shift.shape(), (Shape{2}));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "bias"}));
  EXPECT_FALSE(dict->contains("shift"));
  EXPECT_THROW((*dict)["shift"], Error);
  EXPECT_THROW(dict->insert("a.b", zeros({1})), Error);  // a dotted name
  EXPECT_EQ(dict->values().size(), 2u);
  dict->clear();
  EXPECT_TRUE(dict->empty());
}

// Tied weights: one tensor registered by two modules is one parameter (PyTorch's rule), so an
// optimizer accepts parameters(); the state dict keeps both names, and loading it fills the one
// tensor.
TEST(Module, TiedWeightsAreOneParameterAndTwoStateDictEntries) {
  struct Holder : nn::Module {
    explicit Holder(const Tensor& w) : Module("Holder") { register_parameter("w", w); }
  };
  struct Pair : nn::Module {
    Pair(const Tensor& shared, const Tensor& own) : Module("Pair") {
      register_module("a", std::make_shared<Holder>(shared));
      register_module("own", std::make_shared<Holder>(own));
      register_module("b", std::make_shared<Holder>(shared));
    }
  };
  const Tensor shared = ones({2, 2});
  auto pair = std::make_shared<Pair>(shared, zeros({3}));
  const std::vector<Tensor> params = pair->parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_TRUE(params[0].is_same(shared));
  EXPECT_EQ(pair->named_parameters().keys(), (std::vector<std::string>{"a.w", "own.w"}));
  optim::SGD sgd(params, optim::SGDOptions(0.1));  // no "the same tensor" refusal
  NamedTensors state = pair->state_dict();
  ASSERT_EQ(state.size(), 3u);
  EXPECT_EQ(state[2].first, "b.w");
  EXPECT_TRUE(state[2].second.is_same(shared));
  for (auto& [name, t] : state)
    t = full(t.shape(), 7.0);
  pair->load_state_dict(state);
  EXPECT_TRUE(test::all_close(shared, {7, 7, 7, 7}, 0, 0));
}

// The same with more tensors than parameters() scans linearly (it switches to a hash set): 100
// modules, the first and the last sharing theirs.
TEST(Module, TiedWeightsAmongManyParametersAreListedOnce) {
  struct Holder : nn::Module {
    explicit Holder(const Tensor& w) : Module("Holder") { register_parameter("w", w); }
  };
  auto many = std::make_shared<nn::Module>("Many");
  const Tensor shared = ones({2});
  std::vector<Tensor> expected = {shared};
  for (int i = 0; i < 100; ++i) {
    const Tensor w = i == 0 || i == 99 ? shared : zeros({2});
    if (i != 0 && i != 99) expected.push_back(w);
    std::string name = "m";  // not "m" + ...: GCC 12 warns wrongly (-Wrestrict) on that
    name += std::to_string(i);
    many->register_module(name, std::make_shared<Holder>(w));
  }
  const std::vector<Tensor> params = many->parameters();
  ASSERT_EQ(params.size(), expected.size());
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(params[i].is_same(expected[i])) << i;
  EXPECT_EQ(many->named_parameters().size(), 99u);
  EXPECT_EQ(many->state_dict().size(), 100u);
}

}  // namespace
}  // namespace leangrad
