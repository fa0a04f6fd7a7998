// margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
// cosine_similarity, pairwise_distance, cosine_embedding_loss and triplet_margin_loss
// (autograd/margin_losses.h): values and gradients against PyTorch 1.13 at their kinks, far
// out, with broadcasting and the reductions (tests/data/margin_losses.json, written by
// make_margin_losses.py), gradchecks to second order, and the modules. Bad arguments are rows of
// the misuse table (tests/misuse/test_misuse_nn_functions.cpp, MarginLosses).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/loss_reference.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using Operands = std::map<std::string, Tensor>;
using LossFn = std::function<Tensor(const Operands&)>;

using test::reduction_named;

// The loss a case of margin_losses.json names, with its parameters.
LossFn loss_of(const test::ReferenceCase& c) {
  const nlohmann::json& p = c.params;
  const std::string op = p.at("op").get<std::string>();
  const Reduction r = reduction_named(p.at("reduction").get<std::string>());
  if (op == "margin_ranking_loss") {
    const double margin = p.at("margin").get<double>();
    return [=](const Operands& in) {
      return margin_ranking_loss(in.at("a"), in.at("b"), in.at("t"), margin, r);
    };
  }
  if (op == "hinge_embedding_loss") {
    const double margin = p.at("margin").get<double>();
    return
        [=](const Operands& in) { return hinge_embedding_loss(in.at("x"), in.at("t"), margin, r); };
  }
  if (op == "soft_margin_loss")
    return [=](const Operands& in) { return soft_margin_loss(in.at("x"), in.at("t"), r); };
  if (op == "multilabel_soft_margin_loss")
    return [=](const Operands& in) {
      return multilabel_soft_margin_loss(in.at("x"), in.at("t"),
                                         in.count("weight") ? in.at("weight") : Tensor(), r);
    };
  if (op == "cosine_similarity") {
    const std::int64_t dim = p.at("dim").get<std::int64_t>();
    const double eps = p.at("eps").get<double>();
    return [=](const Operands& in) { return cosine_similarity(in.at("a"), in.at("b"), dim, eps); };
  }
  const auto order = [&p] {
    return p.at("p").is_string() ? INFINITY : p.at("p").get<double>();  // "inf"
  };
  if (op == "pairwise_distance") {
    const double norm = order(), eps = p.at("eps").get<double>();
    const bool keepdim = p.at("keepdim").get<bool>();
    return [=](const Operands& in) {
      return pairwise_distance(in.at("a"), in.at("b"), norm, eps, keepdim);
    };
  }
  if (op == "cosine_embedding_loss") {
    const double margin = p.at("margin").get<double>();
    return [=](const Operands& in) {
      return cosine_embedding_loss(in.at("a"), in.at("b"), in.at("t"), margin, r);
    };
  }
  if (op == "triplet_margin_loss") {
    const double margin = p.at("margin").get<double>(), norm = order();
    const double eps = p.at("eps").get<double>();
    const bool swap = p.at("swap").get<bool>();
    return [=](const Operands& in) {
      return triplet_margin_loss(in.at("a"), in.at("b"), in.at("n"), margin, norm, eps, swap, r);
    };
  }
  ADD_FAILURE() << "margin_losses.json has an op this test does not know: " << op;
  return [](const Operands& in) { return in.begin()->second; };
}

TEST(MarginLosses, MatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("margin_losses.json");
  ASSERT_EQ(cases.size(), 58u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const LossFn loss = loss_of(c);
    std::vector<std::string> names;
    for (const std::string name : {"a", "b", "n", "x", "t", "weight"})
      if (c.tensors.count(name)) names.push_back(name);
    const std::vector<std::string> differentiated = c.params.at("grad");
    Operands in;
    Shape shape;
    // cosine_embedding_loss's target broadcasts with the cosines, not the inputs.
    const bool per_row_target = c.params.at("op") == "cosine_embedding_loss";
    for (const std::string& name : names) {
      in[name] = c.at(name).clone();
      if (!(per_row_target && name == "t"))
        shape = broadcast_shapes(shape, c.at(name).shape(), "test");
    }
    for (const std::string& name : differentiated)
      in[name].requires_grad_();
    const Tensor y = loss(in);
    ASSERT_EQ(y.dtype(), c.at("y").dtype());
    (y * c.at("w")).sum().backward();
    // The cosines are of normalised vectors: O(1) terms whatever the operands' magnitude.
    const bool cosine = c.params.at("op").get<std::string>().rfind("cosine", 0) == 0;
    const std::vector<double> scale =
        test::loss_term_scale(c, cosine ? std::vector<std::string>{} : names, shape);
    // (The cosines' gradients are of the order of 1 / |x|: |want| sets their scale.)
    const double largest = *std::max_element(scale.begin(), scale.end());
    std::int64_t n = 1;
    for (std::int64_t s : shape)
      n *= s;
    test::expect_matches_reference(y, c.at("y"), scale, static_cast<double>(n) * largest, 16,
                                   "value");
    for (const std::string& name : differentiated) {
      if (!c.tensors.count("d" + name)) {
        // PyTorch gives no gradient (hinge_embedding_loss's target only selects).
        EXPECT_FALSE(in[name].grad().defined()) << name;
        continue;
      }
      const double k = static_cast<double>(n) / static_cast<double>(c.at(name).numel());
      test::expect_matches_reference(in[name].grad(), c.at("d" + name), scale, k * largest, 32,
                                     "gradient of " + name);
    }
  }
}

