// kernels/ops.h — the table of contents of every kernel leangrad has.
//
// Each function here is the tensor-level entry of one op (STYLE.md habit 1): it checks dtypes,
// devices and shapes, allocates the output, and switches on the device to a raw-pointer launcher
// in kernels/cpu/ (declared in cpu/cpu_kernels.h) or kernels/cuda/ (cuda/cuda_kernels.h).
// These functions know nothing of autograd; the differentiable public functions in
// autograd/functions.h call them. Implementations are grouped by family:
//   ops_elementwise.cpp  binary, unary, compare, where
//   ops_copy.cpp         copy_, cast, fill_
//   ops_shape.cpp        cat
//   ops_reduce.cpp       sum, mean, max, argmax
//   ops_linalg.cpp       matmul
//   ops_random.cpp       uniform, normal (Philox: same numbers on every device)
//   ops_activation.cpp   TanhExp;  ops_norm.cpp  GroupNorm;  ops_conv.cpp  conv2d
//   ops_layers.cpp       pixel shuffle, pooling, dropout, softmax, losses
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace leangrad {

class Generator;

// The elementwise operations, one enum per kernel family. Kernels switch on these.
enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div, Pow, Maximum, Minimum };
enum class UnaryOp : std::uint8_t { Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu };
enum class CompareOp : std::uint8_t { Gt, Lt, Ge, Le, Eq, Ne };
enum class ReduceOp : std::uint8_t { Sum, Mean, Max };

const char* op_name(BinaryOp op);   // "add", "sub", ...
const char* op_name(UnaryOp op);    // "neg", "exp", ...
const char* op_name(CompareOp op);  // "gt", "eq", ...
const char* op_name(ReduceOp op);   // "sum", "mean", "max"

namespace ops {

// ---- Elementwise (ops_elementwise.cpp; cast, fill_ and copy_ in ops_copy.cpp) -------------
// out = a op b with NumPy broadcasting; the result dtype follows promote_types, except that Div
// of two integral tensors gives float32 (true division, as PyTorch).
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
// out = a op s (or s op a when scalar_first). An integral tensor with a non-integral scalar gives
// float32; otherwise the tensor's dtype is kept.
Tensor binary(BinaryOp op, const Tensor& a, double s, bool scalar_first = false);
// self = self op other, other broadcast to self's shape; self keeps its dtype. Bumps the version.
void binary_(BinaryOp op, const Tensor& self, const Tensor& other);
void binary_(BinaryOp op, const Tensor& self, double s);
// Floating ops (exp, log, sqrt, tanh, sigmoid) on integral input give float32.
Tensor unary(UnaryOp op, const Tensor& a);
// Bool results.
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b);
Tensor compare(CompareOp op, const Tensor& a, double s);
// cond ? a : b elementwise; cond must be Bool; all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// A contiguous copy converted to `dtype` (float16/bfloat16 round to nearest even).
Tensor cast(const Tensor& a, DType dtype);
// self[...] = value (converted to self's dtype). Bumps the version.
void fill_(const Tensor& self, double value);
// dst[...] = src: any dtypes, any devices (CPU <-> CUDA; asynchronous from pinned memory when
// non_blocking), src broadcast to dst's shape, dst may be a strided view. Bumps dst's version.
void copy_(const Tensor& dst, const Tensor& src, bool non_blocking = false);

// ---- Shape (ops_shape.cpp) -------------------------------------------------------------------
// Concatenation along dim; all tensors on one device, equal sizes except along dim, dtypes
// promoted. stack() is unsqueeze + cat and lives in autograd/functions.cpp.
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim);

// ---- Reductions (ops_reduce.cpp) -------------------------------------------------------------
// Reduce over `dims` (empty = all dims). Sum/Mean of integral input: Sum gives int64, Mean
// requires a floating dtype. Max propagates NaN. CPU sums are pairwise (accurate for 1e7+ f32).
Tensor reduce(ReduceOp op, const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim);
// Index (int64) of the first maximum along `dim`, or in the flattened tensor when dim is empty.
Tensor argmax(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim);

// ---- Linear algebra (ops_linalg.cpp) ---------------------------------------------------------
// (M, K) @ (K, N) -> (M, N); (B, M, K) @ (B, K, N) -> (B, M, N); a 3-D operand with a 2-D one
// broadcasts the 2-D one over the batch. CPU: Eigen. CUDA: cuBLAS, TF32 off unless allowed.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- Random (ops_random.cpp) -----------------------------------------------------------------
// Fill with U[low, high) or N(mean, std) from the Philox stream of `gen`; element i of the
// tensor gets the same number on every device for the same generator state.
void uniform_(const Tensor& self, double low, double high, Generator& gen);
void normal_(const Tensor& self, double mean, double std, Generator& gen);

// ---- Activations and normalization (ops_activation.cpp, ops_norm.cpp) -----------------------
// (TanhExp, GroupNorm: added with their kernels)

// ---- Convolution (ops_conv.cpp) --------------------------------------------------------------
// (conv2d forward, input gradient, weight gradient: added with their kernels)

// ---- Layers (ops_layers.cpp) -----------------------------------------------------------------
// (pixel shuffle, pooling, dropout, softmax and losses: added with their kernels)

}  // namespace ops
}  // namespace leangrad
