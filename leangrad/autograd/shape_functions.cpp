// The rearranging functions (autograd/shape_functions.h), each composed of views and the ops
// that differentiate.
#include <leangrad/autograd/shape_functions.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

namespace {

void check_list(const char* op, const std::vector<Tensor>& tensors) {
  LG_CHECK(!tensors.empty(), op, ": expected a non-empty list of tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i)
    LG_CHECK(tensors[i].defined(), op, ": tensor ", i, " of the list is undefined");
}

void check_defined(const char* op, const Tensor& t) {
  LG_CHECK(t.defined(), op, ": expected a defined input, got an undefined Tensor()");
}

template <typename F>
std::vector<Tensor> each(const std::vector<Tensor>& tensors, const F& f) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors)
    out.push_back(f(t));
  return out;
}

}  // namespace

Tensor atleast_1d(const Tensor& input) {
  check_defined("atleast_1d", input);
  return input.dim() == 0 ? input.reshape({1}) : input;
}

Tensor atleast_2d(const Tensor& input) {
  check_defined("atleast_2d", input);
  if (input.dim() == 0) return input.reshape({1, 1});
  if (input.dim() == 1) return input.unsqueeze(0);
  return input;
}

Tensor atleast_3d(const Tensor& input) {
  check_defined("atleast_3d", input);
  switch (input.dim()) {
    case 0:
      return input.reshape({1, 1, 1});
    case 1:
      return input.unsqueeze(0).unsqueeze(2);
    case 2:
      return input.unsqueeze(2);
    default:
      return input;
  }
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  check_list("hstack", tensors);
  const std::vector<Tensor> pieces = each(tensors, atleast_1d);
  return cat(pieces, pieces.front().dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  check_list("vstack", tensors);
  return cat(each(tensors, atleast_2d), 0);
}

Tensor row_stack(const std::vector<Tensor>& tensors) {
  return vstack(tensors);
}

Tensor dstack(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  check_list("dstack", tensors);
  return cat(each(tensors, atleast_3d), 2);
}

Tensor column_stack(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  check_list("column_stack", tensors);
  return cat(each(tensors,
                  [](const Tensor& t) {
                    return t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t;
                  }),
             1);
}

std::vector<Tensor> tensor_split(const Tensor& input, std::int64_t sections, std::int64_t dim) {
  check_defined("tensor_split", input);
  LG_CHECK(sections > 0, "tensor_split: expected a number of sections > 0, got ", sections);
  LG_CHECK_SHAPE(input.dim() > 0, "tensor_split: expected a tensor of at least 1 dim, got shape ",
                 input.shape());
  const std::int64_t d = wrap_dim(dim, input.dim(), "tensor_split");
  const std::int64_t size = input.size(d);
  std::vector<Tensor> out;
  // One Tensor per section, empty ones past the size: more than memory holds is an
  // OutOfMemoryError, not std::vector's length_error or bad_alloc.
  const auto too_many = [&] {
    LG_THROW(OutOfMemoryError, "tensor_split: ", sections, " sections (of a dim of size ", size,
             ") are more tensors than memory holds");
  };
  try {
    out.reserve(static_cast<std::size_t>(sections));
  } catch (const std::length_error&) {
    too_many();
  } catch (const std::bad_alloc&) {
    too_many();
  }
  std::int64_t start = 0;
  for (std::int64_t i = 0; i < sections; ++i) {
    const std::int64_t length = size / sections + (i < size % sections ? 1 : 0);
    out.push_back(input.narrow(d, start, length));
    start += length;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& input, const std::vector<std::int64_t>& indices,
                                 std::int64_t dim) {
  check_defined("tensor_split", input);
  LG_CHECK_SHAPE(input.dim() > 0, "tensor_split: expected a tensor of at least 1 dim, got shape ",
                 input.shape());
  const std::int64_t d = wrap_dim(dim, input.dim(), "tensor_split");
  const std::int64_t size = input.size(d);
  // A negative index counts from the end, as a Python slice's.
  const auto clamp_index = [size](std::int64_t i) {
    return std::clamp<std::int64_t>(i < 0 ? i + size : i, 0, size);
  };
  std::vector<Tensor> out;
  out.reserve(indices.size() + 1);
  std::int64_t start = 0;
  for (std::int64_t index : indices) {
    const std::int64_t end = clamp_index(index);
    out.push_back(input.narrow(d, start, std::max<std::int64_t>(end - start, 0)));
    start = end;  // the next view starts at this index, even after a decreasing one
  }
  out.push_back(input.narrow(d, start, size - start));
  return out;
}

Tensor movedim(const Tensor& input, const std::vector<std::int64_t>& source,
               const std::vector<std::int64_t>& destination) {
  check_defined("movedim", input);
  LG_CHECK(source.size() == destination.size(), "movedim: expected as many source dims as ",
           "destinations, got ", source.size(), " and ", destination.size());
  const std::int64_t n = input.dim();
  // A 0-d tensor takes dim 0 and -1, as torch's: one slot for it.
  const auto slots = static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
  std::vector<std::int64_t> order(slots, -1);
  std::vector<bool> moved(slots, false);
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::int64_t from = wrap_dim(source[i], n, "movedim");
    const std::int64_t to = wrap_dim(destination[i], n, "movedim");
    LG_CHECK(!moved[static_cast<std::size_t>(from)], "movedim: source dim ", source[i],
             " is given twice (shape ", input.shape(), ")");
    LG_CHECK(order[static_cast<std::size_t>(to)] == -1, "movedim: destination dim ", destination[i],
             " is given twice (shape ", input.shape(), ")");
    order[static_cast<std::size_t>(to)] = from;
    moved[static_cast<std::size_t>(from)] = true;
  }
  if (n == 0) return input.permute({});  // a 0-d tensor's dim 0 (or -1) moves onto itself
  // The dims not moved fill the free positions in their order.
  std::int64_t next = 0;
  for (std::int64_t& slot : order) {
    if (slot != -1) continue;
    while (moved[static_cast<std::size_t>(next)])
      ++next;
    slot = next++;
  }
  return input.permute(order);
}

Tensor movedim(const Tensor& input, std::int64_t source, std::int64_t destination) {
  return movedim(input, std::vector<std::int64_t>{source}, std::vector<std::int64_t>{destination});
}

Tensor moveaxis(const Tensor& input, const std::vector<std::int64_t>& source,
                const std::vector<std::int64_t>& destination) {
  return movedim(input, source, destination);
}

Tensor moveaxis(const Tensor& input, std::int64_t source, std::int64_t destination) {
  return movedim(input, source, destination);
}

Tensor swapaxes(const Tensor& input, std::int64_t axis0, std::int64_t axis1) {
  check_defined("swapaxes", input);
  return input.transpose(axis0, axis1);
}

Tensor swapdims(const Tensor& input, std::int64_t dim0, std::int64_t dim1) {
  check_defined("swapdims", input);
  return input.transpose(dim0, dim1);
}

Tensor broadcast_to(const Tensor& input, const Shape& shape) {
  check_defined("broadcast_to", input);
  return expand(input, shape, "broadcast_to");  // expand's rules, named broadcast_to
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  check_list("broadcast_tensors", tensors);
  Shape shape = tensors.front().shape();
  for (const Tensor& t : tensors)
    shape = broadcast_shapes(shape, t.shape(), "broadcast_tensors");
  return each(tensors, [&](const Tensor& t) { return t.expand(shape); });
}

Tensor fliplr(const Tensor& input) {
  check_defined("fliplr", input);
  LG_CHECK_SHAPE(input.dim() >= 2, "fliplr: expected a tensor of at least 2 dims, got shape ",
                 input.shape());
  return flip(input, {1});
}

Tensor flipud(const Tensor& input) {
  check_defined("flipud", input);
  LG_CHECK_SHAPE(input.dim() >= 1, "flipud: expected a tensor of at least 1 dim, got shape ",
                 input.shape());
  return flip(input, {0});
}

Tensor rot90(const Tensor& input, std::int64_t k, const std::vector<std::int64_t>& dims) {
  LG_PROFILE_OP(input);
  check_defined("rot90", input);
  LG_CHECK(dims.size() == 2, "rot90: expected two dims, got ", dims.size());
  LG_CHECK_SHAPE(input.dim() >= 2, "rot90: expected a tensor of at least 2 dims, got shape ",
                 input.shape());
  const std::int64_t d0 = wrap_dim(dims[0], input.dim(), "rot90");
  const std::int64_t d1 = wrap_dim(dims[1], input.dim(), "rot90");
  LG_CHECK(d0 != d1, "rot90: expected two different dims, got ", dims[0], " and ", dims[1]);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return flip(input, {d1}).transpose(d0, d1);
    case 2:
      return flip(input, {d0, d1});
    case 3:
      return flip(input, {d0}).transpose(d0, d1);
    default:
      return clone(input);
  }
}

