// Tests of nn::AnyValue and nn::AnyModule (nn/any_module.h) and of what Sequential and ModuleList
// gained from them (nn/container.h): each forward, whatever its signature, gives what the module's
// own forward gives for the same arguments (bitwise: the same computation), left-out arguments
// take the class's defaults, a one-tensor call runs the hooks, wrong argument types, counts and
// result types are Errors naming both sides; Sequential chains several inputs and tuples, takes
// named children, extends; ModuleList inserts and renames.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/attention.h>
#include <leangrad/nn/composed_layers.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/embedding.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/loss.h>
#include <leangrad/nn/rnn.h>
#include <leangrad/nn/transformer.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using LstmOut = std::tuple<Tensor, std::tuple<Tensor, Tensor>>;

::testing::AssertionResult same(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << got.shape() << " vs " << want.shape();
  if (test::to_vector(got) != test::to_vector(want))
    return ::testing::AssertionFailure() << "values differ";
  return ::testing::AssertionSuccess();
}

template <typename Named>
std::vector<std::string> keys(const Named& named) {
  std::vector<std::string> out;
  for (const auto& [name, tensor] : named)
    out.push_back(name);
  return out;
}

// forward(x, scale) = x * scale, with scale 2 when left out (LEANGRAD_FORWARD_HAS_DEFAULT_ARGS).
// The custom modules keep nn::Module's one-tensor forward visible, so they name theirs.
struct ScaleImpl : nn::Module {
  using nn::Module::forward;
  Tensor forward(Tensor x, double scale) { return mul(x, full({}, scale)); }
  using ForwardSignature = Tensor(Tensor, double);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(2.0)})
};
LEANGRAD_MODULE(Scale);

// Defaults that leave a gap: an Error at the first call.
struct GapImpl : nn::Module {
  using nn::Module::forward;
  Tensor forward(const Tensor& x, double a, double b) { return mul(x, full({}, a + b)); }
  using ForwardSignature = Tensor(const Tensor&, double, double);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(1.0)})
};
LEANGRAD_MODULE(Gap);

// An LSTM's whole result -> its output, the second child of a Sequential after an LSTM.
struct TakeOutputImpl : nn::Module {
  using nn::Module::forward;
  Tensor forward(const LstmOut& result) { return std::get<0>(result); }
  using ForwardSignature = Tensor(const LstmOut&);
};
LEANGRAD_MODULE(TakeOutput);

// Which one-tensor forward a class has (any_module.h): its own override, or only nn::Module's.
static_assert(detail::OverridesOneTensorForward<nn::EmbeddingBagImpl>);
static_assert(detail::OverridesOneTensorForward<nn::TransformerEncoderLayerImpl>);
static_assert(detail::OverridesOneTensorForward<nn::LinearImpl>);
static_assert(!detail::OverridesOneTensorForward<nn::MSELossImpl>);
static_assert(!detail::OverridesOneTensorForward<nn::MultiheadAttentionImpl>);
static_assert(!detail::OverridesOneTensorForward<ScaleImpl>);

TEST(AnyValue, HoldsAndChecksItsType) {
  nn::AnyValue v(std::int64_t{7});
  EXPECT_EQ(v.type_info(), typeid(std::int64_t));
  EXPECT_EQ(v.get<std::int64_t>(), 7);
  ASSERT_NE(v.try_get<std::int64_t>(), nullptr);
  EXPECT_EQ(v.try_get<int>(), nullptr);
  EXPECT_THROW_MSG(v.get<double>(), "AnyValue::get<double>(): it holds long");
  const nn::AnyValue t(ones({2}));
  EXPECT_TRUE(same(t.get<Tensor>(), ones({2})));
}

