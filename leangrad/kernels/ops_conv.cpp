// Tensor-level entries of the 2-D convolution (kernels/ops.h): ops::conv2d, conv2d_input_grad and
// conv2d_weight_grad. Each checks dtypes, devices and shapes (errors name the shapes), fills in a
// Conv2dGeometry (kernels/conv_geometry.h), makes the operands contiguous NCHW, allocates the
// result and switches to the conv2d launchers of kernels/backend.h: on the CPU im2col + GEMM
// (oneDNN or Eigen) or oneDNN's direct convolution (kernels/cpu/conv.cpp decides, as
// set_cpu_conv2d_algorithm allows); on CUDA our implicit-GEMM kernels, or cuDNN when selected
// (LEANGRAD_CONV=cudnn, set_conv2d_backend) or when the implicit GEMM does not cover the problem
// (kernels/cuda/conv.cu decides). float16/bfloat16 on the CPU are computed in float32 and rounded
// back once, as matmul does. And the 3-D convolution's CPU kernel (Note [Direct 3-D convolution]).
#include <atomic>
#include <string>

#include <leangrad/core/cuda.h>
#include <leangrad/core/env_choice.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/conv_geometry.h>
#include <leangrad/kernels/cpu/conv_direct.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::ops {

namespace {

// LEANGRAD_CONV, read once (Note [Settings from the environment] in core/env_choice.h).
Conv2dBackend backend_from_environment() {
  return detail::env_choice("LEANGRAD_CONV", {"implicit_gemm", "cudnn"}, 0) == 1
             ? Conv2dBackend::Cudnn
             : Conv2dBackend::ImplicitGemm;
}

std::atomic<Conv2dBackend>& backend_setting() {
  static std::atomic<Conv2dBackend> backend{backend_from_environment()};  // read once
  return backend;
}

// LEANGRAD_CPU_CONV, read once (Note [Settings from the environment] in core/env_choice.h).
CpuConv2dAlgorithm cpu_algorithm_from_environment() {
  constexpr CpuConv2dAlgorithm kAlgorithms[] = {CpuConv2dAlgorithm::Auto, CpuConv2dAlgorithm::Gemm,
                                                CpuConv2dAlgorithm::Direct,
                                                CpuConv2dAlgorithm::Rows};
  return kAlgorithms[detail::env_choice("LEANGRAD_CPU_CONV", {"auto", "gemm", "direct", "rows"},
                                        0)];
}

std::atomic<CpuConv2dAlgorithm>& cpu_algorithm_setting() {
  static std::atomic<CpuConv2dAlgorithm> algorithm{cpu_algorithm_from_environment()};
  return algorithm;
}

void check_operand_pair(const char* op, const char* name_a, const Tensor& a, const char* name_b,
                        const Tensor& b) {
  LG_CHECK(a.defined() && b.defined(), op, ": expected defined ", name_a, " and ", name_b);
  LG_CHECK_DTYPE(a.dtype() == b.dtype(), op, ": expected ", name_a, " and ", name_b,
                 " of the same dtype, got ", a.dtype(), " and ", b.dtype(),
                 " (convert one with .to(dtype))");
  LG_CHECK_DTYPE(is_floating(a.dtype()), op,
                 ": expected a floating dtype (float32, float64, float16, bfloat16), got ",
                 a.dtype());
  LG_CHECK_DEVICE(a.device() == b.device(), op, ": expected ", name_a, " and ", name_b,
                  " on the same device, got ", a.device(), " and ", b.device());
}

// Checks the input and weight shapes against the parameters and returns every size.
Conv2dGeometry make_geometry(const char* op, const Shape& x, const Shape& w,
                             const Conv2dParams& p) {
  LG_CHECK_SHAPE(x.size() == 4, op,
                 ": expected a 4-D input (N, C_in, H, W) (or, to the autograd functions, a 3-D "
                 "unbatched one), got shape ",
                 x);
  LG_CHECK_SHAPE(w.size() == 4, op, ": expected a 4-D weight (C_out, C_in / groups, kH, kW), ",
                 "got shape ", w);
  LG_CHECK_SHAPE(p.groups >= 1, op, ": expected groups >= 1, got ", p.groups);
  // The shapes may be a caller's (the backward entries take them as arguments), not a tensor's.
  LG_CHECK_SHAPE(x[0] >= 0 && x[1] >= 0 && x[2] >= 0 && x[3] >= 0 && w[0] >= 0 && w[1] >= 0 &&
                     w[2] >= 1 && w[3] >= 1,
                 op, ": expected non-negative sizes and a kernel of at least 1 x 1, got input ", x,
                 " and weight ", w);
  // Below 2^31 the output-size arithmetic (in + 2 padding - dilation (kernel - 1)) cannot overflow.
  constexpr std::int64_t kMaxParam = std::int64_t{1} << 31;
  LG_CHECK_SHAPE(p.stride_h < kMaxParam && p.stride_w < kMaxParam && p.pad_h < kMaxParam &&
                     p.pad_w < kMaxParam && p.dilation_h < kMaxParam && p.dilation_w < kMaxParam &&
                     x[2] < kMaxParam && x[3] < kMaxParam && w[2] < kMaxParam && w[3] < kMaxParam,
                 op, ": sizes, stride, padding and dilation must be below 2^31 (input ", x,
                 ", weight ", w, ", stride (", p.stride_h, ", ", p.stride_w, "), padding (",
                 p.pad_h, ", ", p.pad_w, "), dilation (", p.dilation_h, ", ", p.dilation_w, "))");
  LG_CHECK_SHAPE(p.stride_h >= 1 && p.stride_w >= 1 && p.dilation_h >= 1 && p.dilation_w >= 1 &&
                     p.pad_h >= 0 && p.pad_w >= 0,
                 op, ": expected stride and dilation >= 1 and padding >= 0, got stride (",
                 p.stride_h, ", ", p.stride_w, "), padding (", p.pad_h, ", ", p.pad_w,
                 "), dilation (", p.dilation_h, ", ", p.dilation_w, ")");
  LG_CHECK_SHAPE(x[1] % p.groups == 0, op, ": input channels ", x[1], " (input shape ", x,
                 ") are not divisible by groups = ", p.groups);
  LG_CHECK_SHAPE(w[0] % p.groups == 0, op, ": output channels ", w[0], " (weight shape ", w,
                 ") are not divisible by groups = ", p.groups);
  const std::int64_t expected_in = checked_mul(w[1], p.groups, op);
  LG_CHECK_SHAPE(expected_in == x[1], op, ": weight of shape ", w, " expects ", expected_in,
                 " input channels (", w[1], " per group x ", p.groups,
                 " groups), but the input of shape ", x, " has ", x[1]);
  Conv2dGeometry g;
  g.batch = x[0], g.in_channels = x[1], g.in_h = x[2], g.in_w = x[3];
  g.out_channels = w[0], g.kernel_h = w[2], g.kernel_w = w[3];
  g.stride_h = p.stride_h, g.stride_w = p.stride_w;
  g.pad_h = p.pad_h, g.pad_w = p.pad_w;
  g.dilation_h = p.dilation_h, g.dilation_w = p.dilation_w;
  g.groups = p.groups;
  g.out_h = conv_output_size(g.in_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  g.out_w = conv_output_size(g.in_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  LG_CHECK_SHAPE(g.kernel_h >= 1 && g.kernel_w >= 1 && g.out_h >= 1 && g.out_w >= 1, op,
                 ": kernel of size (", g.kernel_h, ", ", g.kernel_w, ") with dilation (",
                 g.dilation_h, ", ", g.dilation_w, ") is larger than the padded input (",
                 g.in_h + 2 * g.pad_h, ", ", g.in_w + 2 * g.pad_w, ") (input shape ", x,
                 ", weight shape ", w, ", padding (", g.pad_h, ", ", g.pad_w, "))");
  return g;
}

Shape output_shape(const Conv2dGeometry& g) {
  return {g.batch, g.out_channels, g.out_h, g.out_w};
}

void check_grad_out(const char* op, const Tensor& grad_out, const Conv2dGeometry& g) {
  LG_CHECK_SHAPE(grad_out.shape() == output_shape(g), op, ": expected grad_out of shape ",
                 output_shape(g), " (the convolution's output), got ", grad_out.shape());
}

// Note [Direct 3-D convolution]
//   conv3d has one kernel per pass only where oneDNN generates one: float32 on the CPU (float16
//   and bfloat16 computed in float32 and rounded once, as conv2d's), plain
//   NCDHW operands reordered into oneDNN's channel-blocked layouts and back inside each call, as
//   conv2d's direct path (kernels/onednn/onednn_conv.cpp, one chunk of the batch per thread).
//   Against autograd's composition over conv2d (Note [Volumes by planes]) it makes no kD-fold
//   copy of the input (the composition gathers every (output depth, kernel depth) plane, keeps
//   that copy for the weight gradient and adds the copies' gradients back), and no permutes of
//   the output. autograd's conv3d asks use_conv3d_kernel at its forward and records the three
//   entries (each gradient's own gradient is the other two, as conv2d's); everything else
//   composes. The two sum in different orders: they agree within a sum's rounding, not bitwise
//   (tests/nn/test_volumetric.cpp checks both in float32 against PyTorch's float64 cases).

// Checks the input and weight shapes of a 3-D convolution against the parameters and returns
// every size.
kernels::cpu::onednn::Conv3dGeometry make_geometry3(const char* op, const Shape& x, const Shape& w,
                                                    const Conv3dParams& p) {
  LG_CHECK_SHAPE(x.size() == 5, op, ": expected a 5-D input (N, C_in, D, H, W), got shape ", x);
  LG_CHECK_SHAPE(w.size() == 5, op,
                 ": expected a 5-D weight (C_out, C_in / groups, kD, kH, kW), got shape ", w);
  LG_CHECK_SHAPE(p.groups >= 1, op, ": expected groups >= 1, got ", p.groups);
  constexpr std::int64_t kMaxParam = std::int64_t{1} << 31;
  const auto triple = [](const std::array<std::int64_t, 3>& a) {
    return shape_str({a[0], a[1], a[2]});
  };
  for (std::size_t d = 0; d < 3; ++d) {
    LG_CHECK_SHAPE(x[d + 2] >= 0 && w[d + 2] >= 1 && x[d + 2] < kMaxParam && w[d + 2] < kMaxParam,
                   op, ": expected sizes below 2^31 and a kernel of at least 1 x 1 x 1, got input ",
                   x, " and weight ", w);
    LG_CHECK_SHAPE(
        p.stride[d] >= 1 && p.dilation[d] >= 1 && p.padding[d] >= 0 && p.stride[d] < kMaxParam &&
            p.dilation[d] < kMaxParam && p.padding[d] < kMaxParam,
        op, ": expected stride and dilation >= 1 and padding >= 0, each below 2^31, got ",
        "stride ", triple(p.stride), ", padding ", triple(p.padding), ", dilation ",
        triple(p.dilation));
  }
  LG_CHECK_SHAPE(x[0] >= 0 && x[1] >= 0 && w[0] >= 0 && w[1] >= 0, op,
                 ": expected non-negative sizes, got input ", x, " and weight ", w);
  LG_CHECK_SHAPE(
      x[1] % p.groups == 0 && w[0] % p.groups == 0 && checked_mul(w[1], p.groups, op) == x[1], op,
      ": input ", x, " and weight ", w, " with groups ", p.groups,
      ": expected C_in = weight.size(1) * groups and C_out divisible by groups");
  kernels::cpu::onednn::Conv3dGeometry g;
  g.batch = x[0], g.in_channels = x[1], g.out_channels = w[0], g.groups = p.groups;
  for (std::size_t d = 0; d < 3; ++d) {
    g.in[d] = x[d + 2], g.kernel[d] = w[d + 2];
    g.stride[d] = p.stride[d], g.pad[d] = p.padding[d], g.dilation[d] = p.dilation[d];
    g.out[d] = conv_output_size(g.in[d], g.kernel[d], g.stride[d], g.pad[d], g.dilation[d]);
    LG_CHECK_SHAPE(g.out[d] >= 1, op, ": weight ", w, " with dilation ", triple(p.dilation),
                   " is larger than the input ", x, " padded by ", triple(p.padding));
  }
  return g;
}

Shape output_shape3(const kernels::cpu::onednn::Conv3dGeometry& g) {
  return {g.batch, g.out_channels, g.out[0], g.out[1], g.out[2]};
}

// Whether the 3-D kernel takes `dtype`: float32, and the 16-bit floats computed in it.
bool conv3d_kernel_dtype(DType dtype) {
  return dtype == kFloat32 || is_reduced_precision(dtype);
}

// The CPU operands each 3-D entry takes; the Error names `op` and what it got.
void check_conv3d_operand(const char* op, const char* name, const Tensor& t) {
  LG_CHECK(t.defined(), op, ": expected a defined ", name);
  LG_CHECK_DTYPE(conv3d_kernel_dtype(t.dtype()), op,
                 ": the kernel takes float32, float16 or bfloat16, got ", name, " of dtype ",
                 t.dtype(), " (autograd's conv3d composes conv2d for other dtypes)");
  LG_CHECK_DEVICE(t.device().is_cpu(), op, ": the kernel runs on the CPU, got ", name, " on ",
                  t.device(), " (autograd's conv3d composes conv2d there)");
}

// Raises when oneDNN declined a problem use_conv3d_kernel would have found it has.
void check_ran(const char* op, bool ran, const kernels::cpu::onednn::Conv3dGeometry& g) {
  LG_CHECK(
      ran, op, ": oneDNN has no generated kernel for input ",
      shape_str({g.batch, g.in_channels, g.in[0], g.in[1], g.in[2]}), ", weight ",
      shape_str({g.out_channels, g.in_channels / g.groups, g.kernel[0], g.kernel[1], g.kernel[2]}),
      " and groups ", g.groups, " on this CPU (ask ops::use_conv3d_kernel first)");
}

}  // namespace

void set_conv2d_backend(Conv2dBackend backend) {
  backend_setting().store(backend);
}

Conv2dBackend conv2d_backend() {
  return backend_setting().load();
}

void set_cpu_conv2d_algorithm(CpuConv2dAlgorithm algorithm) {
  cpu_algorithm_setting().store(algorithm);
}

CpuConv2dAlgorithm cpu_conv2d_algorithm() {
  return cpu_algorithm_setting().load(std::memory_order_relaxed);
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dParams& p) {
  check_operand_pair("conv2d", "input", x, "weight", weight);
  const Conv2dGeometry g = make_geometry("conv2d", x.shape(), weight.shape(), p);
  if (bias.defined()) {
    check_operand_pair("conv2d", "input", x, "bias", bias);
    LG_CHECK_SHAPE(bias.shape() == Shape{g.out_channels}, "conv2d: expected a bias of shape (",
                   g.out_channels, ") for weight of shape ", weight.shape(), ", got ",
                   bias.shape());
  }
  const Shape out_shape = output_shape(g);
  if (shape_numel(out_shape, "conv2d") == 0) return empty(out_shape, x.options());
  if (g.patch_size() == 0) {  // C_in = 0: sums of nothing
    Tensor out = zeros(out_shape, x.options());
    return bias.defined() ? binary(BinaryOp::Add, out, bias.reshape({g.out_channels, 1, 1})) : out;
  }
  if (x.device().is_cpu() && is_reduced_precision(x.dtype())) {
    const Tensor b32 = bias.defined() ? cast(bias, kFloat32) : Tensor();
    return cast(conv2d(cast(x, kFloat32), cast(weight, kFloat32), b32, p), x.dtype());
  }

  const Tensor xc = contiguous(x);
  const Tensor wc = contiguous(weight);
  const Tensor bc = bias.defined() ? contiguous(bias) : Tensor();
  const void* bias_ptr = bc.defined() ? bc.data_ptr() : nullptr;
  Tensor out = empty(out_shape, x.options());
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::conv2d_forward(x.dtype(), g, out.data_ptr(), xc.data_ptr(), wc.data_ptr(),
                                   bias_ptr);
      break;
    case DeviceType::CUDA:
      kernels::cuda::conv2d_forward(x.dtype(), g, out.data_ptr(), xc.data_ptr(), wc.data_ptr(),
                                    bias_ptr);
      break;
  }
  return out;
}

Tensor conv2d_input_grad(const Tensor& grad_out, const Tensor& weight, const Shape& input_shape,
                         const Conv2dParams& p) {
  check_operand_pair("conv2d_input_grad", "grad_out", grad_out, "weight", weight);
  const Conv2dGeometry g = make_geometry("conv2d_input_grad", input_shape, weight.shape(), p);
  check_grad_out("conv2d_input_grad", grad_out, g);
  if (shape_numel(input_shape) == 0) return empty(input_shape, grad_out.options());
  if (shape_numel(output_shape(g)) == 0) return zeros(input_shape, grad_out.options());
  if (grad_out.device().is_cpu() && is_reduced_precision(grad_out.dtype())) {
    return cast(conv2d_input_grad(cast(grad_out, kFloat32), cast(weight, kFloat32), input_shape, p),
                grad_out.dtype());
  }

  const Tensor dyc = contiguous(grad_out);
  const Tensor wc = contiguous(weight);
  Tensor dx = empty(input_shape, grad_out.options());
  const cuda::DeviceGuard guard(grad_out.device());
  switch (grad_out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::conv2d_input_grad(dx.dtype(), g, dx.data_ptr(), dyc.data_ptr(), wc.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::conv2d_input_grad(dx.dtype(), g, dx.data_ptr(), dyc.data_ptr(), wc.data_ptr());
      break;
  }
  return dx;
}

Tensor conv2d_weight_grad(const Tensor& grad_out, const Tensor& x, const Shape& weight_shape,
                          const Conv2dParams& p) {
  check_operand_pair("conv2d_weight_grad", "grad_out", grad_out, "input", x);
  const Conv2dGeometry g = make_geometry("conv2d_weight_grad", x.shape(), weight_shape, p);
  check_grad_out("conv2d_weight_grad", grad_out, g);
  if (shape_numel(weight_shape) == 0) return empty(weight_shape, x.options());
  if (shape_numel(output_shape(g)) == 0) return zeros(weight_shape, x.options());
  if (x.device().is_cpu() && is_reduced_precision(x.dtype())) {
    return cast(conv2d_weight_grad(cast(grad_out, kFloat32), cast(x, kFloat32), weight_shape, p),
                x.dtype());
  }

  const Tensor dyc = contiguous(grad_out);
  const Tensor xc = contiguous(x);
  Tensor dw = empty(weight_shape, x.options());
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::conv2d_weight_grad(x.dtype(), g, dw.data_ptr(), dyc.data_ptr(), xc.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::conv2d_weight_grad(x.dtype(), g, dw.data_ptr(), dyc.data_ptr(), xc.data_ptr());
      break;
  }
  return dw;
}

bool use_conv3d_kernel(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       const Conv3dParams& p) {
  if (!x.defined() || !weight.defined() || !x.device().is_cpu() || !weight.device().is_cpu() ||
      !conv3d_kernel_dtype(x.dtype()) || weight.dtype() != x.dtype() || x.dim() != 5 ||
      weight.dim() != 5)
    return false;
  if (bias.defined() && (!bias.device().is_cpu() || bias.dtype() != x.dtype() ||
                         bias.shape() != Shape{weight.size(0)}))
    return false;
  if (p.groups < 1 || x.size(1) % p.groups != 0 || weight.size(0) % p.groups != 0 ||
      x.size(1) / p.groups != weight.size(1) || x.numel() == 0 || weight.numel() == 0)
    return false;
  switch (cpu_conv2d_algorithm()) {
    case CpuConv2dAlgorithm::Gemm:
    case CpuConv2dAlgorithm::Rows:  // conv2d's alone
      return false;
    case CpuConv2dAlgorithm::Direct:
      break;
    case CpuConv2dAlgorithm::Auto:
      // conv2d's rule (Note [Which CPU convolution] in kernels/cpu/conv.cpp): with fewer channels
      // oneDNN pads them to a block or takes its first-layer kernel.
      if (cpu_gemm_backend() != CpuGemmBackend::OneDnn || weight.size(1) < 16 ||
          weight.size(0) / p.groups < 16)
        return false;
      break;
  }
  for (std::size_t d = 0; d < 3; ++d) {
    constexpr std::int64_t kMaxParam = std::int64_t{1} << 31;
    if (p.stride[d] < 1 || p.stride[d] >= kMaxParam || p.dilation[d] < 1 ||
        p.dilation[d] >= kMaxParam || p.padding[d] < 0 || p.padding[d] >= kMaxParam ||
        x.size(d + 2) >= kMaxParam || weight.size(d + 2) >= kMaxParam ||
        conv_output_size(x.size(d + 2), weight.size(d + 2), p.stride[d], p.padding[d],
                         p.dilation[d]) < 1)
      return false;
  }
  const auto g = make_geometry3("conv3d", x.shape(), weight.shape(), p);
  return kernels::cpu::onednn::conv3d_direct_available(g, bias.defined());
}

Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv3dParams& p) {
  const char* op = "conv3d";
  check_conv3d_operand(op, "input", x);
  check_conv3d_operand(op, "weight", weight);
  const auto g = make_geometry3(op, x.shape(), weight.shape(), p);
  if (bias.defined()) {
    check_conv3d_operand(op, "bias", bias);
    LG_CHECK_SHAPE(bias.shape() == Shape{g.out_channels}, op, ": expected a bias of shape (",
                   g.out_channels, ") for weight of shape ", weight.shape(), ", got ",
                   bias.shape());
  }
  check_operand_pair(op, "input", x, "weight", weight);
  if (bias.defined()) check_operand_pair(op, "input", x, "bias", bias);
  const Shape out_shape = output_shape3(g);
  if (shape_numel(out_shape, op) == 0) return empty(out_shape, x.options());
  if (is_reduced_precision(x.dtype())) {  // computed in float32, rounded once, as conv2d
    const Tensor b32 = bias.defined() ? cast(bias, kFloat32) : Tensor();
    return cast(conv3d(cast(x, kFloat32), cast(weight, kFloat32), b32, p), x.dtype());
  }
  if (shape_numel(weight.shape(), op) == 0) {  // C_in = 0: sums of nothing
    const Tensor out = zeros(out_shape, x.options());
    return bias.defined() ? binary(BinaryOp::Add, out, bias.reshape({g.out_channels, 1, 1, 1}))
                          : out;
  }
  const Tensor xc = contiguous(x);
  const Tensor wc = contiguous(weight);
  const Tensor bc = bias.defined() ? contiguous(bias) : Tensor();
  Tensor out = empty(out_shape, x.options());
  check_ran(op,
            kernels::cpu::onednn::conv3d_direct_forward(
                g, static_cast<float*>(out.data_ptr()), static_cast<const float*>(xc.data_ptr()),
                static_cast<const float*>(wc.data_ptr()),
                bc.defined() ? static_cast<const float*>(bc.data_ptr()) : nullptr),
            g);
  return out;
}

Tensor conv3d_input_grad(const Tensor& grad_out, const Tensor& weight, const Shape& input_shape,
                         const Conv3dParams& p) {
  const char* op = "conv3d_input_grad";
  check_conv3d_operand(op, "grad_out", grad_out);
  check_conv3d_operand(op, "weight", weight);
  const auto g = make_geometry3(op, input_shape, weight.shape(), p);
  LG_CHECK_SHAPE(grad_out.shape() == output_shape3(g), op, ": expected grad_out of shape ",
                 output_shape3(g), " (the convolution's output), got ", grad_out.shape());
  check_operand_pair(op, "grad_out", grad_out, "weight", weight);
  if (shape_numel(input_shape, op) == 0) return empty(input_shape, grad_out.options());
  if (grad_out.numel() == 0 || weight.numel() == 0) return zeros(input_shape, grad_out.options());
  if (is_reduced_precision(grad_out.dtype())) {
    return cast(conv3d_input_grad(cast(grad_out, kFloat32), cast(weight, kFloat32), input_shape, p),
                grad_out.dtype());
  }
  const Tensor dyc = contiguous(grad_out);
  const Tensor wc = contiguous(weight);
  Tensor dx = empty(input_shape, grad_out.options());
  check_ran(op,
            kernels::cpu::onednn::conv3d_direct_input_grad(
                g, static_cast<float*>(dx.data_ptr()), static_cast<const float*>(dyc.data_ptr()),
                static_cast<const float*>(wc.data_ptr())),
            g);
  return dx;
}

Tensor conv3d_weight_grad(const Tensor& grad_out, const Tensor& x, const Shape& weight_shape,
                          const Conv3dParams& p) {
  const char* op = "conv3d_weight_grad";
  check_conv3d_operand(op, "grad_out", grad_out);
  check_conv3d_operand(op, "input", x);
  const auto g = make_geometry3(op, x.shape(), weight_shape, p);
  LG_CHECK_SHAPE(grad_out.shape() == output_shape3(g), op, ": expected grad_out of shape ",
                 output_shape3(g), " (the convolution's output), got ", grad_out.shape());
  check_operand_pair(op, "grad_out", grad_out, "input", x);
  if (shape_numel(weight_shape, op) == 0) return empty(weight_shape, x.options());
  if (grad_out.numel() == 0 || x.numel() == 0) return zeros(weight_shape, x.options());
  if (is_reduced_precision(x.dtype())) {
    return cast(conv3d_weight_grad(cast(grad_out, kFloat32), cast(x, kFloat32), weight_shape, p),
                x.dtype());
  }
  const Tensor dyc = contiguous(grad_out);
  const Tensor xc = contiguous(x);
  Tensor dw = empty(weight_shape, x.options());
  check_ran(op,
            kernels::cpu::onednn::conv3d_direct_weight_grad(
                g, static_cast<float*>(dw.data_ptr()), static_cast<const float*>(dyc.data_ptr()),
                static_cast<const float*>(xc.data_ptr())),
            g);
  return dw;
}

}  // namespace leangrad::ops
