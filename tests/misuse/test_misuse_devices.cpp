// Misuse of devices: CUDA tensors asked of a build or a machine without a GPU and, where a GPU is
// visible, devices that do not exist and operands, gradients and parameters on different
// devices, saved tensors unpacked onto another device. Each case is added only where it can run:
// the GPU ones run in the GPU pass (tools/gpu-check.sh). A table of the misuse suite
// (tests/misuse/misuse_testing.h).
#include <any>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/data/data.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/nn/nn.h>
#include <leangrad/optim/optim.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

const Device kGpu = Device::cuda(0);

std::vector<MisuseCase> device_cases() {
  MisuseTable t;
  if (!cuda::is_available()) {
    t.add("empty_on_cuda_without_gpu", Raises::DeviceError, {"empty", "cuda:0", "0 CUDA device"},
          [] { empty({2}, kGpu); });
    t.add("ones_on_cuda_without_gpu", Raises::DeviceError, {"ones", "cuda:1"},
          [] { ones({2}, Device::cuda(1)); });
    t.add("to_cuda_without_gpu", Raises::DeviceError, {"to", "cuda:0"}, [] { ones({2}).to(kGpu); });
    t.add("module_to_cuda_without_gpu", Raises::DeviceError, {"to", "cuda:0"},
          [] { nn::Linear(2, 2)->to(kGpu); });
    t.add("loader_batches_on_cuda_without_gpu", Raises::DeviceError,
          {"DataLoader", "cuda:0", "CUDA is not available"}, [] {
            data::DataLoader loader(data::TensorDataset(ones({4, 1}), Tensor()),
                                    data::DataLoaderOptions().device(kGpu));
          });
    return t.cases();
  }
  t.add("empty_on_missing_gpu", Raises::DeviceError, {"empty", "cuda:99"},
        [] { empty({2}, Device::cuda(99)); });
  t.add("zeros_on_negative_gpu_index", Raises::DeviceError, {"zeros", "cuda:-1"},
        [] { zeros({2}, Device::cuda(-1)); });
  t.add("pinned_memory_on_cuda", Raises::DeviceError, {"pinned", "cuda:0"},
        [] { empty({2}, TensorOptions().device(kGpu).pinned_memory(true)); });
  t.add("add_across_devices", Raises::DeviceError, {"add", "cpu", "cuda:0"},
        [] { ones({2}) + ones({2}, kGpu); });
  t.add("add_in_place_across_devices", Raises::DeviceError, {"add_", "cuda:0", "cpu"},
        [] { ones({2}, kGpu).add_(ones({2})); });
  t.add("where_across_devices", Raises::DeviceError, {"where", "cpu", "cuda:0"},
        [] { where(ones({2}, kBool), ones({2}, kGpu), ones({2})); });
  t.add("matmul_across_devices", Raises::DeviceError, {"matmul", "cpu", "cuda:0"}, [] {
    matmul(ones({2, 2}), ones({2, 2}, kGpu));
  });
  t.add("cat_across_devices", Raises::DeviceError, {"cat", "cpu", "cuda:0", "tensor 1"}, [] {
    cat({ones({2}), ones({2}, kGpu)});
  });
  t.add("conv2d_across_devices", Raises::DeviceError, {"conv2d", "input", "weight", "cuda:0"}, [] {
    conv2d(ones({1, 1, 3, 3}), ones({1, 1, 2, 2}, kGpu));
  });
  t.add("group_norm_weight_on_cpu", Raises::DeviceError, {"group_norm", "weight", "cpu", "cuda:0"},
        [] {
          group_norm(ones({2, 4}, kGpu), 2, ones({4}));
        });
  t.add("linear_weight_on_cpu", Raises::DeviceError, {"linear", "cuda:0", "cpu"}, [] {
    linear(ones({2, 3}, kGpu), ones({4, 3}));
  });
  t.add("cross_entropy_target_on_cpu", Raises::DeviceError, {"cross_entropy", "cuda:0", "cpu"}, [] {
    cross_entropy(ones({2, 3}, kGpu), tensor<std::int64_t>({0, 1}));
  });
  t.add("atan2_across_devices", Raises::DeviceError, {"atan2", "cuda:0", "cpu"},
        [] { atan2(ones({2}, kGpu), ones({2})); });
  t.add("adaptive_max_pool2d_backward_indices_on_cpu", Raises::DeviceError,
        {"adaptive_max_pool2d_backward", "cuda:0", "cpu"}, [] {
          ops::adaptive_max_pool2d_backward(ones({1, 1, 2, 2}, kGpu), zeros({1, 1, 2, 2}, kInt64),
                                            {1, 1, 4, 4});
        });
  t.add("mse_loss_across_devices", Raises::DeviceError, {"mse_loss", "cuda:0", "cpu"},
        [] { mse_loss(ones({2}, kGpu), ones({2})); });
  t.add("module_on_gpu_input_on_cpu", Raises::DeviceError, {"linear", "cpu", "cuda:0"}, [] {
    nn::Linear linear(3, 2);
    linear->to(kGpu);
    linear->forward(ones({1, 3}));
  });
  t.add("backward_gradient_on_cpu", Raises::DeviceError, {"backward", "cpu", "cuda:0"},
        [] { (ones({2}, TensorOptions(kGpu).requires_grad(true)) * 2.0).backward(ones({2})); });
  t.add("set_grad_on_another_device", Raises::DeviceError, {"set_grad", "cpu", "cuda:0"},
        [] { ones({2}, kGpu).set_grad(ones({2})); });
  // mutable_grad() is the handle that does not check: backward and the optimizer step do.
  t.add("accumulate_into_grad_on_another_device", Raises::DeviceError,
        {"backward", "accumulating into .grad", "cpu", "cuda:0"}, [] {
          const Tensor x = ones({2}, kGpu).requires_grad_();
          x.mutable_grad() = ones({2});
          (x * 2.0).sum().backward();
        });
  t.add("optimizer_gradient_on_cpu", Raises::DeviceError, {"SGD step", "cpu", "cuda:0"}, [] {
    const Tensor p = ones({2}, kGpu).requires_grad_();
    optim::SGD sgd({p}, optim::SGDOptions(0.1));
    p.mutable_grad() = ones({2});
    sgd.step();
  });
  // An unpack hook must bring a saved tensor back to the device it was saved on (SaveOnCpu does):
  // a backward kernel would otherwise get a host pointer.
  t.add("unpack_hook_returns_a_host_tensor", Raises::DeviceError,
        {"unpack hook", "MulBackward", "cpu", "cuda:0"}, [] {
          const Tensor x = ones({2}, kGpu).requires_grad_();
          Tensor y;
          {
            const autograd::SavedTensorHooksGuard guard(
                [](const Tensor& t) { return std::any(t.cpu()); },
                [](const std::any& packed) { return std::any_cast<Tensor>(packed); });
            y = (x * x).sum();
          }
          y.backward();
        });
  t.add("clip_grad_norm_across_devices", Raises::DeviceError, {"clip_grad_norm_", "cuda:0", "cpu"},
        [] {
          const Tensor a = ones({2}, kGpu).requires_grad_();
          const Tensor b = ones({2}).requires_grad_();
          a.set_grad(ones({2}, kGpu));
          b.set_grad(ones({2}));
          optim::clip_grad_norm_({a, b}, 1.0);
        });
  t.add("pin_memory_of_cuda_tensor", Raises::DeviceError, {"pin_memory", "cuda:0"},
        [] { ones({2}, kGpu).pin_memory(); });
  t.add("loader_batches_on_missing_gpu", Raises::DeviceError, {"DataLoader", "cuda:99"}, [] {
    data::DataLoader loader(data::TensorDataset(ones({4, 1}), Tensor()),
                            data::DataLoaderOptions().device(Device::cuda(99)));
  });
  return t.cases();
}
LG_MISUSE_SUITE(Devices, device_cases());

}  // namespace
}  // namespace leangrad::test
