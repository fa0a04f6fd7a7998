// Tensor-level entries of interpolation (kernels/ops.h): upsample2d and its backward over
// (N, C, H, W), seen as N * C planes, with the index rules of Note [Interpolation source indices]
// (kernels/layers_math.h). The input gradient accumulates in float32 (float64 for float64) and is
// cast to the input's dtype.
#include <cmath>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

namespace {

layers_math::Resize2dShape resize_shape(const char* op, const Shape& in, Pool2dSize out_size,
                                        Resize2dScales scale_factor, layers_math::ResizeMode mode,
                                        bool align_corners) {
  LG_CHECK_SHAPE(in.size() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", in);
  LG_CHECK_SHAPE(out_size[0] > 0 && out_size[1] > 0, op, ": expected a positive output size, got (",
                 out_size[0], ", ", out_size[1], ") for input of shape ", in);
  // A scale factor (0: none given) sets the step 1 / scale, which must be a finite float.
  for (const double scale : scale_factor) {
    LG_CHECK_SHAPE(scale == 0.0 || (std::isfinite(scale) && scale > 0.0 &&
                                    std::isfinite(static_cast<float>(1.0 / scale))),
                   op, ": expected positive finite scale factors, got (", scale_factor[0], ", ",
                   scale_factor[1], ") for input of shape ", in);
  }
  layers_math::Resize2dShape g;
  g.planes = in[0] * in[1];
  g.H = in[2], g.W = in[3];
  g.OH = out_size[0], g.OW = out_size[1];
  g.scale_factor_h = scale_factor[0], g.scale_factor_w = scale_factor[1];
  g.mode = mode;
  g.align_corners = align_corners;
  return g;
}

}  // namespace

Tensor upsample2d(const Tensor& x, Pool2dSize out_size, Resize2dScales scale_factor,
                  layers_math::ResizeMode mode, bool align_corners) {
  const char* op = "interpolate";
  check_floating(op, x, "input");
  const layers_math::Resize2dShape g =
      resize_shape(op, x.shape(), out_size, scale_factor, mode, align_corners);
  LG_CHECK_SHAPE(x.numel() > 0 || g.planes == 0, op,
                 ": expected a non-empty plane (H, W) to resize, got an input of shape ",
                 x.shape());
  Tensor out = empty({x.size(0), x.size(1), out_size[0], out_size[1]}, x.options());
  if (out.numel() == 0) return out;
  const Tensor in = contiguous(x);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::upsample2d_forward(x.dtype(), g, out.data_ptr(), in.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::upsample2d_forward(x.dtype(), g, out.data_ptr(), in.data_ptr());
      break;
  }
  return out;
}

Tensor upsample2d_backward(const Tensor& grad_out, const Shape& input_shape,
                           Resize2dScales scale_factor, layers_math::ResizeMode mode,
                           bool align_corners) {
  const char* op = "interpolate_backward";
  LG_CHECK(grad_out.defined(), op, ": expected a defined gradient");
  LG_CHECK_SHAPE(grad_out.dim() == 4 && input_shape.size() == 4 &&
                     grad_out.size(0) == input_shape[0] && grad_out.size(1) == input_shape[1],
                 op, ": gradient of shape ", grad_out.shape(), " does not match input of shape ",
                 input_shape);
  const layers_math::Resize2dShape g = resize_shape(
      op, input_shape, {grad_out.size(2), grad_out.size(3)}, scale_factor, mode, align_corners);
  const DType acc_dtype = grad_out.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor grad_in = zeros(input_shape, TensorOptions(acc_dtype).device(grad_out.device()));
  if (grad_out.numel() > 0 && grad_in.numel() > 0) {
    const Tensor dy = contiguous(grad_out);
    const cuda::DeviceGuard guard(grad_out.device());
    switch (grad_out.device().type) {
      case DeviceType::CPU:
        kernels::cpu::upsample2d_backward(grad_out.dtype(), g, grad_in.data_ptr(), dy.data_ptr());
        break;
      case DeviceType::CUDA:
        kernels::cuda::upsample2d_backward(grad_out.dtype(), g, grad_in.data_ptr(), dy.data_ptr());
        break;
    }
  }
  return acc_dtype == grad_out.dtype() ? grad_in : cast(grad_in, grad_out.dtype());
}

}  // namespace leangrad::ops
