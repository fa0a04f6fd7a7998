// conv3d and the 3-d poolings (autograd/volumetric_functions.h), composed of the 2-d functions.
#include <leangrad/autograd/volumetric_functions.h>

#include <string>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

// Note [Volumes by planes]
// A 3-d layer is written with the 2-d ones, so every 2-d kernel (CPU and CUDA, forward and
// backward) serves it and autograd differentiates the composition to any order. (conv3d and
// conv_transpose3d on the CPU in float32, float16 and bfloat16 run oneDNN's 3-D kernel instead,
// where it has one: Note [Direct 3-D convolution] in kernels/ops_conv.cpp.)
//  - conv3d: output depth d sums, over the kernel's depths k, the 2-d convolution of input plane
//    d stride + k dilation (after zero padding in depth) with the weight's slice k. One
//    index_select gathers those planes for every (d, k) (the depth im2col: kD copies of the
//    input where the 2-d kernels then make their own im2col), laid out as (N D_out, C_in kD,
//    H, W), and one conv2d with the weight's channels in the same order does every sum at once.
//    With one group the gather reads the depth-major view (N, D, C, H, W) and lands in
//    channel k C + c, the weight permuted to match, with no copy beside the gather; with groups
//    the channel is c kD + k, so each group's channels stay together as the weight's are (the
//    weight a view; the gathered planes permuted once). index_select's backward adds the
//    gradients of overlapping windows.
//  - conv_transpose3d: input plane i, weighted by the weight's depth slice k, lands on output depth
//    i stride + k dilation - padding (the transpose of conv3d's gather). One conv_transpose2d of
//    the (N D, C_in, H, W) planes with the weight's (C_out, kD) pairs as its output channels makes
//    every (i, k) plane at once; one index_add sums them into their output depths (a buffer of
//    the unpadded depth, output_padding included, then narrowed by the padding). With one group
//    the channels are k C_out + o, so the planes are (N, D kD, C_out, H_out, W_out) as they
//    come; with groups they are o kD + k, each group's together as the weight's, and the planes
//    are permuted once. index_add's backward gathers each (i, k) plane's gradient back.
//  - the poolings are separable, a box window being the product of its three ranges: the 2-d
//    pooling over (H, W) of the (N, C D, H, W) planes, then the 2-d pooling with a (k_D, 1)
//    window over (D, H_out W_out). An average's divisor is the product of the per-dim window
//    sizes (in the padded input, or in the input without count_include_pad), as PyTorch's;
//    divisor_override divides the two stages' sums once. A maximum over the box is the maximum
//    over depth of the planes' maxima, and the first maximum in (d, h, w) order is the first
//    depth's first in (h, w): the gradient goes where PyTorch's goes. The volume index d H W +
//    h W + w of a maximum is put together on the host from the two stages' indices (only the
//    _with_indices forms do it).

namespace {

// (N, C, D, H, W) from a batched or unbatched volume; `op` names the function in the Error.
Tensor batched_volume(const char* op, const Tensor& x) {
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == 4 || x.dim() == 5, op,
                 ": expected input (N, C, D, H, W) or (C, D, H, W), got ", x.shape());
  return x.dim() == 4 ? unsqueeze(x, 0) : x;
}

Tensor conv3d_by_kernel(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const ops::Conv3dParams& p);

Tensor unbatch_like(const Tensor& y, const Tensor& input) {
  return input.dim() == 4 ? squeeze(y, 0) : y;
}

std::string size3_str(Size3 s) {
  return shape_str({s[0], s[1], s[2]});
}

