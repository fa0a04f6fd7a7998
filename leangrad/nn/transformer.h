// The Transformer modules (encoder and decoder layers and stacks, and nn::Transformer),
// configured and called as LibTorch's:
//   nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(512, 8)
//                                         .dim_feedforward(2048).dropout(0.1).activation("gelu"));
//   nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(layer, 6));
//   Tensor y = encoder(src, mask, src_key_padding_mask);    // src (S, N, E)
// Self-attention (nn::MultiheadAttention), then a two-layer feed-forward block, each with a
// residual connection and LayerNorm, after it (PyTorch's default) or before it (norm_first).
// Parameters and their names are PyTorch's (self_attn.in_proj_weight, linear1.weight,
// norm1.weight, ...; layers.0.self_attn... in the encoder), so PyTorch's state dicts load.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/attention.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/dropout.h>
#include <leangrad/nn/init.h>
#include <leangrad/nn/layer_norm.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// What kGELU names (LibTorch's torch::kGELU, an activation of its Transformer options).
struct GELUActivation {};

// The feed-forward block's activation: relu or gelu as LibTorch spells them (torch::kReLU and
// torch::kGELU, kReLU and kGELU here), "relu" or "gelu" (PyTorch's Python strings; gelu is the
// exact, erf one), or any function of a tensor.

class TransformerActivation {
 public:
  TransformerActivation(init::Nonlinearity nonlinearity);  // NOLINT: kReLU only
  TransformerActivation(GELUActivation)                    // NOLINT: kGELU
      : TransformerActivation("gelu") {}
  TransformerActivation(const char* name);        // NOLINT: "relu" or "gelu"
  TransformerActivation(const std::string& name)  // NOLINT
      : TransformerActivation(name.c_str()) {}
  template <typename F>
  requires std::is_invocable_r_v<Tensor, const F&, const Tensor&> TransformerActivation(
      F function)  // NOLINT
      : name_("custom"), function_(std::move(function)) {}

  Tensor operator()(const Tensor& x) const { return function_(x); }
  // "relu", "gelu" or "custom".
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::function<Tensor(const Tensor&)> function_;
};

// The options of a Transformer layer, encoder or decoder: LibTorch has one class for each, with
// the same fields, so both names spell this one.
class TransformerLayerOptions {
 public:
  TransformerLayerOptions(std::int64_t d_model, std::int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}

  LG_ARG(std::int64_t, d_model);
  LG_ARG(std::int64_t, nhead);
  LG_ARG(std::int64_t, dim_feedforward) = 2048;
  LG_ARG(double, dropout) = 0.1;
  LG_ARG(TransformerActivation, activation) = kReLU;
  // PyTorch's Python options; LibTorch 1.13 has neither (its layout is (S, N, E), norm after).
  LG_ARG(double, layer_norm_eps) = 1e-5;
  LG_ARG(bool, batch_first) = false;
  LG_ARG(bool, norm_first) = false;
};
using TransformerEncoderLayerOptions = TransformerLayerOptions;
using TransformerDecoderLayerOptions = TransformerLayerOptions;

class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(std::int64_t d_model, std::int64_t nhead);
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);

  // src (S, N, E), (N, S, E) with batch_first, or (S, E) -> the same shape. src_mask (S, S) or
  // (N * nhead, S, S) and src_key_padding_mask (N, S) as nn::MultiheadAttention's attn_mask and
  // key_padding_mask (Bool true: left out; floating: added).
  Tensor forward(const Tensor& src, const Tensor& src_mask,
                 const Tensor& src_key_padding_mask = Tensor());
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  std::string extra_repr() const override;
  // Its submodules' own initialisation, as PyTorch's (the layer has none of its own).
  void reset_parameters();

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
};
LEANGRAD_MODULE(TransformerEncoderLayer);

class TransformerEncoderOptions {
 public:
  // num_layers copies of encoder_layer: same options and, as PyTorch's deep copies, the same
  // initial parameters (the layer given is copied, not used).
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, std::int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer_options,
                            std::int64_t num_layers)
      : TransformerEncoderOptions(TransformerEncoderLayer(layer_options), num_layers) {}

  LG_ARG(TransformerEncoderLayer, encoder_layer);
  LG_ARG(std::int64_t, num_layers);
  // A module applied to the last layer's output, a LayerNorm as a rule (empty: none). Used, not
  // copied, as PyTorch's (LibTorch clones it).
  LG_ANY_MODULE_ARG(norm);
};

class TransformerEncoderImpl : public Module {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, std::int64_t num_layers);
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options);

  // Each layer in turn with the same masks, then norm if there is one.
  Tensor forward(const Tensor& src, const Tensor& mask,
                 const Tensor& src_key_padding_mask = Tensor());
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;  // as LibTorch's: norm.get<nn::LayerNorm>()
};
LEANGRAD_MODULE(TransformerEncoder);

