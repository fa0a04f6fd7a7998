// Tensor-level entries of Embedding (kernels/ops.h): checks, the int64 indices made contiguous,
// the output allocated as (*indices.shape, dim) and the launchers of kernels/backend.h. The weight
// gradient accumulates in float32 (float64 for float64) and is cast to the weight's dtype.
#include <algorithm>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

namespace {

// On the CPU every index is checked here, so a bad one raises an Error naming it; on CUDA that
// would synchronise, and the kernels give NaN rows instead (as cross_entropy's targets).
void check_indices_on_cpu(const char* op, const Tensor& indices, std::int64_t num_embeddings) {
  if (!indices.device().is_cpu()) return;
  const std::int64_t* idx = indices.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    LG_CHECK(idx[i] >= 0 && idx[i] < num_embeddings, op, ": index ", idx[i], " at position ", i,
             " is out of range for a weight of ", num_embeddings, " embeddings (expected [0, ",
             num_embeddings - 1, "])");
  }
}

void check_indices(const char* op, const Tensor& indices, const Tensor& on) {
  LG_CHECK(indices.defined(), op, ": expected defined indices, got an undefined Tensor()");
  LG_CHECK_DTYPE(indices.dtype() == kInt64, op, ": expected int64 indices, got ", indices.dtype(),
                 " indices of shape ", indices.shape(), " (convert them with .to(kInt64))");
  LG_CHECK_DEVICE(indices.device() == on.device(), op, ": indices are on ", indices.device(),
                  ", the weight on ", on.device());
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  const char* op = "embedding";
  check_defined(op, weight, "weight");
  LG_CHECK_SHAPE(weight.dim() == 2, op,
                 ": expected a weight of shape (num_embeddings, embedding_dim), got ",
                 weight.shape());
  LG_CHECK_DTYPE(is_floating(weight.dtype()), op, ": expected a floating weight, got ",
                 weight.dtype());
  check_indices(op, indices, weight);
  const std::int64_t num_embeddings = weight.size(0), dim = weight.size(1);
  const Tensor idx = contiguous(indices);
  check_indices_on_cpu(op, idx, num_embeddings);
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);
  Tensor out = empty(out_shape, weight.options());
  if (out.numel() == 0) return out;
  const Tensor w = contiguous(weight);
  const cuda::DeviceGuard guard(weight.device());
  switch (weight.device().type) {
    case DeviceType::CPU:
      kernels::cpu::embedding_forward(weight.dtype(), out.data_ptr(), w.data_ptr(),
                                      idx.data_ptr<std::int64_t>(), idx.numel(), num_embeddings,
                                      dim);
      break;
    case DeviceType::CUDA:
      kernels::cuda::embedding_forward(weight.dtype(), out.data_ptr(), w.data_ptr(),
                                       idx.data_ptr<std::int64_t>(), idx.numel(), num_embeddings,
                                       dim);
      break;
  }
  return out;
}

Tensor embedding_backward(const Tensor& grad_out, const Tensor& indices,
                          std::int64_t num_embeddings, std::int64_t padding_idx) {
  const char* op = "embedding_backward";
  LG_CHECK(grad_out.defined(), op, ": expected a defined gradient");
  check_indices(op, indices, grad_out);
  LG_CHECK_SHAPE(
      grad_out.dim() == indices.dim() + 1 &&
          std::equal(indices.shape().begin(), indices.shape().end(), grad_out.shape().begin()),
      op, ": gradient of shape ", grad_out.shape(), " does not match indices of shape ",
      indices.shape(), " (expected (*indices.shape, embedding_dim))");
  const std::int64_t dim = grad_out.size(-1);
  const DType acc_dtype = grad_out.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor grad_weight =
      zeros({num_embeddings, dim}, TensorOptions(acc_dtype).device(grad_out.device()));
  if (grad_out.numel() > 0) {
    const Tensor dy = contiguous(grad_out);
    const Tensor idx = contiguous(indices);
    const cuda::DeviceGuard guard(grad_out.device());
    switch (grad_out.device().type) {
      case DeviceType::CPU:
        kernels::cpu::embedding_backward(grad_out.dtype(), grad_weight.data_ptr(), dy.data_ptr(),
                                         idx.data_ptr<std::int64_t>(), idx.numel(), num_embeddings,
                                         dim, padding_idx);
        break;
      case DeviceType::CUDA:
        kernels::cuda::embedding_backward(grad_out.dtype(), grad_weight.data_ptr(), dy.data_ptr(),
                                          idx.data_ptr<std::int64_t>(), idx.numel(), num_embeddings,
                                          dim, padding_idx);
        break;
    }
  }
  return grad_weight.dtype() == grad_out.dtype() ? grad_weight
                                                 : cast(grad_weight, grad_out.dtype());
}

}  // namespace leangrad::ops
