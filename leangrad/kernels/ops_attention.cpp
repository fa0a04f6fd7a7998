// Tensor-level entries of fused scaled dot-product attention (kernels/ops.h): forward and
// backward on the CPU (kernels/cpu/attention.h, Note [Fused attention] in
// kernels/cpu/attention.cpp). Query, key and value are made contiguous; the mask is read in place
// through the strides of its broadcast view. float16 and bfloat16 operands run the float32
// kernel: they are widened to float32 (exact), the output and the gradients rounded back once,
// and the logsumexp kept in float32, as PyTorch's CPU flash attention keeps it and accumulates in
// float (Note [Fused attention in 16 bits]).
//
// Note [Fused attention in 16 bits]
//   Widening the operands whole costs float32 copies of query, key and value (and of the output
//   and its gradient in backward): 2 bytes more per element than the 16-bit tensors, against
//   the (..., L, S) weights that the composed path keeps and the rounding of every stage of it
//   to 16 bits. The output is the float32 kernel's rounded once, bit for bit, and so are the
//   logsumexp (float32) and the value's gradient; the query's and key's gradients are the
//   float32 kernel's on the rounded output (softmax's backward reads it, as PyTorch's does),
//   rounded once (tests/kernels/test_attention_kernel.cpp, AttentionKernel16Bit).
#include <limits>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/cpu/attention.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {
namespace {

// The dtype the kernel computes in: float32 for 16-bit operands, their own otherwise.
DType kernel_dtype(DType dtype) {
  return dtype == kFloat16 || dtype == kBFloat16 ? kFloat32 : dtype;
}

// t contiguous in `dtype` (a copy when it is of another dtype or strided).
Tensor contiguous_as(const Tensor& t, DType dtype) {
  return contiguous(t.dtype() == dtype ? t : t.to(dtype));
}

Shape leading(const Tensor& t) {
  return Shape(t.shape().begin(), t.shape().end() - 2);
}

// Checks the operands of `op` and returns their geometry (the batch the leading dims flattened).
kernels::cpu::AttentionGeometry attention_geometry(const char* op, const Tensor& query,
                                                   const Tensor& key, const Tensor& value,
                                                   bool is_causal, double scale) {
  LG_CHECK_DTYPE(
      is_floating(query.dtype()) && key.dtype() == query.dtype() && value.dtype() == query.dtype(),
      op, ": expected query, key and value of one floating dtype, got ", query.dtype(), ", ",
      key.dtype(), " and ", value.dtype());
  LG_CHECK_DEVICE(query.device().is_cpu() && key.device().is_cpu() && value.device().is_cpu(), op,
                  ": the fused kernel runs on the CPU, got query, key and value on ",
                  query.device(), ", ", key.device(), " and ", value.device());
  LG_CHECK_SHAPE(query.dim() >= 2 && key.dim() == query.dim() && value.dim() == query.dim() &&
                     leading(key) == leading(query) && leading(value) == leading(query) &&
                     key.size(-1) == query.size(-1) && value.size(-2) == key.size(-2),
                 op,
                 ": expected query (..., L, E), key (..., S, E) and value (..., S, Ev) with the "
                 "same leading dims, got ",
                 query.shape(), ", ", key.shape(), " and ", value.shape());
  kernels::cpu::AttentionGeometry g;
  g.batch = shape_numel(leading(query), op);
  g.l = query.size(-2);
  g.s = key.size(-2);
  g.e = query.size(-1);
  g.ev = value.size(-1);
  g.scale = scale;
  g.is_causal = is_causal;
  return g;
}

// The mask's broadcast view over the scores (..., L, S), as offsets and strides. A floating mask
// is read in the kernel's dtype: a 16-bit one widened (exact) into *widened, which the caller
// keeps while the kernel runs.
kernels::cpu::AttentionMask attention_mask(const char* op, const Tensor& mask, const Tensor& query,
                                           const Shape& scores_shape, Tensor* widened) {
  kernels::cpu::AttentionMask m;
  if (!mask.defined()) return m;
  LG_CHECK_DTYPE(mask.dtype() == kBool || mask.dtype() == query.dtype(), op,
                 ": attn_mask must be Bool or of the query's dtype ", query.dtype(), ", got ",
                 mask.dtype());
  LG_CHECK_DEVICE(mask.device() == query.device(), op, ": attn_mask is on ", mask.device(),
                  ", query on ", query.device());
  LG_CHECK_SHAPE(broadcasts_to(mask.shape(), scores_shape), op, ": attn_mask of shape ",
                 mask.shape(), " does not broadcast to the scores' shape ", scores_shape);
  const DType read_as = mask.dtype() == kBool ? kBool : kernel_dtype(mask.dtype());
  if (read_as != mask.dtype()) *widened = mask.to(read_as);
  const Tensor view = (read_as != mask.dtype() ? *widened : mask).expand(scores_shape);
  const int lead = view.dim() - 2;
  m.data = view.data_ptr();
  m.is_bool = mask.dtype() == kBool;
  m.stride_l = view.strides()[static_cast<std::size_t>(lead)];
  m.stride_s = view.strides()[static_cast<std::size_t>(lead) + 1];
  // Offsets of every batch, walking the leading dims as an odometer (the last fastest).
  const std::int64_t batch = shape_numel(leading(view), op);
  m.batch_offsets.assign(static_cast<std::size_t>(batch), 0);
  std::vector<std::int64_t> index(static_cast<std::size_t>(lead), 0);
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t offset = 0;
    for (int d = 0; d < lead; ++d)
      offset += index[static_cast<std::size_t>(d)] * view.strides()[static_cast<std::size_t>(d)];
    m.batch_offsets[static_cast<std::size_t>(b)] = offset;
    for (int d = lead - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < view.shape()[static_cast<std::size_t>(d)]) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return m;
}

Shape with_last_two(const Tensor& t, std::int64_t a, std::int64_t b) {
  Shape shape = leading(t);
  shape.push_back(a);
  shape.push_back(b);
  return shape;
}

}  // namespace