// Past |input * target| ~ 88 (float32) or 709 (float64) PyTorch's soft_margin_loss overflows to
// inf (and its gradient to NaN); leangrad's is the true value, -input * target, with gradient
// -target, and 0 with gradient 0 the other way.
TEST(MarginLosses, SoftMarginStaysFiniteFarOut) {
  for (const DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = test::make_tensor({-1e4, -800.0, 800.0, 1e4}, {4}, dtype).requires_grad_();
    const Tensor t = test::make_tensor({1.0, 1.0, 1.0, -1.0}, {4}, dtype);
    const Tensor y = soft_margin_loss(x, t, Reduction::None);
    EXPECT_TRUE(test::all_close(y, {1e4, 800.0, 0.0, 1e4}));
    y.sum().backward();
    EXPECT_TRUE(test::all_close(x.grad(), {-1.0, -1.0, 0.0, 1.0}));
  }
}

// Integral +1 / -1 labels and multi-hot rows are taken as the input's dtype (PyTorch's type
// promotion): the same losses as floating ones.
TEST(MarginLosses, IntegralTargetsActAsTheInputsDtype) {
  const Tensor x = test::make_tensor({0.3, -1.2, 2.0, 0.4, 5.0, -0.5}, {2, 3}, kFloat64);
  const Tensor y = test::make_tensor({0.1, -0.2, 1.4, 0.9, 4.0, 0.5}, {2, 3}, kFloat64);
  const Tensor labels = test::make_tensor({1, -1, 1, -1, -1, 1}, {2, 3}, kInt64);
  const Tensor hot = test::make_tensor({1, 0, 1, 0, 0, 1}, {2, 3}, kInt64);
  const Tensor flabels = labels.to(kFloat64), fhot = hot.to(kFloat64);
  EXPECT_TRUE(margin_ranking_loss(x, y, labels).equal(margin_ranking_loss(x, y, flabels)));
  EXPECT_TRUE(hinge_embedding_loss(x, labels).equal(hinge_embedding_loss(x, flabels)));
  EXPECT_TRUE(soft_margin_loss(x, labels).equal(soft_margin_loss(x, flabels)));
  EXPECT_TRUE(multilabel_soft_margin_loss(x, hot).equal(multilabel_soft_margin_loss(x, fhot)));
}

