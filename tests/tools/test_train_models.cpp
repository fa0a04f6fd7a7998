// Gradient accumulation as leangrad-train does it (tools::accumulate_micro_batch): an optimizer
// step over two micro-batches of 32, each loss scaled by 1/2, updates the parameters as one step
// over the batch of 64 does, up to float rounding (the sums are grouped differently).
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include "train_models.h"

namespace {

using namespace leangrad;

// The parameters of a fresh `model_name` (seed 3) after one optimizer step over `micro_batches`
// equal slices of (images, labels).
std::vector<Tensor> one_step(const std::string& model_name, const std::string& optimizer_name,
                             const Tensor& images, const Tensor& labels,
                             std::int64_t micro_batches) {
  manual_seed(3);
  std::shared_ptr<nn::Sequential> model = tools::make_model(model_name);
  std::unique_ptr<optim::Optimizer> optimizer;
  if (optimizer_name == "sgd") {
    optimizer = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(0.1));
  } else {
    optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(1e-3));
  }
  const std::int64_t size = images.size(0) / micro_batches;
  optimizer->zero_grad();
  for (std::int64_t i = 0; i < micro_batches; ++i) {
    tools::accumulate_micro_batch(*model, images.slice(0, i * size, (i + 1) * size),
                                  labels.slice(0, i * size, (i + 1) * size),
                                  1.0 / static_cast<double>(micro_batches));
  }
  optimizer->step();
  std::vector<Tensor> params;
  for (const Tensor& p : model->parameters())
    params.push_back(p.clone());
  return params;
}

void expect_same_update(const std::string& model_name, const std::string& optimizer_name) {
  manual_seed(11);
  const Tensor images = randn({64, 1, 28, 28});
  std::vector<std::int64_t> classes(64);
  for (std::size_t i = 0; i < classes.size(); ++i)
    classes[i] = static_cast<std::int64_t>((i * 7) % 10);
  const Tensor labels = tensor(classes);
  manual_seed(3);
  std::vector<Tensor> initial;
  for (const Tensor& p : tools::make_model(model_name)->parameters())
    initial.push_back(p.clone());
  const std::vector<Tensor> whole = one_step(model_name, optimizer_name, images, labels, 1);
  const std::vector<Tensor> accumulated = one_step(model_name, optimizer_name, images, labels, 2);
  ASSERT_EQ(whole.size(), accumulated.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const float update = (whole[i] - initial[i]).abs().max().item<float>();
    const float difference = (whole[i] - accumulated[i]).abs().max().item<float>();
    EXPECT_GT(update, 0.0f) << "parameter " << i << " did not move";
    // The update itself is ~1e-3 or more; rounding of the regrouped sums is ~1e-7 relative.
    EXPECT_LE(difference, 1e-6f + 1e-4f * update)
        << model_name << " " << optimizer_name << " parameter " << i << ": update " << update;
  }
}

TEST(TrainAccumulate, TwoMicroBatchesOf32EqualOneBatchOf64Sgd) {
  expect_same_update("mlp", "sgd");
}

TEST(TrainAccumulate, TwoMicroBatchesOf32EqualOneBatchOf64Adam) {
  expect_same_update("mlp", "adam");
}

}  // namespace
