// Products and rearrangements of matrices beside matmul, as torch's: addmm, addmv, baddbmm,
// addbmm, addr, mv, vdot, chain_matmul, tensordot, kron, diagonal, diag, trace, cross, cdist,
// dist, pdist, renorm, vander and diff. Compositions of matmul,
// einsum, views and the elementwise ops, so they differentiate, twice too, and run wherever those
// run; the operands share a dtype and a device.
#pragma once

#include <cstdint>
#include <optional>
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
// The products of a's and b's last dims summed (of one size; a 0-d operand multiplies the
// other): a's other dims, then b's, as torch.inner (tensordot over the last dims).
Tensor inner(const Tensor& a, const Tensor& b);
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

// mat (n, m) @ vec (m) -> (n), as torch.mv (2-d and 1-d operands only; matmul takes any).
Tensor mv(const Tensor& mat, const Tensor& vec);
// The inner product of two 1-d tensors of one size, as torch.vdot (dot: the conjugate of a is
// a itself for the real dtypes leangrad has).
Tensor vdot(const Tensor& a, const Tensor& b);
// beta input + alpha outer(vec1, vec2), vec1 (n), vec2 (m), input broadcastable to (n, m), as
// torch.addr; with beta 0 input is not read, as PyTorch's.
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta = 1.0,
            double alpha = 1.0);
// The product of 2-d matrices in the cheapest order, as torch.chain_matmul (linalg::multi_dot
// of 2-d matrices; one matrix: a copy of it).
Tensor chain_matmul(const std::vector<Tensor>& matrices);
// The p-norm of a - b (broadcast), 0-d, as torch.dist (linalg::vector_norm's p: 0 counts the
// nonzero differences, inf takes the largest); floating dtypes.
Tensor dist(const Tensor& a, const Tensor& b, double p = 2.0);
// The p-norm distances between the rows of x (N, M), the upper triangle of cdist(x, x) row by
// row without the diagonal: N (N - 1) / 2 values, as torch.pdist (p >= 0, floating dtypes). Its
// gradient at a distance of 0 is 0, for every p, as PyTorch's.
Tensor pdist(const Tensor& x, double p = 2.0);
// Each slice along dim (x.select(dim, i)) whose p-norm exceeds maxnorm scaled to the norm
// maxnorm / (norm + 1e-7), the others as they are, as torch.renorm (p > 0, maxnorm >= 0,
// floating dtypes).
Tensor renorm(const Tensor& x, double p, std::int64_t dim, double maxnorm);
// The Vandermonde matrix of a 1-d x: column j holds x^(N - 1 - j) (x^j with increasing), N
// columns (x's size by default), as torch.vander; integral x stays int64 (bool too, as int64).
Tensor vander(const Tensor& x, std::optional<std::int64_t> N = std::nullopt,
              bool increasing = false);

}  // namespace leangrad
