// grid_sample and affine_grid (autograd/grid_sample.h).
#include <leangrad/autograd/grid_sample.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

// Note [Sampling by gathers]
// grid_sample is PyTorch's GridSampler written with differentiable functions:
//  - Each grid coordinate becomes a pixel coordinate (unnormalize: the outer pixels' edges, or
//    with align_corners their centres, at -1 and 1), then, for bilinear and nearest, is moved
//    into the input by the padding: border clips it to [0, size - 1]; reflection reflects it at
//    the edges (at -0.5 and size - 0.5, or at 0 and size - 1 with align_corners) as often as it
//    takes, then clips. Clipping passes the gradient only strictly inside, as PyTorch's
//    clip_coordinates_set_grad, and a reflection flips its sign.
//  - A tap at integral coordinates reads the input through one gather over each (N, C) plane
//    flattened (index y W + x, or (z H + y) W + x), and is zero where the tap lies outside the
//    input (a `where`, so nothing outside is ever read into the result). The gather's gradient
//    adds each output's gradient into the input at its tap.
//  - bilinear (trilinear for volumes) adds the 2^S taps around the point, in PyTorch's order (x
//    fastest), each weighted by the product of its per-axis distances to the opposite tap;
//    nearest reads the tap at the coordinates rounded half to even; bicubic adds 4 x 4 taps
//    weighted by Keys' cubic convolution (a = -0.75) of the fractional parts, each tap's
//    coordinates moved in by the padding on their own (PyTorch's get_value_bounded), from the
//    unpadded point.
// The gradient with respect to the grid is the weights' derivative times the taps, through the
// coordinate maps; the floors are constants. It costs one (N, C, *out) gather per tap and keeps
// the taps for backward, where PyTorch's kernel loops over the points once.

const char* grid_sample_padding_name(GridSamplePadding padding) {
  switch (padding) {
    case GridSamplePadding::Border:
      return "border";
    case GridSamplePadding::Reflection:
      return "reflection";
    case GridSamplePadding::Zeros:
      break;
  }
  return "zeros";
}

namespace {

// Pixel coordinates from [-1, 1], as PyTorch's grid_sampler_unnormalize.
Tensor unnormalize(const Tensor& coord, std::int64_t size, bool align_corners) {
  const auto s = static_cast<double>(size);
  if (align_corners) return (coord + 1.0) / 2.0 * (s - 1.0);
  return ((coord + 1.0) * s - 1.0) / 2.0;
}

// min(size - 1, max(coord, 0)), the gradient passing only strictly inside, as PyTorch's.
Tensor clip(const Tensor& coord, std::int64_t size) {
  const auto top = static_cast<double>(size - 1);
  const Tensor inside = logical_and(gt(coord, 0.0), lt(coord, top));
  return where(inside, coord, clamp(coord, 0.0, top).detach());
}

// coord reflected at twice_low / 2 and twice_high / 2 until it lies between them, as PyTorch's
// reflect_coordinates (its fmod as the distance less the whole spans, a constant).
Tensor reflect(const Tensor& coord, double twice_low, double twice_high) {
  if (twice_low == twice_high) return coord * 0.0;
  const double low = twice_low / 2.0;
  const double span = (twice_high - twice_low) / 2.0;
  const Tensor distance = abs(coord - low);
  const Tensor flips = floor(distance.detach() / span);
  const Tensor extra = distance - flips * span;
  const Tensor even = eq(flips - floor(flips / 2.0) * 2.0, 0.0);
  return where(even, extra + low, (span + low) - extra);
}

// PyTorch's compute_coordinates: the padding's move of a pixel coordinate into the input.
Tensor pad_coordinate(const Tensor& coord, std::int64_t size, GridSamplePadding padding,
                      bool align_corners) {
  if (padding == GridSamplePadding::Border) return clip(coord, size);
  if (padding == GridSamplePadding::Reflection) {
    const auto s = static_cast<double>(size);
    const Tensor reflected =
        align_corners ? reflect(coord, 0.0, 2.0 * (s - 1.0)) : reflect(coord, -1.0, 2.0 * s - 1.0);
    return clip(reflected, size);
  }
  return coord;
}

// The input's planes flattened, and the taps read from them.
struct Planes {
  Tensor flat;                      // (N, C, P), P the product of the spatial sizes
  std::vector<std::int64_t> sizes;  // the spatial sizes, depth first
  Shape out;                        // (N, C, *out)
  Tensor zero;                      // a 0-d zero of the input's dtype

