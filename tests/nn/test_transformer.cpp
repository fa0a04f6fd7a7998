// nn::TransformerEncoderLayer and nn::TransformerEncoder against PyTorch 1.13
// (tests/data/transformer.json, written by make_transformer.py): outputs and the gradients of the
// input and every parameter for post-norm with ReLU, norm_first with GELU, batch_first with
// masks, unbatched input and a two-layer encoder with a final LayerNorm; the encoder's layers
// start as copies of the layer given; dropout in training only; custom encoders, decoders and
// norms (AnyModule) called with the right tensors and initialised with the model. Bad options: the
// Attention table of tests/misuse/test_misuse_attention.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// A layer is attention (bounded as in test_attention.cpp: 64 n u max(1, max|want|) for sums of
// at most n products), then LayerNorm, whose division by the standard deviation of d_model
// values can grow an absolute error by 1 / std (the inputs here have std of order 1), and the
// feed-forward block, two more sums of at most n products. Three such stages per layer: the
// bound is 256 n u max(1, max|want|) per layer, n the largest of d_model, dim_feedforward and S.
void expect_close(const Tensor& got, const Tensor& want, double bound_units, const char* what,
                  const std::string& name = "") {
  ASSERT_TRUE(got.defined()) << what << name;
  ASSERT_EQ(got.shape(), want.shape()) << what << name;
  const double bound =
      bound_units * test::math_unit_roundoff(want.dtype()) * std::max(1.0, test::max_abs(want));
  const std::vector<double> g = test::to_vector(got), w = test::to_vector(want);
  for (std::size_t i = 0; i < g.size(); ++i)
    ASSERT_LE(std::abs(g[i] - w[i]), bound)
        << what << name << " element " << i << ": " << g[i] << " vs " << w[i];
}

const std::vector<test::ReferenceCase>& cases() {
  static const std::vector<test::ReferenceCase> all = test::load_reference("transformer.json");
  return all;
}

TEST(TransformerEncoder, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    if (!c.params.contains("layers")) continue;  // the decoder's cases
    SCOPED_TRACE(c.name);
    ++checked;
    const auto& p = c.params;
    const std::int64_t e = p.at("d_model").get<std::int64_t>();
    const std::int64_t ff = p.at("dim_feedforward").get<std::int64_t>();
    const std::int64_t layers = p.at("layers").get<std::int64_t>();
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(e, p.at("nhead").get<std::int64_t>())
            .dim_feedforward(ff)
            .dropout(0.0)
            .activation(p.at("activation").get<std::string>())
            .batch_first(p.at("batch_first").get<bool>())
            .norm_first(p.at("norm_first").get<bool>()));
    std::shared_ptr<nn::Module> model = layer.ptr();
    nn::TransformerEncoder encoder{nullptr};
    if (layers > 0) {
      nn::TransformerEncoderOptions options(layer, layers);
      if (p.at("final_norm").get<bool>()) options.norm(nn::LayerNorm(nn::LayerNormOptions({e})));
      encoder = nn::TransformerEncoder(options);
      model = encoder.ptr();
    }
    model->to(kFloat64);
    {
      NoGradGuard no_grad;
      for (auto& item : model->named_parameters())
        item.value().copy_(c.at("p." + item.key()));
    }
    Tensor src = c.at("src").clone().requires_grad_();
    const Tensor mask = c.tensors.count("mask") ? c.at("mask") : Tensor();
    const Tensor padding = c.tensors.count("padding") ? c.at("padding") : Tensor();
    const Tensor out = layers > 0 ? encoder(src, mask, padding) : layer(src, mask, padding);
    const double s = static_cast<double>(src.shape()[p.at("batch_first").get<bool>() ? 1 : 0]);
    const double units = 256 * std::max({static_cast<double>(e), static_cast<double>(ff), s}) *
                         static_cast<double>(std::max<std::int64_t>(layers, 1));
    expect_close(out, c.at("out"), units, "output");
    sum(mul(out, c.at("w"))).backward();
    expect_close(src.grad(), c.at("d_src"), units, "src's gradient");
    int parameters = 0;
    for (auto& item : model->named_parameters()) {
      expect_close(item.value().grad(), c.at("d." + item.key()), units, "gradient of ", item.key());
      ++parameters;
    }
    EXPECT_EQ(parameters,
              (layers > 0 ? layers : 1) * 12 + (p.at("final_norm").get<bool>() ? 2 : 0));
  }
  EXPECT_EQ(checked, 5);
}

