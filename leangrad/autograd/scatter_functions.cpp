// The scatters of autograd/indexing_functions.h: scatter_add, scatter (with or without a reduce)
// and scatter_reduce, each one kernel of kernels/ops.h's ops::scatter forward and a backward
// composed of differentiable functions, so it differentiates again.
//
// Note [Scatter's gradients]
//   Write place(k) for the element of input that index element k names (c with c_dim replaced by
//   index[k]), and "scattered" for the places some k names. g is the upstream gradient, input's
//   shape; gather(g) is g read at place(k) for every k.
//   - scatter_add, scatter_reduce "sum": d input = g (where scattered: 0, when include_self is
//     false, as input's element is then not in the sum), d src = gather(g).
//   - scatter: d input = g where not scattered, else 0. Of the elements naming one place only the
//     one that is written, the latest along dim (ops::scatter's rule on both devices), gets
//     gather(g); the others are overwritten and get 0. That element is found as the largest
//     position along dim among those naming the place: an int64 Max scatter of the positions,
//     read back with gather. PyTorch gives every one of them gather(g), which is the gradient of
//     none of its own possible results; here a finite difference agrees with the gradient.
//   - "mean": N(place) = the number of elements averaged (input's own counting when included),
//     at least 1; d input = g / N (or 0 where scattered without include_self), d src = gather(g /
//     N).
//   - "amax", "amin": the gradient is split evenly among the elements equal to the result r, as
//     amax's: N = [input == r] + the number of src elements equal to gather(r); d input = g [input
//     == r] / N, d src = gather(g / N) [src == gather(r)]. A NaN result equals nothing, N = 0, and
//     every element of that place gets NaN, as amax's and PyTorch's. Without include_self input's
//     element neither counts nor gets a share (PyTorch counts it when it ties).
//   - "prod": input's element gets g times the product of the src elements at its place (a
//     product scatter into ones, exact with zeros). src element k gets gather(g) times the
//     product of the others at place(k) (input's element among them when included), from the
//     number Z of zeros among them all: R(k) / src_k, R the result, where src_k != 0 (0 when
//     another is 0); the product P of the non-zero ones where src_k is the only zero; and 0 where
//     two or more are 0. Each case is written so that its own derivative is the second
//     derivative, which PyTorch refuses where two or more are 0: R / src_k differentiates through
//     R itself (the saved output, whose gradient is this formula); P as a product scatter of the
//     factors with zeros replaced by 1; and the two-zero case as P (S - src_k), S the sum of the
//     zero factors (0, but its derivative by each zero factor is 1), which gives d/d src_j = P for
//     the other zero j. With three or more zeros every second derivative is 0 too, as it should
//     be; the third ones there are not (they would need the product of all zeros but two).
#include <leangrad/autograd/indexing_functions.h>

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

namespace {

enum class Reduction : std::uint8_t { Sum, Prod, Mean, Amax, Amin };

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Sum:
      return "sum";
    case Reduction::Prod:
      return "prod";
    case Reduction::Mean:
      return "mean";
    case Reduction::Amax:
      return "amax";
    case Reduction::Amin:
      return "amin";
  }
  return "unknown";
}

Reduction parse_reduction(const char* op, std::string_view reduce) {
  for (const Reduction r :
       {Reduction::Sum, Reduction::Prod, Reduction::Mean, Reduction::Amax, Reduction::Amin}) {
    if (reduce == reduction_name(r)) return r;
  }
  LG_THROW(Error, op, ": expected reduce to be \"sum\", \"prod\", \"mean\", \"amax\" or ",
           "\"amin\", got \"", reduce, "\"");
}

// The part of src an index reads: its leading index.shape() block (src may be larger in any dim;
// ops::scatter checks the shapes), or src's first element against a one-element index of another
// rank (0-d against (1)). Differentiable (slice and reshape), so the rest of src gets a zero
// gradient. An undefined or mismatched operand is returned as it is, for ops::scatter to refuse.
Tensor part_read(const Tensor& src, const Tensor& index) {
  if (!src.defined() || !index.defined()) return src;
  Tensor part = src;
  if (src.dim() == index.dim()) {
    for (std::int64_t d = 0; d < index.dim(); ++d) {
      if (part.size(d) > index.size(d)) part = slice(part, d, 0, index.size(d));
    }
  } else if (index.numel() == 1 && src.numel() >= 1 && src.dim() <= 1 && index.dim() <= 1) {
    part = reshape(src.dim() == 0 ? src : slice(src, 0, 0, 1), index.shape());
  }
  return part;
}