TEST(AnyModule, OneTensorForwardIsTheModules) {
  manual_seed(1);
  nn::Linear linear(3, 4);
  nn::AnyModule any(linear);
  const Tensor x = randn({2, 3});
  EXPECT_TRUE(same(any.forward(x), linear->forward(x)));
  EXPECT_TRUE(same(any.any_forward(x).get<Tensor>(), linear->forward(x)));
  EXPECT_EQ(any.type_info(), typeid(nn::LinearImpl));
  EXPECT_FALSE(any.is_empty());
  // The same module, not a copy: through get, ptr and the holder type.
  EXPECT_EQ(&any.get<nn::LinearImpl>(), linear.get());
  EXPECT_EQ(any.get<nn::Linear>().get(), linear.get());
  EXPECT_EQ(any.ptr<nn::LinearImpl>().get(), linear.get());
  EXPECT_EQ(any.ptr().get(), static_cast<nn::Module*>(linear.get()));
  const nn::AnyModule copy = any;  // aliases
  EXPECT_EQ(copy.ptr().get(), any.ptr().get());
  EXPECT_THROW_MSG(any.ptr<nn::ReLUImpl>(),
                   "AnyModule(Linear) holds leangrad::nn::LinearImpl, "
                   "not the type asked for (leangrad::nn::ReLUImpl)");
}

TEST(AnyModule, OneTensorCallRunsTheHooks) {
  nn::ReLU relu;
  int calls = 0;
  relu->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++calls; });
  nn::AnyModule any(relu);
  (void)any.forward(full({2}, -1.0));
  EXPECT_EQ(calls, 1);
}

TEST(AnyModule, SeveralArgumentsAndTheirChecks) {
  manual_seed(2);
  nn::AnyModule mse(nn::MSELoss{});
  const Tensor a = randn({3, 4});
  const Tensor b = randn({3, 4});
  EXPECT_TRUE(same(mse.forward(a, b), mse_loss(a, b)));
  EXPECT_THROW_MSG(mse.forward(a), "AnyModule(MSELoss)::forward takes 2 arguments, got 1");
  EXPECT_THROW_MSG(mse.forward(a, b, b), "AnyModule(MSELoss)::forward takes 2 arguments, got 3");
  EXPECT_THROW_MSG(mse.forward(a, 1.0),
                   "AnyModule(MSELoss)::forward: argument #1 must be leangrad::Tensor, got double");

  nn::Bilinear bilinear(3, 2, 4);
  nn::AnyModule any(bilinear);
  const Tensor x1 = randn({5, 3});
  const Tensor x2 = randn({5, 2});
  EXPECT_TRUE(same(any.forward(x1, x2), bilinear->forward(x1, x2)));
  // An AnyValue argument passes the value it holds.
  EXPECT_TRUE(same(any.forward(nn::AnyValue(x1), x2), bilinear->forward(x1, x2)));
}

TEST(AnyModule, ResultOfAnyTypeAndDefaults) {
  manual_seed(3);
  nn::LSTM lstm(4, 6);
  nn::AnyModule any(lstm);
  const Tensor x = randn({5, 2, 4});
  const auto [want, want_state] = lstm->forward(x);
  // hx left out: the class's default (none), as lstm->forward(x).
  const auto [got, got_state] = any.forward<LstmOut>(x);
  EXPECT_TRUE(same(got, want));
  EXPECT_TRUE(same(std::get<1>(got_state), std::get<1>(want_state)));
  // hx given.
  const std::optional<std::tuple<Tensor, Tensor>> hx(
      std::tuple(randn({1, 2, 6}), randn({1, 2, 6})));
  EXPECT_TRUE(same(std::get<0>(any.forward<LstmOut>(x, hx)), std::get<0>(lstm->forward(x, hx))));
  EXPECT_THROW_MSG(any.forward(x),
                   "AnyModule(LSTM)::forward<leangrad::Tensor>(): forward returned std::tuple<");
  EXPECT_THROW_MSG(any.forward<LstmOut>(),
                   "AnyModule(LSTM)::forward takes 1 to 2 arguments (the "
                   "last 1 have defaults), got 0");

  nn::RNNCell cell(4, 3);
  nn::AnyModule any_cell(cell);
  const Tensor input = randn({2, 4});
  const Tensor h = randn({2, 3});
  int calls = 0;
  cell->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++calls; });
  EXPECT_TRUE(same(any_cell.forward(input), cell->forward(input)));
  EXPECT_EQ(calls, 1);  // one tensor: through cell(x), its hx the C++ default
  EXPECT_TRUE(same(any_cell.forward(input, h), cell->forward(input, h)));

  // Attention: three of seven arguments, the rest the class's defaults.
  nn::MultiheadAttention attention(8, 2);
  nn::AnyModule any_attention(attention);
  const Tensor q = randn({3, 2, 8});
  const auto [out, weights] = attention->forward(q, q, q);
  const auto [any_out, any_weights] = any_attention.forward<std::tuple<Tensor, Tensor>>(q, q, q);
  EXPECT_TRUE(same(any_out, out));
  EXPECT_TRUE(same(any_weights, weights));
  const auto without = any_attention.forward<std::tuple<Tensor, Tensor>>(q, q, q, Tensor(), false);
  EXPECT_FALSE(std::get<1>(without).defined());
}