// The pooling checks of pool_shape (kernels/ops_layers.cpp) per dim, in the 3-d function's name:
// positive kernel and dilation, stride positive or 0 (the kernel), padding in [0, kernel / 2],
// everything below 2^31, and an output of at least one element along each dim. Returns the
// stride meant.
Size3 check_pool3d(const char* op, const Tensor& x, Size3 kernel, Size3 stride, Size3 padding,
                   Size3 dilation, bool ceil_mode) {
  constexpr std::int64_t kMaxParam = std::int64_t{1} << 31;
  Size3 s = stride;
  for (int d = 0; d < 3; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (s[i] == 0) s[i] = kernel[i];
    LG_CHECK(kernel[i] > 0 && s[i] > 0 && dilation[i] > 0, op,
             ": expected a positive kernel_size and dilation and a positive (or 0) stride, got ",
             size3_str(kernel), ", ", size3_str(stride), " and ", size3_str(dilation));
    LG_CHECK(kernel[i] < kMaxParam && s[i] < kMaxParam && dilation[i] < kMaxParam &&
                 x.size(x.dim() - 3 + d) < kMaxParam,
             op, ": kernel_size, stride, dilation and the input's sizes must be below 2^31");
    LG_CHECK(padding[i] >= 0 && padding[i] <= kernel[i] / 2, op,
             ": padding should be at least 0 and at most half the kernel size, got padding ",
             size3_str(padding), " for kernel ", size3_str(kernel));
    const std::int64_t n = x.size(x.dim() - 3 + d);
    const std::int64_t out =
        layers_math::pooled_size(n, kernel[i], s[i], padding[i], dilation[i], ceil_mode);
    LG_CHECK_SHAPE(out >= 1, op, ": input ", x.shape(), " is too small for kernel_size ",
                   size3_str(kernel), ", dilation ", size3_str(dilation), " and padding ",
                   size3_str(padding), " (no output along dim ", x.dim() - 3 + d, ")");
  }
  return s;
}

// The volume index d H W + h W + w of each maximum from the planes' indices `in_plane` (N, C D,
// OH, OW) (h W + w) and the depth stage's `in_depth` (N, C, OD, OH OW) (d OH OW + j): -1 where
// either stage found no input (Note [Volumes by planes]).
Tensor volume_indices(const Tensor& in_plane, const Tensor& in_depth, std::int64_t depth,
                      std::int64_t plane) {
  const NoGradGuard no_grad;
  const Tensor first = in_plane.to(Device::cpu()).contiguous();
  const Tensor second = in_depth.to(Device::cpu()).contiguous();
  const std::int64_t n = second.size(0), c = second.size(1), od = second.size(2);
  const std::int64_t cells = second.size(3);  // OH OW
  const std::int64_t* p = first.data_ptr<std::int64_t>();
  const std::int64_t* q = second.data_ptr<std::int64_t>();
  std::vector<std::int64_t> out(static_cast<std::size_t>(second.numel()));
  for (std::int64_t volume = 0; volume < n * c; ++volume) {
    for (std::int64_t i = 0; i < od * cells; ++i) {
      const std::int64_t j = i % cells;
      const std::int64_t at = q[volume * od * cells + i];
      std::int64_t index = -1;
      if (at >= 0) {
        const std::int64_t d = at / cells;
        const std::int64_t hw = p[(volume * depth + d) * cells + j];
        if (hw >= 0) index = d * plane + hw;
      }
      out[static_cast<std::size_t>(volume * od * cells + i)] = index;
    }
  }
  return tensor(out, second.shape()).to(in_depth.device());
}

// An adaptive 3-d pooling's input as (N, C, D, H, W), checked in the op's own name (the 2-d
// poolings it is made of would name themselves and their (N, C D, H, W) views): a non-negative
// output size whose volume fits int64, and no empty dim but the batch, as torch's.
Tensor checked_adaptive_input(const char* op, const Tensor& x_in, Size3 output_size) {
  const Tensor x = batched_volume(op, x_in);
  LG_CHECK_SHAPE(output_size[0] >= 0 && output_size[1] >= 0 && output_size[2] >= 0, op,
                 ": expected a non-negative output size, got ", size3_str(output_size),
                 " for input ", x_in.shape());
  static_cast<void>(
      checked_mul(checked_mul(output_size[0], output_size[1], op), output_size[2], op));
  for (std::int64_t dim = 1; dim < 5; ++dim) {
    LG_CHECK_SHAPE(x.size(dim) > 0, op,
                   ": expected input to have non-zero size for non-batch dimensions, got shape ",
                   x_in.shape());
  }
  return x;
}

// conv3d by its kernel (Note [Direct 3-D convolution] in kernels/ops_conv.cpp), recorded as conv2d
// is: each gradient is an op of its own whose gradients are the other two (bilinear, Note
// [Double backward] in autograd/nn_functions.cpp), so it differentiates to any order.
Tensor conv3d_weight_grad_fn(const Tensor& g, const Tensor& x, const Shape& w_shape,
                             const ops::Conv3dParams& p);

