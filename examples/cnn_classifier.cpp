// A LibTorch program, ported: a small CNN (Conv2d, GroupNorm, MaxPool2d, Dropout, Linear) learns
// which quadrant of a noisy 16x16 image holds a bright square, with SGD + momentum and a StepLR
// schedule, train() for training and eval() for testing. Apart from the include, the namespace
// alias and LEANGRAD_MODULE, it is LibTorch's C++ frontend as written for LibTorch
// (docs/api-notes.md, "Porting a LibTorch program"). ctest runs it
// (examples/CMakeLists.txt); it exits 1 when a check fails.
//   example_cnn_classifier [epochs]
//   example_cnn_classifier --reference tests/data/example_cnn_classifier
//       its model's loss and gradients on one batch, in float64 from PyTorch's initial parameters,
//       against PyTorch's (examples/pytorch_reference.h: not part of the LibTorch program)
#include <leangrad/leangrad.h>

#include <cmath>
#include <iostream>
#include <string>

#include "pytorch_reference.h"

namespace torch = leangrad;  // LibTorch's names, leangrad's implementation

// The label is the quadrant: 0 top left, 1 top right, 2 bottom left, 3 bottom right.
constexpr int64_t kClasses = 4;
constexpr int64_t kSize = 16;       // images are (1, kSize, kSize)
constexpr double kNoiseStd = 0.75;  // per pixel; the square adds 1

struct ConvNetImpl : torch::nn::Module {
  ConvNetImpl()
      : conv1(torch::nn::Conv2dOptions(1, 8, 3).padding(1)),
        norm1(torch::nn::GroupNormOptions(2, 8)),
        conv2(torch::nn::Conv2dOptions(8, 16, 3).padding(1)),
        norm2(torch::nn::GroupNormOptions(4, 16)),
        pool(torch::nn::MaxPool2dOptions(2).stride(2)),
        dropout(0.25),
        fc(16 * 4 * 4, kClasses) {
    register_module("conv1", conv1);
    register_module("norm1", norm1);
    register_module("conv2", conv2);
    register_module("norm2", norm2);
    register_module("pool", pool);
    register_module("dropout", dropout);
    register_module("fc", fc);
  }

  torch::Tensor forward(torch::Tensor x) {   // (B, 1, 16, 16)
    x = pool(torch::relu(norm1(conv1(x))));  // (B, 8, 8, 8)
    x = pool(torch::relu(norm2(conv2(x))));  // (B, 16, 4, 4)
    return fc(dropout(x.flatten(1)));        // (B, kClasses)
  }

  torch::nn::Conv2d conv1;
  torch::nn::GroupNorm norm1;
  torch::nn::Conv2d conv2;
  torch::nn::GroupNorm norm2;
  torch::nn::MaxPool2d pool;
  torch::nn::Dropout dropout;
  torch::nn::Linear fc;
};
LEANGRAD_MODULE(ConvNet);  // LibTorch: TORCH_MODULE(ConvNet);

// n noisy images, each with a 4x4 square of ones at a random place inside one quadrant, and the
// quadrant as its label (int64).
std::pair<torch::Tensor, torch::Tensor> make_data(int64_t n) {
  torch::Tensor images = torch::randn({n, 1, kSize, kSize}) * kNoiseStd;
  torch::Tensor labels = torch::randint(0, kClasses, {n}, torch::kLong);
  torch::Tensor offsets = torch::randint(0, kSize / 2 - 4 + 1, {n, 2}, torch::kLong);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = labels[i].item<int64_t>();
    const int64_t top = (label / 2) * (kSize / 2) + offsets[i][0].item<int64_t>();
    const int64_t left = (label % 2) * (kSize / 2) + offsets[i][1].item<int64_t>();
    images[i][0].slice(0, top, top + 4).slice(1, left, left + 4) += 1.0;
  }
  return {images, labels};
}

bool check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok      " : "FAILED  ") << what << std::endl;
  return ok;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--reference") {
    ConvNet reference_model;
    reference_model->eval();  // dropout off: PyTorch and leangrad compute one function
    const bool ok = pytorch_reference::matches_pytorch(
        reference_model, argv[2], [](const torch::Tensor& output, const torch::Tensor& y) {
          return torch::nn::functional::cross_entropy(output, y);
        });
    return ok ? 0 : 1;
  }
  const int epochs = argc > 1 ? std::stoi(argv[1]) : 6;
  const int64_t batch_size = 32;
  torch::manual_seed(0);
  auto [train_images, train_labels] = make_data(1024);
  auto [test_images, test_labels] = make_data(512);

  ConvNet model;
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.02).momentum(0.9));
  torch::optim::StepLR scheduler(optimizer, /*step_size=*/2, /*gamma=*/0.5);

  const double chance_loss = std::log(static_cast<double>(kClasses));
  double epoch_loss = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    model->train();
    double loss_sum = 0;
    int64_t batches = 0;
    for (int64_t start = 0; start < train_images.size(0); start += batch_size) {
      torch::Tensor images = train_images.slice(0, start, start + batch_size);
      torch::Tensor labels = train_labels.slice(0, start, start + batch_size);
      optimizer.zero_grad();
      torch::Tensor loss = torch::nn::functional::cross_entropy(model(images), labels);
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>();
      ++batches;
    }
    scheduler.step();
    epoch_loss = loss_sum / batches;
    std::cout << "epoch " << epoch << " loss " << epoch_loss << std::endl;
  }

  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor logits = model(test_images);
  const double accuracy =
      test_labels.eq(logits.argmax(1)).to(torch::kFloat32).mean().item<double>() * 100;
  std::cout << "test accuracy " << accuracy << "%" << std::endl;
  bool ok = check(epoch_loss < 0.2 * chance_loss, "the training loss fell below a fifth of ln(4)");
  ok &= check(accuracy >= 95, "test accuracy at least 95% (chance: 25%)");
  // eval(): dropout is off, so the model is a function; train(): it is on.
  ok &= check(torch::equal(model(test_images), logits), "eval() outputs repeat bitwise");
  model->train();
  ok &= check(!torch::equal(model(test_images), model(test_images)),
              "train() outputs vary (dropout)");
  // StepLR halved the rate every 2 epochs.
  const double lr = optimizer.param_groups()[0].options().get_lr();
  ok &= check(std::abs(lr - 0.02 * std::pow(0.5, epochs / 2)) < 1e-12, "StepLR set the rate");
  return ok ? 0 : 1;
}
