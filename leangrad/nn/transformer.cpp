// nn::TransformerEncoderLayer and nn::TransformerEncoder (nn/transformer.h).
#include <leangrad/nn/transformer.h>

#include <cstring>
#include <sstream>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>

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

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(std::int64_t d_model, std::int64_t nhead)
    : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opts)
    : Module("TransformerEncoderLayer"), options(opts) {
  LG_CHECK(opts.dim_feedforward() > 0,
           "TransformerEncoderLayer: dim_feedforward must be positive, ", "got ",
           opts.dim_feedforward());
  LG_CHECK(opts.dropout() >= 0.0 && opts.dropout() < 1.0,
           "TransformerEncoderLayer: dropout must be in [0, 1), got ", opts.dropout());
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
  std::ostringstream out;
  out << "d_model=" << options.d_model() << ", nhead=" << options.nhead()
      << ", dim_feedforward=" << options.dim_feedforward() << ", dropout=" << options.dropout()
      << ", activation=" << options.activation().name();
  if (options.norm_first()) out << ", norm_first=true";
  if (options.batch_first()) out << ", batch_first=true";
  return out.str();
}

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderLayer encoder_layer,
                                               std::int64_t num_layers)
    : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& opts)
    : Module("TransformerEncoder"), options(opts) {
  LG_CHECK(!opts.encoder_layer().is_empty(), "TransformerEncoder: the encoder_layer is empty");
  LG_CHECK(opts.num_layers() >= 1, "TransformerEncoder: num_layers must be at least 1, got ",
           opts.num_layers());
  const TransformerEncoderLayerImpl& model = *opts.encoder_layer();
  layers = register_module("layers", ModuleList());
  for (std::int64_t i = 0; i < opts.num_layers(); ++i) {
    // A copy of the layer given, as PyTorch's copy.deepcopy: its options, parameters and
    // buffers, and its training mode.
    TransformerEncoderLayer layer(model.options);
    {
      NoGradGuard no_grad;
      auto from = model.named_parameters();
      for (auto& item : layer->named_parameters())
        item.value().copy_(from[item.key()]);
    }
    layer->train(model.is_training());
    layers->push_back(layer);
  }
  if (!opts.norm().is_empty()) norm = register_module("norm", opts.norm());
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask,
                                       const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (const auto& layer : *layers)
    x = std::static_pointer_cast<TransformerEncoderLayerImpl>(layer)->forward(x, mask,
                                                                              src_key_padding_mask);
  return norm.is_empty() ? x : norm->forward(x);
}

}  // namespace leangrad::nn