TEST(AnyModule, CustomModuleDefaults) {
  const Tensor x = full({3}, 1.5);
  nn::AnyModule scale(Scale{});
  EXPECT_TRUE(test::all_close(scale.forward(x), {3, 3, 3}, 0, 0));
  EXPECT_TRUE(test::all_close(scale.forward(x, 4.0), {6, 6, 6}, 0, 0));
  nn::AnyModule gap(Gap{});
  EXPECT_THROW_MSG(gap.forward(x, 1.0, 2.0),
                   "LEANGRAD_FORWARD_HAS_DEFAULT_ARGS must name forward's last arguments in order");
}

TEST(AnyModule, OverloadedForwardsUseTheClassSignature) {
  manual_seed(4);
  nn::EmbeddingBag bag(10, 3);
  nn::AnyModule any(bag);
  const Tensor rows = test::make_tensor({1, 2, 4, 5, 4, 3}, {2, 3}, kInt64);
  int calls = 0;
  bag->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++calls; });
  // One tensor: bag(rows), its override of forward(const Tensor&), hooks run.
  EXPECT_TRUE(same(any.forward(rows), bag->forward(rows)));
  EXPECT_EQ(calls, 1);
  // With offsets: the ForwardSignature's form, called directly (no hooks, as a holder's call).
  const Tensor flat = test::make_tensor({1, 2, 4, 5, 4, 3}, {6}, kInt64);
  const Tensor offsets = test::make_tensor({0, 2}, {2}, kInt64);
  EXPECT_TRUE(same(any.forward(flat, offsets), bag->forward(flat, offsets)));
  EXPECT_EQ(calls, 1);
}

TEST(AnyModule, EmptyIsAnError) {
  nn::AnyModule any;
  EXPECT_TRUE(any.is_empty());
  EXPECT_EQ(any.type_info(), typeid(void));
  EXPECT_THROW_MSG(any.forward(ones({1})), "AnyModule is empty");
  EXPECT_THROW_MSG(any.ptr(), "AnyModule is empty");
  EXPECT_THROW_MSG(nn::AnyModule(std::shared_ptr<nn::LinearImpl>()), "AnyModule is empty");
}

TEST(SequentialAny, NamedChildren) {
  manual_seed(5);
  nn::Sequential net({{"fc", nn::Linear(4, 8)}, {"act", nn::ReLU()}, {"out", nn::Linear(8, 2)}});
  EXPECT_EQ(keys(net->named_parameters()),
            (std::vector<std::string>{"fc.weight", "fc.bias", "out.weight", "out.bias"}));
  const Tensor x = randn({3, 4});
  const Tensor want =
      net->at<nn::LinearImpl>(2).forward(relu(net->at<nn::LinearImpl>(0).forward(x)));
  EXPECT_TRUE(same(net(x), want));
  net->push_back("drop", nn::Dropout(0.5));
  EXPECT_EQ(net->named_children().keys().back(), "drop");
  EXPECT_THROW(net->push_back("fc", nn::ReLU()), Error);
  EXPECT_EQ(net->size(), 4u);  // the refused one was not appended
}

