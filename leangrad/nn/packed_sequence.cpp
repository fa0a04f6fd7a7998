// PackedSequence and its functions (nn/packed_sequence.h).
#include <leangrad/nn/packed_sequence.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn::utils::rnn {

namespace {

// The values of a 1-d int64 host tensor; `op` and `what` name it in the Error.
std::vector<std::int64_t> host_int64_values(const Tensor& t, const char* op, const char* what) {
  LG_CHECK(t.defined(), op, ": ", what, " is an undefined Tensor()");
  LG_CHECK_SHAPE(t.dim() == 1, op, ": expected ", what, " of 1 dim, got shape ", t.shape());
  LG_CHECK_DTYPE(t.dtype() == kInt64, op, ": expected ", what, " of int64, got ", t.dtype());
  LG_CHECK_DEVICE(t.device().is_cpu(), op, ": expected ", what, " on the CPU, got one on ",
                  t.device());
  const NoGradGuard no_grad;
  const Tensor values = t.contiguous();
  const std::int64_t* p = values.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(p, p + values.numel());
}

// A permutation of [0, n) given as an int64 tensor (any device): its values on the host.
std::vector<std::int64_t> checked_permutation(const Tensor& t, std::int64_t n, const char* op,
                                              const char* what) {
  const std::vector<std::int64_t> order =
      host_int64_values(t.defined() ? t.to(Device::cpu()) : t, op, what);
  LG_CHECK_SHAPE(static_cast<std::int64_t>(order.size()) == n, op, ": expected ", what, " of ", n,
                 " elements (the batch), got ", order.size());
  std::vector<char> seen(order.size(), 0);
  for (const std::int64_t i : order) {
    LG_CHECK(i >= 0 && i < n && seen[static_cast<std::size_t>(i)] == 0, op, ": ", what,
             " is not a permutation of [0, ", n, "): ", i, " is out of range or repeated");
    seen[static_cast<std::size_t>(i)] = 1;
  }
  return order;
}

Tensor index_tensor(const std::vector<std::int64_t>& values, Device device) {
  return tensor(values, {static_cast<std::int64_t>(values.size())}).to(device);
}

// The rows of a padded (T, N, *) batch, flattened to (T N, *), that hold step t of the sequences
// longer than t: t N + i for i < batch_sizes[t], in the packed order.
std::vector<std::int64_t> packed_rows(const std::vector<std::int64_t>& batch_sizes,
                                      std::int64_t batch) {
  std::vector<std::int64_t> rows;
  for (std::size_t t = 0; t < batch_sizes.size(); ++t)
    for (std::int64_t i = 0; i < batch_sizes[t]; ++i)
      rows.push_back(static_cast<std::int64_t>(t) * batch + i);
  return rows;
}

// shape with its first two dims merged.
Shape merged_front(const Shape& shape, const char* op) {
  Shape out{checked_mul(shape[0], shape[1], op)};
  out.insert(out.end(), shape.begin() + 2, shape.end());
  return out;
}

}  // namespace

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices,
                               Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  const char* op = "PackedSequence";
  LG_CHECK(data_.defined(), op, ": data is an undefined Tensor()");
  LG_CHECK_SHAPE(data_.dim() >= 1, op, ": expected data of at least 1 dim, got a 0-d tensor");
  sizes_ = host_int64_values(batch_sizes_, op, "batch_sizes");
  LG_CHECK_SHAPE(!sizes_.empty(), op, ": expected at least one step in batch_sizes");
  std::int64_t rows = 0;
  for (std::size_t t = 0; t < sizes_.size(); ++t) {
    LG_CHECK_SHAPE(sizes_[t] >= 1 && (t == 0 || sizes_[t] <= sizes_[t - 1]), op,
                   ": batch_sizes must be positive and non-increasing, got ", sizes_[t],
                   " at step ", t, t > 0 ? detail::str_cat(" after ", sizes_[t - 1]) : "");
    rows = checked_add(rows, sizes_[t], op);
  }
  LG_CHECK_SHAPE(rows == data_.size(0), op, ": batch_sizes sum to ", rows,
                 " rows, but data has shape ", data_.shape());
  const std::int64_t batch = sizes_[0];
  if (sorted_indices_.defined()) {
    const std::vector<std::int64_t> order =
        checked_permutation(sorted_indices_, batch, op, "sorted_indices");
    if (!unsorted_indices_.defined()) {
      std::vector<std::int64_t> inverse(order.size());
      for (std::size_t i = 0; i < order.size(); ++i)
        inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
      unsorted_indices_ = index_tensor(inverse, sorted_indices_.device());
    }
  }
  if (unsorted_indices_.defined()) {
    LG_CHECK(sorted_indices_.defined(), op, ": unsorted_indices given without sorted_indices");
    checked_permutation(unsorted_indices_, batch, op, "unsorted_indices");
  }
}

