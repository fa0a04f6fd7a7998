// fractional_max_pool2d and fractional_max_pool3d (autograd/fractional_max_pool.h).
#include <leangrad/autograd/fractional_max_pool.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/window_max.h>

namespace leangrad {

// Note [Fractional windows by gather]
// Each (batch, channel) plane has its own window starts, so no pooling kernel applies. The starts
// are worked out on the host from the samples (N C values per dim, read back from the device),
// and the plane-flat index of every tap of every window is built on the device by broadcasting
// adds of small int64 tensors: index[p, o..., k...] = sum over dims d of
// (start_d[p, o_d] + k_d) * stride_d. One gather of x's planes by that index gives (planes,
// outputs, window taps), and max(dim) over the taps, through the same index, each window's place
// (no graph is recorded for these). A second gather of x at the places gives the values, the one
// differentiable step: the gradient is a scatter_add of each output's upstream gradient onto its
// place, summed where windows share a maximum. The index costs 8 bytes per tap, window-size times
// the output, freed before the function returns: memory traded for running on every device. On
// the CPU a loop over the windows finds the places instead (kernels/window_max.h), with no index;
// the values and the gradient are the same gather.

namespace {

// PyTorch's generate_intervals for one plane and dim, in T (float or double): the first input
// index of each of the `output` windows of size `pool` over `input`.
template <typename T>
void interval_starts(T sample, std::int64_t input, std::int64_t output, std::int64_t pool,
                     std::int64_t* starts) {
  if (output > 1) {
    const T alpha = static_cast<T>(input - pool) / static_cast<T>(output - 1);
    for (std::int64_t i = 0; i + 1 < output; ++i)
      starts[i] = static_cast<std::int64_t>((static_cast<T>(i) + sample) * alpha) -
                  static_cast<std::int64_t>(sample * alpha);
  }
  starts[output - 1] = input - pool;
}

std::tuple<Tensor, Tensor> fractional_max_pool(
    const char* op, const Tensor& x, const std::vector<std::int64_t>& kernel,
    const std::optional<std::vector<std::int64_t>>& output_size,
    const std::optional<std::vector<double>>& output_ratio, const Tensor& random_samples) {
  const auto dims = static_cast<std::int64_t>(kernel.size());
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == dims + 1 || x.dim() == dims + 2, op, ": expected input (N, C, ...) of ",
                 dims + 2, " dims or unbatched of ", dims + 1, ", got shape ", x.shape());
  LG_CHECK(output_size.has_value() != output_ratio.has_value(), op,
           ": expected exactly one of output_size and output_ratio, got ",
           output_size ? "both" : "neither");
  const std::int64_t first = x.dim() - dims;
  const std::int64_t batch = x.dim() == dims + 2 ? x.size(0) : 1;
  const std::int64_t channels = x.size(first - 1);
  std::vector<std::int64_t> in(static_cast<std::size_t>(dims)), out(in.size());
  for (std::int64_t d = 0; d < dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    in[i] = x.size(first + d);
    LG_CHECK_SHAPE(in[i] >= 1, op, ": expected non-empty spatial dims, got input of shape ",
                   x.shape());
    LG_CHECK(kernel[i] >= 1, op, ": expected kernel_size >= 1, got ", kernel[i], " in dim ", d);
    if (output_size) {
      out[i] = (*output_size)[i];
    } else {
      const double ratio = (*output_ratio)[i];
      LG_CHECK(ratio > 0.0 && ratio < 1.0, op, ": expected output_ratio in (0, 1), got ", ratio,
               " in dim ", d);
      out[i] = static_cast<std::int64_t>(static_cast<double>(in[i]) * ratio);
    }
    LG_CHECK_SHAPE(out[i] >= 1 && out[i] <= in[i] - kernel[i] + 1, op, ": output size ", out[i],
                   " in dim ", d, " is not in [1, ", in[i] - kernel[i] + 1, "] for kernel size ",
                   kernel[i], " and input of shape ", x.shape());
  }
  const Shape samples_shape{batch, channels, dims};
  Tensor samples = random_samples;
  if (samples.defined()) {
    LG_CHECK_DTYPE(is_floating(samples.dtype()), op, ": expected floating random_samples, got ",
                   samples.dtype());
    LG_CHECK_SHAPE(samples.shape() == samples_shape, op, ": expected random_samples of shape ",
                   samples_shape, " for input of shape ", x.shape(), ", got ", samples.shape());
  } else {
    const NoGradGuard no_grad;
    samples = rand(samples_shape, x.options());
  }
  const std::int64_t planes = batch * channels;
  std::vector<std::int64_t> plane_stride(in.size(), 1);
  for (std::int64_t d = dims - 2; d >= 0; --d)
    plane_stride[static_cast<std::size_t>(d)] =
        plane_stride[static_cast<std::size_t>(d + 1)] * in[static_cast<std::size_t>(d + 1)];
  const std::int64_t in_plane = plane_stride[0] * in[0];
  std::int64_t outputs = 1, taps = 1;
  for (std::int64_t d = 0; d < dims; ++d) {
    outputs = checked_mul(outputs, out[static_cast<std::size_t>(d)], op);
    taps = checked_mul(taps, kernel[static_cast<std::size_t>(d)], op);
  }
  checked_mul(checked_mul(planes, outputs, op), taps, op);