// `name` names the node: conv_transpose3d is this op, as conv_transpose2d is conv2d's.
Tensor conv3d_input_grad_fn(const Tensor& g, const Tensor& w, const Shape& x_shape,
                            const ops::Conv3dParams& p, const char* name = "conv3d_input_grad") {
  return autograd::record_op(name, ops::conv3d_input_grad(g, w, x_shape, p), {g, w}, {g, w},
                             [p](const autograd::BackwardContext& c) -> std::vector<Tensor> {
                               const Tensor& g_saved = c.saved[0];
                               const Tensor& w_saved = c.saved[1];
                               std::vector<Tensor> grads(2);
                               if (c.needs(0))
                                 grads[0] = conv3d_by_kernel(c.grad, w_saved, Tensor(), p);
                               if (c.needs(1))
                                 grads[1] =
                                     conv3d_weight_grad_fn(g_saved, c.grad, w_saved.shape(), p);
                               return grads;
                             });
}

Tensor conv3d_weight_grad_fn(const Tensor& g, const Tensor& x, const Shape& w_shape,
                             const ops::Conv3dParams& p) {
  return autograd::record_op(
      "conv3d_weight_grad", ops::conv3d_weight_grad(g, x, w_shape, p), {g, x}, {g, x},
      [p](const autograd::BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& g_saved = c.saved[0];
        const Tensor& x_saved = c.saved[1];
        std::vector<Tensor> grads(2);
        if (c.needs(0)) grads[0] = conv3d_by_kernel(x_saved, c.grad, Tensor(), p);
        if (c.needs(1)) grads[1] = conv3d_input_grad_fn(g_saved, c.grad, x_saved.shape(), p);
        return grads;
      });
}

Tensor conv3d_by_kernel(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const ops::Conv3dParams& p) {
  std::vector<Tensor> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return autograd::record_op(
      "conv3d", ops::conv3d(x, weight, bias, p), inputs, {x, weight},
      [p](const autograd::BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x_saved = c.saved[0];
        const Tensor& w_saved = c.saved[1];
        std::vector<Tensor> grads(c.inputs.size());
        if (c.needs(0)) grads[0] = conv3d_input_grad_fn(c.grad, w_saved, x_saved.shape(), p);
        if (c.needs(1)) grads[1] = conv3d_weight_grad_fn(c.grad, x_saved, w_saved.shape(), p);
        if (c.inputs.size() == 3 && c.needs(2)) grads[2] = sum(c.grad, {0, 2, 3, 4});
        return grads;
      });
}

}  // namespace