TEST(TransformerDecoder, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    if (!c.params.contains("transformer")) continue;
    SCOPED_TRACE(c.name);
    ++checked;
    const auto& p = c.params;
    const std::int64_t e = p.at("d_model").get<std::int64_t>();
    const std::int64_t heads = p.at("nhead").get<std::int64_t>();
    const std::int64_t ff = p.at("dim_feedforward").get<std::int64_t>();
    const std::string activation = p.at("activation").get<std::string>();
    const bool batch_first = p.at("batch_first").get<bool>();
    const bool norm_first = p.at("norm_first").get<bool>();
    const bool whole = p.at("transformer").get<bool>();
    nn::Transformer transformer{nullptr};
    nn::TransformerDecoderLayer layer{nullptr};
    std::shared_ptr<nn::Module> model;
    if (whole) {
      transformer = nn::Transformer(nn::TransformerOptions(e, heads, 1, 2)
                                        .dim_feedforward(ff)
                                        .dropout(0.0)
                                        .activation(activation)
                                        .batch_first(batch_first)
                                        .norm_first(norm_first));
      model = transformer.ptr();
    } else {
      layer = nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(e, heads)
                                              .dim_feedforward(ff)
                                              .dropout(0.0)
                                              .activation(activation)
                                              .batch_first(batch_first)
                                              .norm_first(norm_first));
      model = layer.ptr();
    }
    model->to(kFloat64);
    {
      NoGradGuard no_grad;
      for (auto& item : model->named_parameters())
        item.value().copy_(c.at("p." + item.key()));
    }
    Tensor src = c.at("src").clone().requires_grad_();
    Tensor tgt = c.at("tgt").clone().requires_grad_();
    auto optional = [&](const char* key) { return c.tensors.count(key) ? c.at(key) : Tensor(); };
    const Tensor out = whole ? transformer(src, tgt, Tensor(), optional("tgt_mask"),
                                           optional("memory_mask"), optional("src_padding"),
                                           optional("tgt_padding"), optional("memory_padding"))
                             : layer(tgt, src, optional("tgt_mask"), optional("memory_mask"),
                                     optional("tgt_padding"), optional("memory_padding"));
    const double s = static_cast<double>(src.shape()[batch_first ? 1 : 0]);
    // Up to three layers in a chain (one encoder, two decoder layers), each bounded as above.
    const double units =
        256 * std::max({static_cast<double>(e), static_cast<double>(ff), s}) * (whole ? 3.0 : 1.0);
    expect_close(out, c.at("out"), units, "output");
    sum(mul(out, c.at("w"))).backward();
    expect_close(src.grad(), c.at("d_src"), units, "memory's gradient");
    expect_close(tgt.grad(), c.at("d_tgt"), units, "tgt's gradient");
    for (auto& item : model->named_parameters())
      expect_close(item.value().grad(), c.at("d." + item.key()), units, "gradient of ", item.key());
  }
  EXPECT_EQ(checked, 3);
}

TEST(Transformer, SquareSubsequentMaskIsPyTorchs) {
  for (const test::ReferenceCase& c : cases()) {
    if (c.name != "square_subsequent_mask") continue;
    const Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(5);
    EXPECT_EQ(mask.dtype(), kFloat32);
    EXPECT_TRUE(equal(mask, c.at("mask")));
    return;
  }
  FAIL() << "no square_subsequent_mask case";
}

// nn::Transformer initialises every matrix with xavier_uniform_ (PyTorch's _reset_parameters):
// |w| <= sqrt(6 / (fan_in + fan_out)); the vectors keep their layers' values (LayerNorm's ones).
TEST(Transformer, MatricesStartXavierUniform) {
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  for (const auto& item : t->named_parameters()) {
    const Tensor& p = item.value();
    if (p.dim() < 2) continue;
    const double bound = std::sqrt(6.0 / static_cast<double>(p.shape()[0] + p.shape()[1]));
    EXPECT_LE(test::max_abs(p), bound) << item.key();
    EXPECT_GT(test::max_abs(p), bound / 2) << item.key();
  }
  EXPECT_EQ(
      test::max_abs(sub(
          t->encoder.get<nn::TransformerEncoderImpl>().norm.get<nn::LayerNormImpl>().weight, 1.0)),
      0.0);
}

