// scaled_dot_product_attention and nn::MultiheadAttention against PyTorch (tests/data/
// attention.json, written by make_attention.py): values, attention weights and the gradients of
// every input and parameter; masks of both kinds and conventions; gradchecks to second order;
// dropout's weights are the ones the output was made with; F::multi_head_attention_forward with
// static keys and values and separate weights. Bad input: the Attention table of
// tests/misuse/test_misuse_attention.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/attention.h>
#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// How far leangrad may be from PyTorch. Each stage of attention (a projection, the scores, the
// weighted sum of values, the output projection, and each of their transposes in backward) is a
// sum of at most n products, n the longest such sum (the feature sizes, S plus the keys that
// add_bias_kv and add_zero_attn append); two summation orders of one such sum differ by at most
// 2 n u times the sum of the magnitudes of its terms. With inputs and parameters of size O(1)
// those sums stay within a small multiple of the largest value involved, and softmax turns an
// absolute error d of a score into a relative error of at most 2 d of a weight. Five stages in a
// chain, each at most doubling what it is given: 64 n u max(1, max|want|). A wrong mask, scale,
// head split or projection moves values by O(0.1).
void expect_close(const Tensor& got, const Tensor& want, double n, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const double u = test::math_unit_roundoff(want.dtype());
  const double bound = 64 * n * u * std::max(1.0, test::max_abs(want));
  const std::vector<double> g = test::to_vector(got), w = test::to_vector(want);
  for (std::size_t i = 0; i < g.size(); ++i)
    ASSERT_LE(std::abs(g[i] - w[i]), bound)
        << what << " element " << i << ": " << g[i] << " vs " << w[i];
}

const std::vector<test::ReferenceCase>& cases() {
  static const std::vector<test::ReferenceCase> all = test::load_reference("attention.json");
  return all;
}

