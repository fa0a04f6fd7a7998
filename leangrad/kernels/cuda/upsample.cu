// Interpolation (nearest, bilinear) in CUDA (kernels/backend.h); kernels/cpu/upsample.cpp is the
// reference, the index rules are Note [Interpolation source indices] (kernels/layers_math.h).
//   forward   one thread per output element: its taps from the shared math, one or four reads
//   backward  one thread per output element, atomicAdd of its weighted gradient into each tap
//             of the opmath_t input gradient (float32 or float64: native atomics); taps shared by
//             several outputs make the order of additions, and so the last bits, vary
#include <cstdint>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

using layers_math::LinearTaps;
using layers_math::Resize2dShape;

constexpr int kThreads = 256;

// The taps of output position `o` along one axis (nearest: i0 = i1, weights (1, 0)).
template <typename Acc>
__device__ LinearTaps<Acc> taps_at(const Resize2dShape& g, std::int64_t o, std::int64_t in,
                                   std::int64_t out, double scale_factor) {
  if (g.bilinear) {
    const Acc step = layers_math::resize_step<Acc>(in, out, scale_factor, g.align_corners);
    return layers_math::linear_taps<Acc>(o, step, in, out, g.align_corners);
  }
  const float step = layers_math::resize_step<float>(in, out, scale_factor, false);
  const std::int64_t i = layers_math::nearest_source(o, step, in);
  return {i, i, Acc(1), Acc(0)};
}

template <typename T>
__global__ void upsample2d_forward_kernel(Resize2dShape g, T* out, const T* in) {
  using Acc = opmath_t<T>;
  const std::int64_t total = g.planes * g.OH * g.OW;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t ow = k % g.OW, oh = (k / g.OW) % g.OH, p = k / (g.OW * g.OH);
    const LinearTaps<Acc> r = taps_at<Acc>(g, oh, g.H, g.OH, g.scale_factor_h);
    const LinearTaps<Acc> c = taps_at<Acc>(g, ow, g.W, g.OW, g.scale_factor_w);
    const T* plane = in + p * g.H * g.W;
    if (!g.bilinear) {
      out[k] = plane[r.i0 * g.W + c.i0];
      continue;
    }
    const Acc top = c.l0 * static_cast<Acc>(plane[r.i0 * g.W + c.i0]) +
                    c.l1 * static_cast<Acc>(plane[r.i0 * g.W + c.i1]);
    const Acc bottom = c.l0 * static_cast<Acc>(plane[r.i1 * g.W + c.i0]) +
                       c.l1 * static_cast<Acc>(plane[r.i1 * g.W + c.i1]);
    out[k] = static_cast<T>(r.l0 * top + r.l1 * bottom);
  }
}

template <typename T, typename Acc>
__global__ void upsample2d_backward_kernel(Resize2dShape g, Acc* grad_in, const T* grad_out) {
  const std::int64_t total = g.planes * g.OH * g.OW;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t ow = k % g.OW, oh = (k / g.OW) % g.OH, p = k / (g.OW * g.OH);
    const LinearTaps<Acc> r = taps_at<Acc>(g, oh, g.H, g.OH, g.scale_factor_h);
    const LinearTaps<Acc> c = taps_at<Acc>(g, ow, g.W, g.OW, g.scale_factor_w);
    Acc* plane = grad_in + p * g.H * g.W;
    const Acc gv = static_cast<Acc>(grad_out[k]);
    if (!g.bilinear) {
      atomicAdd(plane + r.i0 * g.W + c.i0, gv);
      continue;
    }
    atomicAdd(plane + r.i0 * g.W + c.i0, r.l0 * c.l0 * gv);
    atomicAdd(plane + r.i0 * g.W + c.i1, r.l0 * c.l1 * gv);
    atomicAdd(plane + r.i1 * g.W + c.i0, r.l1 * c.l0 * gv);
    atomicAdd(plane + r.i1 * g.W + c.i1, r.l1 * c.l1 * gv);
  }
}

}  // namespace

void upsample2d_forward(DType dtype, const Resize2dShape& g, void* out, const void* in) {
  dispatch_floating(dtype, "interpolate", [&]<typename T>() {
    auto* kernel = upsample2d_forward_kernel<T>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(g.planes * g.OH * g.OW, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(g, static_cast<T*>(out),
                                                      static_cast<const T*>(in));
    LG_CUDA_CHECK_LAUNCH();
  });
}

void upsample2d_backward(DType dtype, const Resize2dShape& g, void* grad_in, const void* grad_out) {
  dispatch_floating(dtype, "interpolate_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* kernel = upsample2d_backward_kernel<T, Acc>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(g.planes * g.OH * g.OW, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(g, static_cast<Acc*>(grad_in),
                                                      static_cast<const T*>(grad_out));
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