// Away from the kinks: first and second derivatives in every operand against central
// differences (soft_margin_loss's and multilabel_soft_margin_loss's targets included, which
// PyTorch 1.13 does not differentiate for soft_margin_loss).
TEST(MarginLosses, FirstAndSecondDerivativesMatchFiniteDifferences) {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const Tensor a = test::make_tensor({0.3, -1.2, 2.0, 0.4, 5.0, -0.5}, {2, 3}, kFloat64);
  const Tensor b = test::make_tensor({0.1, -0.2, 1.4, 0.9, 4.0, 0.5}, {2, 3}, kFloat64);
  const Tensor t = test::make_tensor({1.0, -1.0, 1.0, -1.0, 0.5, 1.0}, {2, 3}, kFloat64);
  const Tensor p = test::make_tensor({0.0, 0.3, 1.0, 0.9, 0.5, 1.0}, {2, 3}, kFloat64);
  const Tensor w = test::make_tensor({0.5, 1.5, 2.0}, {3}, kFloat64);
  const Tensor negative = test::make_tensor({1.0, 0.5, -0.3, 2.0, 3.0, 1.0}, {2, 3}, kFloat64);
  const std::vector<std::tuple<const char*, Fn, std::vector<Tensor>>> cases = {
      {"margin_ranking",
       [](const std::vector<Tensor>& in) {
         return margin_ranking_loss(in[0], in[1], in[2], 0.3, Reduction::None);
       },
       {a, b, t}},
      {"hinge_embedding",
       [t](const std::vector<Tensor>& in) {
         return hinge_embedding_loss(in[0], t, 1.5, Reduction::Sum);
       },
       {a}},
      {"soft_margin",
       [](const std::vector<Tensor>& in) {
         return soft_margin_loss(in[0], in[1], Reduction::None);
       },
       {a, t}},
      {"multilabel_soft_margin",
       [](const std::vector<Tensor>& in) {
         return multilabel_soft_margin_loss(in[0], in[1], in[2], Reduction::None);
       },
       {a, p, w}},
      {"cosine_similarity",
       [](const std::vector<Tensor>& in) { return cosine_similarity(in[0], in[1], 1); },
       {a, b}},
      {"pairwise_distance_2",
       [](const std::vector<Tensor>& in) { return pairwise_distance(in[0], in[1]); },
       {a, b}},
      {"pairwise_distance_3",
       [](const std::vector<Tensor>& in) { return pairwise_distance(in[0], in[1], 3.0, 0.0); },
       {a, b}},
      {"cosine_embedding",
       [t](const std::vector<Tensor>& in) {
         return cosine_embedding_loss(in[0], in[1], t.select(1, 0), -0.5, Reduction::None);
       },
       {a, b}},
      {"triplet_margin_swap",
       [](const std::vector<Tensor>& in) {
         return triplet_margin_loss(in[0], in[1], in[2], 4.0, 2.0, 1e-6, true, Reduction::None);
       },
       {a, b, negative}},
  };
  for (const auto& [name, f, inputs] : cases) {
    SCOPED_TRACE(name);
    std::vector<Tensor> in;
    for (const Tensor& v : inputs)
      in.push_back(v.clone().requires_grad_());
    EXPECT_TRUE(test::gradcheck(f, in));
    // hinge_embedding_loss is piecewise linear in its only differentiable operand: its gradient
    // is a constant of the graph (no second derivative to check).
    if (std::string(name) == "hinge_embedding") continue;
    EXPECT_TRUE(test::gradgradcheck(f, in));
  }
}

// Under autocast they run in float32 (Note [Autocast policy]): bfloat16 operands are cast
// first.
TEST(MarginLosses, RunInFloat32UnderAutocast) {
  const Tensor a = test::make_tensor({-1.3, -0.2, 2.7, -0.6}, {4}, kBFloat16);
  const Tensor b = test::make_tensor({0.3, 0.1, 1.7, 0.6}, {4}, kBFloat16);
  const Tensor t = test::make_tensor({1.0, -1.0, 0.5, -1.0}, {4}, kBFloat16);
  const Tensor a32 = a.to(kFloat32), b32 = b.to(kFloat32), t32 = t.to(kFloat32);
  const Tensor want_ranking = margin_ranking_loss(a32, b32, t32, 0.1, Reduction::None);
  const Tensor want_hinge = hinge_embedding_loss(a32, t32, 1.3, Reduction::None);
  const Tensor want_soft = soft_margin_loss(a32, t32, Reduction::None);
  const Tensor want_multilabel = multilabel_soft_margin_loss(a32, b32, Tensor(), Reduction::None);
  const Tensor a2 = a32.reshape({2, 2}).to(kBFloat16), b2 = b32.reshape({2, 2}).to(kBFloat16);
  const Tensor a2_32 = a2.to(kFloat32), b2_32 = b2.to(kFloat32);
  const Tensor t2 = test::make_tensor({1.0, -1.0}, {2}, kFloat32);
  const Tensor want_cosine = cosine_similarity(a2_32, b2_32);
  const Tensor want_distance = pairwise_distance(a2_32, b2_32);
  const Tensor want_embedding = cosine_embedding_loss(a2_32, b2_32, t2, 0.0, Reduction::None);
  const Tensor want_triplet =
      triplet_margin_loss(a2_32, b2_32, b2_32 * 2.0, 1.0, 2.0, 1e-6, false, Reduction::None);
  amp::AutocastGuard autocast(kBFloat16);
  EXPECT_TRUE(cosine_similarity(a2, b2).equal(want_cosine));
  EXPECT_TRUE(pairwise_distance(a2, b2).equal(want_distance));
  EXPECT_TRUE(cosine_embedding_loss(a2, b2, t2, 0.0, Reduction::None).equal(want_embedding));
  EXPECT_TRUE(triplet_margin_loss(a2, b2, (b2_32 * 2.0).to(kBFloat16), 1.0, 2.0, 1e-6, false,
                                  Reduction::None)
                  .equal(want_triplet));
  EXPECT_TRUE(margin_ranking_loss(a, b, t, 0.1, Reduction::None).equal(want_ranking));
  EXPECT_TRUE(hinge_embedding_loss(a, t, 1.3, Reduction::None).equal(want_hinge));
  EXPECT_TRUE(soft_margin_loss(a, t, Reduction::None).equal(want_soft));
  EXPECT_TRUE(multilabel_soft_margin_loss(a, b, Tensor(), Reduction::None).equal(want_multilabel));
}

