// Interpolation (nearest, bilinear) on the CPU (kernels/backend.h), over the shared index rules of
// Note [Interpolation source indices] (kernels/layers_math.h). The taps of each output row and
// column are computed once per call, not once per element; planes are split across threads. The
// backward walks each plane's outputs in order and adds into their taps (deterministic).
#include <leangrad/kernels/backend.h>

#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels::cpu {

using layers_math::LinearTaps;
using layers_math::Resize2dShape;

namespace {

// The taps of every output position along one axis: nearest gives i0 = i1 with weights (1, 0).
template <typename Acc>
std::vector<LinearTaps<Acc>> axis_taps(const Resize2dShape& g, std::int64_t in, std::int64_t out,
                                       double scale_factor) {
  std::vector<LinearTaps<Acc>> taps(static_cast<std::size_t>(out));
  if (g.bilinear) {
    const Acc step = layers_math::resize_step<Acc>(in, out, scale_factor, g.align_corners);
    for (std::int64_t o = 0; o < out; ++o)
      taps[o] = layers_math::linear_taps<Acc>(o, step, in, out, g.align_corners);
  } else {
    const float step = layers_math::resize_step<float>(in, out, scale_factor, false);
    for (std::int64_t o = 0; o < out; ++o) {
      const std::int64_t i = layers_math::nearest_source(o, step, in);
      taps[o] = {i, i, Acc(1), Acc(0)};
    }
  }
  return taps;
}

std::int64_t plane_grain(const Resize2dShape& g) {
  return std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(g.OH * g.OW, 1));
}

}  // namespace

void upsample2d_forward(DType dtype, const Resize2dShape& g, void* out, const void* in) {
  dispatch_floating(dtype, "interpolate", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const auto rows = axis_taps<Acc>(g, g.H, g.OH, g.scale_factor_h);
    const auto cols = axis_taps<Acc>(g, g.W, g.OW, g.scale_factor_w);
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    parallel_for(g.planes, plane_grain(g), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t p = begin; p < end; ++p) {
        const T* plane = x + p * g.H * g.W;
        T* out_plane = y + p * g.OH * g.OW;
        for (std::int64_t oh = 0; oh < g.OH; ++oh) {
          const LinearTaps<Acc>& r = rows[oh];
          const T* row0 = plane + r.i0 * g.W;
          const T* row1 = plane + r.i1 * g.W;
          for (std::int64_t ow = 0; ow < g.OW; ++ow) {
            const LinearTaps<Acc>& c = cols[ow];
            if (!g.bilinear) {
              out_plane[oh * g.OW + ow] = row0[c.i0];
              continue;
            }
            const Acc top =
                c.l0 * static_cast<Acc>(row0[c.i0]) + c.l1 * static_cast<Acc>(row0[c.i1]);
            const Acc bottom =
                c.l0 * static_cast<Acc>(row1[c.i0]) + c.l1 * static_cast<Acc>(row1[c.i1]);
            out_plane[oh * g.OW + ow] = static_cast<T>(r.l0 * top + r.l1 * bottom);
          }
        }
      }
    });
  });
}

void upsample2d_backward(DType dtype, const Resize2dShape& g, void* grad_in, const void* grad_out) {
  dispatch_floating(dtype, "interpolate_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const auto rows = axis_taps<Acc>(g, g.H, g.OH, g.scale_factor_h);
    const auto cols = axis_taps<Acc>(g, g.W, g.OW, g.scale_factor_w);
    Acc* dx = static_cast<Acc*>(grad_in);
    const T* dy = static_cast<const T*>(grad_out);
    parallel_for(g.planes, plane_grain(g), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t p = begin; p < end; ++p) {
        Acc* plane = dx + p * g.H * g.W;
        const T* out_plane = dy + p * g.OH * g.OW;
        for (std::int64_t oh = 0; oh < g.OH; ++oh) {
          const LinearTaps<Acc>& r = rows[oh];
          for (std::int64_t ow = 0; ow < g.OW; ++ow) {
            const LinearTaps<Acc>& c = cols[ow];
            const Acc gv = static_cast<Acc>(out_plane[oh * g.OW + ow]);
            if (!g.bilinear) {
              plane[r.i0 * g.W + c.i0] += gv;
              continue;
            }
            plane[r.i0 * g.W + c.i0] += r.l0 * c.l0 * gv;
            plane[r.i0 * g.W + c.i1] += r.l0 * c.l1 * gv;
            plane[r.i1 * g.W + c.i0] += r.l1 * c.l0 * gv;
            plane[r.i1 * g.W + c.i1] += r.l1 * c.l1 * gv;
          }
        }
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu
