// make_elementwise_geometry: broadcasts the inputs of an elementwise op onto the output's shape
// and simplifies the iteration space (size-1 dims dropped, contiguous dims merged) before the
// CPU or CUDA kernel walks it. See kernels/elementwise_geometry.h for the layout.
#include <leangrad/kernels/elementwise_geometry.h>

#include <leangrad/core/error.h>

namespace leangrad {

ElementwiseGeometry make_elementwise_geometry(const char* op, const Tensor& out,
                                              std::initializer_list<const Tensor*> inputs) {
  const int num_operands = 1 + static_cast<int>(inputs.size());
  LG_INTERNAL_ASSERT(num_operands <= kMaxOperands, op, ": too many operands");
  const Shape& shape = out.shape();
  const int ndim = static_cast<int>(shape.size());
  LG_CHECK_SHAPE(ndim <= kMaxDims, op, ": tensors of more than ", kMaxDims,
                 " dims are not supported, got shape ", shape_str(shape));

  // Strides of every operand over out's full shape; 0 where an input is broadcast. Input dims
  // align to the right of out's dims (NumPy broadcasting).
  std::int64_t full_strides[kMaxOperands][kMaxDims] = {};
  for (int d = 0; d < ndim; ++d)
    full_strides[0][d] = out.strides()[d];
  int k = 1;
  for (const Tensor* input : inputs) {
    const Shape& in_shape = input->shape();
    const int in_ndim = static_cast<int>(in_shape.size());
    bool ok = in_ndim <= ndim;
    for (int d = 0; ok && d < in_ndim; ++d) {
      const int out_d = ndim - in_ndim + d;
      if (in_shape[d] == shape[out_d]) {
        full_strides[k][out_d] = shape[out_d] == 1 ? 0 : input->strides()[d];
      } else if (in_shape[d] == 1) {
        full_strides[k][out_d] = 0;
      } else {
        ok = false;
      }
    }
    LG_CHECK_SHAPE(ok, op, ": cannot broadcast ", shape_str(in_shape), " to ", shape_str(shape));
    ++k;
  }

  ElementwiseGeometry g;
  g.num_operands = num_operands;
  g.numel = 1;
  for (int d = 0; d < ndim; ++d)
    g.numel *= shape[d];

  // Drop size-1 dims, and merge dim d into the previous kept dim p (the one just outside it)
  // when every operand steps over p exactly as over the whole of d: stride[p] == stride[d] *
  // size[d]. Walking from the outermost dim keeps the row-major order.
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = g.ndim > 0;
    for (int op_k = 0; mergeable && op_k < num_operands; ++op_k) {
      mergeable = g.strides[op_k][g.ndim - 1] == full_strides[op_k][d] * shape[d];
    }
    if (mergeable) {
      g.sizes[g.ndim - 1] *= shape[d];
      for (int op_k = 0; op_k < num_operands; ++op_k)
        g.strides[op_k][g.ndim - 1] = full_strides[op_k][d];
    } else {
      g.sizes[g.ndim] = shape[d];
      for (int op_k = 0; op_k < num_operands; ++op_k)
        g.strides[op_k][g.ndim] = full_strides[op_k][d];
      ++g.ndim;
    }
  }
  return g;
}

bool safe_to_read_while_writing(const Tensor& dst, const Tensor& src) {
  if (!src.shares_storage(dst)) return true;
  return src.storage_offset() == dst.storage_offset() && src.shape() == dst.shape() &&
         src.strides() == dst.strides() && src.dtype() == dst.dtype();
}

void check_writable(const char* op, const Tensor& out) {
  for (std::int64_t d = 0; d < out.dim(); ++d) {
    LG_CHECK(out.shape()[d] <= 1 || out.strides()[d] != 0, op,
             ": cannot write in place into an expanded tensor (shape ", shape_str(out.shape()),
             ", strides ", shape_str(out.strides()), "); call .contiguous() first");
  }
}

}  // namespace leangrad