Tensor conv3d(const Tensor& x_in, const Tensor& weight, const Tensor& bias, Size3 stride,
              Size3 padding, Size3 dilation, std::int64_t groups) {
  LG_PROFILE_OP(x_in, weight, bias);
  const char* op = "conv3d";
  LG_CHECK(weight.defined(), op, ": expected a defined weight");
  const Tensor x = batched_volume(op, x_in);
  LG_CHECK_SHAPE(weight.dim() == 5, op,
                 ": expected weight of shape (C_out, C_in / groups, kD, kH, kW), got ",
                 weight.shape());
  LG_CHECK_DTYPE(is_floating(weight.dtype()), op, ": expected a floating weight, got ",
                 weight.dtype());
  LG_CHECK_DEVICE(weight.device() == x.device() && (!bias.defined() || bias.device() == x.device()),
                  op, ": the input is on ", x.device(), ", the weight on ", weight.device(),
                  bias.defined() ? detail::str_cat(", the bias on ", bias.device()) : "");
  for (std::size_t d = 0; d < 3; ++d) {
    LG_CHECK_SHAPE(stride[d] >= 1 && dilation[d] >= 1 && padding[d] >= 0 && groups >= 1, op,
                   ": expected stride >= 1, padding >= 0, dilation >= 1 and groups >= 1, got ",
                   size3_str(stride), ", ", size3_str(padding), ", ", size3_str(dilation), ", ",
                   groups);
  }
  const std::int64_t n = x.size(0), c = x.size(1);
  const std::int64_t c_out = weight.size(0), kd = weight.size(2);
  LG_CHECK_SHAPE(c_out % groups == 0 && c == checked_mul(weight.size(1), groups, op), op,
                 ": input ", x_in.shape(), " and weight ", weight.shape(), " with groups ", groups,
                 ": expected C_in = weight.size(1) * groups and C_out divisible by groups");
  LG_CHECK_SHAPE(!bias.defined() || bias.shape() == Shape{c_out}, op,
                 ": expected a bias of shape [", c_out, "] for weight of shape ", weight.shape(),
                 ", got ", bias.shape());
  // Each output extent (D + 2 padding - dilation (kD - 1) - 1) / stride + 1, in checked
  // arithmetic, checked here for all three dims so that the errors name conv3d and the shapes
  // given (the planes' conv2d would name itself and its own).
  const char* dim_names[] = {"depth", "height", "width"};
  std::int64_t d_out = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    const auto at = static_cast<std::int64_t>(d) + 2;
    const std::int64_t k = weight.size(at);
    const std::int64_t span = checked_add(checked_mul(dilation[d], k - 1, op), std::int64_t{1}, op);
    const std::int64_t padded = checked_add(x.size(at), checked_mul(padding[d], 2, op), op);
    LG_CHECK_SHAPE(k >= 1 && padded >= span, op, ": input ", x_in.shape(), " padded by ",
                   size3_str(padding), " is smaller in ", dim_names[d], " than the kernel's span ",
                   span, " (weight ", weight.shape(), ", dilation ", size3_str(dilation),
                   "): no output");
    if (d == 0) d_out = (padded - span) / stride[0] + 1;
  }
  // On the CPU oneDNN's 3-D kernel where it has one (Note [Direct 3-D convolution]), with the
  // operands in the dtype conv2d would take them in under autocast (unchanged without it).
  const ops::Conv3dParams p{stride, padding, dilation, groups};
  {
    const Tensor xk = amp::autocast_operand(x, amp::CastPolicy::LowerPrecision);
    const Tensor wk = amp::autocast_operand(weight, amp::CastPolicy::LowerPrecision);
    const Tensor bk = amp::autocast_operand(bias, amp::CastPolicy::LowerPrecision);
    if (ops::use_conv3d_kernel(xk, wk, bk, p))
      return unbatch_like(conv3d_by_kernel(xk, wk, bk, p), x_in);
  }
  // The planes of every (output depth, kernel depth) pair (Note [Volumes by planes]).
  const Tensor padded_x = padding[0] > 0 ? pad(x, {0, 0, 0, 0, padding[0], padding[0]}) : x;
  std::vector<std::int64_t> planes_at(static_cast<std::size_t>(checked_mul(d_out, kd, op)));
  for (std::int64_t d = 0; d < d_out; ++d)
    for (std::int64_t k = 0; k < kd; ++k)
      planes_at[static_cast<std::size_t>(d * kd + k)] = d * stride[0] + k * dilation[0];
  const Tensor at = tensor(planes_at, {static_cast<std::int64_t>(planes_at.size())}).to(x.device());
  const std::int64_t h = x.size(3), w = x.size(4);
  Tensor planes, weight2;
  if (groups == 1) {
    // One group: gather from the depth-major view straight into (N, D_out kD, C, H, W), channel
    // k C + c, and order the weight's channels so; no copy beside the gather.
    planes =
        reshape(index_select(permute(padded_x, {0, 2, 1, 3, 4}), 1, at), {n * d_out, kd * c, h, w});
    weight2 = reshape(permute(weight, {0, 2, 1, 3, 4}),
                      {c_out, kd * weight.size(1), weight.size(3), weight.size(4)});
  } else {
    // Groups: channel c kD + k keeps each group's channels together, as the weight's are.
    const Tensor gathered = index_select(padded_x, 2, at);
    planes = reshape(permute(reshape(gathered, {n, c, d_out, kd, h, w}), {0, 2, 1, 3, 4, 5}),
                     {n * d_out, c * kd, h, w});
    weight2 = reshape(weight, {c_out, weight.size(1) * kd, weight.size(3), weight.size(4)});
  }
  const Tensor y = conv2d(planes, weight2, bias, {stride[1], stride[2]}, {padding[1], padding[2]},
                          {dilation[1], dilation[2]}, groups);
  const Tensor volume =
      permute(reshape(y, {n, d_out, c_out, y.size(2), y.size(3)}), {0, 2, 1, 3, 4}).contiguous();
  return unbatch_like(volume, x_in);
}