ScatterOp kernel_op(Reduction r) {
  switch (r) {
    case Reduction::Sum:
    case Reduction::Mean:
      return ScatterOp::Sum;
    case Reduction::Prod:
      return ScatterOp::Prod;
    case Reduction::Amax:
      return ScatterOp::Max;
    case Reduction::Amin:
      return ScatterOp::Min;
  }
  return ScatterOp::Sum;
}

// The value a place starts from when input's element does not take part: the reduction's
// identity in input's dtype (an infinity for the floating extrema).
double identity_of(Reduction r, DType dtype) {
  switch (r) {
    case Reduction::Sum:
    case Reduction::Mean:
      return 0.0;
    case Reduction::Prod:
      return 1.0;
    case Reduction::Amax:
      return is_floating(dtype) ? -std::numeric_limits<double>::infinity() : dtype_lowest(dtype);
    case Reduction::Amin:
      return is_floating(dtype) ? std::numeric_limits<double>::infinity() : dtype_max(dtype);
  }
  return 0.0;
}

// How many elements each place averages: input's own (when included) and the src elements
// naming it, at least 1; input's shape, in `dtype`. No graph.
Tensor mean_counts(const Shape& shape, std::int64_t dim, const Tensor& index, bool include_self,
                   DType dtype, const char* op) {
  const TensorOptions options = TensorOptions(dtype).device(index.device());
  const Tensor counts = ops::scatter(ScatterOp::Sum, full(shape, include_self ? 1.0 : 0.0, options),
                                     dim, index, ones(index.shape(), options), op);
  return ops::binary(BinaryOp::Maximum, counts, ones({}, options));
}

// scatter_reduce's values (no graph): ops::scatter from input, or from input with the scattered
// places reset to the identity.
Tensor reduce_values(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
                     Reduction r, bool include_self, const char* op) {
  Tensor base = input;
  if (!include_self) {
    base = ops::scatter(ScatterOp::Assign, input, dim, index,
                        full(index.shape(), identity_of(r, input.dtype()), input.options()), op);
  }
  if (r != Reduction::Mean) return ops::scatter(kernel_op(r), base, dim, index, src, op);
  LG_CHECK_DTYPE(input.dtype() != kBool, op, ": reduce \"mean\" takes a numeric input, got bool");
  if (is_floating(input.dtype())) {
    // The 16-bit floats summed and divided in float32, rounded once.
    const DType work = input.dtype() == kFloat64 ? kFloat64 : kFloat32;
    const Tensor sums =
        ops::scatter(ScatterOp::Sum, ops::cast(base, work), dim, index, ops::cast(src, work), op);
    const Tensor mean = ops::binary(BinaryOp::Div, sums,
                                    mean_counts(input.shape(), dim, index, include_self, work, op));
    return mean.dtype() == input.dtype() ? mean : ops::cast(mean, input.dtype());
  }
  // An integral mean: the sum in input's dtype (wrapping), floored by the count, as PyTorch's.
  const Tensor sums = ops::scatter(ScatterOp::Sum, base, dim, index, src, op);
  return ops::cast(ops::binary(BinaryOp::FloorDivide, sums,
                               mean_counts(input.shape(), dim, index, include_self, kInt64, op)),
                   input.dtype());
}

// The places some element of index names, bool of input's shape (constant).
Tensor scattered_places(const Tensor& like, std::int64_t dim, const Tensor& index) {
  const TensorOptions bools = TensorOptions(kBool).device(like.device());
  return ops::scatter(ScatterOp::Assign, zeros(like.shape(), bools), dim, index,
                      ones(index.shape(), bools));
}

// g with the scattered places zeroed.
Tensor zero_scattered(const Tensor& g, std::int64_t dim, const Tensor& index) {
  return where(scattered_places(g, dim, index), zeros({}, g.options()), g);
}

