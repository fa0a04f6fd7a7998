// A LibTorch program, ported: an MLP fits y = tanh(2 x0) x1 + x1^2 / 2 - exp(-x0^2) (plus noise)
// with Adam, is saved, and loaded into a fresh model that must give bitwise the same outputs. Apart
// from the include, the namespace alias and LEANGRAD_MODULE, it is LibTorch's C++ frontend as
// written for LibTorch (docs/api-notes.md, "Porting a LibTorch program", lists every line that
// differs). ctest runs it (examples/CMakeLists.txt); it exits 1 when a check fails.
//   example_mlp_regression [steps]
//   example_mlp_regression --reference tests/data/example_mlp_regression
//       its model's loss and gradients on one batch, in float64 from PyTorch's initial parameters,
//       against PyTorch's (examples/pytorch_reference.h: not part of the LibTorch program)
#include <leangrad/leangrad.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "pytorch_reference.h"

namespace torch = leangrad;  // LibTorch's names, leangrad's implementation

struct NetImpl : torch::nn::Module {
  NetImpl(int64_t in, int64_t hidden, int64_t out) {
    fc1 = register_module("fc1", torch::nn::Linear(in, hidden));
    fc2 = register_module("fc2", torch::nn::Linear(hidden, hidden));
    fc3 = register_module("fc3", torch::nn::Linear(hidden, out));
  }

  torch::Tensor forward(torch::Tensor x) {  // (B, in) -> (B, out)
    x = torch::tanh(fc1(x));
    x = torch::tanh(fc2(x));
    return fc3(x);
  }

  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
LEANGRAD_MODULE(Net);  // LibTorch: TORCH_MODULE(Net);

constexpr double kNoiseStd = 0.05;

// (n, 2) inputs uniform in [-2, 2]^2 and their (n, 1) noisy targets.
std::pair<torch::Tensor, torch::Tensor> make_data(int64_t n) {
  torch::Tensor x = torch::rand({n, 2}) * 4.0 - 2.0;
  torch::Tensor x0 = x.select(1, 0), x1 = x.select(1, 1);
  torch::Tensor y = torch::tanh(x0 * 2.0) * x1 + x1.pow(2) * 0.5 - torch::exp(-x0.pow(2));
  y = y + torch::randn({n}) * kNoiseStd;
  return {x, y.unsqueeze(1)};
}

bool check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok      " : "FAILED  ") << what << std::endl;
  return ok;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--reference") {
    Net reference_net(2, 32, 1);
    const bool ok = pytorch_reference::matches_pytorch(
        reference_net, argv[2], [](const torch::Tensor& output, const torch::Tensor& y) {
          return torch::mse_loss(output, y);
        });
    return ok ? 0 : 1;
  }
  const int steps = argc > 1 ? std::stoi(argv[1]) : 400;
  torch::manual_seed(0);
  auto [x_train, y_train] = make_data(1024);
  auto [x_test, y_test] = make_data(512);

  Net net(2, 32, 1);
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-2));

  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(net(x_train), y_train);
    loss.backward();
    optimizer.step();
    if (step == 0) first_loss = loss.item<double>();
    last_loss = loss.item<double>();
    if (step % 100 == 0)
      std::cout << "step " << step << " loss " << loss.item<float>() << std::endl;
  }

  // Predicting the mean scores the targets' variance; the best model scores the noise's,
  // kNoiseStd^2.
  net->eval();
  torch::NoGradGuard no_grad;
  const double variance = y_test.var().item<double>();
  const double test_mse = torch::mse_loss(net(x_test), y_test).item<double>();
  std::cout << "train loss " << first_loss << " -> " << last_loss << ", test mse " << test_mse
            << " (target variance " << variance << ", noise " << kNoiseStd * kNoiseStd << ")"
            << std::endl;
  bool ok = check(last_loss < first_loss / 10, "the training loss fell tenfold");
  ok &= check(test_mse < 2 * kNoiseStd * kNoiseStd, "test mse within twice the noise's variance");

  // Save, then load into a model with other initial weights: the outputs must be the same bits.
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("leangrad_mlp_regression_" + std::to_string(::getpid()) + ".safetensors"))
          .string();
  torch::save(net, path);
  torch::manual_seed(1);
  Net loaded(2, 32, 1);
  loaded->eval();
  ok &= check(!torch::equal(loaded(x_test), net(x_test)), "a fresh model differs before loading");
  torch::load(loaded, path);
  std::filesystem::remove(path);
  ok &= check(torch::equal(loaded(x_test), net(x_test)),
              "the loaded model's outputs are bitwise equal");
  return ok ? 0 : 1;
}
