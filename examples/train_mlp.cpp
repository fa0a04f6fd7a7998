// Trains the classic Fashion-MNIST MLP with SGD and prints its test accuracy after each epoch.
// The README's "Training a model" shows this file; ctest runs it (examples/CMakeLists.txt).
//   example_train_mlp [fashion-mnist folder] [epochs]
#include <leangrad/leangrad.h>

#include <cstdint>
#include <cstdio>
#include <string>

using namespace leangrad;

void train(const std::string& root, int epochs) {
  manual_seed(0);  // the same initial weights on every run
  nn::Sequential model(nn::Flatten(),         // (B, 1, 28, 28) -> (B, 784)
                       nn::Linear(784, 128),  // (B, 128)
                       nn::ReLU(),            //
                       nn::Linear(128, 10));  // (B, 10) class logits
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(0.1));

  data::DataLoader train_loader(data::FashionMNIST(root, data::Split::Train),
                                data::DataLoaderOptions().batch_size(64).shuffle(true).seed(0));
  data::DataLoader test_loader(data::FashionMNIST(root, data::Split::Test),
                               data::DataLoaderOptions().batch_size(1000));

  for (int epoch = 1; epoch <= epochs; ++epoch) {
    model->train();
    for (const auto& [images, labels] : train_loader) {  // (B, 1, 28, 28) float32, (B,) int64
      optimizer.zero_grad();
      Tensor loss = cross_entropy(model->forward(images), labels);
      loss.backward();
      optimizer.step();
    }

    model->eval();
    NoGradGuard no_grad;  // evaluation records no graph
    std::int64_t correct = 0;
    for (const auto& [images, labels] : test_loader) {
      Tensor predicted = model->forward(images).argmax(1);  // (B,) int64
      correct += predicted.eq(labels).to(kInt64).sum().item<std::int64_t>();
    }
    const double accuracy = 100.0 * correct / test_loader.dataset().size();
    std::printf("epoch %d: test accuracy %.2f%%\n", epoch, accuracy);
  }
}

int main(int argc, char** argv) {
  try {
    train(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist",
          argc > 2 ? std::stoi(argv[2]) : 1);
    return 0;
  } catch (const std::exception& e) {  // leangrad::Error: a missing file, a bad shape...
    std::fprintf(stderr, "train_mlp: %s\n", e.what());
    return 1;
  }
}