Tensor take_along_dim(const Tensor& input, const Tensor& indices, std::optional<std::int64_t> dim) {
  LG_PROFILE_OP(input, indices);
  const char* op = "take_along_dim";
  check_defined(op, input);
  check_defined(op, indices);
  LG_CHECK_DTYPE(indices.dtype() == kInt64, op, ": expected int64 indices, got ", indices.dtype());
  if (!dim) return gather(input.reshape({-1}), 0, indices.reshape({-1}));
  LG_CHECK_SHAPE(input.dim() == indices.dim(), op, ": expected input and indices of one rank, got ",
                 input.shape(), " and ", indices.shape());
  LG_CHECK_SHAPE(input.dim() > 0, op, ": dim ", *dim,
                 " given for a 0-d input, which has no dim to take along (as torch's)");
  const std::int64_t d = wrap_dim(*dim, input.dim(), op);
  // Each broadcast to the other's shape in every dim but d, keeping its own size there.
  Shape input_sizes = input.shape(), index_sizes = indices.shape();
  input_sizes[static_cast<std::size_t>(d)] = indices.size(d);
  index_sizes[static_cast<std::size_t>(d)] = input.size(d);
  const Tensor index = indices.expand(broadcast_shapes(input_sizes, indices.shape(), op));
  const Tensor values = input.expand(broadcast_shapes(index_sizes, input.shape(), op));
  return gather(values, d, index);
}

