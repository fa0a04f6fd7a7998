// libtorch-train: leangrad-train's Fashion-MNIST recipes (tools/train_models.cpp,
// tools/leangrad_train.cpp) written with LibTorch, so bench/compare/train_vs_libtorch.sh can time
// both CPU training steps on the same model, batch, optimizer and thread count. It prints the
// per-epoch and "step time:" lines in leangrad-train's format.
//   libtorch-train --model mlp --epochs 1 --threads 2
//   libtorch-train --model cnn --epochs 1 --threads 2 --max-steps 150
//   libtorch-train --model srnet --width 16 --blocks 2 --epochs 1 --threads 2 --max-steps 150
// Exit codes: 0 success, 1 runtime error (missing data...), 2 bad command line.
#include <torch/torch.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kLogEverySteps = 100;  // as leangrad-train
constexpr int64_t kEvalBatchSize = 1000;
constexpr int64_t kBatchSize = 64;
constexpr int64_t kImageSide = 28;

struct Options {
  std::string model = "mlp";
  int64_t width = 16;  // srnet
  int64_t blocks = 2;  // srnet
  int epochs = 10;
  int threads = 0;        // 0: LibTorch's default
  int64_t max_steps = 0;  // 0: no limit
  uint64_t seed = 0;
  std::string data = "/usr/share/datasets/fashion-mnist";
  bool help = false;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* kUsage =
    "usage: libtorch-train [--model mlp|cnn|srnet] [--width N] [--blocks N] [--epochs N]\n"
    "                      [--threads N] [--max-steps N] [--seed N] [--data DIR]\n"
    "  mlp: SGD lr 0.1; cnn and srnet: Adam lr 1e-3; batch 64 (leangrad-train's recipes)\n";

int64_t parse_positive(const std::string& option, const std::string& text) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value <= 0)
    throw UsageError(option + ": expected an integer > 0, got '" + text + "'");
  return value;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "-h" || option == "--help") {
      o.help = true;
      return o;
    }
    if (i + 1 >= argc) throw UsageError(option + ": missing value (or unknown option)");
    const std::string value = argv[++i];
    if (option == "--model") {
      if (value != "mlp" && value != "cnn" && value != "srnet")
        throw UsageError("--model: expected mlp, cnn or srnet, got '" + value + "'");
      o.model = value;
    } else if (option == "--width") {
      o.width = parse_positive(option, value);
    } else if (option == "--blocks") {
      o.blocks = value == "0" ? 0 : parse_positive(option, value);
    } else if (option == "--epochs") {
      o.epochs = static_cast<int>(parse_positive(option, value));
    } else if (option == "--threads") {
      o.threads = static_cast<int>(parse_positive(option, value));
    } else if (option == "--max-steps") {
      o.max_steps = parse_positive(option, value);
    } else if (option == "--seed") {
      o.seed = value == "0" ? 0 : static_cast<uint64_t>(parse_positive(option, value));
    } else if (option == "--data") {
      o.data = value;
    } else {
      throw UsageError("unknown option '" + option + "'");
    }
  }
  return o;
}

// ---- Data ---------------------------------------------------------------------------------------

// The whole of a gzipped file.
std::vector<uint8_t> read_gzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> chunk(1 << 20);
  int read = 0;
  while ((read = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0)
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + read);
  const bool failed = read < 0;
  gzclose(file);
  if (failed) throw std::runtime_error("cannot decompress '" + path + "'");
  return bytes;
}

uint32_t big_endian_u32(const std::vector<uint8_t>& bytes, size_t at) {
  return uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 | uint32_t{bytes[at + 2]} << 8 |
         uint32_t{bytes[at + 3]};
}

// A uint8 IDX file (magic 0x00 0x00 0x08 ndim, then ndim big-endian sizes) as a uint8 tensor.
torch::Tensor read_idx_u8(const std::string& path) {
  const std::vector<uint8_t> bytes = read_gzip(path);
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08)
    throw std::runtime_error("'" + path + "' is not a uint8 IDX file");
  const size_t ndim = bytes[3];
  const size_t header_bytes = 4 + 4 * ndim;
  std::vector<int64_t> sizes;
  int64_t numel = 1;
  for (size_t d = 0; d < ndim && 4 + 4 * d + 4 <= bytes.size(); ++d) {
    sizes.push_back(big_endian_u32(bytes, 4 + 4 * d));
    numel *= sizes.back();
  }
  if (sizes.size() != ndim || bytes.size() != header_bytes + static_cast<size_t>(numel))
    throw std::runtime_error("'" + path + "': size does not match its IDX header");
  return torch::from_blob(const_cast<uint8_t*>(bytes.data()) + header_bytes, sizes, torch::kUInt8)
      .clone();
}

