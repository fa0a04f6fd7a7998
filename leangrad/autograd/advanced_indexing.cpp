// Indexing by tensors (autograd/advanced_indexing.h).
//
// Note [Advanced indexing]
//   PyTorch's rules (numpy's, except that an integer is a basic index, as in PyTorch):
//   - the integers, slices, None and Ellipsis apply first, as the views of Note [Basic indexing]
//     (tensor_methods.cpp), each tensor index keeping the dims it applies to: an integer tensor
//     one dim, a bool (or uint8) mask of k dims k dims, standing for k integer index tensors, the
//     columns of nonzero(mask);
//   - the index tensors broadcast to one shape B, and the result holds, for each point of B, the
//     element of the view at the positions the index tensors give there along their dims (with
//     every other dim whole);
//   - B takes the place of the indexed dims when they are adjacent in the view (t[:, idx] of a
//     (3, 4, 5) t with idx of shape (2,) is (3, 2, 5)); when something separates them, B goes
//     first (t[idx, :, idx] is (2, 4)).
//   Reading is one differentiable index_select: the view permuted so that the indexed dims come
//   first, reshaped to (A, rest...), A the number of their position tuples, and the row-major
//   linear position of each tuple selected along dim 0 (index_select's gradient is index_add).
//   Writing (index_put_) finds the flat position in self of each element the same index reads,
//   by reading it from a tensor of self's own positions (0, 1, ..., numel - 1 in self's shape),
//   builds self's new contents out of place with one scatter of the value (broadcast to the
//   indexed shape) at those positions of the flattened self (scatter_reduce's "sum" with
//   accumulate), and copies them in: one write of self, not of a view, which autograd could not
//   follow. A position named twice takes its last value (scatter's rule; PyTorch leaves the
//   choice open), or the sum of all of them with accumulate. The value's gradient is the
//   gradient at its position (0 for an occurrence that lost); self itself may not require grad,
//   as for every index_put_ (check_inplace).
#include <leangrad/autograd/advanced_indexing.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::autograd {

namespace {

using indexing::TensorIndex;

bool is_mask(const Tensor& t) {
  return t.dtype() == kBool || t.dtype() == kUInt8;
}

// The view the basic indices give, the dims of it each index tensor applies to (in order), and
// the index tensors (int64, on self's device, wrapped into [0, size)).
struct Plan {
  Tensor view;
  std::vector<std::int64_t> dims;
  std::vector<Tensor> indices;
};

Plan plan_for(const char* op, const Tensor& self, const std::vector<TensorIndex>& indices) {
  LG_CHECK(self.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  std::int64_t consumed = 0;
  int ellipses = 0;
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer:
      case TensorIndex::Kind::Slice:
        ++consumed;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = i.tensor();
        LG_CHECK_DTYPE(is_mask(t) || t.dtype() == kInt64 || t.dtype() == kInt32, op,
                       ": tensors used as indices must be int64, int32, bool or uint8, got ",
                       t.dtype(), " (shape ", t.shape(), ")");
        LG_CHECK_SHAPE(!is_mask(t) || t.dim() > 0, op,
                       ": a 0-d bool index is not supported (index with a 1-d mask instead)");
        consumed += is_mask(t) ? t.dim() : 1;
        break;
      }
      case TensorIndex::Kind::Ellipsis:
        ++ellipses;
        break;
      case TensorIndex::Kind::None:
        break;
    }
  }
  LG_CHECK(ellipses <= 1, op, ": at most one Ellipsis (\"...\") in an index, got ", ellipses);
  LG_CHECK_SHAPE(consumed <= self.dim(), op, ": the indices take ", consumed,
                 " dims of a tensor of ", self.dim(), " dims (shape ", self.shape(), ")");
  Plan plan;
  Tensor out = self;
  std::int64_t d = 0;  // the dim of `out` the next index applies to
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer:
      case TensorIndex::Kind::Slice: {
        // One basic index, as Tensor::index takes it (a view), at dim d.
        std::vector<TensorIndex> basic(static_cast<std::size_t>(d), indexing::Slice());
        basic.push_back(i);
        out = out.index(basic);
        if (i.kind() == TensorIndex::Kind::Slice) ++d;
        break;
      }
      case TensorIndex::Kind::None:
        out = out.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += self.dim() - consumed;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor t = i.tensor().to(self.device());
        if (!is_mask(t)) {
          plan.dims.push_back(d++);
          plan.indices.push_back(t.to(kInt64));
          break;
        }
        const Shape covered(out.shape().begin() + d, out.shape().begin() + d + t.dim());
        LG_CHECK_SHAPE(covered == t.shape(), op, ": a mask of shape ", t.shape(),
                       " does not match the dims it indexes, of shape ", covered,
                       " (the tensor's shape ", self.shape(), ")");
        NoGradGuard no_grad;
        const Tensor positions = nonzero(t);  // (M, k)
        for (std::int64_t j = 0; j < t.dim(); ++j) {
          plan.dims.push_back(d++);
          plan.indices.push_back(select(positions, 1, j));
        }
        break;
      }
    }
  }
  plan.view = out;
  NoGradGuard no_grad;
  for (std::size_t k = 0; k < plan.indices.size(); ++k) {
    Tensor& idx = plan.indices[k];
    const std::int64_t size = out.size(plan.dims[k]);
    if (idx.numel() == 0) continue;
    const std::int64_t largest = amax(idx).item<std::int64_t>();
    const std::int64_t smallest = amin(idx).item<std::int64_t>();
    LG_CHECK_SHAPE(smallest >= -size && largest < size, op, ": index ",
                   largest >= size ? largest : smallest, " is out of range for a dim of size ",
                   size, " (the tensor's shape ", self.shape(), ")");
    idx = where(lt(idx, 0.0), add(idx, static_cast<double>(size)), idx);
  }
  return plan;
}