Tensor diag_embed(const Tensor& input, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  LG_PROFILE_OP(input);
  const char* op = "diag_embed";
  check_defined(op, input);
  LG_CHECK_SHAPE(input.dim() >= 1, op, ": expected a tensor of at least 1 dim, got shape ",
                 input.shape());
  const std::int64_t out_dims = input.dim() + 1;
  const std::int64_t d1 = wrap_dim(dim1, out_dims, op);
  const std::int64_t d2 = wrap_dim(dim2, out_dims, op);
  LG_CHECK(d1 != d2, op, ": expected two different dims, got ", dim1, " and ", dim2);
  const std::int64_t m = input.size(-1);
  LG_CHECK_SHAPE(offset != std::numeric_limits<std::int64_t>::min(), op, ": offset ", offset,
                 " is out of range");
  const std::int64_t n = checked_add(m, offset >= 0 ? offset : -offset, op);
  // (n, n): position (r, c) holds input[..., r] above the diagonal's start (offset >= 0) or
  // input[..., c] (offset < 0), kept where c - r == offset.
  const TensorOptions positions = TensorOptions(kInt64).device(input.device());
  const Tensor rows = arange(0.0, static_cast<double>(n), 1.0, positions).unsqueeze(1);
  const Tensor cols = arange(0.0, static_cast<double>(n), 1.0, positions).unsqueeze(0);
  const Tensor on_diagonal = eq(sub(cols, rows), static_cast<double>(offset));
  const Tensor source = clamp(offset >= 0 ? rows.expand({n, n}) : cols.expand({n, n}), 0.0,
                              static_cast<double>(std::max<std::int64_t>(m - 1, 0)));
  Shape matrix = input.shape();
  matrix.back() = n;
  matrix.push_back(n);
  Tensor out;
  if (m == 0) {
    out = zeros(matrix, input.options());
  } else {
    const Tensor picked = index_select(input, -1, source.reshape({-1})).reshape(matrix);
    out = where(on_diagonal, picked, zeros({}, input.options()));
  }
  // The new pair of dims is last; move it to (d1, d2).
  return movedim(out, {out_dims - 2, out_dims - 1}, {d1, d2});
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  const char* op = "block_diag";
  if (tensors.empty()) return zeros({1, 0});
  check_list(op, tensors);
  std::vector<Tensor> blocks;
  std::int64_t columns = 0;
  for (const Tensor& t : tensors) {
    LG_CHECK_SHAPE(t.dim() <= 2, op, ": expected tensors of at most 2 dims, got shape ", t.shape());
    LG_CHECK_DEVICE(t.device() == tensors.front().device(), op, ": expected tensors on one ",
                    "device, got ", tensors.front().device(), " and ", t.device());
    blocks.push_back(atleast_2d(t));
    columns += blocks.back().size(1);
  }
  std::vector<Tensor> rows;
  std::int64_t left = 0;
  for (const Tensor& b : blocks) {
    const std::int64_t width = b.size(1);
    rows.push_back(pad(b, {left, columns - left - width}));
    left += width;
  }
  return cat(rows, 0);
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  const char* op = "cartesian_prod";
  check_list(op, tensors);
  for (const Tensor& t : tensors)
    LG_CHECK_SHAPE(t.dim() == 1, op, ": expected 1-d tensors, got shape ", t.shape());
  if (tensors.size() == 1) return tensors.front();
  std::vector<Tensor> columns = meshgrid(tensors, "ij");
  for (Tensor& c : columns)
    c = c.reshape({-1});
  return stack(columns, 1);
}