// Fashion-MNIST as leangrad's data::FashionMNIST gives it: images (N, 1, 28, 28) float32 in [0, 1]
// (pixel / 255, no normalisation), labels (N,) int64.
struct Split {
  torch::Tensor images;
  torch::Tensor labels;
};

Split load_split(const std::string& root, const std::string& prefix) {
  Split split;
  split.images = read_idx_u8(root + "/" + prefix + "-images-idx3-ubyte.gz")
                     .to(torch::kFloat32)
                     .div_(255.0f)
                     .view({-1, 1, kImageSide, kImageSide});
  split.labels = read_idx_u8(root + "/" + prefix + "-labels-idx1-ubyte.gz").to(torch::kInt64);
  if (split.images.size(0) != split.labels.size(0))
    throw std::runtime_error(root + ": " + prefix + " images and labels differ in count");
  return split;
}

// ---- Models (tools/train_models.cpp) ------------------------------------------------------------

namespace nn = torch::nn;

// srnet's residual block: conv, GroupNorm, TanhExp, conv, GroupNorm, plus the input. LibTorch has
// no TanhExp: x tanh(e^x) is written as a PyTorch user writes it, three ops under autograd.
struct ResidualBlockImpl : nn::Module {
  explicit ResidualBlockImpl(int64_t width) {
    const int64_t groups = std::gcd(width, int64_t{32});
    const auto conv = nn::Conv2dOptions(width, width, 3).padding(1).bias(false);
    conv1 = register_module("conv1", nn::Conv2d(conv));
    norm1 = register_module("norm1", nn::GroupNorm(nn::GroupNormOptions(groups, width)));
    conv2 = register_module("conv2", nn::Conv2d(conv));
    norm2 = register_module("norm2", nn::GroupNorm(nn::GroupNormOptions(groups, width)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor h = norm1(conv1(x));
    return x + norm2(conv2(h * torch::tanh(torch::exp(h))));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::GroupNorm norm1{nullptr}, norm2{nullptr};
};
TORCH_MODULE(ResidualBlock);

// Super-resolution 2x, (B, 1, 14, 14) -> (B, 1, 28, 28): head conv to 4 * width channels, pixel
// shuffle, the residual blocks, tail conv (zero at the start) added to logit(nearest-neighbour
// upsampling), sigmoid.
struct SRNetImpl : nn::Module {
  SRNetImpl(int64_t width, int64_t blocks) {
    head = register_module("head", nn::Conv2d(nn::Conv2dOptions(1, 4 * width, 3).padding(1)));
    shuffle = register_module("shuffle", nn::PixelShuffle(2));
    body = register_module("blocks", nn::Sequential());
    for (int64_t i = 0; i < blocks; ++i)
      body->push_back(ResidualBlock(width));
    tail = register_module("tail", nn::Conv2d(nn::Conv2dOptions(width, 1, 3).padding(1)));
    torch::NoGradGuard no_grad;
    tail->weight.zero_();
    tail->bias.zero_();
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor features = body->forward(shuffle(head(x)));
    const torch::Tensor up =
        nn::functional::interpolate(x, nn::functional::InterpolateFuncOptions()
                                           .scale_factor(std::vector<double>{2.0, 2.0})
                                           .mode(torch::kNearest)) *
            0.998 +
        0.001;
    return torch::sigmoid(tail(features) + (up.log() - (1.0 - up).log()));
  }
  nn::Conv2d head{nullptr}, tail{nullptr};
  nn::PixelShuffle shuffle{nullptr};
  nn::Sequential body{nullptr};
};
TORCH_MODULE(SRNet);

// The 3x3 Laplacian of (B, 1, H, W), zero-padded to the same size.
torch::Tensor laplacian(const torch::Tensor& images) {
  const torch::Tensor kernel =
      torch::tensor({0.0f, 1.0f, 0.0f, 1.0f, -4.0f, 1.0f, 0.0f, 1.0f, 0.0f}).view({1, 1, 3, 3});
  return torch::conv2d(images, kernel, {}, 1, 1);
}

constexpr double kEdgeWeight = 0.5;  // tools/train_models.h

// The models behind one interface: the classifiers as a Sequential, srnet as itself.
struct Model {
  nn::Sequential classifier{nullptr};
  SRNet srnet{nullptr};

  bool super_resolution() const { return !srnet.is_empty(); }
  std::vector<torch::Tensor> parameters() const {
    return super_resolution() ? srnet->parameters() : classifier->parameters();
  }
  void train(bool on) {
    if (super_resolution()) {
      srnet->train(on);
    } else {
      classifier->train(on);
    }
  }
  // leangrad-train's model_input: srnet sees the images average-pooled 2x.
  torch::Tensor forward(const torch::Tensor& images) {
    return super_resolution() ? srnet->forward(torch::avg_pool2d(images, 2))
                              : classifier->forward(images);
  }
  // leangrad-train's training_loss.
  torch::Tensor loss(const torch::Tensor& images, const torch::Tensor& labels) {
    const torch::Tensor output = forward(images);
    if (!super_resolution()) return nn::functional::cross_entropy(output, labels);
    return torch::l1_loss(output, images) +
           kEdgeWeight * torch::l1_loss(laplacian(output), laplacian(images));
  }
};

nn::Sequential make_classifier(const std::string& name) {
  if (name == "mlp") {
    return nn::Sequential(nn::Flatten(),         // (B, 1, 28, 28) -> (B, 784)
                          nn::Linear(784, 128),  // (B, 128)
                          nn::ReLU(),            //
                          nn::Linear(128, 10));  // (B, 10)
  }
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),   // (B, 32, 28, 28)
                        nn::ReLU(),                                           //
                        nn::MaxPool2d(2),                                     // (B, 32, 14, 14)
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),  // (B, 64, 14, 14)
                        nn::ReLU(),                                           //
                        nn::MaxPool2d(2),                                     // (B, 64, 7, 7)
                        nn::Flatten(),                                        // (B, 3136)
                        nn::Linear(64 * 7 * 7, 128),                          // (B, 128)
                        nn::ReLU(),                                           //
                        nn::Linear(128, 10));                                 // (B, 10)
}