Tensor conv_transpose3d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in,
                        Size3 stride, Size3 padding, Size3 output_padding, std::int64_t groups,
                        Size3 dilation) {
  LG_PROFILE_OP(x_in, weight_in, bias_in);
  const char* op = "conv_transpose3d";
  LG_CHECK(weight_in.defined(), op, ": expected a defined weight");
  // Under autocast every operand is cast up front, so that the depth sums and the bias run in the
  // dtype of the 2-d stage's output.
  const Tensor x = amp::autocast_operand(batched_volume(op, x_in), amp::CastPolicy::LowerPrecision);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::LowerPrecision);
  const Tensor bias = amp::autocast_operand(bias_in, amp::CastPolicy::LowerPrecision);
  LG_CHECK_SHAPE(weight.dim() == 5, op,
                 ": expected weight of shape (C_in, C_out / groups, kD, kH, kW), got ",
                 weight.shape());
  LG_CHECK_DTYPE(weight.dtype() == x.dtype() && (!bias.defined() || bias.dtype() == x.dtype()), op,
                 ": expected input, weight and bias of one dtype, got ", x.dtype(), ", ",
                 weight.dtype(), bias.defined() ? detail::str_cat(" and ", bias.dtype()) : "");
  LG_CHECK_DEVICE(weight.device() == x.device() && (!bias.defined() || bias.device() == x.device()),
                  op, ": the input is on ", x.device(), ", the weight on ", weight.device(),
                  bias.defined() ? detail::str_cat(", the bias on ", bias.device()) : "");
  const std::int64_t n = x.size(0), c_in = x.size(1), depth = x.size(2);
  LG_CHECK_SHAPE(weight.size(2) >= 1 && weight.size(3) >= 1 && weight.size(4) >= 1, op,
                 ": expected a kernel of at least one element along each dim, got weight ",
                 weight.shape());
  LG_CHECK_SHAPE(groups >= 1 && c_in % groups == 0 && weight.size(0) == c_in, op, ": input ",
                 x_in.shape(), " and weight ", weight.shape(), " with groups ", groups,
                 ": expected C_in = weight.size(0), divisible by groups");
  for (std::size_t d = 0; d < 3; ++d) {
    LG_CHECK_SHAPE(stride[d] >= 1 && dilation[d] >= 1 && padding[d] >= 0 &&
                       output_padding[d] >= 0 && output_padding[d] < stride[d],
                   op,
                   ": expected stride and dilation >= 1, padding >= 0 and 0 <= output_padding < "
                   "stride, got stride ",
                   size3_str(stride), ", padding ", size3_str(padding), ", output_padding ",
                   size3_str(output_padding), ", dilation ", size3_str(dilation));
  }
  // Each size (S - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1, in checked
  // arithmetic; depth's before the padding is taken off too.
  Size3 unpadded{}, out_size{};
  for (std::size_t d = 0; d < 3; ++d) {
    const auto dim = static_cast<std::int64_t>(d) + 2;
    std::int64_t size = checked_mul(x.size(dim) - 1, stride[d], op);
    size = checked_add(size, checked_mul(dilation[d], weight.size(dim) - 1, op), op);
    unpadded[d] = checked_add(size, output_padding[d] + 1, op);
    out_size[d] = checked_add(unpadded[d], -checked_mul(padding[d], 2, op), op);
  }
  LG_CHECK_SHAPE(out_size[0] >= 1 && out_size[1] >= 1 && out_size[2] >= 1, op, ": the output size ",
                 size3_str(out_size), " of input ", x_in.shape(), " with weight ", weight.shape(),
                 ", stride ", size3_str(stride), ", padding ", size3_str(padding), " and dilation ",
                 size3_str(dilation), " is not positive");
  const std::int64_t c_out = checked_mul(weight.size(1), groups, op);
  LG_CHECK_SHAPE(!bias.defined() || bias.shape() == Shape{c_out}, op,
                 ": expected a bias of shape (", c_out, ") for weight of shape ", weight.shape(),
                 " and groups = ", groups, ", got ", bias.defined() ? bias.shape() : Shape{});
  // float32 on the CPU: the 3-D kernel's input gradient, of which this is the op (Note [Direct 3-D
  // convolution]); the convolution's input is the output, asked about through a stand-in of its
  // shape that holds no memory (an expanded 0-d tensor).
  const ops::Conv3dParams p{stride, padding, dilation, groups};
  const Shape out_shape{n, c_out, out_size[0], out_size[1], out_size[2]};
  if (ops::use_conv3d_kernel(zeros({}, x.options()).expand(out_shape), weight, Tensor(), p)) {
    const Tensor y = conv3d_input_grad_fn(x, weight, out_shape, p, "conv_transpose3d");
    return unbatch_like(bias.defined() ? add(y, reshape(bias, {c_out, 1, 1, 1})) : y, x_in);
  }
  // Every (input depth, kernel depth) plane (Note [Volumes by planes]).
  const std::int64_t kd = weight.size(2), kh = weight.size(3), kw = weight.size(4);
  const Tensor planes =
      reshape(permute(x, {0, 2, 1, 3, 4}), {checked_mul(n, depth, op), c_in, x.size(3), x.size(4)});
  const Tensor weight2 = groups == 1
                             ? reshape(permute(weight, {0, 2, 1, 3, 4}), {c_in, kd * c_out, kh, kw})
                             : reshape(weight, {c_in, weight.size(1) * kd, kh, kw});
  const Tensor y =
      conv_transpose2d(planes, weight2, Tensor(), {stride[1], stride[2]}, {padding[1], padding[2]},
                       {output_padding[1], output_padding[2]}, groups, {dilation[1], dilation[2]});
  const std::int64_t h_out = y.size(2), w_out = y.size(3);
  const Tensor taps =
      groups == 1
          ? reshape(y, {n, depth * kd, c_out, h_out, w_out})
          : reshape(permute(reshape(y, {n, depth, c_out, kd, h_out, w_out}), {0, 1, 3, 2, 4, 5}),
                    {n, depth * kd, c_out, h_out, w_out});
  std::vector<std::int64_t> lands_at(static_cast<std::size_t>(depth * kd));
  for (std::int64_t i = 0; i < depth; ++i)
    for (std::int64_t k = 0; k < kd; ++k)
      lands_at[static_cast<std::size_t>(i * kd + k)] = i * stride[0] + k * dilation[0];
  const Tensor at = tensor(lands_at, {depth * kd}).to(x.device());
  const Tensor sums =
      index_add(zeros({n, unpadded[0], c_out, h_out, w_out}, taps.options()), 1, at, taps);
  const Tensor volume = permute(narrow(sums, 1, padding[0], out_size[0]), {0, 2, 1, 3, 4});
  const Tensor out =
      bias.defined() ? add(volume, reshape(bias, {c_out, 1, 1, 1})) : volume.contiguous();
  return unbatch_like(out, x_in);
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x_in, Size3 kernel, Size3 stride,
                                                   Size3 padding, Size3 dilation, bool ceil_mode) {
  LG_PROFILE_OP(x_in);
  const char* op = "max_pool3d";
  const Tensor x = batched_volume(op, x_in);
  const Size3 s = check_pool3d(op, x, kernel, stride, padding, dilation, ceil_mode);
  const std::int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
  auto [planes, in_plane] =
      max_pool2d_with_indices(reshape(x, {n, c * d, h, w}), {kernel[1], kernel[2]}, {s[1], s[2]},
                              {padding[1], padding[2]}, {dilation[1], dilation[2]}, ceil_mode);
  const std::int64_t oh = planes.size(2), ow = planes.size(3);
  auto [depths, in_depth] =
      max_pool2d_with_indices(reshape(planes, {n, c, d, oh * ow}), {kernel[0], 1}, {s[0], 1},
                              {padding[0], 0}, {dilation[0], 1}, ceil_mode);
  const Tensor out = reshape(depths, {n, c, depths.size(2), oh, ow});
  const Tensor indices =
      reshape(volume_indices(in_plane, in_depth, d, h * w), {n, c, depths.size(2), oh, ow});
  return {unbatch_like(out, x_in), unbatch_like(indices, x_in)};
}