namespace {

// The coordinates of a triangle of a (row, col) matrix, row by row: c - r <= offset (lower) or
// c - r >= offset (upper). Row r holds the columns [0, min(col, r + offset + 1)) (lower) or
// [max(0, r + offset), col) (upper), each bound clamped to [0, col] without forming r + offset
// (which overflows for offsets near INT64_MAX); the count is summed first, so a triangle too
// large for memory is refused before anything is built, and the loops visit only rows that hold
// a coordinate.
Tensor triangle_indices(const char* op, std::int64_t row, std::int64_t col, std::int64_t offset,
                        bool lower, const TensorOptions& options) {
  LG_CHECK(row >= 0 && col >= 0, op, ": expected non-negative row and col, got ", row, " and ",
           col);
  LG_CHECK_DTYPE(options.dtype() == kInt64 || options.dtype() == kInt32, op,
                 ": expected an int64 or int32 dtype, got ", options.dtype());
  // r + shift clamped to [0, col], for r in [0, row) and any int64 shift (offset or offset + 1).
  const auto clamped = [col](std::int64_t r, __int128 shift) {
    return static_cast<std::int64_t>(std::clamp<__int128>(r + shift, 0, col));
  };
  const __int128 shift = lower ? __int128{offset} + 1 : __int128{offset};
  // Lower: rows before -shift hold nothing; upper: rows from col - shift on hold nothing.
  const std::int64_t first_row =
      lower ? static_cast<std::int64_t>(std::clamp<__int128>(-shift, 0, row)) : 0;
  const std::int64_t end_row =
      lower ? row : static_cast<std::int64_t>(std::clamp<__int128>(col - shift, 0, row));
  // The count in closed form (the rows' counts rise, or fall, by one a row between runs of 0 and
  // col): a loop over rows would run 2^40 times for tril_indices(2^40, 1). Each sum's terms lie
  // in [0, col], so no product below exceeds 2^127.
  __int128 count = 0;
  if (lower) {
    // Row r < saturated holds r + shift columns, each row from there col.
    const auto saturated =
        static_cast<std::int64_t>(std::clamp<__int128>(col - shift, first_row, row));
    count = __int128{saturated - first_row} * (first_row + shift + saturated - 1 + shift) / 2 +
            __int128{row - saturated} * col;
  } else {
    // Row r < full (r + shift < 0) holds col columns, each row from there col - r - shift.
    const auto full_rows = static_cast<std::int64_t>(std::clamp<__int128>(-shift, 0, end_row));
    count = __int128{full_rows} * col +
            __int128{end_row - full_rows} * (2 * (col - shift) - full_rows - end_row + 1) / 2;
  }
  LG_CHECK_SHAPE(count <= kMaxTensorBytes / 16, op, ": the triangle of a ", row, " x ", col,
                 " matrix with offset ", offset, " has more coordinates than fit in memory");
  const auto n = static_cast<std::int64_t>(count);
  Tensor out = empty({2, n}, TensorOptions(kInt64));
  std::int64_t* rows = out.data_ptr<std::int64_t>();
  std::int64_t* cols = rows + n;
  std::int64_t k = 0;
  for (std::int64_t r = first_row; r < end_row; ++r) {
    const std::int64_t begin = lower ? 0 : clamped(r, shift);
    const std::int64_t end = lower ? clamped(r, shift) : col;
    for (std::int64_t c = begin; c < end; ++c, ++k) {
      rows[k] = r;
      cols[k] = c;
    }
  }
  return out.to(options.dtype()).to(options.device());
}

}  // namespace

