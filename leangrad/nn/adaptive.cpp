// nn::AdaptiveLogSoftmaxWithLoss (nn/adaptive.h), PyTorch's algorithm step for step.
#include <leangrad/nn/adaptive.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

namespace {

const char* const kName = "AdaptiveLogSoftmaxWithLoss";

// A host vector of int64 as a 1-D tensor on `device`.
Tensor indices_on(const std::vector<std::int64_t>& values, Device device) {
  return tensor(values, {static_cast<std::int64_t>(values.size())}).to(device);
}

}  // namespace

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(
    const AdaptiveLogSoftmaxWithLossOptions& options_)
    : Module(kName), options(options_) {
  const std::int64_t n_classes = options.n_classes();
  const std::vector<std::int64_t>& given = options.cutoffs();
  LG_CHECK(options.in_features() >= 0, kName, ": expected non-negative in_features, got ",
           options.in_features());
  LG_CHECK(std::isfinite(options.div_value()) && options.div_value() > 0.0, kName,
           ": expected a positive, finite div_value, got ", options.div_value());
  LG_CHECK(!given.empty(), kName, ": cutoffs should be a sequence of length larger than 0");
  for (std::size_t i = 0; i < given.size(); ++i) {
    LG_CHECK(given[i] >= 1 && given[i] <= n_classes - 1 && (i == 0 || given[i] > given[i - 1]),
             kName,
             ": cutoffs should be a sequence of unique, positive integers sorted in an increasing "
             "order, where each value is between 1 and n_classes-1 (n_classes = ",
             n_classes, "), got ", given[i], " at position ", i);
  }
  cutoffs = given;
  cutoffs.push_back(n_classes);
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<std::int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head = register_module(
      "head", Linear(LinearOptions(options.in_features(), head_size).bias(options.head_bias())));
  tail = register_module("tail", ModuleList());
  for (std::int64_t i = 0; i < n_clusters; ++i) {
    const auto hidden = static_cast<std::int64_t>(
        std::floor(static_cast<double>(options.in_features()) /
                   std::pow(options.div_value(), static_cast<double>(i + 1))));
    const std::int64_t size =
        cutoffs[static_cast<std::size_t>(i + 1)] - cutoffs[static_cast<std::size_t>(i)];
    tail->push_back(Sequential(Linear(LinearOptions(options.in_features(), hidden).bias(false)),
                               Linear(LinearOptions(hidden, size).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head->reset_parameters();
  for (const auto& cluster : *tail) {
    for (const auto& layer : *std::dynamic_pointer_cast<SequentialImpl>(cluster))
      std::dynamic_pointer_cast<LinearImpl>(layer)->reset_parameters();
  }
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  LG_CHECK(input_.defined() && target_.defined(), kName,
           ": expected a defined input and target, got an undefined Tensor()");
  LG_CHECK_DTYPE(target_.dtype() == kInt64, kName, ": expected an int64 target, got ",
                 target_.dtype());
  LG_CHECK(target_.device() == input_.device(), kName,
           ": expected the target on the input's device ", input_.device(), ", got ",
           target_.device());
  if (target_.dim() == 1) {
    LG_CHECK_SHAPE(input_.dim() == 2, kName,
                   ": a 1-D target expects a 2-D input (N, in_features), got shape ",
                   input_.shape());
    LG_CHECK_SHAPE(input_.size(0) == target_.size(0), kName,
                   ": input and target should have the same size in the batch dimension, got "
                   "shapes ",
                   input_.shape(), " and ", target_.shape());
  } else {
    LG_CHECK_SHAPE(target_.dim() == 0, kName,
                   ": expected a 0-D or 1-D target (multi-target is not supported), got shape ",
                   target_.shape());
    LG_CHECK_SHAPE(input_.dim() == 1, kName,
                   ": a 0-D target expects a 1-D input (in_features), got shape ", input_.shape());
  }
  LG_CHECK_SHAPE(input_.size(-1) == options.in_features(), kName, ": expected input of shape (*, ",
                 options.in_features(), "), got ", input_.shape());
  const bool batched = target_.dim() == 1;
  const Tensor input = batched ? input_ : unsqueeze(input_, 0);
  const Tensor target = batched ? target_ : unsqueeze(target_, 0);
  const std::int64_t batch = target.size(0);

  // Each sample's cluster, read on the host: the rows of each cluster, the targets within it, and
  // the head's column for each sample (its class in the shortlist, its cluster's entry beyond).
  std::vector<std::int64_t> head_column(static_cast<std::size_t>(batch));
  std::vector<std::vector<std::int64_t>> rows(static_cast<std::size_t>(n_clusters));
  std::vector<std::vector<std::int64_t>> within(rows.size());
  {
    const Tensor host = target.to(Device::cpu()).contiguous();
    const std::int64_t* t = host.data_ptr<std::int64_t>();
    for (std::int64_t r = 0; r < batch; ++r) {
      LG_CHECK(t[r] >= 0 && t[r] < options.n_classes(), kName, ": target values should be in [0, ",
               options.n_classes() - 1, "], got ", t[r], " at position ", r);
      if (t[r] < shortlist_size) {
        head_column[static_cast<std::size_t>(r)] = t[r];
        continue;
      }
      std::size_t cluster = 0;
      while (t[r] >= cutoffs[cluster + 1])
        ++cluster;
      rows[cluster].push_back(r);
      within[cluster].push_back(t[r] - cutoffs[cluster]);
      head_column[static_cast<std::size_t>(r)] =
          shortlist_size + static_cast<std::int64_t>(cluster);
    }
  }
  const Device device = input.device();
  Tensor output = zeros({batch}, input.options().requires_grad(false));
  for (std::size_t c = 0; c < rows.size(); ++c) {
    if (rows[c].empty()) continue;
    const Tensor at = indices_on(rows[c], device);
    const Tensor cluster_output = tail->ptr<SequentialImpl>(c)->forward(index_select(input, 0, at));
    const Tensor local =
        gather(log_softmax(cluster_output, 1), 1, unsqueeze(indices_on(within[c], device), 1));
    output = index_add(output, 0, at, squeeze(local, 1));
  }
  const Tensor head_log_prob = log_softmax(head->forward(input), 1);
  output = add(output,
               squeeze(gather(head_log_prob, 1, unsqueeze(indices_on(head_column, device), 1)), 1));
  const Tensor loss = mean(neg(output));
  return {batched ? output : squeeze(output, 0), loss};
}

Tensor AdaptiveLogSoftmaxWithLossImpl::full_log_prob(const Tensor& input,
                                                     const Tensor& head_output) {
  const Tensor head_log_prob = log_softmax(head_output, 1);
  std::vector<Tensor> parts{narrow(head_log_prob, 1, 0, shortlist_size)};
  for (std::int64_t c = 0; c < n_clusters; ++c) {
    const Tensor cluster_log_prob =
        log_softmax(tail->ptr<SequentialImpl>(static_cast<std::size_t>(c))->forward(input), 1);
    parts.push_back(add(cluster_log_prob, narrow(head_log_prob, 1, shortlist_size + c, 1)));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) {
  LG_CHECK(input.defined(), kName,
           ": log_prob expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 2 && input.size(1) == options.in_features(), kName,
                 ": log_prob expected input of shape (N, ", options.in_features(), "), got ",
                 input.shape());
  return full_log_prob(input, head->forward(input));
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  LG_CHECK(input.defined(), kName, ": predict expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 2 && input.size(1) == options.in_features(), kName,
                 ": predict expected input of shape (N, ", options.in_features(), "), got ",
                 input.shape());
  const NoGradGuard no_grad;
  const Tensor head_output = head->forward(input);
  const Tensor guess = argmax(head_output, 1);
  const Tensor host = guess.to(Device::cpu()).contiguous();
  std::vector<std::int64_t> classes(host.data_ptr<std::int64_t>(),
                                    host.data_ptr<std::int64_t>() + host.numel());
  std::vector<std::int64_t> beyond;  // rows whose head pick is a cluster
  for (std::size_t r = 0; r < classes.size(); ++r)
    if (classes[r] >= shortlist_size) beyond.push_back(static_cast<std::int64_t>(r));
  if (beyond.empty()) return guess;
  const Tensor at = indices_on(beyond, input.device());
  const Tensor best =
      argmax(full_log_prob(index_select(input, 0, at), index_select(head_output, 0, at)), 1)
          .to(Device::cpu())
          .contiguous();
  for (std::size_t k = 0; k < beyond.size(); ++k)
    classes[static_cast<std::size_t>(beyond[k])] = best.data_ptr<std::int64_t>()[k];
  return indices_on(classes, input.device());
}

}  // namespace leangrad::nn