Tensor max_pool3d(const Tensor& x_in, Size3 kernel, Size3 stride, Size3 padding, Size3 dilation,
                  bool ceil_mode) {
  LG_PROFILE_OP(x_in);
  const char* op = "max_pool3d";
  const Tensor x = batched_volume(op, x_in);
  const Size3 s = check_pool3d(op, x, kernel, stride, padding, dilation, ceil_mode);
  const std::int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
  const Tensor planes =
      max_pool2d(reshape(x, {n, c * d, h, w}), {kernel[1], kernel[2]}, {s[1], s[2]},
                 {padding[1], padding[2]}, {dilation[1], dilation[2]}, ceil_mode);
  const std::int64_t oh = planes.size(2), ow = planes.size(3);
  const Tensor depths = max_pool2d(reshape(planes, {n, c, d, oh * ow}), {kernel[0], 1}, {s[0], 1},
                                   {padding[0], 0}, {dilation[0], 1}, ceil_mode);
  return unbatch_like(reshape(depths, {n, c, depths.size(2), oh, ow}), x_in);
}

Tensor avg_pool3d(const Tensor& x_in, Size3 kernel, Size3 stride, Size3 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  LG_PROFILE_OP(x_in);
  const char* op = "avg_pool3d";
  const Tensor x = batched_volume(op, x_in);
  const Size3 s = check_pool3d(op, x, kernel, stride, padding, {1, 1, 1}, ceil_mode);
  LG_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must not be 0");
  // With divisor_override, each stage sums (divides by 1) and the sum is divided once.
  const std::optional<std::int64_t> stage_divisor =
      divisor_override ? std::optional<std::int64_t>(1) : std::nullopt;
  const std::int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
  const Tensor planes =
      avg_pool2d(reshape(x, {n, c * d, h, w}), {kernel[1], kernel[2]}, {s[1], s[2]},
                 {padding[1], padding[2]}, ceil_mode, count_include_pad, stage_divisor);
  const std::int64_t oh = planes.size(2), ow = planes.size(3);
  Tensor depths = avg_pool2d(reshape(planes, {n, c, d, oh * ow}), {kernel[0], 1}, {s[0], 1},
                             {padding[0], 0}, ceil_mode, count_include_pad, stage_divisor);
  if (divisor_override) depths = div(depths, static_cast<double>(*divisor_override));
  return unbatch_like(reshape(depths, {n, c, depths.size(2), oh, ow}), x_in);
}

