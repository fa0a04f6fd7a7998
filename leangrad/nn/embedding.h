// nn::Embedding and nn::EmbeddingBag, configured like LibTorch's
//   nn::Embedding(nn::EmbeddingOptions(1000, 64).padding_idx(0))
//   nn::EmbeddingBag(nn::EmbeddingBagOptions(1000, 64).mode(kSum))  // bag(indices, offsets)
// Parameter `weight` (num_embeddings, embedding_dim) ~ N(0, 1), with the row padding_idx zeroed,
// as PyTorch initialises it. forward(indices) calls leangrad::embedding (autograd/nn_functions.h):
// int64 indices of any shape -> (*indices.shape, embedding_dim). LibTorch's max_norm,
// scale_grad_by_freq and sparse are not there (docs/api-notes.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class EmbeddingOptions {
 public:
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}

  LG_ARG(std::int64_t, num_embeddings);
  LG_ARG(std::int64_t, embedding_dim);
  // The row that gets no gradient (and starts at zero); negative counts from the end.
  LG_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;
};

class EmbeddingImpl : public Module {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  EmbeddingImpl(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  // indices: int64 of any shape -> (*indices.shape, embedding_dim).
  Tensor forward(const Tensor& indices) override;
  // "1000, 64, padding_idx=0", as PyTorch prints it.
  std::string extra_repr() const override;
  // weight ~ N(0, 1) from the CPU default generator, the row padding_idx zeroed.
  void reset_parameters();

  const EmbeddingOptions& options() const { return options_; }
  Tensor weight;  // (num_embeddings, embedding_dim)

 private:
  EmbeddingOptions options_;
};
LEANGRAD_MODULE(Embedding);

class EmbeddingBagOptions {
 public:
  EmbeddingBagOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}

  LG_ARG(std::int64_t, num_embeddings);
  LG_ARG(std::int64_t, embedding_dim);
  LG_ARG(EmbeddingBagMode, mode) = kMean;  // kSum, kMean or kMax
  // offsets carry one more entry, the input's length, that ends the last bag.
  LG_ARG(bool, include_last_offset) = false;
  // The index left out of every bag (its row starts at zero); negative counts from the end.
  LG_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;
};

// Parameter `weight` (num_embeddings, embedding_dim) ~ N(0, 1), the row padding_idx zeroed, as
// PyTorch's. forward calls leangrad::embedding_bag (autograd/nn_functions.h) -> (bags,
// embedding_dim). LibTorch's max_norm, norm_type, scale_grad_by_freq and sparse are not there.
class EmbeddingBagImpl : public Module {
 public:
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& options);
  EmbeddingBagImpl(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  // (bags, n) int64 input, a bag a row.
  Tensor forward(const Tensor& input) override { return forward(input, Tensor()); }
  // 1-D input with offsets (the start of each bag), per_sample_weights with mode kSum.
  Tensor forward(const Tensor& input, const Tensor& offsets,
                 const Tensor& per_sample_weights = Tensor());
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
  // "1000, 64, mode=sum[, include_last_offset=true][, padding_idx=0]".
  std::string extra_repr() const override;
  void reset_parameters();  // as Embedding's

  const EmbeddingBagOptions& options() const { return options_; }
  Tensor weight;  // (num_embeddings, embedding_dim)

 private:
  EmbeddingBagOptions options_;
};
LEANGRAD_MODULE(EmbeddingBag);

}  // namespace leangrad::nn
