// The models leangrad-train knows, built from nn::Sequential. Each takes Fashion-MNIST images
// (B, 1, 28, 28) and returns class logits (B, 10).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <leangrad/leangrad.h>

namespace leangrad::tools {

// Every name --model accepts, implemented or not: "mlp", "cnn", "srnet".
const std::vector<std::string>& model_names();

// The model called `name`, its parameters initialised from the CPU default generator (call
// manual_seed first for a reproducible run). Throws Error for "srnet" (not implemented yet) and
// for an unknown name.
std::shared_ptr<nn::Sequential> make_model(const std::string& name);

// One micro-batch of gradient accumulation: forward, cross_entropy(logits, labels), then backward
// of the loss times `scale` (1 / the number of micro-batches of the optimizer step), adding into
// the parameters' gradients. Returns the unscaled loss. With scale 1 this is the plain step's
// forward and backward (no extra multiply). The caller zeroes the gradients before the first
// micro-batch of a step and calls optimizer.step() after the last.
float accumulate_micro_batch(nn::Module& model, const Tensor& images, const Tensor& labels,
                             double scale);

}  // namespace leangrad::tools
