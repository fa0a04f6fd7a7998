// lp_pool1d, lp_pool2d, local_response_norm, cross_map_lrn2d, bilinear, channel_shuffle, rrelu
// and max_unpool*d (autograd/composed_layers.h), each PyTorch's composition of other functions.
#include <leangrad/autograd/composed_layers.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

namespace {

void check_norm_type(const char* op, double norm_type) {
  LG_CHECK(norm_type != 0.0 && std::isfinite(norm_type), op,
           ": expected a finite, non-zero norm_type, got ", norm_type);
}

// PyTorch's tail of an LP pool: (sign(avg) relu(|avg|)) window_size, to the power 1 / p (the
// sign and relu change nothing but the gradient at 0, kept for parity).
Tensor lp_of_average(const Tensor& average, double norm_type, double window) {
  return pow(mul(mul(sign(average), relu(abs(average))), window), 1.0 / norm_type);
}

}  // namespace

Tensor lp_pool1d(const Tensor& x, double norm_type, std::int64_t kernel_size, std::int64_t stride,
                 bool ceil_mode) {
  LG_PROFILE_OP(x);
  check_norm_type("lp_pool1d", norm_type);
  autograd::check_floating_input("lp_pool1d", x);
  const Tensor average = avg_pool1d(pow(x, norm_type), kernel_size, stride, 0, ceil_mode);
  return lp_of_average(average, norm_type, static_cast<double>(kernel_size));
}

Tensor lp_pool2d(const Tensor& x, double norm_type, Size2 kernel_size, Size2 stride,
                 bool ceil_mode) {
  LG_PROFILE_OP(x);
  check_norm_type("lp_pool2d", norm_type);
  autograd::check_floating_input("lp_pool2d", x);
  const Tensor average = avg_pool2d(pow(x, norm_type), kernel_size, stride, {0, 0}, ceil_mode);
  return lp_of_average(average, norm_type,
                       static_cast<double>(kernel_size[0]) * static_cast<double>(kernel_size[1]));
}

Tensor local_response_norm(const Tensor& x, std::int64_t size, double alpha, double beta,
                           double k) {
  LG_PROFILE_OP(x);
  const char* op = "local_response_norm";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() >= 3, op, ": expected an input of at least 3 dims (N, C, *), got shape ",
                 x.shape());
  LG_CHECK(size >= 1, op, ": expected a positive size, got ", size);
  // An empty input (no batch, channels or positions) has nothing to normalize; its windows'
  // reshape and pooling below would divide by its zero sizes.
  if (x.numel() == 0) return div(x, std::pow(k, beta));
  const std::int64_t n = x.size(0), channels = x.size(1);
  const std::int64_t rest = x.numel() / (n * channels);
  // The mean of x^2 over each channel window: (N, 1, C, rest) padded along C, averaged over
  // (size, 1) windows (PyTorch's avg_pool2d / avg_pool3d, which divide by size).
  const Tensor squares = reshape(mul(x, x), {n, 1, channels, rest});
  const Tensor padded = pad(squares, {0, 0, size / 2, (size - 1) / 2});
  const Tensor mean = reshape(avg_pool2d(padded, {size, 1}, {1, 1}), x.shape());
  return div(x, pow(add(mul(mean, alpha), k), beta));
}

// Note [Cross-map windows]
// PyTorch's CrossMapLRN2d (torch/nn/_functions.py, and LibTorch's copy of it) keeps a running sum
// over the channels: channel 0's is x_0^2 + ... + x_{p-1}^2, and each next channel adds the
// square p - 1 ahead and takes out the one p behind, but only from channel p + 1 on (c > p), so
// x_0^2 is never taken out. Channel c's window is thus [max(0, c - p + 1), min(C - 1, c + p - 1)],
// plus channel 0 for c >= p. Here the plain windows' sums are an average pool of the zero-padded
// squares times the width 2p - 1, and channel 0's square is added to the channels from p on.
// PyTorch's hand-written backward assumes yet another window, so its gradient is not its own
// forward's derivative (finite differences of its forward disagree with it); the gradient here is
// the forward's.

