// unfold and fold (autograd/fold_functions.h).
#include <leangrad/autograd/fold_functions.h>

#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

// Note [Blocks by index]
// With the image zero-padded to (H_p, W_p) and each plane flattened, kernel element (i, j) of the
// block at (oh, ow) is plane element (oh stride_h + i dilation_h) W_p + ow stride_w + j
// dilation_w. One index vector of those, ordered (i, j) then (oh, ow), turns unfold into one
// index_select along the flattened plane (N, C, H_p W_p) -> (N, C, kH kW L), a view away from
// (N, C kH kW, L), and fold into one index_add of the columns, viewed (N, C, kH kW L), into zeros
// (N, C, H_p W_p), whose padding is then cut away. index_select's gradient is that index_add and
// the index_add's is that index_select, so unfold and fold are each other's gradient, to any
// order. The indices are computed on the host, kH kW L of them (one column's worth per channel).

namespace {

struct Blocks {
  std::int64_t padded_h = 0, padded_w = 0;  // the padded image
  std::int64_t plane = 0;                   // padded_h padded_w
  std::int64_t count = 0;                   // L
  std::vector<std::int64_t> elements;       // kH kW L plane indices, (i, j) then (oh, ow)
};

std::string size2_str(Size2 s) {
  return shape_str({s[0], s[1]});
}

// The blocks of an (h, w) image, checked: kernel, dilation and stride positive, padding not
// negative, at least one block each way; the Error names `op` and `image_shape`.
Blocks blocks_of(const char* op, const Shape& image_shape, std::int64_t h, std::int64_t w,
                 Size2 kernel, Size2 dilation, Size2 padding, Size2 stride) {
  for (std::size_t d = 0; d < 2; ++d) {
    LG_CHECK_SHAPE(kernel[d] >= 1 && dilation[d] >= 1 && stride[d] >= 1 && padding[d] >= 0, op,
                   ": expected kernel_size, dilation and stride >= 1 and padding >= 0, got "
                   "kernel_size ",
                   size2_str(kernel), ", dilation ", size2_str(dilation), ", padding ",
                   size2_str(padding), ", stride ", size2_str(stride));
  }
  Blocks b;
  std::int64_t per_dim[2] = {0, 0};
  const std::int64_t size[2] = {h, w};
  for (std::size_t d = 0; d < 2; ++d) {
    const std::int64_t padded = checked_add(size[d], checked_mul(padding[d], 2, op), op);
    const std::int64_t span = checked_add(checked_mul(dilation[d], kernel[d] - 1, op), 1, op);
    LG_CHECK_SHAPE(padded >= span, op, ": the ", d == 0 ? "height" : "width", " of ", image_shape,
                   " padded by ", padding[d], " is below the kernel's span ", span,
                   " (kernel_size ", size2_str(kernel), ", dilation ", size2_str(dilation),
                   "): no block");
    per_dim[d] = (padded - span) / stride[d] + 1;
    (d == 0 ? b.padded_h : b.padded_w) = padded;
  }
  b.count = checked_mul(per_dim[0], per_dim[1], op);
  const std::int64_t total = checked_mul(checked_mul(kernel[0], kernel[1], op), b.count, op);
  b.plane = checked_mul(b.padded_h, b.padded_w, op);
  b.elements.reserve(static_cast<std::size_t>(total));
  for (std::int64_t i = 0; i < kernel[0]; ++i)
    for (std::int64_t j = 0; j < kernel[1]; ++j)
      for (std::int64_t oh = 0; oh < per_dim[0]; ++oh)
        for (std::int64_t ow = 0; ow < per_dim[1]; ++ow)
          b.elements.push_back((oh * stride[0] + i * dilation[0]) * b.padded_w + ow * stride[1] +
                               j * dilation[1]);
  return b;
}

Tensor elements_tensor(const Blocks& b, Device device) {
  return tensor(b.elements, {static_cast<std::int64_t>(b.elements.size())}).to(device);
}

}  // namespace

Tensor unfold(const Tensor& x_in, Size2 kernel_size, Size2 dilation, Size2 padding, Size2 stride) {
  LG_PROFILE_OP(x_in);
  const char* op = "unfold";
  autograd::check_floating_input(op, x_in);
  LG_CHECK_SHAPE(x_in.dim() == 3 || x_in.dim() == 4, op,
                 ": expected input (N, C, H, W) or unbatched (C, H, W), got shape ", x_in.shape());
  const Tensor x = x_in.dim() == 3 ? unsqueeze(x_in, 0) : x_in;
  const std::int64_t n = x.size(0), c = x.size(1);
  const Blocks b =
      blocks_of(op, x_in.shape(), x.size(2), x.size(3), kernel_size, dilation, padding, stride);
  const Tensor padded = padding[0] > 0 || padding[1] > 0
                            ? pad(x, {padding[1], padding[1], padding[0], padding[0]})
                            : x;
  const Tensor gathered =
      index_select(reshape(padded, {n, c, b.plane}), 2, elements_tensor(b, x.device()));
  const Tensor columns =
      reshape(gathered, {n, checked_mul(c, kernel_size[0] * kernel_size[1], op), b.count});
  return x_in.dim() == 3 ? squeeze(columns, 0) : columns;
}

Tensor fold(const Tensor& columns_in, Size2 output_size, Size2 kernel_size, Size2 dilation,
            Size2 padding, Size2 stride) {
  LG_PROFILE_OP(columns_in);
  const char* op = "fold";
  autograd::check_floating_input(op, columns_in);
  LG_CHECK_SHAPE(columns_in.dim() == 2 || columns_in.dim() == 3, op,
                 ": expected input (N, C kH kW, L) or unbatched (C kH kW, L), got shape ",
                 columns_in.shape());
  LG_CHECK_SHAPE(output_size[0] >= 1 && output_size[1] >= 1, op,
                 ": expected a positive output_size, got ", size2_str(output_size));
  const Tensor columns = columns_in.dim() == 2 ? unsqueeze(columns_in, 0) : columns_in;
  const Blocks b = blocks_of(op, Shape{output_size[0], output_size[1]}, output_size[0],
                             output_size[1], kernel_size, dilation, padding, stride);
  const std::int64_t kernel = kernel_size[0] * kernel_size[1];
  LG_CHECK_SHAPE(columns.size(1) % kernel == 0, op, ": input of shape ", columns_in.shape(),
                 ": its ", columns.size(1), " rows are not a multiple of kernel_size ",
                 size2_str(kernel_size), "'s ", kernel, " elements");
  LG_CHECK_SHAPE(columns.size(2) == b.count, op, ": input of shape ", columns_in.shape(), " has ",
                 columns.size(2), " blocks, but output_size ", size2_str(output_size),
                 " with kernel_size ", size2_str(kernel_size), ", dilation ", size2_str(dilation),
                 ", padding ", size2_str(padding), " and stride ", size2_str(stride), " gives ",
                 b.count);
  const std::int64_t n = columns.size(0), c = columns.size(1) / kernel;
  const Tensor sums =
      index_add(zeros({n, c, b.plane}, columns.options()), 2, elements_tensor(b, columns.device()),
                reshape(columns, {n, c, kernel * b.count}));
  Tensor image = reshape(sums, {n, c, b.padded_h, b.padded_w});
  if (padding[0] > 0) image = narrow(image, 2, padding[0], output_size[0]);
  if (padding[1] > 0) image = narrow(image, 3, padding[1], output_size[1]);
  if (padding[0] > 0 || padding[1] > 0) image = image.contiguous();
  return columns_in.dim() == 2 ? squeeze(image, 0) : image;
}

}  // namespace leangrad
