// The distance modules, CosineSimilarity and PairwiseDistance, as LibTorch's
// (torch/nn/modules/distance.h): forward takes two inputs,
//   nn::CosineSimilarity cos(nn::CosineSimilarityOptions().dim(1));
//   Tensor c = cos(a, b);  // (N, D) and (N, D) -> (N)
// calling leangrad::cosine_similarity and pairwise_distance (autograd/margin_losses.h).
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/autograd/margin_losses.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class CosineSimilarityOptions {
  LG_ARG(std::int64_t, dim) = 1;
  LG_ARG(double, eps) = 1e-8;
};

class PairwiseDistanceOptions {
  LG_ARG(double, p) = 2.0;
  LG_ARG(double, eps) = 1e-6;
  LG_ARG(bool, keepdim) = false;
};

class CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {})
      : Module("CosineSimilarity"), options(options) {}
  using Module::forward;  // the single-input form throws: it needs two
  Tensor forward(const Tensor& x1, const Tensor& x2);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "dim=1, eps=1e-08"
  CosineSimilarityOptions options;
};
LEANGRAD_MODULE(CosineSimilarity);

class PairwiseDistanceImpl : public Module {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& x1, const Tensor& x2);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "p=2, eps=1e-06, keepdim=false"
  PairwiseDistanceOptions options;
};
LEANGRAD_MODULE(PairwiseDistance);

}  // namespace leangrad::nn