// The modules call the functions with their options; MultiLabelSoftMarginLoss's weight is a
// buffer.
TEST(MarginLosses, ModulesCallTheFunctionsWithTheirOptions) {
  const Tensor a = test::make_tensor({0.2, 0.7, -0.4, 0.9}, {2, 2}, kFloat64);
  const Tensor b = test::make_tensor({0.0, 1.0, 1.0, 0.5}, {2, 2}, kFloat64);
  const Tensor t = test::make_tensor({1.0, -1.0, -1.0, 1.0}, {2, 2}, kFloat64);
  const Tensor w = test::make_tensor({2.0, 0.5}, {2}, kFloat64);
  nn::MarginRankingLoss ranking(nn::MarginRankingLossOptions().margin(0.2));
  EXPECT_TRUE(ranking(a, b, t).equal(margin_ranking_loss(a, b, t, 0.2)));
  nn::HingeEmbeddingLoss hinge(
      nn::HingeEmbeddingLossOptions().margin(0.5).reduction(Reduction::None));
  EXPECT_TRUE(hinge(a, t).equal(hinge_embedding_loss(a, t, 0.5, Reduction::None)));
  nn::SoftMarginLoss soft(nn::SoftMarginLossOptions().reduction(Reduction::Sum));
  EXPECT_TRUE(soft(a, t).equal(soft_margin_loss(a, t, Reduction::Sum)));
  nn::MultiLabelSoftMarginLoss multilabel(nn::MultiLabelSoftMarginLossOptions().weight(w));
  EXPECT_TRUE(multilabel(a, b).equal(multilabel_soft_margin_loss(a, b, w)));
  EXPECT_EQ(multilabel->named_buffers().size(), 1u);
  EXPECT_EQ(ranking->extra_repr(), "reduction=mean, margin=0.2");
  EXPECT_EQ(hinge->extra_repr(), "reduction=none, margin=0.5");
  EXPECT_EQ(soft->extra_repr(), "reduction=sum");
  EXPECT_EQ(multilabel->extra_repr(), "reduction=mean, weight=[2]");
  nn::CosineSimilarity cosine(nn::CosineSimilarityOptions().dim(0).eps(0.1));
  EXPECT_TRUE(cosine(a, b).equal(cosine_similarity(a, b, 0, 0.1)));
  nn::PairwiseDistance distance(nn::PairwiseDistanceOptions().p(3.0).keepdim(true));
  EXPECT_TRUE(distance(a, b).equal(pairwise_distance(a, b, 3.0, 1e-6, true)));
  const Tensor labels = test::make_tensor({1.0, -1.0}, {2}, kFloat64);
  nn::CosineEmbeddingLoss embedding(nn::CosineEmbeddingLossOptions().margin(0.1));
  EXPECT_TRUE(embedding(a, b, labels).equal(cosine_embedding_loss(a, b, labels, 0.1)));
  nn::TripletMarginLoss triplet(
      nn::TripletMarginLossOptions().margin(0.3).p(1.0).swap(true).reduction(Reduction::Sum));
  EXPECT_TRUE(
      triplet(a, b, t).equal(triplet_margin_loss(a, b, t, 0.3, 1.0, 1e-6, true, Reduction::Sum)));
  EXPECT_EQ(cosine->extra_repr(), "dim=0, eps=0.1");
  EXPECT_EQ(distance->extra_repr(), "p=3, eps=1e-06, keepdim=true");
  EXPECT_EQ(embedding->extra_repr(), "reduction=mean, margin=0.1");
  EXPECT_EQ(triplet->extra_repr(), "reduction=sum, margin=0.3, p=1, eps=1e-06, swap=true");
}

}  // namespace
}  // namespace leangrad