// The position of each index element along dim (int64, index's shape).
Tensor positions_along(const Tensor& index, std::int64_t dim) {
  const TensorOptions longs = TensorOptions(kInt64).device(index.device());
  if (index.dim() == 0) return zeros({}, longs);
  Shape shape(static_cast<std::size_t>(index.dim()), 1);
  shape[static_cast<std::size_t>(dim)] = index.size(dim);
  return expand(reshape(arange(static_cast<double>(index.size(dim)), longs), shape), index.shape());
}

// Whether each index element is the one scatter writes at its place: the latest along dim
// (Note [Scatter's gradients]). bool, index's shape.
Tensor written_elements(const Shape& input_shape, std::int64_t dim, const Tensor& index) {
  const Tensor position = positions_along(index, dim);
  const Tensor latest = ops::scatter(
      ScatterOp::Max, full(input_shape, -1.0, TensorOptions(kInt64).device(index.device())), dim,
      index, position);
  return ops::compare(CompareOp::Eq, ops::gather(latest, dim, index), position);
}

// Whether scatter_reduce's backward reads the operands and the result, or the index only (so that
// a sum into a tensor that is then written, as index_put_'s, keeps no stale operand).
bool saves_operands(Reduction r) {
  return r == Reduction::Prod || r == Reduction::Amax || r == Reduction::Amin;
}

// The gradients of scatter_reduce (Note [Scatter's gradients]). The saved tensors are the index,
// or x, src (the part read), index and out (saves_operands); `needs` says which of x and src
// want one.
std::vector<Tensor> reduce_backward(const BackwardContext& c, std::int64_t dim, Reduction r,
                                    bool include_self) {
  const Tensor& g = c.grad;
  std::vector<Tensor> grads(2);
  if (!saves_operands(r)) {
    const Tensor& index = c.saved[0];
    // The sum's gradient, each place's divided by its count for the mean.
    const Tensor g_each = r == Reduction::Sum
                              ? g
                              : div(g, mean_counts(c.shape(0), dim, index, include_self, g.dtype(),
                                                   "scatter_reduce"));
    if (c.needs(0)) grads[0] = include_self ? g_each : zero_scattered(g, dim, index);
    if (c.needs(1)) grads[1] = gather(g_each, dim, index);
    return grads;
  }
  const Tensor& x = c.saved[0];
  const Tensor& src = c.saved[1];
  const Tensor& index = c.saved[2];
  const Tensor& out = c.saved[3];
  const Tensor zero = zeros({}, g.options());
  const Tensor one = ones({}, g.options());
  switch (r) {
    case Reduction::Sum:
    case Reduction::Mean:
      break;
    case Reduction::Amax:
    case Reduction::Amin: {
      const Tensor at_place = gather(out, dim, index);
      const Tensor src_ties = eq(src, at_place).to(g.dtype());
      const Tensor self_ties = include_self ? eq(x, out).to(g.dtype()) : zeros_like(g);
      const Tensor count = ops::scatter(ScatterOp::Sum, self_ties, dim, index, src_ties);
      const Tensor share = div(g, count);
      if (c.needs(0))
        grads[0] = include_self ? mul(share, self_ties) : zero_scattered(g, dim, index);
      if (c.needs(1)) grads[1] = mul(gather(share, dim, index), src_ties);
      break;
    }
    case Reduction::Prod: {
      if (c.needs(0)) {
        grads[0] = include_self ? mul(g, scatter_reduce(ones_like(x), dim, index, src, "prod"))
                                : zero_scattered(g, dim, index);
      }
      if (!c.needs(1)) break;
      const Tensor src_zero = eq(src, 0.0);
      const Tensor self_zero =
          include_self ? eq(x, 0.0) : zeros(x.shape(), TensorOptions(kBool).device(x.device()));
      // Z, the zeros among each place's factors, and P, the product of its non-zero ones.
      const Tensor zeros_at = gather(
          ops::scatter(ScatterOp::Sum, self_zero.to(g.dtype()), dim, index, src_zero.to(g.dtype())),
          dim, index);
      const Tensor nonzero_src = where(src_zero, one, src);
      const Tensor nonzero_self = include_self ? where(self_zero, one, x) : ones_like(x);
      const Tensor product_at =
          gather(scatter_reduce(nonzero_self, dim, index, nonzero_src, "prod"), dim, index);
      // S, the sum of the zero factors: 0, differentiating to 1 by each of them.
      const Tensor zero_sum_at =
          gather(scatter_add(include_self ? where(self_zero, x, zero) : zeros_like(x), dim, index,
                             where(src_zero, src, zero)),
                 dim, index);
      const Tensor others =
          where(src_zero,
                where(eq(zeros_at, 1.0), product_at,
                      where(eq(zeros_at, 2.0), mul(product_at, sub(zero_sum_at, src)), zero)),
                div(gather(out, dim, index), nonzero_src));
      grads[1] = mul(gather(g, dim, index), others);
      break;
    }
  }
  return grads;
}

}  // namespace