Model make_model(const Options& o) {
  Model model;
  if (o.model == "srnet") {
    model.srnet = SRNet(o.width, o.blocks);
  } else {
    model.classifier = make_classifier(o.model);
  }
  return model;
}

// The classifiers' test accuracy (argmax of the logits), srnet's mean test PSNR in dB (an exact
// image counts as 100 dB), in eval mode without a graph; srnet in training-sized batches.
double evaluate(Model& model, const Split& test) {
  model.train(false);
  torch::NoGradGuard no_grad;
  double score = 0;
  const int64_t n = test.images.size(0);
  const int64_t batch = model.super_resolution() ? kBatchSize : kEvalBatchSize;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t end = std::min(start + batch, n);
    const torch::Tensor images = test.images.slice(0, start, end);
    const torch::Tensor output = model.forward(images);
    if (model.super_resolution()) {
      const torch::Tensor mse = (output - images).pow(2).mean({1, 2, 3}).to(torch::kFloat64);
      const torch::Tensor psnr =
          torch::where(mse > 1e-10, -10.0 * torch::log10(mse), torch::full_like(mse, 100.0));
      score += psnr.sum().item<double>();
    } else {
      score += static_cast<double>(
          output.argmax(1).eq(test.labels.slice(0, start, end)).sum().item<int64_t>());
    }
  }
  model.train(true);
  return n > 0 ? score / static_cast<double>(n) : 0.0;
}

// Nearest-rank percentile (0 < q <= 1) of unsorted values, as leangrad-train computes it.
double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double mean(const std::vector<double>& values, size_t from = 0) {
  if (values.size() <= from) return 0.0;
  double sum = 0;
  for (size_t i = from; i < values.size(); ++i)
    sum += values[i];
  return sum / static_cast<double>(values.size() - from);
}

