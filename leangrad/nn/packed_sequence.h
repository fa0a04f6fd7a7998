// Variable-length sequences in one batch, as LibTorch's torch::nn::utils::rnn:
//   using namespace leangrad::nn::utils::rnn;
//   PackedSequence packed = pack_padded_sequence(x, lengths, /*batch_first=*/true,
//                                                /*enforce_sorted=*/false);
//   auto [out, state] = lstm->forward_with_packed_input(packed);
//   auto [padded, out_lengths] = pad_packed_sequence(out, /*batch_first=*/true);
// A PackedSequence holds the steps of every sequence one after another: step t's rows are the
// t-th elements of the sequences longer than t, longest sequence first, so each step's batch
// is a prefix of the one before (batch_sizes[t] rows). The recurrent modules run each step on
// its rows only (Note [Recurrent layers by steps] in nn/rnn.cpp), so a sequence's last state is
// its own and padding never reaches the gradients. Packing and unpacking are index_select and
// index_add over the rows, so both differentiate and run on every device; batch_sizes and
// lengths are int64 tensors on the host, as PyTorch's.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::nn::utils::rnn {

class PackedSequence {
 public:
  PackedSequence() = default;
  // data (sum of batch_sizes, *); batch_sizes 1-d int64 on the host, positive and non-increasing,
  // summing to data's rows; sorted_indices (N) the batch order by decreasing length, or undefined
  // (the batch was sorted); unsorted_indices its inverse, computed when not given.
  PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = Tensor(),
                 Tensor unsorted_indices = Tensor());

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  // batch_sizes as a vector (not in LibTorch: what the recurrent modules loop over).
  const std::vector<std::int64_t>& batch_size_list() const { return sizes_; }
  bool defined() const { return data_.defined(); }
  bool is_cuda() const { return data_.defined() && data_.device().is_cuda(); }
  // data and the indices on `device`; batch_sizes stays on the host, as LibTorch's.
  PackedSequence to(Device device) const;

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
  std::vector<std::int64_t> sizes_;
};

// input (T, N, *) or, with batch_first, (N, T, *) padded; lengths (N) int64 on the host, each in
// [1, T]. With enforce_sorted the lengths must not increase along the batch; without it the
// batch is sorted by decreasing length first (sorted_indices records the order).
PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths,
                                    bool batch_first = false, bool enforce_sorted = true);

// The inverse: (T_out, N, *) or (N, T_out, *) with padding_value past each sequence's end, in the
// batch's original order, T_out the longest length or total_length (at least that); and the
// lengths (N), int64 on the host.
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence,
                                               bool batch_first = false, double padding_value = 0.0,
                                               std::optional<std::int64_t> total_length = {});

// Sequences (L_i, *), of one trailing shape, dtype and device, padded with padding_value to the
// longest and stacked: (L_max, N, *), or (N, L_max, *) with batch_first.
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false,
                    double padding_value = 0.0);

// pack_padded_sequence of pad_sequence(sequences) with their lengths.
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

}  // namespace leangrad::nn::utils::rnn