Tensor scatter_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src) {
  LG_PROFILE_OP(input, index, src);
  const Tensor part = part_read(src, index);
  return record_op("scatter_add", ops::scatter_add(input, dim, index, part), {input, part}, {index},
                   [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = c.grad;
                     if (c.needs(1)) grads[1] = gather(c.grad, dim, c.saved[0]);
                     return grads;
                   });
}

Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src) {
  LG_PROFILE_OP(input, index, src);
  const Tensor part = part_read(src, index);
  const Tensor out = ops::scatter(ScatterOp::Assign, input, dim, index, part);
  const std::int64_t d = wrap_dim(dim, input.dim(), "scatter");
  return record_op("scatter", out, {input, part}, {index},
                   [d](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& index = c.saved[0];
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = zero_scattered(c.grad, d, index);
                     if (c.needs(1)) {
                       grads[1] = where(written_elements(c.shape(0), d, index),
                                        gather(c.grad, d, index), zeros({}, c.grad.options()));
                     }
                     return grads;
                   });
}

Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, double value) {
  LG_PROFILE_OP(input, index);
  LG_CHECK(input.defined() && index.defined(), "scatter",
           ": expected a defined input and index, got an undefined Tensor()");
  LG_CHECK_DTYPE(scalar_fits(value, input.dtype()), "scatter", ": value ", value,
                 " cannot be converted to dtype ", input.dtype(), " without overflow");
  const Tensor out = ops::scatter(ScatterOp::Assign, input, dim, index,
                                  full(index.shape(), value, input.options()));
  const std::int64_t d = wrap_dim(dim, input.dim(), "scatter");
  return record_op("scatter", out, {input}, {index},
                   [d](const BackwardContext& c) -> std::vector<Tensor> {
                     return {zero_scattered(c.grad, d, c.saved[0])};
                   });
}

namespace {

// LibTorch's reduce of scatter: "add" or "multiply".
const char* scatter_reduction(std::string_view reduce) {
  if (reduce == "add") return "sum";
  if (reduce == "multiply") return "prod";
  LG_THROW(Error, "scatter: expected reduce to be \"add\" or \"multiply\", got \"", reduce, "\"");
}

}  // namespace

Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
               std::string_view reduce) {
  LG_PROFILE_OP(input, index, src);
  return scatter_reduce(input, dim, index, src, scatter_reduction(reduce));
}

Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, double value,
               std::string_view reduce) {
  LG_PROFILE_OP(input, index);
  const char* r = scatter_reduction(reduce);
  LG_CHECK(input.defined() && index.defined(), "scatter",
           ": expected a defined input and index, got an undefined Tensor()");
  LG_CHECK_DTYPE(scalar_fits(value, input.dtype()), "scatter", ": value ", value,
                 " cannot be converted to dtype ", input.dtype(), " without overflow");
  return scatter_reduce(input, dim, index, full(index.shape(), value, input.options()), r);
}

Tensor scatter_reduce(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  LG_PROFILE_OP(input, index, src);
  const char* op = "scatter_reduce";
  const Reduction r = parse_reduction(op, reduce);
  const Tensor part = part_read(src, index);
  const Tensor out = reduce_values(input, dim, index, part, r, include_self, op);
  const std::int64_t d = wrap_dim(dim, input.dim(), op);
  const std::vector<Tensor> saved =
      saves_operands(r) ? std::vector<Tensor>{input, part, index, out} : std::vector<Tensor>{index};
  return record_op(op, out, {input, part}, saved, [d, r, include_self](const BackwardContext& c) {
    return reduce_backward(c, d, r, include_self);
  });
}

}  // namespace leangrad
