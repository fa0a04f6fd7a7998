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

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options)
    : Module("Embedding"), options_(options) {
  const std::int64_t n = options.num_embeddings(), dim = options.embedding_dim();
  LG_CHECK_SHAPE(n > 0 && dim >= 0, "Embedding: expected a positive num_embeddings and a ",
                 "non-negative embedding_dim, got ", n, " and ", dim);
  if (options.padding_idx().has_value()) {
    const std::int64_t p = *options.padding_idx();
    LG_CHECK(p >= -n && p < n, "Embedding: padding_idx ", p, " is out of range for num_embeddings ",
             n, " (expected [", -n, ", ", n - 1, "])");
    options_.padding_idx(p < 0 ? p + n : p);
  }
  weight = register_parameter("weight", empty({n, dim}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  const NoGradGuard no_grad;
  ops::normal_(weight, 0.0, 1.0, default_generator(Device::cpu()));
  if (options_.padding_idx().has_value()) weight.select(0, *options_.padding_idx()).zero_();
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
  const std::int64_t n = options.num_embeddings(), dim = options.embedding_dim();
  LG_CHECK_SHAPE(n > 0 && dim >= 0, "EmbeddingBag: expected a positive num_embeddings and a ",
                 "non-negative embedding_dim, got ", n, " and ", dim);
  if (options.padding_idx().has_value()) {
    const std::int64_t p = *options.padding_idx();
    LG_CHECK(p >= -n && p < n, "EmbeddingBag: padding_idx ", p,
             " is out of range for num_embeddings ", n, " (expected [", -n, ", ", n - 1, "])");
    options_.padding_idx(p < 0 ? p + n : p);
  }
  weight = register_parameter("weight", empty({n, dim}));
  reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() {
  const NoGradGuard no_grad;
  ops::normal_(weight, 0.0, 1.0, default_generator(Device::cpu()));
  if (options_.padding_idx().has_value()) weight.select(0, *options_.padding_idx()).zero_();
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