AttentionOutput attention(const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& attn_mask, bool is_causal, double scale, double dropout_p,
                          Generator* gen) {
  const char* op = "attention";
  kernels::cpu::AttentionGeometry g = attention_geometry(op, query, key, value, is_causal, scale);
  LG_CHECK(dropout_p >= 0.0 && dropout_p < 1.0 && (dropout_p == 0.0 || gen != nullptr), op,
           ": expected dropout_p in [0, 1) and, when it is > 0, a generator; got ", dropout_p);
  LG_CHECK(!(is_causal && attn_mask.defined()), op,
           ": is_causal and attn_mask cannot be given together");
  Tensor widened_mask;
  const kernels::cpu::AttentionMask mask =
      attention_mask(op, attn_mask, query, with_last_two(query, g.l, g.s), &widened_mask);
  const DType compute = kernel_dtype(query.dtype());
  AttentionOutput result;
  result.output = empty_for(op, with_last_two(query, g.l, g.ev), query.options().dtype(compute));
  Shape lse_shape = leading(query);
  lse_shape.push_back(g.l);
  result.logsumexp = empty_for(op, lse_shape, query.options().dtype(compute));
  // The output in the operands' dtype: a 16-bit one rounded from the kernel's float32.
  auto finished = [&](AttentionOutput r) {
    if (compute != query.dtype()) r.output = r.output.to(query.dtype());
    return r;
  };
  if (result.output.numel() == 0 && result.logsumexp.numel() == 0) return finished(result);
  if (g.s == 0) {  // no keys: the weights are an empty row, the output their empty sum
    fill_(result.output, 0.0);
    fill_(result.logsumexp, -std::numeric_limits<double>::infinity());
    return finished(result);
  }
  if (dropout_p > 0.0) {
    // The counters ops::dropout reserves for the (B, L, S) weights (none when they are empty,
    // which returned above).
    const std::int64_t weights = checked_mul(checked_mul(g.batch, g.l, op), g.s, op);
    const Generator::State state = gen->reserve(static_cast<std::uint64_t>(
        (weights + layers_math::kDropoutPerCounter - 1) / layers_math::kDropoutPerCounter));
    g.dropout_p = dropout_p;
    g.dropout_seed = result.dropout_seed = state.seed;
    g.dropout_offset = result.dropout_offset = state.offset;
  }
  const Tensor q = contiguous_as(query, compute), k = contiguous_as(key, compute),
               v = contiguous_as(value, compute);
  kernels::cpu::attention_forward(compute, g, mask, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                  result.output.data_ptr(), result.logsumexp.data_ptr());
  return finished(result);
}

