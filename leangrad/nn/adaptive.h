// nn::AdaptiveLogSoftmaxWithLoss, as LibTorch's: the adaptive softmax of Grave et al. (2017,
// "Efficient softmax approximation for GPUs") for many classes of skewed frequencies. The classes
// are split by `cutoffs` into a shortlist [0, cutoffs[0]) and clusters [cutoffs[i],
// cutoffs[i + 1]); the head, Linear(in_features, shortlist + clusters), scores the shortlist and
// one entry per cluster, and cluster i's tail, Sequential(Linear(in_features, in_features /
// div_value^(i + 1)), Linear(that, cluster size)) with no biases, scores within its cluster. A
// class's log-probability is the head's for it, or its cluster's head entry plus its own within
// the cluster; forward evaluates each sample's target only, so a tail runs on the samples whose
// targets fall in its cluster. Parameters are PyTorch's: head.weight, head.bias (head_bias),
// tail.0.0.weight, tail.0.1.weight, ...
//   nn::AdaptiveLogSoftmaxWithLoss asm_(nn::AdaptiveLogSoftmaxWithLossOptions(512, 10000,
//                                                                             {100, 1000}));
//   nn::ASMoutput out = asm_(hidden, target);   // hidden (N, 512), target (N) int64
//   out.loss.backward();                        // -mean of out.output
//   Tensor classes = asm_->predict(hidden);     // (N) int64, the most likely class
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class AdaptiveLogSoftmaxWithLossOptions {
 public:
  // cutoffs: unique, increasing, each in [1, n_classes - 1].
  AdaptiveLogSoftmaxWithLossOptions(std::int64_t in_features, std::int64_t n_classes,
                                    std::vector<std::int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  LG_ARG(std::int64_t, in_features);
  LG_ARG(std::int64_t, n_classes);
  LG_ARG(std::vector<std::int64_t>, cutoffs);
  // Cluster i's hidden size is floor(in_features / div_value^(i + 1)), as LibTorch's.
  LG_ARG(double, div_value) = 4.0;
  LG_ARG(bool, head_bias) = false;
};

// forward's result, as LibTorch's ASMoutput, except that `loss` is a 0-d Tensor (LibTorch's is a
// double, which cannot be differentiated): -mean(output). loss.item<double>() is LibTorch's.
struct ASMoutput {
  ASMoutput(Tensor output, Tensor loss) : output(std::move(output)), loss(std::move(loss)) {}
  Tensor output;  // (N) or 0-d: the log-probability of each sample's target
  Tensor loss;    // 0-d
};

class AdaptiveLogSoftmaxWithLossImpl : public Module {
 public:
  explicit AdaptiveLogSoftmaxWithLossImpl(const AdaptiveLogSoftmaxWithLossOptions& options);
  AdaptiveLogSoftmaxWithLossImpl(std::int64_t in_features, std::int64_t n_classes,
                                 std::vector<std::int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(
            AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  using Module::forward;
  // input (N, in_features) with target (N) int64, or (in_features) with a 0-d target; each target
  // in [0, n_classes) (targets are read on the host, to pick each cluster's samples).
  ASMoutput forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = ASMoutput(const Tensor&, const Tensor&);
  // Every class's log-probability: (N, in_features) -> (N, n_classes).
  Tensor log_prob(const Tensor& input);
  // The most likely class of each sample, (N) int64: the head's argmax where it is a shortlist
  // class, else the argmax of log_prob, as PyTorch's.
  Tensor predict(const Tensor& input);
  // The head's and tails' Linear init.
  void reset_parameters();

  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<std::int64_t> cutoffs;  // the options' cutoffs and n_classes
  std::int64_t shortlist_size = 0;    // cutoffs[0]
  std::int64_t n_clusters = 0;        // cutoffs.size() - 1
  std::int64_t head_size = 0;         // shortlist_size + n_clusters
  Linear head{nullptr};
  ModuleList tail;

 private:
  // log_prob given the head's output for `input`.
  Tensor full_log_prob(const Tensor& input, const Tensor& head_output);
};
LEANGRAD_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace leangrad::nn
