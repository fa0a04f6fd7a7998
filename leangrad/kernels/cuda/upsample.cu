// Interpolation (nearest, nearest-exact, bilinear, bicubic) in CUDA (kernels/backend.h);
// kernels/cpu/upsample.cpp is the reference, the index rules are Note [Interpolation source
// indices] (kernels/layers_math.h).
//   forward   one thread per output element: its taps from the shared math, 1, 4 or 16 reads
//   backward  one thread per output element, atomicAdd of its weighted gradient into each tap
//             of the opmath_t input gradient (float32 or float64: native atomics); taps shared by
//             several outputs make the order of additions, and so the last bits, vary
#include <cstdint>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

using layers_math::AxisTaps;
using layers_math::Resize2dShape;

constexpr int kThreads = 256;

template <typename T>
__global__ void upsample2d_forward_kernel(Resize2dShape g, T* out, const T* in) {
  using Acc = opmath_t<T>;
  const std::int64_t total = g.planes * g.OH * g.OW;
  const bool copies = layers_math::copies_one_element(g.mode);
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t ow = k % g.OW, oh = (k / g.OW) % g.OH, p = k / (g.OW * g.OH);
    const T* plane = in + p * g.H * g.W;
    if (layers_math::copies_planes(g)) {
      out[k] = plane[oh * g.W + ow];
      continue;
    }
    const AxisTaps<Acc> r = layers_math::axis_taps<Acc>(g, oh, g.H, g.OH, g.scale_factor_h);
    const AxisTaps<Acc> c = layers_math::axis_taps<Acc>(g, ow, g.W, g.OW, g.scale_factor_w);
    if (copies) {
      out[k] = plane[r.index[0] * g.W + c.index[0]];
      continue;
    }
    Acc sum = Acc(0);
    for (int i = 0; i < r.count; ++i) {
      const T* row = plane + r.index[i] * g.W;
      Acc across = c.weight[0] * static_cast<Acc>(row[c.index[0]]);
      for (int j = 1; j < c.count; ++j)
        across += c.weight[j] * static_cast<Acc>(row[c.index[j]]);
      sum = i == 0 ? r.weight[0] * across : sum + r.weight[i] * across;
    }
    out[k] = static_cast<T>(sum);
  }
}

template <typename T, typename Acc>
__global__ void upsample2d_backward_kernel(Resize2dShape g, Acc* grad_in, const T* grad_out) {
  const std::int64_t total = g.planes * g.OH * g.OW;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t ow = k % g.OW, oh = (k / g.OW) % g.OH, p = k / (g.OW * g.OH);
    Acc* plane = grad_in + p * g.H * g.W;
    const Acc gv = static_cast<Acc>(grad_out[k]);
    if (layers_math::copies_planes(g)) {
      plane[oh * g.W + ow] = gv;  // one output per input element: no other thread writes it
      continue;
    }
    const AxisTaps<Acc> r = layers_math::axis_taps<Acc>(g, oh, g.H, g.OH, g.scale_factor_h);
    const AxisTaps<Acc> c = layers_math::axis_taps<Acc>(g, ow, g.W, g.OW, g.scale_factor_w);
    for (int i = 0; i < r.count; ++i) {
      for (int j = 0; j < c.count; ++j)
        atomicAdd(plane + r.index[i] * g.W + c.index[j], r.weight[i] * c.weight[j] * gv);
    }
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
