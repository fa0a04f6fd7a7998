// copy_, cast, contiguous and fill_: moving and converting data within and across devices.
// Same-device copies are one strided cast kernel (which also broadcasts and converts dtypes).
// Cross-device copies move contiguous bytes with kernels::cuda::copy_bytes and do any dtype
// conversion or re-striding on the destination device. See Note [Pinned copies].
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cuda/copy.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

// Note [Transposed operands of elementwise ops]
// The CPU loops walk the output row by row, in memory order. An input whose stride-1 dim is
// another dim (a t() view, a permute, a transposed matmul gradient) is then read a cache line
// per element: add(a.t(), b.t()) of two 2048 x 512 float tensors took 10.8 ms where add(a, b)
// takes 0.53, and summing a transposed weight's gradients over the 50 steps of an LSTM took
// most of its backward. Such an input is first copied to rows by the tiled transposed copy
// (0.9 ms here; Note [Tiled transposed copy] in kernels/cpu/transpose_copy.cpp), and the op runs
// over rows: 2.3 ms in all. (PyTorch instead gives the output its inputs' layout when they share
// one; leangrad's elementwise outputs are always contiguous.) Inputs that are strided without
// being transposed (a slice with a step, a broadcast) are read in place, as before: a copy would
// read them with the same strides.
//   Every CPU launcher of an elementwise loop reads its inputs so: the unary, binary and
// activation ops and their backward, the comparisons, where, masked_fill_'s mask, and a copy_ or
// cast that converts the dtype (one that keeps it is the tiled copy itself). Until session 71 the
// last four read in place: of a transposed (2048, 2048) float32 on one thread, x > 0 took 21.9 ms
// and takes 1.8 (the copy 1.3, the rows 0.25), .to(kInt32) 20.5 and 3.6
// (bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md).
Tensor rows_for(const Tensor& out, const Tensor& in) {
  constexpr std::int64_t kMinSide = 8;  // kernels/cpu/transpose_copy.h's kTransposeMinSide
  if (in.device().type != DeviceType::CPU || in.dim() < 2 || out.dim() < 1 ||
      out.strides().back() != 1 || in.strides().back() == 1 || in.shape().back() < kMinSide)
    return in;
  bool stride_one_elsewhere = false;
  for (std::int64_t d = 0; d + 1 < in.dim(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (in.strides()[i] == 0 && in.shape()[i] > 1) return in;  // expanded: a copy would grow
    if (in.strides()[i] == 1 && in.shape()[i] >= kMinSide) stride_one_elsewhere = true;
  }
  return stride_one_elsewhere ? contiguous(in) : in;
}

namespace {

// dst and src on the same device: one strided conversion kernel (a conversion reads a transposed
// src in rows: Note [Transposed operands of elementwise ops]).
void copy_same_device(const Tensor& dst, const Tensor& src_in) {
  const Tensor src = dst.dtype() == src_in.dtype() ? src_in : rows_for(dst, src_in);
  const ElementwiseGeometry g = make_elementwise_geometry("copy_", dst, {&src});
  const cuda::DeviceGuard guard(dst.device());
  switch (dst.device().type) {
    case DeviceType::CPU:
      kernels::cpu::cast(dst.dtype(), src.dtype(), g, dst.data_ptr(), src.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::cast(dst.dtype(), src.dtype(), g, dst.data_ptr(), src.data_ptr());
      break;
  }
}

// Note [Pinned copies]: a copy between a CUDA tensor and pinned host memory can run
// asynchronously. With non_blocking the host returns at once, so the pinned block must not be
// reused by the pinned pool until the copy is done: record the copy's stream on it, and the
// pool holds the block back until an event on that stream completes. Without non_blocking, or
// with pageable memory, copy_bytes returns only once the data is in place.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  // Every copy between the host and a device (offload, batches, .to()) is one profiler span, timed
  // on the device on the stream it is queued to.
  const profiler::Span span(src.device().is_cpu() ? "copy host->device" : "copy device->host",
                            profiler::Category::Copy, dst, src);
  // Bring src to dst's shape and a dense layout on its own device.
  Tensor source = src.shape() == dst.shape() ? src : src.expand(dst.shape());
  source = contiguous(source);
  const bool direct = dst.is_contiguous() && dst.dtype() == source.dtype();
  // Bytes land directly in dst, or in a staging tensor on dst's device (same dtype as source)
  // that a same-device kernel then converts and re-strides into dst.
  Tensor landing =
      direct ? dst : empty(dst.shape(), TensorOptions(source.dtype()).device(dst.device()));
  kernels::cuda::copy_bytes(landing.data_ptr(), landing.device(), landing.is_pinned(),
                            source.data_ptr(), source.device(), source.is_pinned(), source.nbytes(),
                            non_blocking && direct);
  const Tensor& host = source.device().is_cpu() ? source : landing;
  const Tensor& gpu = source.device().is_cuda() ? source : landing;
  if (non_blocking && direct && host.is_pinned()) {
    host.record_stream(cuda::current_stream(gpu.device().index));
  }
  if (!direct) copy_same_device(dst, landing);
}

}  // namespace

void copy_(const Tensor& dst, const Tensor& src, bool non_blocking) {
  LG_CHECK(dst.defined() && src.defined(), "copy_: expected defined tensors");
  // Broadcasting src to dst's shape (ShapeError if it cannot).
  const Shape common = broadcast_shapes(dst.shape(), src.shape(), "copy_");
  LG_CHECK_SHAPE(common == dst.shape(), "copy_: cannot broadcast source of shape ", src.shape(),
                 " to destination of shape ", dst.shape());
  check_writable("copy_", dst);
  if (dst.numel() > 0) {
    // A view of dst's own memory that is not dst's elements is copied first, so that every
    // element is read before it is overwritten (as binary_ does).
    if (!safe_to_read_while_writing(dst, src)) {
      copy_(dst, cast(src, src.dtype()));  // a fresh tensor: copy_ bumps dst's version
      return;
    }
    if (dst.device() == src.device()) {
      copy_same_device(dst, src);
    } else {
      copy_across_devices(dst, src, non_blocking);
    }
  }
  dst.bump_version();
}

Tensor cast(const Tensor& a, DType dtype) {
  LG_CHECK(a.defined(), "cast: expected a defined tensor");
  Tensor out = empty(a.shape(), TensorOptions(dtype).device(a.device()));
  copy_(out, a);
  return out;
}

Tensor contiguous(const Tensor& a) {
  LG_CHECK(a.defined(), "contiguous: expected a defined tensor");
  return a.is_contiguous() ? a : cast(a, a.dtype());
}

void fill_(const Tensor& self, double value) {
  LG_CHECK(self.defined(), "fill_: expected a defined tensor");
  LG_CHECK(scalar_fits(value, self.dtype()), "fill_: value ", value,
           " cannot be converted to dtype ", self.dtype(), " without overflow");
  if (self.numel() > 0) {
    // Every element gets the same value, so an expanded tensor may be filled (as in PyTorch):
    // its stride-0 dims are written once, at size 1, rather than raced on.
    Shape distinct = self.shape();
    for (std::size_t d = 0; d < distinct.size(); ++d)
      if (self.strides()[d] == 0) distinct[d] = 1;
    const Tensor target = views::as_strided(self, distinct, self.strides(), self.storage_offset());
    const ElementwiseGeometry g = make_elementwise_geometry("fill_", target, {});
    const cuda::DeviceGuard guard(target.device());
    switch (target.device().type) {
      case DeviceType::CPU:
        kernels::cpu::fill(target.dtype(), g, target.data_ptr(), value);
        break;
      case DeviceType::CUDA:
        kernels::cuda::fill(target.dtype(), g, target.data_ptr(), value);
        break;
    }
  }
  self.bump_version();
}

}  // namespace leangrad::ops