Tensor tril_indices(std::int64_t row, std::int64_t col, std::int64_t offset,
                    const TensorOptions& options) {
  return triangle_indices("tril_indices", row, col, offset, true, options);
}

Tensor triu_indices(std::int64_t row, std::int64_t col, std::int64_t offset,
                    const TensorOptions& options) {
  return triangle_indices("triu_indices", row, col, offset, false, options);
}

// ---- hsplit, vsplit, dsplit, ravel -------------------------------------------------------------
namespace {

// A defined input of at least min_dims dims.
void check_split_input(const char* op, const Tensor& input, std::int64_t min_dims) {
  check_defined(op, input);
  LG_CHECK_SHAPE(input.dim() >= min_dims, op, ": expected at least ", min_dims, " dims, got shape ",
                 input.shape());
}

// tensor_split along dim of an input of at least min_dims dims; sections must divide the size.
std::vector<Tensor> split_sections(const char* op, const Tensor& input, std::int64_t min_dims,
                                   std::int64_t dim, std::int64_t sections) {
  check_split_input(op, input, min_dims);
  const std::int64_t size = input.size(dim);
  LG_CHECK_SHAPE(sections > 0 && size % sections == 0, op, ": cannot split dim ", dim, " of size ",
                 size, " (shape ", input.shape(), ") into ", sections, " equal sections");
  return tensor_split(input, sections, dim);
}

std::vector<Tensor> split_indices(const char* op, const Tensor& input, std::int64_t min_dims,
                                  std::int64_t dim, const std::vector<std::int64_t>& indices) {
  check_split_input(op, input, min_dims);
  return tensor_split(input, indices, dim);
}

// hsplit's dim: 0 for a 1-d input, 1 otherwise.
std::int64_t horizontal_dim(const Tensor& input) {
  return input.defined() && input.dim() == 1 ? 0 : 1;
}

}  // namespace

std::vector<Tensor> hsplit(const Tensor& input, std::int64_t sections) {
  return split_sections("hsplit", input, 1, horizontal_dim(input), sections);
}
std::vector<Tensor> hsplit(const Tensor& input, const std::vector<std::int64_t>& indices) {
  return split_indices("hsplit", input, 1, horizontal_dim(input), indices);
}
std::vector<Tensor> vsplit(const Tensor& input, std::int64_t sections) {
  return split_sections("vsplit", input, 2, 0, sections);
}
std::vector<Tensor> vsplit(const Tensor& input, const std::vector<std::int64_t>& indices) {
  return split_indices("vsplit", input, 2, 0, indices);
}
std::vector<Tensor> dsplit(const Tensor& input, std::int64_t sections) {
  return split_sections("dsplit", input, 3, 2, sections);
}
std::vector<Tensor> dsplit(const Tensor& input, const std::vector<std::int64_t>& indices) {
  return split_indices("dsplit", input, 3, 2, indices);
}

Tensor ravel(const Tensor& input) {
  check_defined("ravel", input);
  return reshape(input, {input.numel()});
}

