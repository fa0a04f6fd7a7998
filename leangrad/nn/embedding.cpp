// nn::Embedding and nn::EmbeddingBag (nn/embedding.h).
#include <leangrad/nn/embedding.h>

#include <sstream>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::nn {

namespace {

// The checks both modules make of their sizes, and padding_idx counted from the start; `module`
// names the module in the Error.
std::optional<std::int64_t> checked_padding_idx(const char* module, std::int64_t n,
                                                std::int64_t dim,
                                                std::optional<std::int64_t> padding_idx) {
  LG_CHECK_SHAPE(n > 0 && dim >= 0, module, ": expected a positive num_embeddings and a ",
                 "non-negative embedding_dim, got ", n, " and ", dim);
  if (!padding_idx.has_value()) return std::nullopt;
  const std::int64_t p = *padding_idx;
  LG_CHECK(p >= -n && p < n, module, ": padding_idx ", p, " is out of range for num_embeddings ", n,
           " (expected [", -n, ", ", n - 1, "])");
  return p < 0 ? p + n : p;
}

// Both modules' initialisation, PyTorch's: N(0, 1) from the CPU default generator, the row
// padding_idx zeroed.
void reset_embedding_weight(const Tensor& weight, std::optional<std::int64_t> padding_idx) {
  const NoGradGuard no_grad;
  ops::normal_(weight, 0.0, 1.0, default_generator(Device::cpu()));
  if (padding_idx.has_value()) weight.select(0, *padding_idx).zero_();
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options)
    : Module("Embedding"), options_(options) {
  options_.padding_idx(checked_padding_idx("Embedding", options.num_embeddings(),
                                           options.embedding_dim(), options.padding_idx()));
  weight = register_parameter("weight", empty({options.num_embeddings(), options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  reset_embedding_weight(weight, options_.padding_idx());
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return embedding(indices, weight, options_.padding_idx());
}

std::string EmbeddingImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.num_embeddings() << ", " << options_.embedding_dim();
  if (options_.padding_idx().has_value()) out << ", padding_idx=" << *options_.padding_idx();
  return out.str();
}

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& options)
    : Module("EmbeddingBag"), options_(options) {
  options_.padding_idx(checked_padding_idx("EmbeddingBag", options.num_embeddings(),
                                           options.embedding_dim(), options.padding_idx()));
  weight = register_parameter("weight", empty({options.num_embeddings(), options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() {
  reset_embedding_weight(weight, options_.padding_idx());
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
  return embedding_bag(input, weight, offsets, options_.mode(), per_sample_weights,
                       options_.include_last_offset(), options_.padding_idx());
}

std::string EmbeddingBagImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.num_embeddings() << ", " << options_.embedding_dim()
      << ", mode=" << embedding_bag_mode_name(options_.mode());
  if (options_.include_last_offset()) out << ", include_last_offset=true";
  if (options_.padding_idx().has_value()) out << ", padding_idx=" << *options_.padding_idx();
  return out.str();
}

}  // namespace leangrad::nn