Tensor cross_map_lrn2d(const Tensor& x, std::int64_t size, double alpha, double beta, double k) {
  LG_PROFILE_OP(x);
  const char* op = "cross_map_lrn2d";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", x.shape());
  LG_CHECK(size >= 1, op, ": expected a positive size, got ", size);
  const std::int64_t p = (size - 1) / 2 + 1, width = 2 * p - 1;
  const std::int64_t n = x.size(0), channels = x.size(1);
  const std::int64_t cells = checked_mul(x.size(2), x.size(3), op);
  const Tensor squares = mul(x, x);
  const Tensor padded = pad(reshape(squares, {n, 1, channels, cells}), {0, 0, p - 1, p - 1});
  Tensor sums =
      mul(reshape(avg_pool2d(padded, {width, 1}, {1, 1}), x.shape()), static_cast<double>(width));
  if (channels > p) {
    std::vector<double> from_p(static_cast<std::size_t>(channels), 0.0);
    std::fill(from_p.begin() + p, from_p.end(), 1.0);
    const Tensor mask = tensor(from_p, {1, channels, 1, 1}).to(x.dtype()).to(x.device());
    sums = add(sums, mul(narrow(squares, 1, 0, 1), mask));
  }
  return mul(x, pow(add(mul(sums, alpha / static_cast<double>(size)), k), -beta));
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias) {
  LG_PROFILE_OP(x1, x2, weight, bias);
  const char* op = "bilinear";
  autograd::check_operands(op, {x1, x2, weight}, /*floating=*/true);
  LG_CHECK_SHAPE(x1.dim() >= 1 && x2.dim() == x1.dim() &&
                     Shape(x1.shape().begin(), x1.shape().end() - 1) ==
                         Shape(x2.shape().begin(), x2.shape().end() - 1),
                 op, ": expected inputs of one leading shape (*, in1) and (*, in2), got ",
                 x1.shape(), " and ", x2.shape());
  const std::int64_t in1 = x1.size(-1), in2 = x2.size(-1);
  LG_CHECK_SHAPE(weight.dim() == 3 && weight.size(1) == in1 && weight.size(2) == in2, op,
                 ": expected a weight of shape (out, ", in1, ", ", in2, ") for inputs ", x1.shape(),
                 " and ", x2.shape(), ", got ", weight.shape());
  const std::int64_t out = weight.size(0);
  if (bias.defined()) {
    autograd::check_operands(op, {x1, bias}, /*floating=*/true);
    LG_CHECK_SHAPE(bias.shape() == Shape{out}, op, ": expected a bias of shape (", out, "), got ",
                   bias.shape());
  }
  const std::int64_t rows = in1 == 0 ? 0 : x1.numel() / in1;
  // u[b, o, i] = sum_j weight[o, i, j] x2[b, j], one matmul; then y[b, o] = sum_i x1[b, i] u[b,
  // o, i].
  const Tensor u = reshape(
      matmul(reshape(x2, {rows, in2}), reshape(permute(weight, {2, 0, 1}), {in2, out * in1})),
      {rows, out, in1});
  Tensor y = sum(mul(u, reshape(x1, {rows, 1, in1})), {2});
  if (bias.defined()) y = add(y, bias);
  Shape shape(x1.shape().begin(), x1.shape().end() - 1);
  shape.push_back(out);
  return reshape(y, shape);
}

