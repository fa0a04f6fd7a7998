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
// Where things are: core/ (Tensor, DType, Device, memory, CUDA streams, the profiler and the
// allocator's history: docs/profiling.md), kernels/ops.h (every kernel), autograd/functions.h
// (the functions above), offload/ (saved activations and parameters on the host, the memory
// planner). docs/architecture.md walks through it.
#pragma once

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/attention.h>
#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/einsum.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/grid_sample.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/orthogonal_polynomials.h>
#include <leangrad/autograd/pointwise_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/autograd/special.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/autograd/type_promotion.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/host_sync.h>
#include <leangrad/core/memory.h>
#include <leangrad/core/memory_history.h>
#include <leangrad/core/parallel.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/core/tensor.h>
#include <leangrad/core/tensor_options.h>
#include <leangrad/data/data.h>
#include <leangrad/distributed/ddp.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/distributed/memory_plan.h>
#include <leangrad/distributed/zero_redundancy_optimizer.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/offload/memory_planner.h>
#include <leangrad/offload/parameter_offload.h>
#include <leangrad/offload/save_on_cpu.h>
#include <leangrad/optim/grad_scaler.h>
#include <leangrad/optim/optim.h>