AttentionGrads attention_backward(const Tensor& grad_output, const Tensor& query, const Tensor& key,
                                  const Tensor& value, const Tensor& output,
                                  const Tensor& logsumexp, const Tensor& attn_mask, bool is_causal,
                                  double scale, double dropout_p, std::uint64_t dropout_seed,
                                  std::uint64_t dropout_offset, bool need_query, bool need_key,
                                  bool need_value) {
  const char* op = "attention_backward";
  kernels::cpu::AttentionGeometry g = attention_geometry(op, query, key, value, is_causal, scale);
  LG_CHECK(dropout_p >= 0.0 && dropout_p < 1.0, op, ": expected dropout_p in [0, 1), got ",
           dropout_p);
  g.dropout_p = dropout_p;
  g.dropout_seed = dropout_seed;
  g.dropout_offset = dropout_offset;
  const Shape out_shape = with_last_two(query, g.l, g.ev);
  LG_CHECK_SHAPE(grad_output.shape() == out_shape && output.shape() == out_shape &&
                     logsumexp.numel() == g.batch * g.l,
                 op, ": expected the gradient and the output of shape ", out_shape, " and ",
                 g.batch * g.l, " logsumexps, got ", grad_output.shape(), ", ", output.shape(),
                 " and ", logsumexp.shape());
  const DType compute = kernel_dtype(query.dtype());
  LG_CHECK_DTYPE(grad_output.dtype() == query.dtype() && output.dtype() == query.dtype() &&
                     logsumexp.dtype() == compute,
                 op, ": expected the gradient and output of the query's dtype ", query.dtype(),
                 " and the logsumexp in ", compute, ", got ", grad_output.dtype(), ", ",
                 output.dtype(), " and ", logsumexp.dtype());
  LG_CHECK_DEVICE(grad_output.device() == query.device() && output.device() == query.device() &&
                      logsumexp.device() == query.device(),
                  op, ": expected the gradient, output and logsumexp on ", query.device());
  Tensor widened_mask;
  const kernels::cpu::AttentionMask mask =
      attention_mask(op, attn_mask, query, with_last_two(query, g.l, g.s), &widened_mask);
  AttentionGrads grads;
  const TensorOptions options = query.options().dtype(compute);
  if (need_query) grads.grad_query = zeros(query.shape(), options);
  if (need_key) grads.grad_key = zeros(key.shape(), options);
  if (need_value) grads.grad_value = zeros(value.shape(), options);
  // The gradients in the operands' dtype: 16-bit ones rounded from the kernel's float32.
  auto finished = [&](AttentionGrads r) {
    if (compute == query.dtype()) return r;
    for (Tensor* t : {&r.grad_query, &r.grad_key, &r.grad_value})
      if (t->defined()) *t = t->to(query.dtype());
    return r;
  };
  if (g.batch == 0 || g.l == 0 || g.s == 0 || !(need_query || need_key || need_value))
    return finished(grads);
  const Tensor dy = contiguous_as(grad_output, compute), q = contiguous_as(query, compute),
               k = contiguous_as(key, compute), v = contiguous_as(value, compute),
               o = contiguous_as(output, compute), lse = contiguous(logsumexp);
  auto pointer = [](const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; };
  kernels::cpu::attention_backward(compute, g, mask, dy.data_ptr(), q.data_ptr(), k.data_ptr(),
                                   v.data_ptr(), o.data_ptr(), lse.data_ptr(),
                                   pointer(grads.grad_query), pointer(grads.grad_key),
                                   pointer(grads.grad_value));
  return finished(grads);
}

}  // namespace leangrad::ops