// ---- combinations, diagflat, msort -------------------------------------------------------------
Tensor combinations(const Tensor& input, std::int64_t r, bool with_replacement) {
  LG_PROFILE_OP(input);
  const char* op = "combinations";
  check_defined(op, input);
  LG_CHECK_SHAPE(input.dim() == 1, op, ": expected a 1-d input, got shape ", input.shape());
  LG_CHECK(r >= 0, op, ": expected r >= 0, got ", r);
  if (r == 0) return zeros({0}, input.options());
  const std::int64_t n = input.size(0);
  // How many: C(n, r), or C(n + r - 1, r) with replacement, built up as C(m, i + 1) =
  // C(m, i) (m - i) / (i + 1) exactly (i + 1 / gcd divides m - i), each step bounded by what
  // memory can hold before it is taken, so nothing overflows.
  const std::int64_t m = with_replacement ? n + r - 1 : n;
  const std::int64_t most = kMaxTensorBytes / static_cast<std::int64_t>(sizeof(std::int64_t)) / r;
  std::int64_t count = n > 0 && r <= m ? 1 : 0;
  for (std::int64_t i = 0; i < r && count > 0; ++i) {
    LG_CHECK_SHAPE(static_cast<long double>(count) * static_cast<long double>(m - i) /
                           static_cast<long double>(i + 1) <=
                       static_cast<long double>(most),
                   op, ": the ", r, "-combinations of ", n, " elements are too many for memory");
    const std::int64_t g = std::gcd(count, i + 1);
    count = count / g * ((m - i) / ((i + 1) / g));
  }
  const std::int64_t rows = count;
  // The positions of each combination in itertools' order, written on the host: advance the
  // last position that can move and reset those after it (to it, or one past each other without
  // replacement).
  Tensor index = zeros({rows, r}, TensorOptions(kInt64));
  std::int64_t* out = index.data_ptr<std::int64_t>();
  std::vector<std::int64_t> current(static_cast<std::size_t>(r));
  const std::int64_t step = with_replacement ? 0 : 1;
  for (std::int64_t i = 0; i < r; ++i)
    current[static_cast<std::size_t>(i)] = i * step;
  // The largest value position i may hold.
  const auto last = [&](std::int64_t i) { return with_replacement ? n - 1 : n - r + i; };
  for (std::int64_t row = 0; row < rows; ++row) {
    std::copy(current.begin(), current.end(), out + row * r);
    std::int64_t i = r - 1;
    while (i >= 0 && current[static_cast<std::size_t>(i)] == last(i))
      --i;
    if (i < 0) break;
    ++current[static_cast<std::size_t>(i)];
    for (std::int64_t j = i + 1; j < r; ++j)
      current[static_cast<std::size_t>(j)] = current[static_cast<std::size_t>(j - 1)] + step;
  }
  return reshape(index_select(input, 0, reshape(index, {rows * r}).to(input.device())), {rows, r});
}

Tensor diagflat(const Tensor& input, std::int64_t offset) {
  LG_PROFILE_OP(input);
  check_defined("diagflat", input);
  return diag(reshape(input, {input.numel()}), offset);
}

Tensor msort(const Tensor& input) {
  LG_PROFILE_OP(input);
  check_defined("msort", input);
  return std::get<0>(sort(input, 0));
}

// ---- The scatters into a copy ------------------------------------------------------------------
namespace {

// src must have the shape of input's part it replaces (`what`: "part", "diagonal") and be on
// input's device.
void check_src(const char* op, const Tensor& input, const Tensor& src, const Shape& part,
               const char* what) {
  LG_CHECK_SHAPE(src.shape() == part, op, ": expected src of the ", what, "'s shape ", part,
                 ", got ", src.shape(), " (input of shape ", input.shape(), ")");
  LG_CHECK_DEVICE(src.device() == input.device(), op, ": input is on ", input.device(),
                  " but src is on ", src.device());
}

// A copy of input with the places `positions` (int64, along dim d) holding values (of the part's
// shape, in any dtype). index_put carries the gradients: values' is the gradient's part, input's
// the gradient with the part zeroed, to any order.
Tensor put_along(const Tensor& input, std::int64_t d, const Tensor& positions,
                 const Tensor& values) {
  std::vector<std::optional<Tensor>> indices(static_cast<std::size_t>(d), std::nullopt);
  indices.emplace_back(positions.to(input.device()));
  return index_put(input, indices, values.to(input.dtype()));
}

void check_defined(const char* op, const Tensor& input, const Tensor& src) {
  LG_CHECK(input.defined() && src.defined(), op,
           ": expected a defined input and src, got an undefined Tensor()");
}

}  // namespace

Tensor select_scatter(const Tensor& input, const Tensor& src, std::int64_t dim,
                      std::int64_t index) {
  LG_PROFILE_OP(input, src);
  const char* op = "select_scatter";
  check_defined(op, input, src);
  // The slice's shape (select checks dim and index), then the slice as one position along dim:
  // src gains that dim back.
  const Shape part = views::select(input, dim, index).shape();
  const std::int64_t d = wrap_dim(dim, input.dim(), op);
  const std::int64_t at = index < 0 ? index + input.size(d) : index;
  check_src(op, input, src, part, "part");
  Shape one = input.shape();
  one[static_cast<std::size_t>(d)] = 1;
  return put_along(input, d, full({1}, static_cast<double>(at), TensorOptions(kInt64)),
                   reshape(src, one));
}