int train(const Options& o) {
  // Inter-op threads first: LibTorch refuses to change them once any parallel work has run.
  at::set_num_interop_threads(1);
  if (o.threads > 0) at::set_num_threads(o.threads);
  torch::manual_seed(o.seed);

  Model model = make_model(o);
  const bool sgd = o.model == "mlp";
  const double lr = sgd ? 0.1 : 1e-3;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (sgd) {
    optimizer =
        std::make_unique<torch::optim::SGD>(model.parameters(), torch::optim::SGDOptions(lr));
  } else {
    optimizer =
        std::make_unique<torch::optim::Adam>(model.parameters(), torch::optim::AdamOptions(lr));
  }
  int64_t num_parameters = 0;
  for (const torch::Tensor& p : model.parameters())
    num_parameters += p.numel();

  const Split train_set = load_split(o.data, "train");
  const Split test_set = load_split(o.data, "t10k");
  const int64_t n = train_set.images.size(0);
  const int64_t steps_per_epoch = (n + kBatchSize - 1) / kBatchSize;  // drop_last false

  const std::string shape = model.super_resolution() ? " (width " + std::to_string(o.width) + ", " +
                                                           std::to_string(o.blocks) + " blocks)"
                                                     : "";
  std::cout << "libtorch-train: model " << o.model << shape << " (" << num_parameters
            << " parameters), " << (sgd ? "sgd" : "adam") << " lr " << lr << ", batch "
            << kBatchSize << ", " << o.epochs << " epochs on cpu (" << at::get_num_threads()
            << " CPU threads, " << at::get_num_interop_threads() << " inter-op; LibTorch "
            << TORCH_VERSION << ")\n"
            << "data: " << n << " training / " << test_set.images.size(0) << " test images from "
            << o.data << "\n"
            << std::flush;

  // The shuffle has its own generator, seeded once: each epoch draws the next permutation.
  at::Generator shuffle_generator = at::detail::createCPUGenerator(o.seed);
  std::vector<double> step_ms_all;
  int64_t global_step = 0;
  bool stopped = false;  // by --max-steps
  for (int epoch = 1; epoch <= o.epochs && !stopped; ++epoch) {
    model.train(true);
    std::vector<double> step_ms;
    double loss_sum = 0, window_loss_sum = 0;
    int64_t step = 0, window_steps = 0;
    const Clock::time_point epoch_start = Clock::now();
    Clock::time_point last = epoch_start;
    const torch::Tensor order = torch::randperm(n, shuffle_generator, torch::kInt64);
    for (int64_t start = 0; start < n; start += kBatchSize) {
      // The batch, gathered from the in-memory dataset: (B, 1, 28, 28), (B,)
      const torch::Tensor indices = order.slice(0, start, std::min(start + kBatchSize, n));
      const torch::Tensor images = train_set.images.index_select(0, indices);
      const torch::Tensor labels = train_set.labels.index_select(0, indices);

      optimizer->zero_grad();
      const torch::Tensor loss = model.loss(images, labels);
      loss.backward();
      const double step_loss = loss.item<float>();
      optimizer->step();
      const Clock::time_point now = Clock::now();
      step_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
      last = now;
      ++step;
      ++global_step;
      ++window_steps;
      loss_sum += step_loss;
      window_loss_sum += step_loss;
      if (step % kLogEverySteps == 0 || step == steps_per_epoch) {
        char line[128];
        std::snprintf(line, sizeof(line), "epoch %d step %lld/%lld loss %.4f %.1f ms/step", epoch,
                      static_cast<long long>(step), static_cast<long long>(steps_per_epoch),
                      window_loss_sum / static_cast<double>(window_steps),
                      mean(step_ms, step_ms.size() - static_cast<size_t>(window_steps)));
        std::cout << line << std::endl;
        window_loss_sum = 0;
        window_steps = 0;
      }
      stopped = o.max_steps > 0 && global_step >= o.max_steps;
      if (stopped) break;
    }
    const double train_seconds = std::chrono::duration<double>(Clock::now() - epoch_start).count();
    step_ms_all.insert(step_ms_all.end(), step_ms.begin(), step_ms.end());
    if (stopped) {
      std::cout << "stopped by --max-steps " << o.max_steps << " at epoch " << epoch << " step "
                << step << "/" << steps_per_epoch << std::endl;
      break;
    }
    const double score = evaluate(model, test_set);
    char score_text[64];
    if (model.super_resolution()) {
      std::snprintf(score_text, sizeof(score_text), "test PSNR %.2f dB", score);
    } else {
      std::snprintf(score_text, sizeof(score_text), "test accuracy %.2f%%", 100.0 * score);
    }
    char line[192];
    std::snprintf(line, sizeof(line), "epoch %d/%d: train loss %.4f, %s, %.2f ms/step, %.1f s",
                  epoch, o.epochs, loss_sum / static_cast<double>(step), score_text, mean(step_ms),
                  train_seconds);
    std::cout << line << std::endl;
  }

  char line[128];
  std::snprintf(line, sizeof(line), "step time: median %.2f ms, p90 %.2f ms over %zu steps",
                percentile(step_ms_all, 0.5), percentile(step_ms_all, 0.9), step_ms_all.size());
  std::cout << line << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "libtorch-train: error: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if (options.help) {
    std::cout << kUsage;
    return 0;
  }
  try {
    return train(options);
  } catch (const c10::Error& e) {
    std::cerr << "libtorch-train: error: " << e.what_without_backtrace() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "libtorch-train: error: " << e.what() << "\n";
  }
  return 1;
}