TEST(SequentialAny, SeveralInputsAndTuplesAlongTheChain) {
  manual_seed(6);
  // The first child takes two inputs.
  nn::Bilinear bilinear(3, 2, 4);
  nn::Sequential pair(bilinear, nn::Tanh());
  const Tensor x1 = randn({5, 3});
  const Tensor x2 = randn({5, 2});
  EXPECT_TRUE(same(pair->forward(x1, x2), tanh(bilinear->forward(x1, x2))));
  EXPECT_TRUE(same(pair(x1, x2), tanh(bilinear->forward(x1, x2))));
  EXPECT_THROW_MSG(pair(x1), "AnyModule(Bilinear)::forward takes 2 arguments, got 1");

  // A tuple passed from one child to the next, and the chain called as seq(x).
  nn::LSTM lstm(4, 6);
  nn::Sequential rnn(lstm, TakeOutput{});
  const Tensor x = randn({5, 2, 4});
  EXPECT_TRUE(same(rnn(x), std::get<0>(lstm->forward(x))));
  // The last result of another type: forward<R>, any_forward, or an Error from forward(x).
  nn::Sequential raw(lstm);
  EXPECT_TRUE(same(std::get<0>(raw->forward<LstmOut>(x)), std::get<0>(lstm->forward(x))));
  EXPECT_EQ(raw->any_forward(x).type_info(), typeid(LstmOut));
  EXPECT_THROW_MSG(raw(x),
                   "Sequential: forward(const Tensor&) returns a Tensor, but the last "
                   "module (LSTM) returned std::tuple<");
  // A child handed what it does not take.
  nn::Sequential wrong(lstm, nn::ReLU());
  EXPECT_THROW_MSG(wrong(x),
                   "AnyModule(ReLU)::forward: argument #0 must be leangrad::Tensor, got "
                   "std::tuple<");
}

TEST(SequentialAny, EmptyAndExtend) {
  nn::Sequential empty;
  const Tensor x = full({2}, 3.0);
  EXPECT_TRUE(same(empty(x), x));
  EXPECT_TRUE(same(empty->forward(x), x));
  EXPECT_THROW_MSG(empty->any_forward(x, x),
                   "Sequential: forward of an empty Sequential takes one argument (returned as it "
                   "is), got 2");

  manual_seed(7);
  nn::Sequential a(nn::Linear(2, 3), nn::ReLU());
  nn::Sequential b(nn::Linear(3, 1));
  a->extend(*b);
  EXPECT_EQ(a->size(), 3u);
  EXPECT_EQ(a->ptr(2).get(), b->ptr(0).get());  // shared, not copied
  EXPECT_EQ(keys(a->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  a->extend(*a);  // each module once more
  EXPECT_EQ(a->size(), 6u);
  a->extend(std::vector<std::shared_ptr<nn::Module>>{nn::ReLU().ptr()});
  EXPECT_EQ(a->size(), 7u);
}

TEST(ModuleListAny, InsertRenamesAndExtend) {
  manual_seed(8);
  nn::Linear first(2, 2);
  nn::Linear second(2, 3);
  nn::Linear middle(3, 3);
  nn::ModuleList list(first, second);
  list->insert(1, middle);
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(list->ptr(0).get(), first.get());
  EXPECT_EQ(list->ptr(1).get(), middle.get());
  EXPECT_EQ(list->ptr(2).get(), second.get());
  EXPECT_EQ(list->named_children().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_TRUE(same(list->named_parameters()["1.weight"], middle->weight));
  EXPECT_TRUE(same(list->named_parameters()["2.weight"], second->weight));
  list->insert(3, nn::ReLU());  // at the end
  EXPECT_EQ(list->ptr(3)->name(), "ReLU");
  EXPECT_THROW_MSG(list->insert(9, nn::ReLU()),
                   "ModuleList.insert(9): index out of range (size 4; at most 4 appends)");
  EXPECT_EQ(list->size(), 4u);
  EXPECT_EQ(&list->at<nn::LinearImpl>(1), middle.get());

  nn::ModuleList more(nn::Tanh{});
  list->extend(*more);
  EXPECT_EQ(list->size(), 5u);
  EXPECT_EQ(list->ptr(4).get(), more->ptr(0).get());
}

}  // namespace
}  // namespace leangrad