  // The input at integral coordinates pos (one per spatial dim, depth first, each (N, *out), of
  // the input's dtype) -> (N, C, *out), zero where pos lies outside.
  Tensor tap(const std::vector<Tensor>& pos) const {
    Tensor valid;
    Tensor linear;
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const Tensor in = logical_and(ge(pos[i], 0.0), le(pos[i], static_cast<double>(sizes[i] - 1)));
      valid = valid.defined() ? logical_and(valid, in) : in;
    }
    const TensorOptions int64 = TensorOptions(kInt64).device(flat.device());
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const Tensor at = where(valid, pos[i].detach(), zero).to(kInt64);
      linear = linear.defined() ? linear * full({}, static_cast<double>(sizes[i]), int64) + at : at;
    }
    const std::int64_t n = flat.size(0), c = flat.size(1);
    // The output points per sample, given (no -1, nor a division by n, with no batch).
    const std::int64_t points = shape_numel(Shape(out.begin() + 2, out.end()), "grid_sample");
    const Tensor index = linear.reshape({n, 1, points}).expand({n, c, points});
    return where(valid.unsqueeze(1), gather(flat, 2, index).reshape(out), zero);
  }
};

// Keys' cubic convolution weights of the four taps around a point at fraction t past the second,
// as PyTorch's get_cubic_upsample_coefficients (a = -0.75).
std::array<Tensor, 4> cubic_weights(const Tensor& t) {
  constexpr double a = -0.75;
  const auto near = [&](const Tensor& x) { return ((x * (a + 2.0) - (a + 3.0)) * x) * x + 1.0; };
  const auto far = [&](const Tensor& x) { return ((x * a - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; };
  return {far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)};
}

void check_grid_sample(const Tensor& input, const Tensor& grid, InterpolateMode mode) {
  const char* op = "grid_sample";
  LG_CHECK(input.defined() && grid.defined(), op, ": expected a defined input and grid");
  LG_CHECK_SHAPE(input.dim() == 4 || input.dim() == 5, op,
                 ": expected input of shape (N, C, H, W) or (N, C, D, H, W), got ", input.shape());
  const int spatial = input.dim() - 2;
  LG_CHECK_SHAPE(grid.dim() == input.dim() && grid.size(0) == input.size(0) &&
                     grid.size(grid.dim() - 1) == spatial,
                 op, ": expected grid of shape (N, ",
                 spatial == 2 ? "H_out, W_out, 2" : "D_out, H_out, W_out, 3", ") for input ",
                 input.shape(), ", got ", grid.shape());
  LG_CHECK_DTYPE(is_floating(input.dtype()) && input.dtype() == grid.dtype(), op,
                 ": expected floating input and grid of one dtype, got ", input.dtype(), " and ",
                 grid.dtype());
  LG_CHECK_DEVICE(input.device() == grid.device(), op, ": the input is on ", input.device(),
                  ", the grid on ", grid.device());
  for (int d = 2; d < input.dim(); ++d) {
    LG_CHECK_SHAPE(input.size(d) > 0, op, ": expected non-empty spatial dims, got input ",
                   input.shape());
  }
  LG_CHECK(mode == kBilinear || mode == kNearest || (mode == kBicubic && spatial == 2), op,
           ": mode must be kBilinear, kNearest or (for 4-D input) kBicubic, got ",
           interpolate_mode_name(mode), " with input ", input.shape());
}

}  // namespace