// What a plan reads: the view permuted so that the indexed dims come first (their sizes, then
// the rest), the linear position (int64, the indices' broadcast shape) of each index tuple, and
// where the broadcast dims go in the result.
struct Layout {
  Tensor moved;            // the view, permuted: the indexed dims first, then the others in order
  std::int64_t count = 1;  // A: the indexed dims' number of position tuples
  Tensor linear;
  Shape broadcast;               // B
  std::int64_t destination = 0;  // where B goes in the result: the first indexed dim, or 0
};

Layout layout_for(const Plan& plan) {
  Layout l;
  const Tensor& v = plan.view;
  const std::size_t k = plan.dims.size();
  std::vector<std::int64_t> order = plan.dims;
  for (std::int64_t d = 0; d < v.dim(); ++d)
    if (std::find(plan.dims.begin(), plan.dims.end(), d) == plan.dims.end()) order.push_back(d);
  l.moved = v.permute(order);
  bool adjacent = true;
  for (std::size_t j = 1; j < k; ++j)
    adjacent = adjacent && plan.dims[j] == plan.dims[0] + static_cast<std::int64_t>(j);
  l.destination = adjacent ? plan.dims[0] : 0;
  NoGradGuard no_grad;
  const std::vector<Tensor> b = broadcast_tensors(plan.indices);
  l.broadcast = b[0].shape();
  Tensor linear;
  for (std::size_t j = k; j-- > 0;) {
    const Tensor term = mul(b[j], static_cast<double>(l.count));
    linear = linear.defined() ? add(linear, term) : term;
    l.count *= v.size(plan.dims[j]);
  }
  l.linear = reshape(linear, {-1});
  return l;
}

// The shape (A, rest...) of the permuted view with its indexed dims flattened into one.
Shape rows_shape(const Layout& l, std::size_t k) {
  Shape s{l.count};
  s.insert(s.end(), l.moved.shape().begin() + static_cast<std::ptrdiff_t>(k),
           l.moved.shape().end());
  return s;
}

// Moves the broadcast dims (the first nb of t) to l.destination.
Tensor place(const Tensor& t, const Layout& l) {
  if (l.destination == 0) return t;
  std::vector<std::int64_t> front, placed;
  for (std::size_t j = 0; j < l.broadcast.size(); ++j) {
    front.push_back(static_cast<std::int64_t>(j));
    placed.push_back(l.destination + static_cast<std::int64_t>(j));
  }
  return movedim(t, front, placed);
}

// self.index(indices), errors naming op.
Tensor index_by(const char* op, const Tensor& self, const std::vector<TensorIndex>& indices) {
  const Plan plan = plan_for(op, self, indices);
  const Layout l = layout_for(plan);
  const std::size_t k = plan.dims.size();
  const Tensor rows = reshape(l.moved, rows_shape(l, k));
  Shape out_shape = l.broadcast;
  out_shape.insert(out_shape.end(), rows.shape().begin() + 1, rows.shape().end());
  return place(reshape(index_select(rows, 0, l.linear), out_shape), l);
}

}  // namespace

Tensor advanced_index(const Tensor& self, const std::vector<TensorIndex>& indices) {
  return index_by("index", self, indices);
}

Tensor& advanced_index_put_(Tensor& self, const std::vector<TensorIndex>& indices,
                            const Tensor& value, bool accumulate) {
  const char* op = "index_put_";
  LG_CHECK(self.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  LG_CHECK(value.defined(), op, ": expected a defined value, got an undefined Tensor()");
  // The flat position in self of each element of self.index(indices): the same indexing of
  // self's own positions.
  Tensor positions;
  {
    NoGradGuard no_grad;
    const Tensor all = reshape(
        arange(static_cast<double>(self.numel()), TensorOptions(kInt64).device(self.device())),
        self.shape());
    positions = index_by(op, all, indices);
  }
  const Shape result_shape = positions.shape();
  positions = reshape(positions, {-1});
  LG_CHECK_SHAPE(broadcast_shapes(value.shape(), result_shape, op) == result_shape, op,
                 ": a value of shape ", value.shape(), " cannot be broadcast to the indexed ",
                 "shape ", result_shape);
  const Tensor values = reshape(expand(value.to(self.dtype()), result_shape), {-1});
  // self's new contents, out of place, then copied in (copy_ records the write, through a view
  // too: Note [In-place writes through views] in graph.cpp).
  const Tensor flat = reshape(self, {-1});
  self.copy_(reshape(accumulate ? scatter_reduce(flat, 0, positions, values, "sum")
                                : scatter(flat, 0, positions, values),
                     self.shape()));
  return self;
}

}  // namespace leangrad::autograd