// PyTorch's encoder deep-copies the layer: every layer starts with the layer's parameters, and
// they are copies (training one does not move the others).
TEST(TransformerEncoder, LayersStartAsCopiesOfTheLayerGiven) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  nn::TransformerEncoder encoder(layer, 3);
  ASSERT_EQ(encoder->layers->size(), 3u);
  const auto want = layer->named_parameters();
  for (std::size_t i = 0; i < 3; ++i) {
    const auto got = encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(i)->named_parameters();
    ASSERT_EQ(got.size(), want.size());
    for (const auto& item : want) {
      EXPECT_TRUE(equal(got[item.key()], item.value())) << i << " " << item.key();
      EXPECT_FALSE(got[item.key()].is_same(item.value()));
    }
  }
  EXPECT_EQ(encoder->named_parameters().size(), 3 * want.size());
  EXPECT_NE(encoder->named_parameters().find("layers.2.self_attn.in_proj_weight"), nullptr);
}

// Dropout acts in training mode only: two training calls differ, evaluation calls agree and
// equal the same layer with dropout 0.
TEST(TransformerEncoderLayer, DropoutOnlyInTraining) {
  manual_seed(1);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.5));
  nn::TransformerEncoderLayer no_dropout(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  {
    NoGradGuard no_grad;
    auto from = layer->named_parameters();
    for (auto& item : no_dropout->named_parameters())
      item.value().copy_(from[item.key()]);
  }
  const Tensor x = randn({5, 2, 8});
  EXPECT_FALSE(equal(layer(x), layer(x)));
  layer->eval();
  EXPECT_TRUE(equal(layer(x), layer(x)));
  EXPECT_TRUE(equal(layer(x), no_dropout(x)));
}

TEST(TransformerEncoderLayer, ActivationChoices) {
  const Tensor x = randn({4, 2, 8}, TensorOptions().dtype(kFloat64));
  nn::TransformerEncoderLayer relu_layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  relu_layer->to(kFloat64);
  // A function of a tensor runs in the feed-forward block: relu written as one gives relu's
  // output, bit for bit.
  nn::TransformerEncoderLayer custom(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0).activation(
          [](const Tensor& t) { return clamp_min(t, 0); }));
  custom->to(kFloat64);
  {
    NoGradGuard no_grad;
    auto from = relu_layer->named_parameters();
    for (auto& item : custom->named_parameters())
      item.value().copy_(from[item.key()]);
  }
  EXPECT_TRUE(equal(relu_layer(x), custom(x)));
  EXPECT_EQ(custom->options.activation().name(), "custom");
  EXPECT_EQ(relu_layer->options.activation().name(), "relu");
}

// LibTorch's kGELU is the "gelu" that the torch cases above check: the same output, bit for bit,
// as a layer given gelu as a function.
TEST(TransformerEncoderLayer, KGeluIsTheExactGelu) {
  const Tensor x = randn({4, 2, 8}, TensorOptions().dtype(kFloat64));
  const auto options = nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0);
  nn::TransformerEncoderLayer by_constant(
      nn::TransformerEncoderLayerOptions(options).activation(kGELU));
  nn::TransformerEncoderLayer by_function(nn::TransformerEncoderLayerOptions(options).activation(
      [](const Tensor& t) { return gelu(t); }));
  by_constant->to(kFloat64);
  by_function->to(kFloat64);
  {
    NoGradGuard no_grad;
    auto from = by_constant->named_parameters();
    for (auto& item : by_function->named_parameters())
      item.value().copy_(from[item.key()]);
  }
  EXPECT_EQ(by_constant->options.activation().name(), "gelu");
  EXPECT_TRUE(equal(by_constant(x), by_function(x)));
  // And the activation matters here: relu in its place gives another output.
  nn::TransformerEncoderLayer relu_layer(options);
  relu_layer->to(kFloat64);
  {
    NoGradGuard no_grad;
    auto from = by_constant->named_parameters();
    for (auto& item : relu_layer->named_parameters())
      item.value().copy_(from[item.key()]);
  }
  EXPECT_FALSE(equal(by_constant(x), relu_layer(x)));
}