Tensor adaptive_avg_pool3d(const Tensor& x_in, Size3 output_size) {
  LG_PROFILE_OP(x_in);
  const Tensor x = checked_adaptive_input("adaptive_avg_pool3d", x_in, output_size);
  const std::int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
  const Tensor planes =
      adaptive_avg_pool2d(reshape(x, {n, c * d, h, w}), {output_size[1], output_size[2]});
  const Tensor depths =
      adaptive_avg_pool2d(reshape(planes, {n, c, d, planes.size(2) * planes.size(3)}),
                          {output_size[0], planes.size(2) * planes.size(3)});
  return unbatch_like(reshape(depths, {n, c, output_size[0], output_size[1], output_size[2]}),
                      x_in);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x_in, Size3 output_size) {
  LG_PROFILE_OP(x_in);
  const Tensor x = checked_adaptive_input("adaptive_max_pool3d", x_in, output_size);
  const std::int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
  auto [planes, in_plane] = adaptive_max_pool2d_with_indices(reshape(x, {n, c * d, h, w}),
                                                             {output_size[1], output_size[2]});
  const std::int64_t cells = output_size[1] * output_size[2];
  auto [depths, in_depth] =
      adaptive_max_pool2d_with_indices(reshape(planes, {n, c, d, cells}), {output_size[0], cells});
  const Shape shape = {n, c, output_size[0], output_size[1], output_size[2]};
  const Tensor indices = reshape(volume_indices(in_plane, in_depth, d, h * w), shape);
  return {unbatch_like(reshape(depths, shape), x_in), unbatch_like(indices, x_in)};
}

Tensor adaptive_max_pool3d(const Tensor& x_in, Size3 output_size) {
  LG_PROFILE_OP(x_in);
  const Tensor x = checked_adaptive_input("adaptive_max_pool3d", x_in, output_size);
  const std::int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
  const Tensor planes =
      adaptive_max_pool2d(reshape(x, {n, c * d, h, w}), {output_size[1], output_size[2]});
  const std::int64_t cells = output_size[1] * output_size[2];
  const Tensor depths =
      adaptive_max_pool2d(reshape(planes, {n, c, d, cells}), {output_size[0], cells});
  return unbatch_like(reshape(depths, {n, c, output_size[0], output_size[1], output_size[2]}),
                      x_in);
}

}  // namespace leangrad
