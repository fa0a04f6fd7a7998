// The models of leangrad-train (tools/train_models.h), written as the PyTorch recipes write them.
#include "train_models.h"

#include <cmath>
#include <numeric>
#include <optional>

#include <leangrad/core/memory_history.h>

namespace leangrad::tools {

namespace {

// Flatten, Linear(784, 128), ReLU, Linear(128, 10): PyTorch's Fashion-MNIST quickstart.
nn::Sequential make_mlp() {
  return nn::Sequential(nn::Flatten(),         // (B, 1, 28, 28) -> (B, 784)
                        nn::Linear(784, 128),  // (B, 128)
                        nn::ReLU(),            //
                        nn::Linear(128, 10));  // (B, 10)
}

// Two 3x3 convolutions, each followed by ReLU and a 2x2 max pool, then a two-layer classifier.
nn::Sequential make_cnn() {
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

// x + GroupNorm(Conv(TanhExp(GroupNorm(Conv(x))))), all at the block's width and resolution.
// --recompute and --memory-budget act on it from outside, through its forward wrapper
// (memory_blocks).
class ResidualBlock : public nn::Module {
 public:
  explicit ResidualBlock(std::int64_t width) : Module("ResidualBlock") {
    const std::int64_t groups = std::gcd(width, std::int64_t{32});
    // No conv bias: the GroupNorm after each conv subtracts it again (its gradient is zero).
    const nn::Conv2dOptions conv = nn::Conv2dOptions(width, width, 3).padding(1).bias(false);
    conv1 = register_module("conv1", nn::Conv2d(conv));
    norm1 = register_module("norm1", nn::GroupNorm(nn::GroupNormOptions(groups, width)));
    act = register_module("act", nn::TanhExp());
    conv2 = register_module("conv2", nn::Conv2d(conv));
    norm2 = register_module("norm2", nn::GroupNorm(nn::GroupNormOptions(groups, width)));
  }

  Tensor forward(const Tensor& x) override {  // (B, width, H, W) -> the same
    return x + norm2(conv2(act(norm1(conv1(x)))));
  }

  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::GroupNorm norm1{nullptr}, norm2{nullptr};
  nn::TanhExp act{nullptr};
};

// Nearest-neighbour upsampling 2x of (B, C, H, W): each pixel repeated in a 2x2 square.
Tensor upsample_nearest2x(const Tensor& x) {
  // Each channel repeated 4 times in a row, (B, 4C, H, W), then pixel shuffled into 2x2 squares.
  const Shape s = x.shape();
  return pixel_shuffle(
      x.unsqueeze(2).expand({s[0], s[1], 4, s[2], s[3]}).reshape({s[0], 4 * s[1], s[2], s[3]}), 2);
}

// Super-resolution 2x of single-channel images (B, 1, H, W) -> (B, 1, 2H, 2W):
//   head     3x3 convolution to 4 * width channels at the input's resolution,
//   shuffle  pixel shuffle to width channels at twice the resolution,
//   blocks   the residual blocks there,
//   tail     3x3 convolution to one channel, added to logit(nearest-neighbour upsampling of the
//            input), then a sigmoid: pixels in (0, 1).
// The global skip makes the blocks learn only the detail the upsampling misses; with the tail
// initialised to zero the untrained model outputs the upsampling itself (up to squeezing the
// pixels into [0.001, 0.999] for the logit), so training starts from the baseline, not from grey.
class SRNet : public nn::Module {
 public:
  explicit SRNet(const ModelOptions& o) : Module("SRNet") {
    LG_CHECK(o.width >= 1 && o.blocks >= 0,
             "--model srnet: --width must be >= 1 and --blocks >= 0, got ", o.width, " and ",
             o.blocks);
    head = register_module("head", nn::Conv2d(nn::Conv2dOptions(1, 4 * o.width, 3).padding(1)));
    shuffle = register_module("shuffle", nn::PixelShuffle(2));
    blocks = register_module("blocks", nn::Sequential());
    for (std::int64_t i = 0; i < o.blocks; ++i)
      blocks->push_back(std::make_shared<ResidualBlock>(o.width));
    tail = register_module("tail", nn::Conv2d(nn::Conv2dOptions(o.width, 1, 3).padding(1)));
    NoGradGuard no_grad;
    tail->weight.zero_();
    tail->bias.zero_();
  }

  Tensor forward(const Tensor& x) override {                  // (B, 1, H, W) -> (B, 1, 2H, 2W)
    const Tensor features = blocks(shuffle(head(x)));         // (B, w, 2H, 2W)
    const Tensor up = upsample_nearest2x(x) * 0.998 + 0.001;  // (B, 1, 2H, 2W)
    return sigmoid(tail(features) + (up.log() - (1.0 - up).log()));
  }

  nn::Conv2d head{nullptr}, tail{nullptr};
  nn::PixelShuffle shuffle{nullptr};
  nn::Sequential blocks{nullptr};
};

// The 3x3 Laplacian of single-channel images (B, 1, H, W), zero-padded to the same size.
Tensor laplacian(const Tensor& images) {
  const Tensor kernel =
      tensor(std::vector<float>{0, 1, 0, 1, -4, 1, 0, 1, 0}, {1, 1, 3, 3}).to(images.device());
  return conv2d(images, kernel, Tensor(), {1, 1}, {1, 1});
}

// Mean over the batch of 10 log10(1 / MSE) per image; an exact image counts as 100 dB.
double sum_psnr(const Tensor& output, const Tensor& target) {
  const Tensor mse = (output - target).pow(2.0).mean({1, 2, 3}).to(kFloat64).to(Device::cpu());
  const double* values = mse.contiguous().data_ptr<double>();
  double sum = 0;
  for (std::int64_t i = 0; i < mse.numel(); ++i)
    sum += values[i] > 1e-10 ? -10.0 * std::log10(values[i]) : 100.0;
  return sum;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"mlp", "cnn", "srnet"};
  return names;
}

bool is_super_resolution(const std::string& model_name) {
  return model_name == "srnet";
}

std::shared_ptr<nn::Module> make_model(const ModelOptions& options) {
  if (options.name == "mlp") return make_mlp();
  if (options.name == "cnn") return make_cnn();
  if (is_super_resolution(options.name)) return std::make_shared<SRNet>(options);
  LG_THROW(Error, "unknown model '", options.name, "' (expected mlp, cnn or srnet)");
}

std::vector<std::shared_ptr<nn::Module>> memory_blocks(const std::string& model_name,
                                                       const nn::Module& model,
                                                       const std::string& option) {
  const auto* srnet = dynamic_cast<const SRNet*>(&model);
  LG_CHECK(is_super_resolution(model_name) && srnet != nullptr, option,
           ": only srnet has residual blocks to recompute or offload (", model_name,
           " keeps its few activations)");
  return srnet->blocks->children();
}

Tensor model_input(const std::string& model_name, const Tensor& images) {
  return is_super_resolution(model_name) ? avg_pool2d(images, {2, 2}) : images;
}

Tensor training_loss(const std::string& model_name, const Tensor& output, const Tensor& images,
                     const Tensor& labels) {
  if (!is_super_resolution(model_name)) return cross_entropy(output, labels);
  return l1_loss(output, images) + kEdgeWeight * l1_loss(laplacian(output), laplacian(images));
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::F32:
      return "f32";
    case Precision::BF16:
      return "bf16";
    case Precision::F16:
      return "f16";
  }
  return "?";
}

Precision parse_precision(const std::string& name) {
  for (Precision p : {Precision::F32, Precision::BF16, Precision::F16})
    if (name == precision_name(p)) return p;
  LG_THROW(Error, "--precision: expected f32, bf16 or f16, got '", name, "'");
}

namespace {

// Enters autocast for a forward in `precision` (nothing for f32) until `guard` dies.
void enter_autocast(std::optional<amp::AutocastGuard>& guard, Precision precision) {
  if (precision != Precision::F32)
    guard.emplace(precision == Precision::BF16 ? kBFloat16 : kFloat16);
}

}  // namespace

MicroBatch accumulate_micro_batch(const std::string& model_name, nn::Module& model,
                                  const Tensor& images, const Tensor& labels, double scale,
                                  bool save_on_cpu, Precision precision, amp::GradScaler* scaler) {
  const Device device = images.device();
  const std::int64_t before = memory::stats(device).allocated;
  memory::mark_history("forward");  // --memory-timeline: where the saved activations begin
  Tensor loss;
  {
    std::optional<offload::SaveOnCpu> offload;
    if (save_on_cpu) offload.emplace(/*pin_memory=*/true, model.parameters());
    std::optional<amp::AutocastGuard> autocast;
    enter_autocast(autocast, precision);
    const Tensor output = model(model_input(model_name, images));
    loss = training_loss(model_name, output, images, labels);  // float32 under autocast too
  }
  MicroBatch result;
  result.forward_bytes = memory::stats(device).allocated - before;
  memory::mark_history("forward_end");
  Tensor objective = scale == 1.0 ? loss : loss * scale;
  if (scaler != nullptr) objective = scaler->scale(objective);
  objective.backward();
  result.loss = loss.item<float>();
  return result;
}

double evaluate(const std::string& model_name, nn::Module& model, data::DataLoader& loader,
                Precision precision) {
  model.eval();
  NoGradGuard no_grad;
  std::optional<amp::AutocastGuard> autocast;
  enter_autocast(autocast, precision);
  double score = 0;  // correct predictions, or the PSNRs summed
  std::int64_t total = 0;
  for (const auto& [images, labels] : loader) {
    const Tensor output = model(model_input(model_name, images));
    if (is_super_resolution(model_name)) {
      score += sum_psnr(output, images);
    } else {
      const Tensor predicted = output.argmax(1);  // (B,) int64
      score += static_cast<double>(predicted.eq(labels).to(kInt64).sum().item<std::int64_t>());
    }
    total += labels.numel();
  }
  model.train();
  return total > 0 ? score / static_cast<double>(total) : 0.0;
}

double nearest_upsampling_psnr(data::DataLoader& loader) {
  double score = 0;
  std::int64_t total = 0;
  for (const auto& [images, labels] : loader) {
    score += sum_psnr(upsample_nearest2x(model_input("srnet", images)), images);
    total += labels.numel();
  }
  return total > 0 ? score / static_cast<double>(total) : 0.0;
}

}  // namespace leangrad::tools