// A stand-in encoder and decoder that keep what they were called with, so a test can see which
// tensor reached which parameter. Each returns a function of its first input that the test can
// recompute (an encoder's output must differ from src to show it is what the decoder receives).
struct RecordingEncoderImpl : nn::Module {
  RecordingEncoderImpl() : Module("RecordingEncoder") {
    weight = register_parameter("weight", ones({8, 8}));
  }
  Tensor forward(const Tensor& src, const Tensor& mask, const Tensor& padding) {
    seen = {src, mask, padding};
    return matmul(src, weight);
  }
  using Module::forward;
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  Tensor weight;
  std::vector<Tensor> seen;
};
LEANGRAD_MODULE(RecordingEncoder);

struct RecordingDecoderImpl : nn::Module {
  RecordingDecoderImpl() : Module("RecordingDecoder") {}
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                 const Tensor& memory_mask, const Tensor& tgt_padding,
                 const Tensor& memory_padding) {
    seen = {tgt, memory, tgt_mask, memory_mask, tgt_padding, memory_padding};
    return add(tgt, mean(memory, {0}));
  }
  using Module::forward;
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, const Tensor&);
  std::vector<Tensor> seen;
};
LEANGRAD_MODULE(RecordingDecoder);

// The masks for a model with S = 5, T = 3, N = 2: each a distinct tensor, so is_same tells
// which one arrived where.
struct Masks {
  Tensor src_mask = zeros({5, 5}), tgt_mask = zeros({3, 3}), memory_mask = zeros({3, 5});
  Tensor src_padding = zeros({2, 5}, TensorOptions().dtype(kBool));
  Tensor tgt_padding = zeros({2, 3}, TensorOptions().dtype(kBool));
  Tensor memory_padding = zeros({2, 5}, TensorOptions().dtype(kBool));
};

// LibTorch's custom_encoder (PyTorch's too): the module given is the model's "encoder", called
// with src and src's two masks; its output is the decoder's memory. The decoder built from the
// options is the usual one, so the output is that decoder's on the custom encoder's output.
TEST(Transformer, CustomEncoderIsCalledWithSrcAndItsMasks) {
  RecordingEncoder custom;
  nn::Transformer t(
      nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).dropout(0.0).custom_encoder(custom));
  const Tensor src = randn({5, 2, 8}), tgt = randn({3, 2, 8});
  const Masks m;
  const Tensor out = t(src, tgt, m.src_mask, m.tgt_mask, m.memory_mask, m.src_padding,
                       m.tgt_padding, m.memory_padding);
  ASSERT_EQ(custom->seen.size(), 3u);
  EXPECT_TRUE(custom->seen[0].is_same(src));
  EXPECT_TRUE(custom->seen[1].is_same(m.src_mask));
  EXPECT_TRUE(custom->seen[2].is_same(m.src_padding));
  // Used, not copied (PyTorch's; LibTorch clones), and named "encoder".
  EXPECT_EQ(t->encoder.ptr(), custom.ptr());
  EXPECT_EQ(t->encoder.get<RecordingEncoder>().ptr(), custom.ptr());
  const auto parameters = t->named_parameters();
  ASSERT_NE(parameters.find("encoder.weight"), nullptr);
  EXPECT_TRUE(parameters["encoder.weight"].is_same(custom->weight));
  EXPECT_EQ(parameters.find("encoder.layers.0.linear1.weight"), nullptr);
  EXPECT_NE(parameters.find("decoder.layers.0.linear1.weight"), nullptr);
  // The decoder is the one the options build, given the custom encoder's output as memory.
  auto& decoder = t->decoder.get<nn::TransformerDecoderImpl>();
  EXPECT_TRUE(equal(out, decoder.forward(tgt, matmul(src, custom->weight), m.tgt_mask,
                                         m.memory_mask, m.tgt_padding, m.memory_padding)));
}

TEST(Transformer, CustomDecoderIsCalledWithTgtMemoryAndTheirMasks) {
  RecordingDecoder custom;
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1)
                        .dim_feedforward(16)
                        .dropout(0.0)
                        .custom_decoder(nn::AnyModule(custom)));
  const Tensor src = randn({5, 2, 8}), tgt = randn({3, 2, 8});
  const Masks m;
  const Tensor out = t(src, tgt, m.src_mask, m.tgt_mask, m.memory_mask, m.src_padding,
                       m.tgt_padding, m.memory_padding);
  ASSERT_EQ(custom->seen.size(), 6u);
  EXPECT_TRUE(custom->seen[0].is_same(tgt));
  EXPECT_TRUE(custom->seen[2].is_same(m.tgt_mask));
  EXPECT_TRUE(custom->seen[3].is_same(m.memory_mask));
  EXPECT_TRUE(custom->seen[4].is_same(m.tgt_padding));
  EXPECT_TRUE(custom->seen[5].is_same(m.memory_padding));
  // The memory is the built encoder's output on src and src's masks.
  const Tensor memory =
      t->encoder.get<nn::TransformerEncoder>()->forward(src, m.src_mask, m.src_padding);
  EXPECT_TRUE(equal(custom->seen[1], memory));
  EXPECT_TRUE(equal(out, add(tgt, mean(memory, {0}))));
  EXPECT_EQ(t->decoder.ptr(), custom.ptr());
  EXPECT_EQ(t->named_children().size(), 2u);
}

