// offload::SaveOnCpu (offload/save_on_cpu.cpp). On the CPU: tensors pass through untouched (the
// gradients are bitwise those of a plain backward), the guard nests with other hook guards, and
// in-place changes after saving are still reported. On CUDA (SKIPPED without a GPU): bitwise-equal
// gradients, the device peak drops by the activations, and the pinned pool is reused step after
// step.
#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/offload/save_on_cpu.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// A stack of Linear (matmul + bias add) + tanh layers of one width. Per layer, matmul saves its
// input and weight, the add saves nothing, tanh saves its output (the next layer's input, so
// plain autograd keeps one (B, width) activation per layer alive until backward).
struct Mlp {
  std::vector<Tensor> weights;  // (width, width) each
  std::vector<Tensor> biases;   // (width,) each

  Mlp(int layers, std::int64_t width, Device device) {
    manual_seed(7);
    const double scale = 1.0 / std::sqrt(static_cast<double>(width));
    for (int i = 0; i < layers; ++i) {
      weights.push_back((randn({width, width}) * scale).to(device).requires_grad_());
      biases.push_back((randn({width}) * 0.1).to(device).requires_grad_());
    }
  }

  Tensor forward(Tensor x) const {  // (B, width) -> (B, width)
    for (std::size_t i = 0; i < weights.size(); ++i)
      x = tanh(matmul(x, weights[i]) + biases[i]);
    return x;
  }

  std::vector<Tensor> parameters() const {
    std::vector<Tensor> params = weights;
    params.insert(params.end(), biases.begin(), biases.end());
    return params;
  }

  void clear_grads() const {
    for (Tensor p : parameters())
      p.set_grad(Tensor());
  }

  // Every parameter's gradient, read back as doubles (exact for float32: a bitwise comparison).
  std::vector<std::vector<double>> grads() const {
    std::vector<std::vector<double>> out;
    for (const Tensor& p : parameters())
      out.push_back(test::to_vector(p.grad()));
    return out;
  }
};

enum class Mode { Plain, Pinned, Pageable, PinnedKeepParameters };

// One forward (under the mode's guard) and backward; returns the parameters' gradients.
std::vector<std::vector<double>> gradients(const Mlp& mlp, const Tensor& x, Mode mode) {
  mlp.clear_grads();
  Tensor loss;
  switch (mode) {
    case Mode::Plain:
      loss = mlp.forward(x).sum();
      break;
    case Mode::Pinned: {
      offload::SaveOnCpu guard;
      loss = mlp.forward(x).sum();
      break;
    }
    case Mode::Pageable: {
      offload::SaveOnCpu guard(/*pin_memory=*/false);
      loss = mlp.forward(x).sum();
      break;
    }
    case Mode::PinnedKeepParameters: {
      offload::SaveOnCpu guard(/*pin_memory=*/true, mlp.parameters());
      loss = mlp.forward(x).sum();
      break;
    }
  }
  loss.backward();
  return mlp.grads();
}

// Counts what passes through it; the packed value is the tensor itself.
struct CountingHooks {
  int packs = 0;
  int unpacks = 0;
  autograd::PackHook pack() {
    return [this](const Tensor& t) -> std::any {
      ++packs;
      return t;
    };
  }
  autograd::UnpackHook unpack() {
    return [this](const std::any& packed) {
      ++unpacks;
      return std::any_cast<Tensor>(packed);
    };
  }
};

// ---- CPU ---------------------------------------------------------------------------------------

TEST(SaveOnCpu, CpuTensorsPassThroughBitwise) {
  const Mlp mlp(4, 16, Device::cpu());
  manual_seed(1);
  const Tensor x = randn({8, 16});  // (B, width)
  const auto expected = gradients(mlp, x, Mode::Plain);
  EXPECT_EQ(gradients(mlp, x, Mode::Pinned), expected);
  EXPECT_EQ(gradients(mlp, x, Mode::Pageable), expected);
  EXPECT_EQ(gradients(mlp, x, Mode::PinnedKeepParameters), expected);
}

TEST(SaveOnCpu, NestsWithOtherHookGuardsInnermostApplies) {
  const Mlp mlp(2, 4, Device::cpu());
  const Tensor x = ones({3, 4});
  const auto expected = gradients(mlp, x, Mode::Plain);

  // SaveOnCpu outside, counting hooks inside: the counting hooks see every saved tensor.
  CountingHooks inner;
  Tensor loss;
  {
    offload::SaveOnCpu outer;
    EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 1);
    {
      autograd::SavedTensorHooksGuard guard(inner.pack(), inner.unpack());
      EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 2);
      mlp.clear_grads();
      loss = mlp.forward(x).sum();
    }
    EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 1);
    const int packs = inner.packs;
    EXPECT_EQ(packs, 2 * 3);  // per layer: matmul's input and weight, tanh's output
    // Back to SaveOnCpu alone: the counting hooks see nothing more.
    Tensor unused = mlp.forward(x).sum();
    EXPECT_EQ(inner.packs, packs);
  }
  EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 0);
  loss.backward();
  EXPECT_EQ(inner.unpacks, inner.packs);
  EXPECT_EQ(mlp.grads(), expected);

  // Counting hooks outside, SaveOnCpu inside: SaveOnCpu takes everything saved in its scope.
  CountingHooks outer;
  {
    autograd::SavedTensorHooksGuard guard(outer.pack(), outer.unpack());
    {
      offload::SaveOnCpu inner_offload;
      mlp.clear_grads();
      loss = mlp.forward(x).sum();
    }
  }
  loss.backward();
  EXPECT_EQ(outer.packs, 0);
  EXPECT_EQ(outer.unpacks, 0);
  EXPECT_EQ(mlp.grads(), expected);
}

