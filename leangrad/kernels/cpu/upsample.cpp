// Interpolation (nearest, nearest-exact, bilinear, bicubic) on the CPU (kernels/backend.h), over
// the shared index rules of Note [Interpolation source indices] (kernels/layers_math.h). The taps
// of each output row and column are computed once per call, not once per element; planes are
// split across threads. The nearest modes copy an element; the others sum each row tap's
// weighted columns, then weight the rows. The backward walks each plane's outputs in order and
// adds into their taps (deterministic).
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels::cpu {

using layers_math::AxisTaps;
using layers_math::Resize2dShape;
using layers_math::ResizeMode;

namespace {

// The taps of every output position along one axis.
template <typename Acc>
std::vector<AxisTaps<Acc>> all_taps(const Resize2dShape& g, std::int64_t in, std::int64_t out,
                                    double scale_factor) {
  std::vector<AxisTaps<Acc>> taps(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o)
    taps[o] = layers_math::axis_taps<Acc>(g, o, in, out, scale_factor);
  return taps;
}

std::int64_t plane_grain(const Resize2dShape& g) {
  return std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(g.OH * g.OW, 1));
}

}  // namespace

// Calls f.template operator()<K>() with the taps per axis of g's mode (1, 2 or 4), so that the
// loops over taps below unroll (a count read at run time cost bilinear a quarter of its speed).
template <typename F>
void with_tap_count(const Resize2dShape& g, F&& f) {
  switch (g.mode) {
    case ResizeMode::Nearest:
    case ResizeMode::NearestExact:
      return f.template operator()<1>();
    case ResizeMode::Bilinear:
      return f.template operator()<2>();
    case ResizeMode::Bicubic:
      return f.template operator()<4>();
  }
}

void upsample2d_forward(DType dtype, const Resize2dShape& g, void* out, const void* in) {
  dispatch_floating(dtype, "interpolate", [&]<typename T>() {
    using Acc = opmath_t<T>;
    if (layers_math::copies_planes(g)) {
      std::memcpy(out, in, static_cast<std::size_t>(g.planes * g.H * g.W) * sizeof(T));
      return;
    }
    const auto rows = all_taps<Acc>(g, g.H, g.OH, g.scale_factor_h);
    const auto cols = all_taps<Acc>(g, g.W, g.OW, g.scale_factor_w);
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    with_tap_count(g, [&]<int K>() {
      parallel_for(g.planes, plane_grain(g), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t p = begin; p < end; ++p) {
          const T* plane = x + p * g.H * g.W;
          T* out_plane = y + p * g.OH * g.OW;
          for (std::int64_t oh = 0; oh < g.OH; ++oh) {
            const AxisTaps<Acc>& r = rows[oh];
            const T* row[K];
            for (int i = 0; i < K; ++i)
              row[i] = plane + r.index[i] * g.W;
            T* out_row = out_plane + oh * g.OW;
            for (std::int64_t ow = 0; ow < g.OW; ++ow) {
              const AxisTaps<Acc>& c = cols[ow];
              if constexpr (K == 1) {
                out_row[ow] = row[0][c.index[0]];  // a copy: every bit, NaN payloads included
              } else {
                Acc sum = Acc(0);
                for (int i = 0; i < K; ++i) {
                  Acc across = c.weight[0] * static_cast<Acc>(row[i][c.index[0]]);
                  for (int j = 1; j < K; ++j)
                    across += c.weight[j] * static_cast<Acc>(row[i][c.index[j]]);
                  sum = i == 0 ? r.weight[0] * across : sum + r.weight[i] * across;
                }
                out_row[ow] = static_cast<T>(sum);
              }
            }
          }
        }
      });
    });
  });
}

void upsample2d_backward(DType dtype, const Resize2dShape& g, void* grad_in, const void* grad_out) {
  dispatch_floating(dtype, "interpolate_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    Acc* dx = static_cast<Acc*>(grad_in);
    const T* dy = static_cast<const T*>(grad_out);
    if (layers_math::copies_planes(g)) {
      for (std::int64_t k = 0; k < g.planes * g.H * g.W; ++k)
        dx[k] = static_cast<Acc>(dy[k]);
      return;
    }
    const auto rows = all_taps<Acc>(g, g.H, g.OH, g.scale_factor_h);
    const auto cols = all_taps<Acc>(g, g.W, g.OW, g.scale_factor_w);
    with_tap_count(g, [&]<int K>() {
      parallel_for(g.planes, plane_grain(g), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t p = begin; p < end; ++p) {
          Acc* plane = dx + p * g.H * g.W;
          const T* out_plane = dy + p * g.OH * g.OW;
          for (std::int64_t oh = 0; oh < g.OH; ++oh) {
            const AxisTaps<Acc>& r = rows[oh];
            Acc* row[K];
            for (int i = 0; i < K; ++i)
              row[i] = plane + r.index[i] * g.W;
            const T* out_row = out_plane + oh * g.OW;
            for (std::int64_t ow = 0; ow < g.OW; ++ow) {
              const AxisTaps<Acc>& c = cols[ow];
              const Acc gv = static_cast<Acc>(out_row[ow]);
              if constexpr (K == 1) {
                row[0][c.index[0]] += gv;
              } else {
                for (int i = 0; i < K; ++i) {
                  for (int j = 0; j < K; ++j)
                    row[i][c.index[j]] += r.weight[i] * c.weight[j] * gv;
                }
              }
            }
          }
        }
      });
    });
  });
}

}  // namespace leangrad::kernels::cpu