TEST(MultiheadAttention, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    if (c.name.rfind("mha_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const std::int64_t e = p.at("embed_dim").get<std::int64_t>();
    const std::int64_t kdim = p.at("kdim").get<std::int64_t>();
    const std::int64_t vdim = p.at("vdim").get<std::int64_t>();
    nn::MultiheadAttention attn(nn::MultiheadAttentionOptions(e, p.at("num_heads").get<int>())
                                    .bias(p.at("bias").get<bool>())
                                    .add_bias_kv(p.at("add_bias_kv").get<bool>())
                                    .add_zero_attn(p.at("add_zero_attn").get<bool>())
                                    .kdim(kdim)
                                    .vdim(vdim)
                                    .batch_first(p.at("batch_first").get<bool>()));
    const DType dtype = c.at("query").dtype();
    attn->to(dtype);
    {
      NoGradGuard no_grad;
      for (auto& item : attn->named_parameters())
        item.value().copy_(c.at("p." + item.key()));
    }
    const bool self = p.at("self").get<bool>();
    Tensor query = c.at("query").clone().requires_grad_();
    Tensor key = self ? query : c.at("key").clone().requires_grad_();
    Tensor value = self ? query : c.at("value").clone().requires_grad_();
    const Tensor padding =
        c.tensors.count("key_padding_mask") ? c.at("key_padding_mask") : Tensor();
    const Tensor mask = c.tensors.count("attn_mask") ? c.at("attn_mask") : Tensor();
    auto [out, weights] = attn(query, key, value, padding, true, mask, p.at("average").get<bool>());
    ASSERT_EQ(out.dtype(), dtype);
    const bool batch_first = p.at("batch_first").get<bool>() && key.dim() == 3;
    const std::int64_t s = key.shape()[batch_first ? 1 : 0];
    const double n = static_cast<double>(std::max({e, kdim, vdim, s + 2}));
    expect_close(out, c.at("out"), n, "output");
    expect_close(weights, c.at("weights"), n, "weights");
    (sum(mul(out, c.at("wo"))) + sum(mul(weights, c.at("ww")))).backward();
    expect_close(query.grad(), c.at("d_query"), n, "query's gradient");
    if (!self) {
      expect_close(key.grad(), c.at("d_key"), n, "key's gradient");
      expect_close(value.grad(), c.at("d_value"), n, "value's gradient");
    }
    for (auto& item : attn->named_parameters())
      expect_close(item.value().grad(), c.at("d." + item.key()), n, item.key() + "'s gradient");
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

// F::multi_head_attention_forward with what the module never passes: static_k and static_v,
// separate projection weights in evaluation mode (dropout_p then does nothing), no biases.
TEST(MultiHeadAttentionForward, MatchesPyTorch) {
  namespace F = nn::functional;
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    if (c.name.rfind("fmha_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const auto given = [&](const std::string& name) {
      return c.tensors.count(name) ? c.at(name).clone().requires_grad_() : Tensor();
    };
    Tensor query = given("query"), key = given("key"), value = given("value");
    Tensor in_proj_weight = given("p.in_proj_weight"), in_proj_bias = given("p.in_proj_bias");
    Tensor q_proj_weight = given("p.q_proj_weight"), k_proj_weight = given("p.k_proj_weight");
    Tensor v_proj_weight = given("p.v_proj_weight");
    Tensor out_proj_weight = given("p.out_proj_weight"), out_proj_bias = given("p.out_proj_bias");
    Tensor static_k = given("static_k"), static_v = given("static_v");
    const std::int64_t e = p.at("embed_dim").get<std::int64_t>();
    auto [out, weights] = F::multi_head_attention_forward(
        query, key, value,
        F::MultiheadAttentionForwardFuncOptions(
            e, p.at("num_heads").get<std::int64_t>(), in_proj_weight, in_proj_bias, Tensor(),
            Tensor(), false, p.at("dropout_p").get<double>(), out_proj_weight, out_proj_bias)
            .training(p.at("training").get<bool>())
            .key_padding_mask(c.tensors.count("key_padding_mask") ? c.at("key_padding_mask")
                                                                  : Tensor())
            .attn_mask(c.tensors.count("attn_mask") ? c.at("attn_mask") : Tensor())
            .use_separate_proj_weight(p.at("separate").get<bool>())
            .q_proj_weight(q_proj_weight)
            .k_proj_weight(k_proj_weight)
            .v_proj_weight(v_proj_weight)
            .static_k(static_k)
            .static_v(static_v)
            .average_attn_weights(p.at("average").get<bool>()));
    const double n = static_cast<double>(
        std::max({e, key.shape().back(), value.shape().back(), key.shape()[0] + 2}));
    expect_close(out, c.at("out"), n, "output");
    expect_close(weights, c.at("weights"), n, "weights");
    (sum(mul(out, c.at("wo"))) + sum(mul(weights, c.at("ww")))).backward();
    expect_close(query.grad(), c.at("d_query"), n, "query's gradient");
    for (const auto& [name, t] :
         std::vector<std::pair<std::string, Tensor>>{{"d_key", key},
                                                     {"d_value", value},
                                                     {"d_static_k", static_k},
                                                     {"d_static_v", static_v},
                                                     {"d.in_proj_weight", in_proj_weight},
                                                     {"d.in_proj_bias", in_proj_bias},
                                                     {"d.q_proj_weight", q_proj_weight},
                                                     {"d.k_proj_weight", k_proj_weight},
                                                     {"d.v_proj_weight", v_proj_weight},
                                                     {"d.out_proj_weight", out_proj_weight},
                                                     {"d.out_proj_bias", out_proj_bias}}) {
      if (!c.tensors.count(name)) continue;
      // PyTorch projects key and value even when static_k and static_v replace them, so their
      // gradients there are zeros; leangrad skips those projections and leaves them undefined.
      const Tensor want = c.at(name);
      if (!t.grad().defined()) {
        EXPECT_EQ(test::max_abs(want), 0.0) << name;
        continue;
      }
      expect_close(t.grad(), want, n, name);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// nn::MultiheadAttention is the functional form on its parameters: the same output and weights,
// bit for bit, for a module with separate projections, bias_kv, zero attention and masks.
TEST(MultiHeadAttentionForward, IsTheModulesComputation) {
  namespace F = nn::functional;
  nn::MultiheadAttention attn(
      nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3).add_bias_kv(true).add_zero_attn(true));
  const Tensor query = randn({4, 2, 8}), key = randn({6, 2, 5}), value = randn({6, 2, 3});
  const Tensor padding = lt(rand({2, 6}), 0.3), mask = randn({4, 6});
  auto [module_out, module_weights] = attn(query, key, value, padding, true, mask, false);
  auto [out, weights] = F::multi_head_attention_forward(
      query, key, value,
      F::MultiheadAttentionForwardFuncOptions(8, 2, Tensor(), attn->in_proj_bias, attn->bias_k,
                                              attn->bias_v, true, 0.0, attn->out_proj->weight,
                                              attn->out_proj->bias)
          .key_padding_mask(padding)
          .attn_mask(mask)
          .use_separate_proj_weight(true)
          .q_proj_weight(attn->q_proj_weight)
          .k_proj_weight(attn->k_proj_weight)
          .v_proj_weight(attn->v_proj_weight)
          .average_attn_weights(false));
  EXPECT_TRUE(equal(out, module_out));
  EXPECT_TRUE(equal(weights, module_weights));
  EXPECT_EQ(weights.shape(), (Shape{2, 2, 4, 8}));  // 6 keys, bias_k's and the zero one
}

TEST(ScaledDotProductAttention, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    if (c.name.rfind("sdpa_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    Tensor q = c.at("query").clone().requires_grad_();
    Tensor k = c.at("key").clone().requires_grad_();
    Tensor v = c.at("value").clone().requires_grad_();
    const Tensor mask = c.tensors.count("attn_mask") ? c.at("attn_mask") : Tensor();
    std::optional<double> scale;
    if (c.params.contains("scale")) scale = c.params.at("scale").get<double>();
    const Tensor out = scaled_dot_product_attention(q, k, v, mask, 0.0,
                                                    c.params.at("is_causal").get<bool>(), scale);
    const double n =
        static_cast<double>(std::max({q.shape().back(), k.shape()[k.dim() - 2], v.shape().back()}));
    expect_close(out, c.at("out"), n, "output");
    sum(mul(out, c.at("w"))).backward();
    expect_close(q.grad(), c.at("d_query"), n, "query's gradient");
    expect_close(k.grad(), c.at("d_key"), n, "key's gradient");
    expect_close(v.grad(), c.at("d_value"), n, "value's gradient");
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

Tensor values(std::vector<double> data, Shape shape) {
  return test::make_tensor(data, shape, kFloat64);
}

TEST(ScaledDotProductAttention, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const Tensor q = values({0.3, -1.2, 2.0, 0.7, -0.4, 1.1}, {1, 3, 2}).requires_grad_();
  const Tensor k = values({0.9, -2.2, 0.05, 1.6, -0.8, 0.2, 1.3, -0.6}, {1, 4, 2}).requires_grad_();
  const Tensor v = values({0.4, 1.5, -0.7, 0.1, 2.1, -1.3, 0.6, 0.8}, {1, 4, 2}).requires_grad_();
  const Tensor mask = values({0.5, -1, 0, 2, 1, 0.25, -0.5, 0, 0, 0, 1.5, -2}, {3, 4});
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal);
    auto f = [&](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention(in[0], in[1], in[2], causal ? Tensor() : mask, 0.0,
                                          causal);
    };
    EXPECT_TRUE(test::gradcheck(f, {q, k, v}));
    EXPECT_TRUE(test::gradcheck(
        [f](const std::vector<Tensor>& in) {
          AutoGradMode enable(true);
          const Tensor y = f(in);
          return autograd::grad({sum(mul(y, y))}, {in[0], in[1], in[2]}, {}, std::nullopt, true)[1];
        },
        {q, k, v}));
  }
}

// MultiheadAttention merges key_padding_mask into attn_mask by adding them as scores (PyTorch
// 2's rule; torch 1.13 refuses two float masks): the same as passing their sum as one mask.
TEST(MultiheadAttention, FloatMasksAddUp) {
  const std::int64_t n = 2, l = 3, s = 4, e = 4, heads = 2;
  nn::MultiheadAttention attn(nn::MultiheadAttentionOptions(e, heads));
  attn->to(kFloat64);
  const Tensor x = randn({l, n, e}, TensorOptions().dtype(kFloat64));
  const Tensor kv = randn({s, n, e}, TensorOptions().dtype(kFloat64));
  const Tensor mask = randn({n * heads, l, s}, TensorOptions().dtype(kFloat64));
  const Tensor padding = randn({n, s}, TensorOptions().dtype(kFloat64));
  auto [merged, merged_weights] = attn(x, kv, kv, padding, true, mask, false);
  // Row b * heads + h of the 3-d mask belongs to sample b.
  const Tensor sum_mask =
      add(mask, padding.reshape({n, 1, 1, s}).expand({n, heads, 1, s}).reshape({n * heads, 1, s}));
  auto [alone, alone_weights] = attn(x, kv, kv, Tensor(), true, sum_mask, false);
  expect_close(merged, alone, 8, "output");
  expect_close(merged_weights, alone_weights, 8, "weights");
  // And the padding changes something: without it the weights differ by O(1).
  auto [unpadded, unpadded_weights] = attn(x, kv, kv, Tensor(), true, mask, false);
  EXPECT_GT(test::max_abs(sub(unpadded_weights, merged_weights)), 1e-3);
}

// With dropout, the weights returned are those the output was made with: head h's output is
// weights[h] @ v_h, each weight 0 or softmax / (1 - p).
TEST(MultiheadAttention, DropoutWeightsAreTheOnesUsed) {
  manual_seed(3);
  const std::int64_t l = 5, s = 6, e = 4, heads = 2;
  nn::MultiheadAttention attn(nn::MultiheadAttentionOptions(e, heads).dropout(0.5).bias(false));
  attn->to(kFloat64);
  const Tensor x = randn({l, e}, TensorOptions().dtype(kFloat64));
  const Tensor kv = randn({s, e}, TensorOptions().dtype(kFloat64));
  auto [out, weights] = attn(x, kv, kv, Tensor(), true, Tensor(), false);  // (heads, L, S)
  attn->eval();
  auto [clean, clean_weights] = attn(x, kv, kv, Tensor(), true, Tensor(), false);
  const std::vector<double> w = test::to_vector(weights), cw = test::to_vector(clean_weights);
  int zeros = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0.0) {
      ++zeros;
    } else {
      EXPECT_NEAR(w[i], cw[i] * 2, 1e-14) << i;
    }
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, static_cast<int>(w.size()));
  // Rebuild the output from the returned weights: v's projection, heads, output projection.
  NoGradGuard no_grad;
  const Tensor v = linear(kv, attn->in_proj_weight.slice(0, 2 * e, 3 * e));
  const Tensor v_heads = v.reshape({s, heads, e / heads}).transpose(0, 1);  // (heads, S, hd)
  const Tensor heads_out = matmul(weights, v_heads);                        // (heads, L, hd)
  const Tensor rebuilt = linear(heads_out.transpose(0, 1).reshape({l, e}), attn->out_proj->weight);
  expect_close(out, rebuilt, 8, "output rebuilt from the weights");
}

// On CUDA the same composition runs on the device's kernels: the torch cases give the same
// values there, within the bound of MatchesPyTorch (SKIPPED without a GPU).
TEST(MultiheadAttention, CudaMatchesPyTorch) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (const test::ReferenceCase& c : cases()) {
    if (c.name != "mha_bool_masks" && c.name != "mha_self_packed_f32") continue;
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    nn::MultiheadAttention attn(
        nn::MultiheadAttentionOptions(p.at("embed_dim").get<int>(), p.at("num_heads").get<int>()));
    attn->to(c.at("query").dtype());
    {
      NoGradGuard no_grad;
      for (auto& item : attn->named_parameters())
        item.value().copy_(c.at("p." + item.key()));
    }
    attn->to(Device::cuda(0));
    const Device gpu = Device::cuda(0);
    Tensor query = c.at("query").to(gpu).requires_grad_();
    const bool self = p.at("self").get<bool>();
    const Tensor key = self ? query : c.at("key").to(gpu);
    const Tensor value = self ? query : c.at("value").to(gpu);
    const Tensor padding =
        c.tensors.count("key_padding_mask") ? c.at("key_padding_mask").to(gpu) : Tensor();
    const Tensor mask = c.tensors.count("attn_mask") ? c.at("attn_mask").to(gpu) : Tensor();
    auto [out, weights] = attn(query, key, value, padding, true, mask);
    const double n = static_cast<double>(
        std::max<std::int64_t>(p.at("embed_dim").get<std::int64_t>(), key.shape()[0] + 2));
    expect_close(out.to(Device::cpu()), c.at("out"), n, "output");
    expect_close(weights.to(Device::cpu()), c.at("weights"), n, "weights");
    (sum(mul(out, c.at("wo").to(gpu))) + sum(mul(weights, c.at("ww").to(gpu)))).backward();
    expect_close(query.grad().to(Device::cpu()), c.at("d_query"), n, "query's gradient");
  }
}

// Under autocast the projections and the two products run in bfloat16 and the softmax in
// float32 (Note [Attention, composed]): the output is bfloat16, the weights float32, and the
// float32 parameters get float32 gradients. Rounding the products to 8 bits moves the output by
// about 2^-8 of its size, far more than float32 roundoff and far less than O(1).
TEST(MultiheadAttention, RunsUnderAutocast) {
  manual_seed(5);
  nn::MultiheadAttention attn(8, 2);
  const Tensor x = randn({4, 3, 8});
  auto [reference, reference_weights] = attn(x, x, x);
  Tensor out, weights;
  {
    amp::AutocastGuard autocast(kBFloat16);
    std::tie(out, weights) = attn(x, x, x);
  }
  EXPECT_EQ(out.dtype(), kBFloat16);
  EXPECT_EQ(weights.dtype(), kFloat32);
  const double scale = test::max_abs(reference);
  const double difference = test::max_abs(sub(out.to(kFloat32), reference));
  EXPECT_GT(difference, 0.0);
  EXPECT_LT(difference, 0.1 * scale);
  sum(out.to(kFloat32)).backward();
  EXPECT_EQ(attn->in_proj_weight.grad().dtype(), kFloat32);
  EXPECT_EQ(attn->out_proj->weight.grad().dtype(), kFloat32);
}

TEST(MultiheadAttention, ParametersAreNamedAsPyTorchs) {
  std::vector<std::string> names;
  nn::MultiheadAttention packed(8, 2);
  for (auto& item : packed->named_parameters())
    names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                             "out_proj.bias"}));
  names.clear();
  nn::MultiheadAttention separate(
      nn::MultiheadAttentionOptions(8, 2).kdim(3).vdim(5).add_bias_kv(true).bias(false));
  for (auto& item : separate->named_parameters())
    names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                             "bias_k", "bias_v", "out_proj.weight"}));
  EXPECT_EQ(separate->k_proj_weight.shape(), (Shape{8, 3}));
  // xavier_uniform_ on (3E, E): |w| <= sqrt(6 / (E + 3E)); the biases start at 0.
  const double bound = std::sqrt(6.0 / 32.0);
  EXPECT_LE(test::max_abs(packed->in_proj_weight), bound);
  EXPECT_GT(test::max_abs(packed->in_proj_weight), bound / 2);
  EXPECT_EQ(test::max_abs(packed->in_proj_bias), 0.0);
  EXPECT_EQ(test::max_abs(packed->out_proj->bias), 0.0);
}

}  // namespace
}  // namespace leangrad