PackedSequence PackedSequence::to(Device device) const {
  const auto moved = [device](const Tensor& t) { return t.defined() ? t.to(device) : t; };
  return PackedSequence(moved(data_), batch_sizes_, moved(sorted_indices_),
                        moved(unsorted_indices_));
}

PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first,
                                    bool enforce_sorted) {
  const char* op = "pack_padded_sequence";
  LG_CHECK(input.defined(), op, ": input is an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() >= 2, op,
                 ": expected input of at least 2 dims, (T, N, *) or with batch_first (N, T, *), "
                 "got shape ",
                 input.shape());
  const std::vector<std::int64_t> length = host_int64_values(lengths, op, "lengths");
  const Tensor x = batch_first ? transpose(input, 0, 1) : input;  // (T, N, *)
  const std::int64_t steps = x.size(0), batch = x.size(1);
  LG_CHECK_SHAPE(static_cast<std::int64_t>(length.size()) == batch, op, ": expected ", batch,
                 " lengths for input of shape ", input.shape(), batch_first ? " (batch first)" : "",
                 ", got ", length.size());
  for (std::size_t i = 0; i < length.size(); ++i) {
    LG_CHECK_SHAPE(length[i] >= 1 && length[i] <= steps, op, ": length ", length[i],
                   " of sequence ", i, " is not in [1, ", steps, "] (input of shape ",
                   input.shape(), batch_first ? ", batch first)" : ")");
  }
  // The batch by decreasing length: as it is with enforce_sorted, else a stable sort's order.
  std::vector<std::int64_t> order(length.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (enforce_sorted) {
    for (std::size_t i = 1; i < length.size(); ++i) {
      LG_CHECK(length[i] <= length[i - 1], op,
               ": lengths must not increase along the batch with enforce_sorted = true, got ",
               length[i], " after ", length[i - 1],
               " (sort the batch, or pass enforce_sorted = false)");
    }
  } else {
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return length[static_cast<std::size_t>(a)] > length[static_cast<std::size_t>(b)];
    });
  }
  std::vector<std::int64_t> batch_sizes;
  for (std::int64_t t = 0; t < length[static_cast<std::size_t>(order[0])]; ++t) {
    batch_sizes.push_back(static_cast<std::int64_t>(
        std::count_if(length.begin(), length.end(), [t](std::int64_t l) { return l > t; })));
  }
  Tensor sorted_indices;
  Tensor by_length = x;
  if (!enforce_sorted) {
    sorted_indices = index_tensor(order, input.device());
    by_length = index_select(x, 1, sorted_indices);
  }
  const Tensor data = index_select(reshape(by_length, merged_front(by_length.shape(), op)), 0,
                                   index_tensor(packed_rows(batch_sizes, batch), input.device()));
  return PackedSequence(data, index_tensor(batch_sizes, Device::cpu()), sorted_indices);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first,
                                               double padding_value,
                                               std::optional<std::int64_t> total_length) {
  const char* op = "pad_packed_sequence";
  LG_CHECK(sequence.defined(), op, ": the PackedSequence is empty (default-constructed)");
  const std::vector<std::int64_t>& batch_sizes = sequence.batch_size_list();
  const auto longest = static_cast<std::int64_t>(batch_sizes.size());
  const std::int64_t steps = total_length.value_or(longest);
  LG_CHECK_SHAPE(steps >= longest, op, ": total_length ", steps,
                 " is shorter than the longest sequence, ", longest);
  const Tensor& data = sequence.data();
  const std::int64_t batch = batch_sizes[0];
  Shape padded_shape{checked_mul(steps, batch, op)};
  padded_shape.insert(padded_shape.end(), data.shape().begin() + 1, data.shape().end());
  // padding_value everywhere no step lands, and the steps added in: only data's rows carry a
  // gradient.
  const Tensor rows = index_tensor(packed_rows(batch_sizes, batch), data.device());
  Tensor padded = index_fill(full(padded_shape, padding_value, data.options()), 0, rows, 0.0);
  padded = index_add(padded, 0, rows, data);
  Shape out_shape{steps, batch};
  out_shape.insert(out_shape.end(), data.shape().begin() + 1, data.shape().end());
  padded = reshape(padded, out_shape);
  // Each sorted row's length is the number of steps it takes part in.
  std::vector<std::int64_t> sorted_lengths(static_cast<std::size_t>(batch), 0);
  for (const std::int64_t b : batch_sizes)
    for (std::int64_t i = 0; i < b; ++i)
      ++sorted_lengths[static_cast<std::size_t>(i)];
  std::vector<std::int64_t> lengths = sorted_lengths;
  if (sequence.unsorted_indices().defined()) {
    padded = index_select(padded, 1, sequence.unsorted_indices());
    const std::vector<std::int64_t> unsorted =
        host_int64_values(sequence.unsorted_indices().to(Device::cpu()), op, "unsorted_indices");
    for (std::size_t i = 0; i < unsorted.size(); ++i)
      lengths[i] = sorted_lengths[static_cast<std::size_t>(unsorted[i])];
  }
  if (batch_first) padded = transpose(padded, 0, 1);
  return {padded, index_tensor(lengths, Device::cpu())};
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  const char* op = "pad_sequence";
  LG_CHECK(!sequences.empty(), op, ": expected at least one sequence");
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    LG_CHECK(s.defined(), op, ": sequence ", i, " is an undefined Tensor()");
    LG_CHECK_SHAPE(s.dim() >= 1, op, ": sequence ", i, " is 0-d; expected (L, *)");
    const Tensor& first = sequences[0];
    LG_CHECK_SHAPE(Shape(s.shape().begin() + 1, s.shape().end()) ==
                       Shape(first.shape().begin() + 1, first.shape().end()),
                   op, ": sequence ", i, " has shape ", s.shape(), ", sequence 0 ", first.shape(),
                   ": expected one shape past the first dim");
    LG_CHECK_DTYPE(s.dtype() == first.dtype(), op, ": sequence ", i, " is ", s.dtype(),
                   ", sequence 0 ", first.dtype());
    LG_CHECK_DEVICE(s.device() == first.device(), op, ": sequence ", i, " is on ", s.device(),
                    ", sequence 0 on ", first.device());
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  padded.reserve(sequences.size());
  for (const Tensor& s : sequences) {
    if (s.size(0) == longest) {
      padded.push_back(s);
      continue;
    }
    Shape fill_shape = s.shape();
    fill_shape[0] = longest - s.size(0);
    padded.push_back(cat({s, full(fill_shape, padding_value, s.options())}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  const Tensor padded = pad_sequence(sequences);
  std::vector<std::int64_t> lengths;
  lengths.reserve(sequences.size());
  for (const Tensor& s : sequences)
    lengths.push_back(s.size(0));
  return pack_padded_sequence(padded, index_tensor(lengths, Device::cpu()), false, enforce_sorted);
}

}  // namespace leangrad::nn::utils::rnn
