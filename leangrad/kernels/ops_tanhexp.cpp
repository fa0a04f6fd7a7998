// Tensor-level entries of TanhExp (kernels/ops.h): forward and backward. Launchers:
// tanhexp_forward/backward of kernels/backend.h; the math: kernels/tanhexp_math.h.
// Operands are made contiguous (a copy only when they are not), so each launcher is one flat
// loop or kernel reading x (and dy) once and writing once.
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

Tensor tanhexp(const Tensor& x) {
  check_floating("tanhexp", x, "input", ListFloatingDTypes::Yes);
  const Tensor in = contiguous(x);
  Tensor out = empty(x.shape(), x.options());
  if (out.numel() == 0) return out;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::tanhexp_forward(x.dtype(), x.numel(), out.data_ptr(), in.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::tanhexp_forward(x.dtype(), x.numel(), out.data_ptr(), in.data_ptr());
      break;
  }
  return out;
}

Tensor tanhexp_backward(const Tensor& grad_output, const Tensor& x) {
  check_floating("tanhexp_backward", x, "input", ListFloatingDTypes::Yes);
  check_floating("tanhexp_backward", grad_output, "gradient", ListFloatingDTypes::Yes);
  LG_CHECK_SHAPE(grad_output.shape() == x.shape(), "tanhexp_backward: gradient of shape ",
                 grad_output.shape(), " does not match the input's shape ", x.shape());
  LG_CHECK_DTYPE(grad_output.dtype() == x.dtype(), "tanhexp_backward: gradient dtype ",
                 grad_output.dtype(), " differs from the input's ", x.dtype());
  LG_CHECK_DEVICE(grad_output.device() == x.device(), "tanhexp_backward: gradient on ",
                  grad_output.device(), ", input on ", x.device());
  const Tensor dy = contiguous(grad_output);
  const Tensor in = contiguous(x);
  Tensor dx = empty(x.shape(), x.options());
  if (dx.numel() == 0) return dx;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::tanhexp_backward(x.dtype(), x.numel(), dx.data_ptr(), dy.data_ptr(),
                                     in.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::tanhexp_backward(x.dtype(), x.numel(), dx.data_ptr(), dy.data_ptr(),
                                      in.data_ptr());
      break;
  }
  return dx;
}

}  // namespace leangrad::ops
