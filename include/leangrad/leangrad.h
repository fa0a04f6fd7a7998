// leangrad — a small tensor and autograd engine in C++20 and hand-written CUDA.
//
// This umbrella header is all a program needs. A first program (the build extracts this example
// and compiles and runs it as a test, so it cannot rot):
//
// BEGIN EXAMPLE
// #include <leangrad/leangrad.h>
//
// #include <iostream>
//
// int main() {
//   using namespace leangrad;
//   manual_seed(0);
//   Tensor x = randn({64, 784});                    // (B, in_features), float32 on the CPU
//   Tensor w = randn({784, 10}) * 0.01;             // (in_features, out_features)
//   Tensor b = zeros({10});
//   Tensor logits = matmul(x, w) + b;               // (B, out_features), b broadcast
//   Tensor best = logits.argmax(1);                 // (B,) int64
//   std::cout << "logits " << logits.shape() << ", first rows' classes "
//             << best.slice(0, 0, 4) << "\n";
//   std::cout << "mean of max logit: " << logits.amax({1}).mean().item<float>() << "\n";
//   if (cuda::is_available()) {
//     Tensor y = logits.to(kCUDA).relu().sum();     // same ops on the GPU
//     std::cout << "sum of relu on cuda: " << y.item<float>() << "\n";
//   }
//   std::cout << memory::summary(kCPU);             // the caching allocator's pools
//   return 0;
// }
// END EXAMPLE
//
// Where things are: core/ (Tensor, DType, Device, memory, CUDA streams), kernels/ops.h (every
// kernel), autograd/functions.h (the functions above), offload/ (saved activations and
// parameters on the host, the memory planner). docs/architecture.md walks through it.
#pragma once

#include "autograd/autocast.h"
#include "autograd/checkpoint.h"
#include "autograd/custom_function.h"
#include "autograd/engine.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/saved_tensor.h"
#include "core/creation.h"
#include "core/cuda.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/generator.h"
#include "core/host_sync.h"
#include "core/memory.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "core/tensor_options.h"
#include "data/data.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "kernels/creation.h"
#include "nn/nn.h"
#include "offload/memory_planner.h"
#include "offload/parameter_offload.h"
#include "offload/save_on_cpu.h"
#include "optim/grad_scaler.h"
#include "optim/optim.h"