TEST(SaveOnCpu, InPlaceChangeAfterSavingIsStillReported) {
  Tensor x = test::make_tensor({0.5, -1.0, 2.0}, {3}).requires_grad_();
  Tensor y;
  {
    offload::SaveOnCpu guard;
    y = exp(x * 2.0);  // exp saves its output
  }
  {
    NoGradGuard no_grad;
    y.add_(1.0);
  }
  EXPECT_THROW(y.sum().backward(), Error);
}

// ---- CUDA --------------------------------------------------------------------------------------

TEST(SaveOnCpu, CudaMlpGradientsBitwiseEqual) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Mlp mlp(16, 64, Device::cuda());
  manual_seed(2);
  const Tensor x = randn({32, 64}).cuda();  // (B, width)
  const auto expected = gradients(mlp, x, Mode::Plain);
  EXPECT_EQ(gradients(mlp, x, Mode::Pinned), expected);
  EXPECT_EQ(gradients(mlp, x, Mode::Pageable), expected);
  EXPECT_EQ(gradients(mlp, x, Mode::PinnedKeepParameters), expected);
}

TEST(SaveOnCpu, CudaNonContiguousSavedTensorComesBackWithItsValues) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  manual_seed(3);
  Tensor a = randn({8, 5}).cuda().requires_grad_();
  Tensor b = randn({5, 8}).cuda().requires_grad_();
  // mul saves a.transpose(0, 1): a (5, 8) view with strides (1, 5).
  auto loss = [&] { return tanh(a.transpose(0, 1) * b).sum(); };
  loss().backward();
  const auto ga = test::to_vector(a.grad());
  const auto gb = test::to_vector(b.grad());
  a.set_grad(Tensor());
  b.set_grad(Tensor());
  Tensor y;
  {
    offload::SaveOnCpu guard;
    y = loss();
  }
  y.backward();
  EXPECT_EQ(test::to_vector(a.grad()), ga);
  EXPECT_EQ(test::to_vector(b.grad()), gb);
}

// Peak bytes allocated on cuda:0 above what was allocated before the step.
std::int64_t step_peak_bytes(const Mlp& mlp, const Tensor& x, Mode mode) {
  mlp.clear_grads();
  cuda::synchronize();
  const std::int64_t before = memory::stats(Device::cuda()).allocated;
  memory::reset_peak(Device::cuda());
  gradients(mlp, x, mode);
  cuda::synchronize();
  return memory::stats(Device::cuda()).peak_allocated - before;
}

TEST(SaveOnCpu, CudaPeakDropsByTheActivations) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  constexpr int kLayers = 16;
  constexpr std::int64_t kBatch = 4096;
  constexpr std::int64_t kWidth = 64;  // narrow: the weights (16 KiB each) are not the story
  const Mlp mlp(kLayers, kWidth, Device::cuda());
  const Tensor x = randn({kBatch, kWidth}).cuda();
  // Plain autograd keeps every layer's tanh output (B, width) until backward: 16 MiB here.
  const std::int64_t activation_bytes = kLayers * kBatch * kWidth * 4;

  const std::int64_t plain_bytes = step_peak_bytes(mlp, x, Mode::Plain);
  const std::int64_t offload_bytes = step_peak_bytes(mlp, x, Mode::PinnedKeepParameters);
  const std::int64_t copy_all_bytes = step_peak_bytes(mlp, x, Mode::Pinned);
  EXPECT_GE(plain_bytes, activation_bytes);
  EXPECT_GE(plain_bytes - offload_bytes, activation_bytes * 8 / 10)
      << "plain peak " << plain_bytes << " B, SaveOnCpu peak " << offload_bytes
      << " B, activations " << activation_bytes << " B";
  EXPECT_GE(plain_bytes - copy_all_bytes, activation_bytes * 8 / 10)
      << "plain peak " << plain_bytes << " B, SaveOnCpu (weights copied too) peak "
      << copy_all_bytes << " B, activations " << activation_bytes << " B";

  // Between forward and backward, the activations live in the pinned pool instead.
  mlp.clear_grads();
  cuda::synchronize();
  const std::int64_t pinned_before = memory::pinned_stats().allocated;
  Tensor loss;
  {
    offload::SaveOnCpu guard(/*pin_memory=*/true, mlp.parameters());
    loss = mlp.forward(x).sum();
  }
  EXPECT_GE(memory::pinned_stats().allocated - pinned_before, activation_bytes);
  loss.backward();
  cuda::synchronize();
}

TEST(SaveOnCpu, CudaPinnedPoolReusedFromTheSecondStep) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  if (!memory::caching_enabled()) GTEST_SKIP() << "caching:0: freed blocks are not kept";
  const Mlp mlp(8, 256, Device::cuda());
  const Tensor x = randn({512, 256}).cuda();
  std::vector<std::int64_t> backend_allocs;
  for (int step = 0; step < 3; ++step) {
    gradients(mlp, x, Mode::Pinned);
    cuda::synchronize();  // every copy done: the pinned blocks are back in the pool
    backend_allocs.push_back(memory::pinned_stats().backend_allocs);
  }
  EXPECT_EQ(backend_allocs[2], backend_allocs[1]) << "step 3 allocated new pinned memory";
}

}  // namespace
}  // namespace leangrad
