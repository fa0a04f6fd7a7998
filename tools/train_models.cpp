// The models of leangrad-train (tools/train_models.h), written as the PyTorch recipes write them.
#include "train_models.h"

namespace leangrad::tools {

namespace {

using Layers = std::vector<std::shared_ptr<nn::Module>>;

// Flatten, Linear(784, 128), ReLU, Linear(128, 10): PyTorch's Fashion-MNIST quickstart.
std::shared_ptr<nn::Sequential> make_mlp() {
  return std::make_shared<nn::Sequential>(
      Layers{std::make_shared<nn::Flatten>(),          // (B, 1, 28, 28) -> (B, 784)
             std::make_shared<nn::Linear>(784, 128),   // (B, 128)
             std::make_shared<nn::ReLU>(),             //
             std::make_shared<nn::Linear>(128, 10)});  // (B, 10)
}

// Two 3x3 convolutions, each followed by ReLU and a 2x2 max pool, then a two-layer classifier.
std::shared_ptr<nn::Sequential> make_cnn() {
  return std::make_shared<nn::Sequential>(Layers{
      std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 32, 3).padding(1)),   // (B, 32, 28, 28)
      std::make_shared<nn::ReLU>(),                                           //
      std::make_shared<nn::MaxPool2d>(2),                                     // (B, 32, 14, 14)
      std::make_shared<nn::Conv2d>(nn::Conv2dOptions(32, 64, 3).padding(1)),  // (B, 64, 14, 14)
      std::make_shared<nn::ReLU>(),                                           //
      std::make_shared<nn::MaxPool2d>(2),                                     // (B, 64, 7, 7)
      std::make_shared<nn::Flatten>(),                                        // (B, 3136)
      std::make_shared<nn::Linear>(64 * 7 * 7, 128),                          // (B, 128)
      std::make_shared<nn::ReLU>(),                                           //
      std::make_shared<nn::Linear>(128, 10)});                                // (B, 10)
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"mlp", "cnn", "srnet"};
  return names;
}

std::shared_ptr<nn::Sequential> make_model(const std::string& name) {
  if (name == "mlp") return make_mlp();
  if (name == "cnn") return make_cnn();
  LG_CHECK(name != "srnet", "--model srnet: not implemented yet (only mlp and cnn for now)");
  LG_THROW(Error, "unknown model '", name, "' (expected mlp, cnn or srnet)");
}

float accumulate_micro_batch(nn::Module& model, const Tensor& images, const Tensor& labels,
                             double scale) {
  const Tensor loss = cross_entropy(model.forward(images), labels);
  if (scale == 1.0) {
    loss.backward();
  } else {
    (loss * scale).backward();
  }
  return loss.item<float>();
}

}  // namespace leangrad::tools