Tensor slice_scatter(const Tensor& input, const Tensor& src, std::int64_t dim,
                     std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step) {
  LG_PROFILE_OP(input, src);
  const char* op = "slice_scatter";
  check_defined(op, input, src);
  // The slice (views::slice checks dim and step and takes Python's bounds), and its positions.
  const Tensor view = views::slice(input, dim, start.value_or(0),
                                   end.value_or(std::numeric_limits<std::int64_t>::max()), step);
  const std::int64_t d = wrap_dim(dim, input.dim(), op);
  std::int64_t first = start.value_or(0);
  if (first < 0) first += input.size(d);
  first = std::clamp<std::int64_t>(first, 0, input.size(d));
  const std::int64_t count = view.size(d);
  const Tensor positions =
      add(mul(arange(static_cast<double>(count), TensorOptions(kInt64)), static_cast<double>(step)),
          static_cast<double>(first));
  check_src(op, input, src, view.shape(), "part");
  return put_along(input, d, positions, src);
}

Tensor diagonal_scatter(const Tensor& input, const Tensor& src, std::int64_t offset,
                        std::int64_t dim1, std::int64_t dim2) {
  LG_PROFILE_OP(input, src);
  const char* op = "diagonal_scatter";
  check_defined(op, input, src);
  LG_CHECK_SHAPE(input.dim() >= 2, op, ": expected at least 2 dims, got shape ", input.shape());
  const std::int64_t d1 = wrap_dim(dim1, input.dim(), op);
  const std::int64_t d2 = wrap_dim(dim2, input.dim(), op);
  LG_CHECK_SHAPE(d1 != d2, op, ": dim1 and dim2 are both dim ", d1, " (shape ", input.shape(), ")");
  // diagonal() is a copy, not a view: write the diagonal's places by index instead. With dims d1
  // and d2 moved to the front, the diagonal is the places (row0 + i, col0 + i), i < length.
  const std::int64_t row0 = std::max<std::int64_t>(-offset, 0);
  const std::int64_t col0 = std::max<std::int64_t>(offset, 0);
  const std::int64_t length =
      std::max<std::int64_t>(0, std::min(input.size(d1) - std::min(row0, input.size(d1)),
                                         input.size(d2) - std::min(col0, input.size(d2))));
  Shape expected;
  for (std::int64_t d = 0; d < input.dim(); ++d)
    if (d != d1 && d != d2) expected.push_back(input.size(d));
  expected.push_back(length);
  check_src(op, input, src, expected, "diagonal");
  const TensorOptions positions = TensorOptions(kInt64).device(input.device());
  const Tensor rows =
      add(arange(static_cast<double>(length), positions), static_cast<double>(row0));
  const Tensor cols =
      add(arange(static_cast<double>(length), positions), static_cast<double>(col0));
  const Tensor front = movedim(input, {d1, d2}, {0, 1});
  const Tensor written = index_put(front, {rows, cols}, movedim(src.to(input.dtype()), -1, 0));
  return movedim(written, {0, 1}, {d1, d2});
}

// ---- as_strided ---------------------------------------------------------------------------------

bool surely_disjoint(const Shape& size, const Strides& stride) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < size.size(); ++d) {
    if (size[d] > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(),
            [&](std::size_t a, std::size_t b) { return stride[a] < stride[b]; });
  std::int64_t reach = 0;  // the largest distance the smaller-stride dims span
  for (std::size_t d : dims) {
    if (stride[d] <= reach) return false;
    reach += (size[d] - 1) * stride[d];
  }
  return true;
}

namespace {

// Where a tensor's elements lie in its storage.
struct Geometry {
  Shape size;
  Strides stride;
  std::int64_t offset = 0;