// As PyTorch's _reset_parameters (and LibTorch's reset_parameters), the custom module's
// matrices are re-initialised with the model's: the custom encoder's weight, all ones when
// made, is xavier_uniform_ after construction, |w| <= sqrt(6 / (8 + 8)).
TEST(Transformer, CustomModulesAreInitialisedWithTheModel) {
  RecordingEncoder custom;
  ASSERT_EQ(test::max_abs(sub(custom->weight, 1.0)), 0.0);
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).custom_encoder(custom));
  EXPECT_LE(test::max_abs(custom->weight), std::sqrt(6.0 / 16.0));
  EXPECT_GT(test::max_abs(sub(custom->weight, 1.0)), 0.0);
}

// A custom module whose forward does not take the Transformer's arguments is an Error naming the
// module and the count when the model is called (AnyModule's check, as LibTorch's).
TEST(Transformer, CustomEncoderOfAnotherSignatureIsAnError) {
  nn::Transformer t(
      nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).custom_encoder(nn::Linear(8, 8)));
  try {
    t(randn({5, 2, 8}), randn({3, 2, 8}));
    FAIL() << "a Linear as the encoder was called with three tensors";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Linear"), std::string::npos) << what;
    EXPECT_NE(what.find("takes 1 argument, got 3"), std::string::npos) << what;
  }
}

// The encoder's and decoder's norm is any module (LibTorch's AnyModule): given as a holder or
// as an AnyModule, it is applied to the last layer's output. Two encoders made from one layer
// start with the same parameters, so one with tanh as its norm gives tanh of the other's output.
TEST(TransformerEncoder, NormIsAnyModule) {
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  nn::TransformerEncoder plain(layer, 2);
  nn::TransformerEncoder with_tanh(nn::TransformerEncoderOptions(layer, 2).norm(nn::Tanh()));
  nn::LayerNorm layer_norm(nn::LayerNormOptions({8}));
  nn::TransformerEncoder with_layer_norm(
      nn::TransformerEncoderOptions(layer, 2).norm(nn::AnyModule(layer_norm)));
  const Tensor x = randn({5, 2, 8});
  EXPECT_TRUE(plain->norm.is_empty());
  EXPECT_TRUE(equal(with_tanh(x), tanh(plain(x))));
  EXPECT_TRUE(equal(with_layer_norm(x), layer_norm(plain(x))));
  EXPECT_EQ(with_layer_norm->norm.ptr(), layer_norm.ptr());  // used, as PyTorch's
  EXPECT_NE(with_layer_norm->named_parameters().find("norm.weight"), nullptr);

  nn::TransformerDecoderLayer decoder_layer(
      nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  nn::TransformerDecoder decoder_plain(decoder_layer, 1);
  nn::TransformerDecoder decoder_tanh(
      nn::TransformerDecoderOptions(decoder_layer, 1).norm(nn::Tanh()));
  const Tensor tgt = randn({3, 2, 8});
  EXPECT_TRUE(equal(decoder_tanh(tgt, x), tanh(decoder_plain(tgt, x))));
}

// LibTorch's other constructor of the stack options: from the layer's options.
TEST(TransformerEncoder, OptionsFromLayerOptions) {
  nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 3));
  ASSERT_EQ(encoder->layers->size(), 3u);
  EXPECT_EQ(encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(2)->options.dim_feedforward(),
            16);
  nn::TransformerDecoder decoder(nn::TransformerDecoderOptions(
      nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(12), 2));
  ASSERT_EQ(decoder->layers->size(), 2u);
  EXPECT_EQ(decoder->layers->ptr<nn::TransformerDecoderLayerImpl>(1)->options.dim_feedforward(),
            12);
}

}  // namespace
}  // namespace leangrad