Tensor channel_shuffle(const Tensor& x, std::int64_t groups) {
  LG_PROFILE_OP(x);
  const char* op = "channel_shuffle";
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(x.dim() >= 3, op, ": expected an input of at least 3 dims (N, C, *), got shape ",
                 x.shape());
  LG_CHECK(groups >= 1, op, ": expected a positive number of groups, got ", groups);
  LG_CHECK_SHAPE(x.size(1) % groups == 0, op, ": ", x.size(1), " channels (input of shape ",
                 x.shape(), ") are not divisible by groups = ", groups);
  Shape grouped{x.size(0), groups, x.size(1) / groups};
  grouped.insert(grouped.end(), x.shape().begin() + 2, x.shape().end());
  return reshape(transpose(reshape(x, grouped), 1, 2), x.shape());
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training) {
  LG_PROFILE_OP(x);
  const char* op = "rrelu";
  autograd::check_floating_input(op, x);
  LG_CHECK(std::isfinite(lower) && std::isfinite(upper) && lower <= upper, op,
           ": expected finite bounds with lower <= upper, got lower ", lower, " and upper ", upper);
  if (!training) return leaky_relu(x, (lower + upper) / 2.0);
  // The factor of each element: 1 where x > 0, its slope elsewhere; a constant (the mask and the
  // draws take no gradient), so the gradient is the factor.
  const Tensor slopes = add(mul(rand_like(x), upper - lower), lower);
  return mul(x, where(gt(x, 0.0), ones_like(x), slopes));
}

// Note [Unpooling repeats]
// A max pool whose windows overlap (kernel 3, stride 2) can pick one input element for two
// windows, so the indices it gives repeat a place. PyTorch's unpool writes each element to its
// place in order (the last one stays) and its backward gathers each element's gradient from its
// place, repeats included. Here the value is a scatter_add of the elements, each repeat but the
// last multiplied by 0; that product's gradient would be 0, so the repeats carry x - detach(x)
// (0 in value, gradient 1) in its stead, and every element's gradient is its place's, as
// PyTorch's.

namespace {

// max_unpool over `dims` spatial dims (Note on max_unpool1d in composed_layers.h).
Tensor max_unpool(const char* op, const Tensor& x, const Tensor& indices,
                  const std::vector<std::int64_t>& kernel, std::vector<std::int64_t> stride,
                  const std::vector<std::int64_t>& padding,
                  const std::optional<std::vector<std::int64_t>>& output_size) {
  const auto dims = static_cast<std::int64_t>(kernel.size());
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == dims + 1 || x.dim() == dims + 2, op, ": expected input (N, C, ...) of ",
                 dims + 2, " dims or unbatched of ", dims + 1, ", got shape ", x.shape());
  LG_CHECK(indices.defined(), op, ": indices is an undefined Tensor()");
  LG_CHECK_DTYPE(indices.dtype() == kInt64, op, ": expected int64 indices, got ", indices.dtype());
  LG_CHECK_SHAPE(indices.shape() == x.shape(), op, ": expected indices of the input's shape ",
                 x.shape(), ", got ", indices.shape());
  const std::int64_t first = x.dim() - dims;
  std::vector<std::int64_t> out(static_cast<std::size_t>(dims));
  for (std::int64_t d = 0; d < dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (stride[i] == 0) stride[i] = kernel[i];
    LG_CHECK(kernel[i] >= 1 && stride[i] >= 1 && padding[i] >= 0, op,
             ": expected kernel_size and stride >= 1 and padding >= 0, got ", kernel[i], ", ",
             stride[i], " and ", padding[i], " in dim ", d);
    const std::int64_t standard =
        checked_add(checked_mul(x.size(first + d) - 1, stride[i], op),
                    checked_add(kernel[i], -checked_mul(padding[i], 2, op), op), op);
    if (output_size.has_value()) {
      const std::int64_t given = (*output_size)[i];
      LG_CHECK_SHAPE(given > standard - stride[i] && given < standard + stride[i] && given >= 1, op,
                     ": output size ", given, " in dim ", d, " is not within one stride ",
                     stride[i], " of ", standard, " (input of shape ", x.shape(), ")");
      out[i] = given;
    } else {
      LG_CHECK_SHAPE(standard >= 1, op, ": input of shape ", x.shape(),
                     " unpools to no element in dim ", d);
      out[i] = standard;
    }
  }
  std::int64_t plane = 1;
  for (const std::int64_t o : out)
    plane = checked_mul(plane, o, op);
  const Shape lead(x.shape().begin(), x.shape().begin() + first);
  std::int64_t planes = 1, in_plane = 1;
  for (const std::int64_t size : lead)
    planes *= size;
  for (std::int64_t d = 0; d < dims; ++d)
    in_plane *= x.size(first + d);
  // Every index inside its plane, and which element each place takes: the last one sent there
  // (PyTorch's loop writes them in order). Read on the host.
  std::vector<double> keep(static_cast<std::size_t>(x.numel()), 1.0);
  bool repeats = false;
  {
    const NoGradGuard no_grad;
    const Tensor host = indices.to(Device::cpu()).contiguous();
    const std::int64_t* v = host.data_ptr<std::int64_t>();
    std::vector<std::int64_t> last(static_cast<std::size_t>(plane), -1);
    for (std::int64_t p = 0; p < planes; ++p) {
      std::fill(last.begin(), last.end(), -1);
      for (std::int64_t e = 0; e < in_plane; ++e) {
        const std::int64_t k = p * in_plane + e;
        LG_CHECK(v[k] >= 0 && v[k] < plane, op, ": index ", v[k], " at element ", k,
                 " is outside the output plane of ", plane, " elements");
        std::int64_t& previous = last[static_cast<std::size_t>(v[k])];
        if (previous >= 0) {
          keep[static_cast<std::size_t>(previous)] = 0.0;
          repeats = true;
        }
        previous = k;
      }
    }
  }
  // An element sent where a later one lands adds nothing to the value, yet its gradient is that
  // place's, as PyTorch's backward gathers it for every element (Note [Unpooling repeats]).
  Tensor source = reshape(x, {planes, in_plane});
  if (repeats) {
    const Tensor kept =
        reshape(tensor(keep, x.shape()).to(x.dtype()).to(x.device()), {planes, in_plane});
    source = add(mul(source, kept), mul(sub(source, source.detach()), rsub(kept, 1.0)));
  }
  const Tensor sums = scatter_add(zeros({planes, plane}, x.options()), 1,
                                  reshape(indices, {planes, in_plane}), source);
  Shape shape = lead;
  shape.insert(shape.end(), out.begin(), out.end());
  return reshape(sums, shape);
}

}  // namespace

