// leangrad's optimizers (namespace leangrad::optim), as torch.optim: SGD, Adam, AdamW, RAdam and
// the block-wise 8-bit Adam8bit, clip_grad_norm_ and learning-rate schedulers; and the loss
// scaler of mixed-precision training, amp::GradScaler (optim/grad_scaler.h).
//   optim::AdamW opt(model.parameters(), optim::AdamWOptions(1e-3));
//   for (auto& [x, y] : batches) {
//     opt.zero_grad();
//     cross_entropy(model.forward(x), y).backward();
//     optim::clip_grad_norm_(model.parameters(), 1.0);
//     opt.step();
//   }
// Each optimizer updates all its parameters with one fused multi-tensor kernel per device
// (kernels/ops.h "Optimizers", kernels/backend.h). docs/optimizers.md explains the options, the
// 8-bit quantisation and gradient accumulation.
#pragma once

#include <leangrad/kernels/quantization_math.h>
#include <leangrad/optim/adam.h>
#include <leangrad/optim/adam8bit.h>
#include <leangrad/optim/clip_grad.h>
#include <leangrad/optim/grad_scaler.h>
#include <leangrad/optim/optimizer.h>
#include <leangrad/optim/radam.h>
#include <leangrad/optim/schedulers.h>
#include <leangrad/optim/sgd.h>