  // Where each plane's windows begin along each dim, as plane-flat offsets (start * the dim's
  // stride within a plane), worked out on the host from the samples.
  std::vector<std::vector<std::int64_t>> starts(static_cast<std::size_t>(dims));
  {
    const NoGradGuard no_grad;
    const Tensor host = samples.to(Device::cpu()).to(kFloat64).contiguous();
    const double* u = host.data_ptr<double>();
    for (std::int64_t k = 0; k < host.numel(); ++k)
      LG_CHECK(u[k] >= 0.0 && u[k] < 1.0, op, ": expected random_samples in [0, 1), got ", u[k],
               " at element ", k);
    const bool in_double = x.dtype() == kFloat64;
    for (std::int64_t d = 0; d < dims; ++d) {
      const auto i = static_cast<std::size_t>(d);
      starts[i].resize(static_cast<std::size_t>(planes * out[i]));
      for (std::int64_t p = 0; p < planes; ++p) {
        // PyTorch's samples run (width, height) in 2-d and (time, height, width) in 3-d.
        const std::int64_t which = dims == 2 ? 1 - d : d;
        const double sample = u[p * dims + which];
        std::int64_t* s = starts[i].data() + p * out[i];
        if (in_double) {
          interval_starts<double>(sample, in[i], out[i], kernel[i], s);
        } else {
          interval_starts<float>(static_cast<float>(sample), in[i], out[i], kernel[i], s);
        }
        for (std::int64_t o = 0; o < out[i]; ++o) {
          LG_INTERNAL_ASSERT(s[o] >= 0 && s[o] + kernel[i] <= in[i]);
          s[o] *= plane_stride[i];
        }
      }
    }
  }
  // The place of each window's first maximum, found without a graph.
  Tensor places;
  {
    const NoGradGuard no_grad;
    const Tensor flat = reshape(x, {planes, in_plane});
    // The offset of each of a window's taps from its first element, in (k_0, ..., k_{dims-1})
    // row-major order: the order in which each window's first maximum is found.
    std::vector<std::int64_t> tap_offsets{0};
    for (std::int64_t d = 0; d < dims; ++d) {
      std::vector<std::int64_t> wider;
      for (const std::int64_t offset : tap_offsets)
        for (std::int64_t k = 0; k < kernel[static_cast<std::size_t>(d)]; ++k)
          wider.push_back(offset + k * plane_stride[static_cast<std::size_t>(d)]);
      tap_offsets = std::move(wider);
    }
    if (x.device().is_cpu()) {
      // A loop over the windows (kernels/window_max.h).
      places = kernels::window_max_places(flat.contiguous(), starts, out, tap_offsets);
    } else {
      // The plane-flat index of every tap (Note [Fractional windows by gather]): (planes, out_0,
      // ..., out_{dims-1}, taps), a broadcast term per dim's starts and one of the tap offsets.
      const TensorOptions on_device = TensorOptions(kInt64).device(x.device());
      Shape tap_shape(static_cast<std::size_t>(dims + 2), 1);
      tap_shape.back() = taps;
      Tensor index = tensor(tap_offsets, tap_shape, on_device);
      for (std::int64_t d = 0; d < dims; ++d) {
        Shape start_shape(tap_shape.size(), 1);
        start_shape[0] = planes;
        start_shape[static_cast<std::size_t>(1 + d)] = out[static_cast<std::size_t>(d)];
        index = add(index, tensor(starts[static_cast<std::size_t>(d)], start_shape, on_device));
      }
      index = reshape(index, {planes, outputs, taps});
      const Tensor taps_of_windows =
          reshape(gather(flat, 1, reshape(index, {planes, outputs * taps})), index.shape());
      const Tensor tap = std::get<1>(max(taps_of_windows, 2, /*keepdim=*/true));
      places = reshape(gather(index, 2, tap), {planes, outputs});
    }
  }
  // The values, differentiably: the gradient is a scatter_add of each output's onto its place.
  const Tensor values = gather(reshape(x, {planes, in_plane}), 1, places);
  Shape shape(x.shape().begin(), x.shape().begin() + first);
  shape.insert(shape.end(), out.begin(), out.end());
  return {reshape(values, shape), reshape(places, shape)};
}

template <std::size_t N>
std::optional<std::vector<std::int64_t>> sizes(
    const std::optional<std::array<std::int64_t, N>>& s) {
  if (!s) return std::nullopt;
  return std::vector<std::int64_t>(s->begin(), s->end());
}

template <std::size_t N>
std::optional<std::vector<double>> ratios(const std::optional<std::array<double, N>>& r) {
  if (!r) return std::nullopt;
  return std::vector<double>(r->begin(), r->end());
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& x, Size2 kernel_size,
                                                              std::optional<Size2> output_size,
                                                              std::optional<Ratio2> output_ratio,
                                                              const Tensor& random_samples) {
  LG_PROFILE_OP(x, random_samples);
  return fractional_max_pool("fractional_max_pool2d", x, {kernel_size[0], kernel_size[1]},
                             sizes(output_size), ratios(output_ratio), random_samples);
}

Tensor fractional_max_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> output_size,
                             std::optional<Ratio2> output_ratio, const Tensor& random_samples) {
  return std::get<0>(fractional_max_pool2d_with_indices(x, kernel_size, output_size, output_ratio,
                                                        random_samples));
}

std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& x, Size3 kernel_size,
                                                              std::optional<Size3> output_size,
                                                              std::optional<Ratio3> output_ratio,
                                                              const Tensor& random_samples) {
  LG_PROFILE_OP(x, random_samples);
  return fractional_max_pool("fractional_max_pool3d", x,
                             {kernel_size[0], kernel_size[1], kernel_size[2]}, sizes(output_size),
                             ratios(output_ratio), random_samples);
}

Tensor fractional_max_pool3d(const Tensor& x, Size3 kernel_size, std::optional<Size3> output_size,
                             std::optional<Ratio3> output_ratio, const Tensor& random_samples) {
  return std::get<0>(fractional_max_pool3d_with_indices(x, kernel_size, output_size, output_ratio,
                                                        random_samples));
}

}  // namespace leangrad