Tensor max_unpool1d(const Tensor& x, const Tensor& indices, std::int64_t kernel_size,
                    std::int64_t stride, std::int64_t padding,
                    std::optional<std::int64_t> output_size) {
  LG_PROFILE_OP(x, indices);
  std::optional<std::vector<std::int64_t>> out;
  if (output_size) out = std::vector<std::int64_t>{*output_size};
  return max_unpool("max_unpool1d", x, indices, {kernel_size}, {stride}, {padding}, out);
}

Tensor max_unpool2d(const Tensor& x, const Tensor& indices, Size2 kernel_size, Size2 stride,
                    Size2 padding, std::optional<Size2> output_size) {
  LG_PROFILE_OP(x, indices);
  std::optional<std::vector<std::int64_t>> out;
  if (output_size) out = std::vector<std::int64_t>(output_size->begin(), output_size->end());
  return max_unpool("max_unpool2d", x, indices, {kernel_size[0], kernel_size[1]},
                    {stride[0], stride[1]}, {padding[0], padding[1]}, out);
}

Tensor max_unpool3d(const Tensor& x, const Tensor& indices, Size3 kernel_size, Size3 stride,
                    Size3 padding, std::optional<Size3> output_size) {
  LG_PROFILE_OP(x, indices);
  std::optional<std::vector<std::int64_t>> out;
  if (output_size) out = std::vector<std::int64_t>(output_size->begin(), output_size->end());
  return max_unpool("max_unpool3d", x, indices, {kernel_size[0], kernel_size[1], kernel_size[2]},
                    {stride[0], stride[1], stride[2]}, {padding[0], padding[1], padding[2]}, out);
}

}  // namespace leangrad