// Self-attention over tgt, attention from tgt to memory (the encoder's output), then the
// feed-forward block, each with a residual connection and LayerNorm (after, or before with
// norm_first), as PyTorch's TransformerDecoderLayer.
class TransformerDecoderLayerImpl : public Module {
 public:
  TransformerDecoderLayerImpl(std::int64_t d_model, std::int64_t nhead);
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);

  // tgt (T, N, E) and memory (S, N, E) (batch first, or unbatched) -> tgt's shape. tgt_mask
  // (T, T), memory_mask (T, S), and the key padding masks (N, T) and (N, S), as
  // nn::MultiheadAttention's masks.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, const Tensor&);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                                    {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())})
  // The single-input form throws: a decoder layer needs the memory too.
  using Module::forward;
  std::string extra_repr() const override;
  void reset_parameters();

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  MultiheadAttention multihead_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  LayerNorm norm3{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
  Dropout dropout3{nullptr};
};
LEANGRAD_MODULE(TransformerDecoderLayer);

class TransformerDecoderOptions {
 public:
  // num_layers copies of decoder_layer (as TransformerEncoderOptions).
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, std::int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer_options,
                            std::int64_t num_layers)
      : TransformerDecoderOptions(TransformerDecoderLayer(layer_options), num_layers) {}

  LG_ARG(TransformerDecoderLayer, decoder_layer);
  LG_ARG(std::int64_t, num_layers);
  LG_ANY_MODULE_ARG(norm);
};

class TransformerDecoderImpl : public Module {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, std::int64_t num_layers);
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& options);

  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, const Tensor&);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                                    {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())})
  using Module::forward;

  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
LEANGRAD_MODULE(TransformerDecoder);

class TransformerOptions {
 public:
  TransformerOptions() = default;
  TransformerOptions(std::int64_t d_model, std::int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(std::int64_t d_model, std::int64_t nhead, std::int64_t num_encoder_layers,
                     std::int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}

  LG_ARG(std::int64_t, d_model) = 512;
  LG_ARG(std::int64_t, nhead) = 8;
  LG_ARG(std::int64_t, num_encoder_layers) = 6;
  LG_ARG(std::int64_t, num_decoder_layers) = 6;
  LG_ARG(std::int64_t, dim_feedforward) = 2048;
  LG_ARG(double, dropout) = 0.1;
  LG_ARG(TransformerActivation, activation) = kReLU;
  LG_ARG(double, layer_norm_eps) = 1e-5;  // PyTorch's Python options
  LG_ARG(bool, batch_first) = false;
  LG_ARG(bool, norm_first) = false;
  // Modules to use instead of the encoder and decoder built from the options above (empty:
  // build them). The encoder is called as forward(src, src_mask, src_key_padding_mask) and the
  // decoder as forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
  // memory_key_padding_mask), each returning a Tensor (Note [Custom encoder and decoder]).
  LG_ANY_MODULE_ARG(custom_encoder);
  LG_ANY_MODULE_ARG(custom_decoder);
};

// The encoder-decoder model of "Attention Is All You Need", as PyTorch's nn.Transformer: an
// encoder and a decoder of the layers above, each ending in a LayerNorm, and every matrix
// initialised with xavier_uniform_.
class TransformerImpl : public Module {
 public:
  explicit TransformerImpl(const TransformerOptions& options = TransformerOptions());

  // src (S, N, E), tgt (T, N, E) (batch first, or unbatched) -> (T, N, E). src_mask (S, S),
  // tgt_mask (T, T), memory_mask (T, S), key padding masks (N, S), (N, T), (N, S).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = Tensor(),
                 const Tensor& tgt_mask = Tensor(), const Tensor& memory_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, const Tensor&, const Tensor&, const Tensor&);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                                    {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())},
                                    {6, AnyValue(Tensor())}, {7, AnyValue(Tensor())})
  using Module::forward;
  void reset_parameters();

  // (sz, sz) float32: 0 on and below the diagonal, -inf above it (position i attends to 0..i).
  static Tensor generate_square_subsequent_mask(std::int64_t sz,
                                                const TensorOptions& options = TensorOptions());

  TransformerOptions options;
  // As LibTorch's: encoder.get<nn::TransformerEncoder>() when it was built from the options.
  AnyModule encoder;
  AnyModule decoder;
};
LEANGRAD_MODULE(Transformer);

// Note [Custom encoder and decoder]
// TransformerOptions::custom_encoder and custom_decoder are LibTorch's (PyTorch's
// nn.Transformer(custom_encoder=..., custom_decoder=...)): the module given is registered as
// "encoder" or "decoder" and called through AnyModule with every argument, as LibTorch calls
// it, so any module whose forward takes those tensors works (a forward that takes other
// arguments is an Error naming the types when the Transformer is called). It is used, not
// copied, as PyTorch's (LibTorch clones it; no module is cloneable here), and, as both, its
// matrices are re-initialised with xavier_uniform_ with the rest of the model's.

}  // namespace leangrad::nn

namespace leangrad {
// LibTorch's torch::kGELU: TransformerEncoderLayerOptions(512, 8).activation(kGELU).
inline constexpr nn::GELUActivation kGELU{};
}  // namespace leangrad
