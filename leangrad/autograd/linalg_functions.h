// Products and rearrangements of matrices beside matmul, as torch's: addmm, addmv, baddbmm,
// addbmm, tensordot, kron, diagonal, diag, trace, cross, cdist and diff. Compositions of matmul,
// einsum, views and the elementwise ops, so they differentiate, twice too, and run wherever those
// run; the operands share a dtype and a device.
#pragma once

#include <cstdint>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad {

// beta input + alpha (mat1 @ mat2), mat1 (n, m), mat2 (m, p), input broadcastable to (n, p), as
// torch.addmm; with beta 0 input is not read (a NaN in it does not propagate), as PyTorch's.
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, double beta = 1.0,
             double alpha = 1.0);
// beta input + alpha (mat @ vec), mat (n, m), vec (m), input broadcastable to (n), as torch.addmv.
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta = 1.0,
             double alpha = 1.0);
// beta input + alpha (batch1 @ batch2), batch1 (b, n, m), batch2 (b, m, p), input broadcastable
// to (b, n, p), as torch.baddbmm.
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
               double alpha = 1.0);
// beta input + alpha sum_i (batch1[i] @ batch2[i]), input broadcastable to (n, p), as
// torch.addbmm.
Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
              double alpha = 1.0);
// The sum over a's dims dims_a and b's dims dims_b (paired in order, of equal sizes) of their
// product: a's other dims, then b's, as torch.tensordot; with a number n, a's last n dims against
// b's first n.
Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<std::int64_t>& dims_a,
                 const std::vector<std::int64_t>& dims_b);
Tensor tensordot(const Tensor& a, const Tensor& b, std::int64_t n = 2);
// The Kronecker product: for a and b of one rank (the smaller padded with leading dims of size
// 1), out[i a_stride... ] = a[i] b[j] blocks, shape a.size(d) * b.size(d), as torch.kron.
Tensor kron(const Tensor& a, const Tensor& b);
// The elements input[..., i, ..., i + offset, ...] of dims dim1 and dim2 (offset above the main
// diagonal; negative: below), those two dims removed and the diagonal appended last, as
// torch.diagonal (a copy, where PyTorch's is a view).
Tensor diagonal(const Tensor& input, std::int64_t offset = 0, std::int64_t dim1 = 0,
                std::int64_t dim2 = 1);
// torch.diag: a 1-d input as the `diagonal`-th diagonal of a square matrix (zeros elsewhere), a
// 2-d input's `diagonal`-th diagonal as a 1-d tensor.
Tensor diag(const Tensor& input, std::int64_t diagonal = 0);
// The sum of a 2-d input's main diagonal (0-d), as torch.trace.
Tensor trace(const Tensor& input);
// The cross product of 3-vectors along dim (of size 3 in both; the others broadcast), as
// torch.linalg.cross (dim -1 by default).
Tensor cross(const Tensor& a, const Tensor& b, std::int64_t dim = -1);
// The p-norm distance between each row of x1 (*, P, M) and each row of x2 (*, R, M), batch dims
// broadcast: (*, P, R), as torch.cdist (p 0 counts the differing elements, p inf takes the
// largest difference). For p = 2 with more than 25 rows on a side it takes PyTorch's matrix
// product form, sqrt(|a|^2 - 2 a.b + |b|^2) clamped at 0 (fast; cancels for close rows, as
// PyTorch's does), whose gradient at a distance of 0 is 0; otherwise the norm of the
// differences. Floating dtypes.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
// The n-th forward difference along dim: out[i] = x[i + 1] - x[i], n times, as torch.diff
// (without prepend and append).
Tensor diff(const Tensor& input, std::int64_t n = 1, std::int64_t dim = -1);

}  // namespace leangrad