Tensor grid_sample(const Tensor& input, const Tensor& grid, InterpolateMode mode,
                   GridSamplePadding padding_mode, std::optional<bool> align_corners_in) {
  LG_PROFILE_OP(input, grid);
  check_grid_sample(input, grid, mode);
  const bool align_corners = align_corners_in.value_or(false);
  const int spatial = input.dim() - 2;
  Planes planes;
  planes.out = {input.size(0), input.size(1)};
  for (int d = 1; d < grid.dim() - 1; ++d)
    planes.out.push_back(grid.size(d));
  for (int d = 2; d < input.dim(); ++d)
    planes.sizes.push_back(input.size(d));
  // The spatial sizes' product, given: with no batch or no channels reshape could not infer it
  // from -1.
  planes.flat =
      input.reshape({input.size(0), input.size(1), shape_numel(planes.sizes, "grid_sample")});
  planes.zero = zeros({}, input.options());

  // Pixel coordinates, depth first (grid's last dim holds x, y[, z]).
  std::vector<Tensor> coords(static_cast<std::size_t>(spatial));
  for (int i = 0; i < spatial; ++i) {
    const auto size = planes.sizes[static_cast<std::size_t>(i)];
    Tensor c = unnormalize(grid.select(grid.dim() - 1, spatial - 1 - i), size, align_corners);
    if (mode != kBicubic) c = pad_coordinate(c, size, padding_mode, align_corners);
    coords[static_cast<std::size_t>(i)] = c;
  }

  if (mode == kNearest) {
    std::vector<Tensor> at;
    for (const Tensor& c : coords)
      at.push_back(round(c));
    return planes.tap(at);
  }
  std::vector<Tensor> low;
  for (const Tensor& c : coords)
    low.push_back(floor(c.detach()));
  if (mode == kBilinear) {
    // Corner k takes low + 1 along dim i where bit (spatial - 1 - i) of k is set (x fastest).
    Tensor out;
    for (int k = 0; k < (1 << spatial); ++k) {
      std::vector<Tensor> at(static_cast<std::size_t>(spatial));
      Tensor weight;
      for (int j = 0; j < spatial; ++j) {  // x first, as PyTorch multiplies the weights
        const auto i = static_cast<std::size_t>(spatial - 1 - j);
        const bool high = ((k >> j) & 1) != 0;
        const Tensor w = high ? coords[i] - low[i] : (low[i] + 1.0) - coords[i];
        weight = weight.defined() ? weight * w : w;
        at[i] = high ? low[i] + 1.0 : low[i];
      }
      const Tensor term = planes.tap(at) * weight.unsqueeze(1);
      out = out.defined() ? out + term : term;
    }
    return out;
  }
  // Bicubic (4-D): rows of four taps along x, then the four rows along y.
  const std::array<Tensor, 4> wx = cubic_weights(coords[1] - low[1]);
  const std::array<Tensor, 4> wy = cubic_weights(coords[0] - low[0]);
  Tensor out;
  for (int r = 0; r < 4; ++r) {
    const Tensor y = pad_coordinate(low[0] + static_cast<double>(r - 1), planes.sizes[0],
                                    padding_mode, align_corners);
    Tensor row;
    for (int q = 0; q < 4; ++q) {
      const Tensor x = pad_coordinate(low[1] + static_cast<double>(q - 1), planes.sizes[1],
                                      padding_mode, align_corners);
      const Tensor term = planes.tap({y, x}) * wx[static_cast<std::size_t>(q)].unsqueeze(1);
      row = row.defined() ? row + term : term;
    }
    const Tensor term = row * wy[static_cast<std::size_t>(r)].unsqueeze(1);
    out = out.defined() ? out + term : term;
  }
  return out;
}

Tensor affine_grid(const Tensor& theta, const std::vector<std::int64_t>& size, bool align_corners) {
  LG_PROFILE_OP(theta);
  const char* op = "affine_grid";
  LG_CHECK(theta.defined(), op, ": expected a defined theta");
  LG_CHECK_SHAPE(size.size() == 4 || size.size() == 5, op,
                 ": expected size (N, C, H, W) or (N, C, D, H, W), got ", Shape(size));
  const auto spatial = static_cast<std::int64_t>(size.size()) - 2;
  LG_CHECK_SHAPE(theta.dim() == 3 && theta.size(0) == size[0] && theta.size(1) == spatial &&
                     theta.size(2) == spatial + 1,
                 op, ": expected theta of shape (", size[0], ", ", spatial, ", ", spatial + 1,
                 ") for size ", Shape(size), ", got ", theta.shape());
  LG_CHECK_DTYPE(is_floating(theta.dtype()), op, ": expected a floating theta, got ",
                 theta.dtype());
  for (std::size_t d = 2; d < size.size(); ++d) {
    LG_CHECK_SHAPE(size[d] > 0, op, ": expected positive spatial sizes, got ", Shape(size));
  }
  // Each axis's normalized coordinates, as PyTorch's linspace_from_neg_one.
  const auto axis = [&](std::int64_t steps) {
    if (steps <= 1) return zeros({steps}, theta.options());
    Tensor r = linspace(-1.0, 1.0, steps, theta.options());
    if (!align_corners) r = r * (static_cast<double>(steps - 1) / static_cast<double>(steps));
    return r;
  };
  // The base grid (*out, spatial + 1): x, y[, z] and 1 at each point, x varying fastest.
  std::vector<std::int64_t> out(size.begin() + 2, size.end());
  std::vector<Tensor> columns;
  for (std::int64_t j = 0; j < spatial; ++j) {  // x, then y, then z
    const std::size_t dim = out.size() - 1 - static_cast<std::size_t>(j);
    Shape view(out.size(), 1);
    view[dim] = out[dim];
    columns.push_back(axis(out[dim]).reshape(view).expand(Shape(out.begin(), out.end())));
  }
  columns.push_back(ones(Shape(out.begin(), out.end()), theta.options()));
  std::int64_t points = 1;
  for (const std::int64_t s : out)
    points = checked_mul(points, s, op);
  const Tensor base = stack(columns, -1).reshape({1, points, spatial + 1});
  const Tensor grid = matmul(base.expand({size[0], points, spatial + 1}), theta.transpose(1, 2));
  Shape shape = {size[0]};
  shape.insert(shape.end(), out.begin(), out.end());
  shape.push_back(spatial);
  return grid.reshape(shape);
}

}  // namespace leangrad
