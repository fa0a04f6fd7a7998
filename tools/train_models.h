// The models leangrad-train knows and the task each is trained on.
//   mlp, cnn  classify Fashion-MNIST images (B, 1, 28, 28) into 10 classes: cross-entropy loss,
//             test accuracy.
//   srnet     super-resolution: the image downsampled 2x (B, 1, 14, 14) in, the full image
//             (B, 1, 28, 28) out; L1 loss plus an L1 term on Laplacian-filtered edges, test PSNR.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/leangrad.h>

namespace leangrad::tools {

// Every name --model accepts: "mlp", "cnn", "srnet".
const std::vector<std::string>& model_names();

struct ModelOptions {
  std::string name = "mlp";
  // srnet only: channels of the residual blocks (GroupNorm uses gcd(width, 32) groups) and how
  // many blocks. --width 1024 --blocks 19 has 359M
  // parameters, the size of the super-resolution CNN that motivated leangrad's offload.
  std::int64_t width = 16;
  std::int64_t blocks = 2;
};

bool is_super_resolution(const std::string& model_name);

// The model `options` describe, its parameters initialised from the CPU default generator (call
// manual_seed first for a reproducible run). Throws Error for an unknown name or bad sizes.
std::shared_ptr<nn::Module> make_model(const ModelOptions& options);

// The blocks whose activations --recompute and --memory-budget manage (offload/memory_planner.h:
// a policy per block, installed as the block's forward wrapper): srnet's residual blocks, in
// order. Error naming `option` for the other models, whose few activations are not worth it.
std::vector<std::shared_ptr<nn::Module>> memory_blocks(const std::string& model_name,
                                                       const nn::Module& model,
                                                       const std::string& option);

// What the model is given for a batch of dataset images (B, 1, 28, 28): the images themselves for
// the classifiers, their 2x average-pooled version (B, 1, 14, 14) for srnet.
Tensor model_input(const std::string& model_name, const Tensor& images);

// The training loss of the model's output for a batch: cross_entropy(logits, labels) for the
// classifiers; for srnet l1(output, images) + kEdgeWeight * l1(laplacian(output),
// laplacian(images)), where laplacian is the 3x3 filter [0 1 0; 1 -4 1; 0 1 0].
Tensor training_loss(const std::string& model_name, const Tensor& output, const Tensor& images,
                     const Tensor& labels);
inline constexpr double kEdgeWeight = 0.5;

// --precision: the dtype the forward computes in. F32: no autocast. BF16: autocast to bfloat16
// (amp::AutocastGuard). F16: autocast to float16, the loss scaled by an amp::GradScaler before
// backward. Parameters, gradients and optimizer state stay float32 in all three.
enum class Precision { F32, BF16, F16 };
// "f32", "bf16", "f16" and back (Error naming the value for anything else).
const char* precision_name(Precision precision);
Precision parse_precision(const std::string& name);

// One micro-batch of gradient accumulation: forward, training_loss, then backward of the loss
// times `scale` (1 / the number of micro-batches of the optimizer step), adding into the
// parameters' gradients. With scale 1 this is the plain step's forward and backward (no extra
// multiply). The caller zeroes the gradients before the first micro-batch of a step and calls
// optimizer.step() after the last. save_on_cpu: the forward runs under offload::SaveOnCpu (pinned,
// the parameters kept on the device), so the activations it saves wait for backward in host memory.
// precision: the forward and the loss run under autocast to bf16/f16; with a scaler (f16) the
// backward starts from scaler->scale(loss).
struct MicroBatch {
  float loss = 0;  // unscaled
  // What the forward left allocated on the images' device until backward: the activations saved
  // for backward (with save_on_cpu, only those still on the device) and the loss.
  std::int64_t forward_bytes = 0;
};
MicroBatch accumulate_micro_batch(const std::string& model_name, nn::Module& model,
                                  const Tensor& images, const Tensor& labels, double scale,
                                  bool save_on_cpu = false, Precision precision = Precision::F32,
                                  amp::GradScaler* scaler = nullptr);

// How well the model does on `loader`'s batches (eval mode, no graph): the fraction of images
// classified correctly (argmax of the logits) for the classifiers, the mean PSNR over the images
// in dB (10 log10(1 / MSE), pixels in [0, 1]) for srnet. The forward runs in `precision`.
double evaluate(const std::string& model_name, nn::Module& model, data::DataLoader& loader,
                Precision precision = Precision::F32);

// srnet's yardstick: the mean PSNR of nearest-neighbour upsampling of the same inputs.
double nearest_upsampling_psnr(data::DataLoader& loader);

}  // namespace leangrad::tools
