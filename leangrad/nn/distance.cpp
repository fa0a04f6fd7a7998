// The distance modules (nn/distance.h).
#include <leangrad/nn/distance.h>

#include <leangrad/core/error.h>

namespace leangrad::nn {

Tensor CosineSimilarityImpl::forward(const Tensor& x1, const Tensor& x2) {
  return cosine_similarity(x1, x2, options.dim(), options.eps());
}
std::string CosineSimilarityImpl::extra_repr() const {
  return detail::str_cat("dim=", options.dim(), ", eps=", options.eps());
}

PairwiseDistanceImpl::PairwiseDistanceImpl(const PairwiseDistanceOptions& options)
    : Module("PairwiseDistance"), options(options) {
  LG_CHECK(options.p() >= 1.0, "PairwiseDistance: p must be >= 1 (or infinity), got ", options.p());
}
Tensor PairwiseDistanceImpl::forward(const Tensor& x1, const Tensor& x2) {
  return pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}
std::string PairwiseDistanceImpl::extra_repr() const {
  return detail::str_cat("p=", options.p(), ", eps=", options.eps(),
                         ", keepdim=", options.keepdim() ? "true" : "false");
}

}  // namespace leangrad::nn