  // The storage position of the last element (the offset for none).
  std::int64_t last() const {
    std::int64_t p = offset;
    for (std::size_t d = 0; d < size.size(); ++d)
      p += size[d] > 0 ? (size[d] - 1) * stride[d] : 0;
    return p;
  }
  bool surely_disjoint() const { return leangrad::surely_disjoint(size, stride); }
  bool contiguous() const { return is_contiguous(size, stride); }
};

// The storage positions of g's elements less `origin`, int64 of g's shape on `device`.
Tensor positions(const Geometry& g, std::int64_t origin, Device device) {
  const TensorOptions longs = TensorOptions(kInt64).device(device);
  Tensor p = full({}, static_cast<double>(g.offset - origin), longs);
  for (std::size_t d = 0; d < g.size.size(); ++d) {
    Shape along(g.size.size(), 1);
    along[d] = g.size[d];
    p = add(p, reshape(mul(arange(static_cast<double>(g.size[d]), longs),
                           static_cast<double>(g.stride[d])),
                       along));
  }
  return expand(p, g.size);
}

// The gradient of input (geometry in) from grad, the gradient of its view (geometry out): grad
// added into the storage locations, then read back at input's (Note in the header).
Tensor as_strided_backward(const Tensor& grad, const Geometry& in, const Geometry& out) {
  if (shape_numel(in.size, "as_strided") == 0 || grad.numel() == 0)
    return zeros(in.size, grad.options());
  if (in.contiguous() && out.surely_disjoint() && out.offset >= in.offset &&
      out.last() <= in.last()) {
    // Each element of the view is one element of a contiguous input (the common case: a view
    // whose history autograd made anew after a write through another view of its base, Note
    // [In-place writes through views] in graph.cpp): grad copied into zeros where the view lies.
    // Recorded as an op whose backward takes the same view, so it differentiates again.
    const Tensor g = zeros(in.size, grad.options());
    {
      const NoGradGuard no_grad;
      views::as_strided(g, out.size, out.stride, out.offset - in.offset).copy_(grad);
    }
    return autograd::record_op(
        "as_strided_backward", g, {grad}, {},
        [in, out](const autograd::BackwardContext& c) -> std::vector<Tensor> {
          const Tensor whole = c.grad.contiguous();
          return {as_strided(whole, out.size, out.stride,
                             whole.storage_offset() + out.offset - in.offset)};
        });
  }
  const std::int64_t origin = std::min(in.offset, out.offset);
  const std::int64_t span = std::max(in.last(), out.last()) - origin + 1;
  const Tensor out_at = reshape(positions(out, origin, grad.device()), {-1});
  const Tensor in_at = reshape(positions(in, origin, grad.device()), {-1});
  Tensor storage = index_add(zeros({span}, grad.options()), 0, out_at, reshape(grad, {-1}));
  if (!in.surely_disjoint()) {
    // Each location's gradient shared among the input elements at it (so their sum is it).
    const Tensor count =
        index_add(zeros({span}, grad.options()), 0, in_at, ones({in_at.numel()}, grad.options()));
    storage = div(storage, clamp_min(count, 1.0));
  }
  return reshape(index_select(storage, 0, in_at), in.size);
}

}  // namespace

Tensor as_strided(const Tensor& input, const Shape& size, const Strides& stride,
                  std::optional<std::int64_t> storage_offset) {
  LG_PROFILE_OP(input);
  const char* op = "as_strided";
  check_defined(op, input);
  LG_CHECK_SHAPE(size.size() == stride.size(), op, ": expected one stride per size, got size ",
                 size, " and stride ", shape_str(stride));
  for (std::size_t d = 0; d < size.size(); ++d) {
    LG_CHECK_SHAPE(size[d] >= 0, op, ": expected sizes >= 0, got size ", size);
    LG_CHECK_SHAPE(stride[d] >= 0, op, ": negative strides are not supported, got stride ",
                   shape_str(stride), " (size ", size, ")");
  }
  const std::int64_t offset = storage_offset.value_or(input.storage_offset());
  LG_CHECK_SHAPE(offset >= 0, op, ": expected storage_offset >= 0, got ", offset);
  const std::int64_t extent = checked_extent(size, stride, offset, input.element_size(), op);
  const std::int64_t elements =
      static_cast<std::int64_t>(input.storage()->nbytes() / input.element_size());
  LG_CHECK_SHAPE(extent <= elements, op, ": size ", size, ", stride ", shape_str(stride),
                 " and storage_offset ", offset, " reach element ", extent - 1, " of a storage of ",
                 elements, " elements (input of shape ", input.shape(), ")");
  Geometry in{input.shape(), input.strides(), input.storage_offset()};
  Geometry out{size, stride, offset};
  return autograd::record_op(op, views::as_strided(input, size, stride, offset), {input}, {},
                             [in = std::move(in), out = std::move(out)](
                                 const autograd::BackwardContext& c) -> std::vector<Tensor> {
                               return {as_strided_backward(c.grad, in, out)};
                             });
}

}  // namespace leangrad
