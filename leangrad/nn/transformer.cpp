// The Transformer modules (nn/transformer.h).
#include <leangrad/nn/transformer.h>

#include <cstring>
#include <limits>
#include <sstream>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

TransformerActivation::TransformerActivation(init::Nonlinearity nonlinearity) : name_("relu") {
  LG_CHECK(nonlinearity == init::Nonlinearity::ReLU,
           "TransformerEncoderLayer: the activation is kReLU, \"relu\", \"gelu\" or a function "
           "of a tensor; other init::Nonlinearity values are not activations here");
  function_ = [](const Tensor& x) { return relu(x); };
}

TransformerActivation::TransformerActivation(const char* name) : name_(name) {
  if (name_ == "relu") {
    function_ = [](const Tensor& x) { return relu(x); };
  } else if (name_ == "gelu") {
    function_ = [](const Tensor& x) { return gelu(x); };
  } else {
    LG_THROW(Error, "TransformerEncoderLayer: activation \"", name_,
             "\" is not one of \"relu\" and \"gelu\" (or pass a function of a tensor)");
  }
}

namespace {

// The checks both layers make of their options; `layer` names the layer in the Error.
void check_layer_options(const char* layer, const TransformerLayerOptions& opts) {
  LG_CHECK(opts.dim_feedforward() > 0, layer, ": dim_feedforward must be positive, got ",
           opts.dim_feedforward());
  LG_CHECK(opts.dropout() >= 0.0 && opts.dropout() < 1.0, layer,
           ": dropout must be in [0, 1), got ", opts.dropout());
}

// "d_model=8, nhead=2, dim_feedforward=16, dropout=0.1, activation=relu[, norm_first=true]...".
std::string layer_repr(const TransformerLayerOptions& opts) {
  std::ostringstream out;
  out << "d_model=" << opts.d_model() << ", nhead=" << opts.nhead()
      << ", dim_feedforward=" << opts.dim_feedforward() << ", dropout=" << opts.dropout()
      << ", activation=" << opts.activation().name();
  if (opts.norm_first()) out << ", norm_first=true";
  if (opts.batch_first()) out << ", batch_first=true";
  return out.str();
}

}  // namespace

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(std::int64_t d_model, std::int64_t nhead)
    : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opts)
    : Module("TransformerEncoderLayer"), options(opts) {
  check_layer_options("TransformerEncoderLayer", opts);
  const std::int64_t e = opts.d_model();
  // PyTorch's order of registration, so parameters() lists them as named_parameters() does.
  self_attn =
      register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(e, opts.nhead())
                                                          .dropout(opts.dropout())
                                                          .batch_first(opts.batch_first())));
  linear1 = register_module("linear1", Linear(e, opts.dim_feedforward()));
  dropout = register_module("dropout", Dropout(opts.dropout()));
  linear2 = register_module("linear2", Linear(opts.dim_feedforward(), e));
  const LayerNormOptions norm = LayerNormOptions({e}).eps(opts.layer_norm_eps());
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(opts.dropout()));
  dropout2 = register_module("dropout2", Dropout(opts.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

// PyTorch 1.13's TransformerEncoderLayer.forward (its Python path; the fused inference path
// computes the same):
//   post-norm: x = norm1(x + sa(x));  x = norm2(x + ff(x))
//   norm_first: x = x + sa(norm1(x));  x = x + ff(norm2(x))
// sa(x) = dropout1(self_attn(x, x, x)), ff(x) = dropout2(linear2(dropout(activation(linear1(x))))).
Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  LG_PROFILE_OP(src);
  auto sa = [&](const Tensor& x) {
    return dropout1->forward(std::get<0>(
        self_attn->forward(x, x, x, src_key_padding_mask, /*need_weights=*/false, src_mask)));
  };
  auto ff = [&](const Tensor& x) {
    return dropout2->forward(
        linear2->forward(dropout->forward(options.activation()(linear1->forward(x)))));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = add(x, sa(norm1->forward(x)));
    return add(x, ff(norm2->forward(x)));
  }
  x = norm1->forward(add(x, sa(x)));
  return norm2->forward(add(x, ff(x)));
}

std::string TransformerEncoderLayerImpl::extra_repr() const {
  return layer_repr(options);
}

namespace {

// num_layers copies of `layer` in a new ModuleList: its options, parameters and training mode,
// as PyTorch's copy.deepcopy of the layer (Layer: TransformerEncoderLayer or ...DecoderLayer).
template <typename Layer>
ModuleList copies_of(const Layer& layer, std::int64_t num_layers, const char* owner) {
  LG_CHECK(!layer.is_empty(), owner, ": the layer to copy is empty");
  LG_CHECK(num_layers >= 1, owner, ": num_layers must be at least 1, got ", num_layers);
  ModuleList list;
  const auto from = layer->named_parameters();
  for (std::int64_t i = 0; i < num_layers; ++i) {
    Layer copy(layer->options);
    {
      NoGradGuard no_grad;
      for (auto& item : copy->named_parameters())
        item.value().copy_(from[item.key()]);
    }
    copy->train(layer->is_training());
    list->push_back(copy);
  }
  return list;
}

}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderLayer encoder_layer,
                                               std::int64_t num_layers)
    : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& opts)
    : Module("TransformerEncoder"), options(opts) {
  layers = register_module(
      "layers", copies_of(opts.encoder_layer(), opts.num_layers(), "TransformerEncoder"));
  if (!opts.norm().is_empty()) {
    norm = opts.norm();
    register_module("norm", norm.ptr());
  }
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask,
                                       const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (const auto& layer : *layers)
    x = std::static_pointer_cast<TransformerEncoderLayerImpl>(layer)->forward(x, mask,
                                                                              src_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(std::int64_t d_model, std::int64_t nhead)
    : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& opts)
    : Module("TransformerDecoderLayer"), options(opts) {
  check_layer_options("TransformerDecoderLayer", opts);
  const std::int64_t e = opts.d_model();
  const MultiheadAttentionOptions attention = MultiheadAttentionOptions(e, opts.nhead())
                                                  .dropout(opts.dropout())
                                                  .batch_first(opts.batch_first());
  // PyTorch's order of registration.
  self_attn = register_module("self_attn", MultiheadAttention(attention));
  multihead_attn = register_module("multihead_attn", MultiheadAttention(attention));
  linear1 = register_module("linear1", Linear(e, opts.dim_feedforward()));
  dropout = register_module("dropout", Dropout(opts.dropout()));
  linear2 = register_module("linear2", Linear(opts.dim_feedforward(), e));
  const LayerNormOptions norm = LayerNormOptions({e}).eps(opts.layer_norm_eps());
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  norm3 = register_module("norm3", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(opts.dropout()));
  dropout2 = register_module("dropout2", Dropout(opts.dropout()));
  dropout3 = register_module("dropout3", Dropout(opts.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  multihead_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

// PyTorch 1.13's TransformerDecoderLayer.forward:
//   post-norm: x = norm1(x + sa(x));  x = norm2(x + mha(x, memory));  x = norm3(x + ff(x))
//   norm_first: x = x + sa(norm1(x));  x = x + mha(norm2(x), memory);  x = x + ff(norm3(x))
Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  LG_PROFILE_OP(tgt, memory);
  auto sa = [&](const Tensor& x) {
    return dropout1->forward(std::get<0>(
        self_attn->forward(x, x, x, tgt_key_padding_mask, /*need_weights=*/false, tgt_mask)));
  };
  auto mha = [&](const Tensor& x) {
    return dropout2->forward(std::get<0>(multihead_attn->forward(
        x, memory, memory, memory_key_padding_mask, /*need_weights=*/false, memory_mask)));
  };
  auto ff = [&](const Tensor& x) {
    return dropout3->forward(
        linear2->forward(dropout->forward(options.activation()(linear1->forward(x)))));
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = add(x, sa(norm1->forward(x)));
    x = add(x, mha(norm2->forward(x)));
    return add(x, ff(norm3->forward(x)));
  }
  x = norm1->forward(add(x, sa(x)));
  x = norm2->forward(add(x, mha(x)));
  return norm3->forward(add(x, ff(x)));
}

std::string TransformerDecoderLayerImpl::extra_repr() const {
  return layer_repr(options);
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderLayer decoder_layer,
                                               std::int64_t num_layers)
    : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderOptions& opts)
    : Module("TransformerDecoder"), options(opts) {
  layers = register_module(
      "layers", copies_of(opts.decoder_layer(), opts.num_layers(), "TransformerDecoder"));
  if (!opts.norm().is_empty()) {
    norm = opts.norm();
    register_module("norm", norm.ptr());
  }
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (const auto& layer : *layers)
    x = std::static_pointer_cast<TransformerDecoderLayerImpl>(layer)->forward(
        x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

TransformerImpl::TransformerImpl(const TransformerOptions& opts)
    : Module("Transformer"), options(opts) {
  const TransformerLayerOptions layer = TransformerLayerOptions(opts.d_model(), opts.nhead())
                                            .dim_feedforward(opts.dim_feedforward())
                                            .dropout(opts.dropout())
                                            .activation(opts.activation())
                                            .layer_norm_eps(opts.layer_norm_eps())
                                            .batch_first(opts.batch_first())
                                            .norm_first(opts.norm_first());
  const LayerNormOptions norm = LayerNormOptions({opts.d_model()}).eps(opts.layer_norm_eps());
  encoder =
      opts.custom_encoder().is_empty()
          ? AnyModule(TransformerEncoder(
                TransformerEncoderOptions(layer, opts.num_encoder_layers()).norm(LayerNorm(norm))))
          : opts.custom_encoder();
  register_module("encoder", encoder.ptr());
  decoder =
      opts.custom_decoder().is_empty()
          ? AnyModule(TransformerDecoder(
                TransformerDecoderOptions(layer, opts.num_decoder_layers()).norm(LayerNorm(norm))))
          : opts.custom_decoder();
  register_module("decoder", decoder.ptr());
  reset_parameters();
}

// PyTorch's nn.Transformer._reset_parameters: xavier_uniform_ on every parameter of more than
// one dim; the vectors (biases, LayerNorm's) keep their layers' initialisation.
void TransformerImpl::reset_parameters() {
  NoGradGuard no_grad;
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
  LG_CHECK(src.defined() && tgt.defined(), "Transformer: expected defined src and tgt");
  const bool batched = src.dim() == 3;
  const std::int64_t batch_dim = options.batch_first() ? 0 : 1;
  LG_CHECK_SHAPE(src.dim() == tgt.dim() && (src.dim() == 2 || src.dim() == 3) &&
                     (!batched || src.shape()[batch_dim] == tgt.shape()[batch_dim]),
                 "Transformer: expected src and tgt of one batch size, both 3-d (batched) or "
                 "2-d (unbatched), got ",
                 src.shape(), " and ", tgt.shape(), options.batch_first() ? " (batch_first)" : "");
  LG_CHECK_SHAPE(src.shape().back() == options.d_model() && tgt.shape().back() == options.d_model(),
                 "Transformer: expected src and tgt with d_model = ", options.d_model(),
                 " features, got ", src.shape(), " and ", tgt.shape());
  const Tensor memory = encoder.forward(src, src_mask, src_key_padding_mask);
  return decoder.forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                         memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(std::int64_t sz,
                                                        const TensorOptions& options) {
  LG_CHECK(sz >= 0, "Transformer::generate_square_subsequent_mask: sz must be >= 0, got ", sz);
  const TensorOptions positions = TensorOptions().dtype(kInt64).device(options.device());
  const Tensor later = gt(arange(static_cast<double>(sz), positions).unsqueeze(0),
                          arange(static_cast<double>(sz), positions).unsqueeze(1));
  return masked_fill(zeros({sz, sz}, options), later, -std::numeric_limits<double>::infinity());
}

}  // namespace leangrad::nn
