// Misuse of the recurrent modules (nn/rnn.h): options out of range, inputs of the wrong rank,
// features, length, dtype or device, initial states of the wrong shape, an LSTM given h0 without
// c0, and a module whose forward returns a tuple called through nn::Module; and PackedSequence's
// functions given lengths, batch sizes or indices that do not fit. Tables of the misuse suite
// (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/packed_sequence.h>
#include <leangrad/nn/rnn.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

std::vector<MisuseCase> recurrent_cases() {
  MisuseTable t;
  t.add("rnn_zero_hidden", Raises::Error, {"RNN", "hidden_size must be positive, got 0"},
        [] { nn::RNN(3, 0); });
  t.add("lstm_no_layers", Raises::Error, {"LSTM", "num_layers must be at least 1, got 0"},
        [] { nn::LSTM(nn::LSTMOptions(3, 4).num_layers(0)); });
  t.add("gru_dropout_above_one", Raises::Error, {"GRU", "dropout must be in [0, 1], got 1.5"},
        [] { nn::GRU(nn::GRUOptions(3, 4).dropout(1.5)); });
  t.add("lstm_proj_size_not_below_hidden", Raises::Error,
        {"LSTM", "proj_size must be in [0, hidden_size = 4), got 4"},
        [] { nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)); });
  t.add("rnn_sigmoid_nonlinearity", Raises::Error, {"RNN", "kTanh or kReLU"},
        [] { nn::RNN(nn::RNNOptions(3, 4).nonlinearity(nn::init::Nonlinearity::Sigmoid)); });
  t.add("rnn_cell_negative_input_size", Raises::Error,
        {"RNNCell", "input_size must be non-negative, got -1"}, [] { nn::RNNCell(-1, 4); });

  t.add("lstm_input_features", Raises::ShapeError, {"LSTM", "input_size = 3 features", "[5, 2, 4]"},
        [] {
          nn::LSTM(3, 4)(ones({5, 2, 4}));
        });
  t.add("gru_input_rank", Raises::ShapeError, {"GRU", "3 dims (batched) or 2", "[3]"},
        [] { nn::GRU(3, 4)(ones({3})); });
  t.add("rnn_empty_sequence", Raises::ShapeError, {"RNN", "sequence length above 0", "[0, 2, 3]"},
        [] {
          nn::RNN(3, 4)(ones({0, 2, 3}));
        });
  t.add("lstm_input_dtype", Raises::DTypeError,
        {"LSTM", "input is float64 but the parameters are float32"}, [] {
          nn::LSTM(3, 4)(ones({5, 2, 3}, kFloat64));
        });
  t.add("gru_h0_shape", Raises::ShapeError,
        {"GRU", "h0 of shape [2, 2, 4]", "[5, 2, 3]", "[1, 2, 4]"}, [] {
          nn::GRU(nn::GRUOptions(3, 4).bidirectional(true))(ones({5, 2, 3}), ones({1, 2, 4}));
        });
  t.add("lstm_c0_shape_with_projection", Raises::ShapeError,
        {"LSTM", "c0 of shape [1, 2, 4]", "[1, 2, 2]"}, [] {
          nn::LSTM(nn::LSTMOptions(3, 4).proj_size(2))(
              ones({5, 2, 3}), std::make_tuple(ones({1, 2, 2}), ones({1, 2, 2})));
        });
  t.add("lstm_h0_without_c0", Raises::Error, {"LSTM", "both h0 and c0 or neither", "h0 only"}, [] {
    nn::LSTM(3, 4)(ones({5, 2, 3}), std::make_tuple(ones({1, 2, 4}), Tensor()));
  });
  t.add("rnn_h0_dtype", Raises::DTypeError, {"RNN", "h0 is float64 but the parameters are float32"},
        [] {
          nn::RNN(3, 4)(ones({5, 2, 3}), ones({1, 2, 4}, kFloat64));
        });
  t.add("lstm_undefined_input", Raises::Error, {"LSTM", "undefined"},
        [] { nn::LSTM(3, 4)(Tensor()); });
  t.add("lstm_through_module", Raises::Error, {"LSTM"}, [] {
    std::shared_ptr<nn::Module> module = nn::LSTM(3, 4).ptr();
    module->forward(ones({5, 2, 3}));
  });

  t.add("rnn_cell_input_rank", Raises::ShapeError,
        {"RNNCell", "2 dims (batched) or 1", "[5, 2, 3]"}, [] {
          nn::RNNCell(3, 4)(ones({5, 2, 3}));
        });
  t.add("gru_cell_hx_shape", Raises::ShapeError, {"GRUCell", "hx of shape [2, 4]", "[4]"}, [] {
    nn::GRUCell(3, 4)(ones({2, 3}), ones({4}));
  });
  t.add("lstm_cell_c_shape", Raises::ShapeError, {"LSTMCell", "c of shape [2, 4]", "[2, 5]"}, [] {
    nn::LSTMCell(3, 4)(ones({2, 3}), std::make_tuple(ones({2, 4}), ones({2, 5})));
  });
  t.add("lstm_cell_c_without_h", Raises::Error, {"LSTMCell", "both h and c or neither", "c only"},
        [] {
          nn::LSTMCell(3, 4)(ones({2, 3}), std::make_tuple(Tensor(), ones({2, 4})));
        });
  t.add("gru_cell_input_device_or_dtype", Raises::DTypeError,
        {"GRUCell", "input is int64 but the parameters are float32"}, [] {
          nn::GRUCell(3, 4)(ones({2, 3}, kInt64));
        });
  return t.cases();
}
LG_MISUSE_SUITE(Recurrent, recurrent_cases());

using nn::utils::rnn::pack_padded_sequence;
using nn::utils::rnn::pack_sequence;
using nn::utils::rnn::PackedSequence;
using nn::utils::rnn::pad_packed_sequence;
using nn::utils::rnn::pad_sequence;

Tensor lengths_of(std::vector<std::int64_t> values) {
  return tensor(values);
}

std::vector<MisuseCase> packed_sequence_cases() {
  MisuseTable t;
  t.add("pack_unsorted_lengths_enforced", Raises::Error,
        {"pack_padded_sequence", "must not increase", "got 3 after 2", "enforce_sorted = false"},
        [] {
          pack_padded_sequence(ones({3, 2, 1}), lengths_of({2, 3}));
        });
  t.add("pack_zero_length", Raises::ShapeError,
        {"pack_padded_sequence", "length 0 of sequence 1", "[1, 3]"}, [] {
          pack_padded_sequence(ones({3, 2, 1}), lengths_of({3, 0}));
        });
  t.add("pack_length_past_the_input", Raises::ShapeError,
        {"pack_padded_sequence", "length 4 of sequence 0", "[1, 3]", "[3, 2, 1]"}, [] {
          pack_padded_sequence(ones({3, 2, 1}), lengths_of({4, 1}));
        });
  t.add("pack_lengths_of_another_batch", Raises::ShapeError,
        {"pack_padded_sequence", "expected 2 lengths", "batch first", "got 3"}, [] {
          pack_padded_sequence(ones({2, 3, 1}), lengths_of({3, 2, 1}), true);
        });
  t.add("pack_float_lengths", Raises::DTypeError,
        {"pack_padded_sequence", "lengths", "int64", "float32"}, [] {
          pack_padded_sequence(ones({3, 2, 1}), ones({2}));
        });
  t.add("pack_lengths_of_two_dims", Raises::ShapeError,
        {"pack_padded_sequence", "lengths of 1 dim", "[2, 1]"}, [] {
          pack_padded_sequence(ones({3, 2, 1}), ones({2, 1}, kInt64));
        });
  t.add("pack_one_dim_input", Raises::ShapeError,
        {"pack_padded_sequence", "at least 2 dims", "[3]"},
        [] { pack_padded_sequence(ones({3}), lengths_of({3})); });
  t.add("packed_increasing_batch_sizes", Raises::ShapeError,
        {"PackedSequence", "non-increasing", "got 3 at step 1 after 2"}, [] {
          PackedSequence(ones({5, 1}), lengths_of({2, 3}));
        });
  t.add("packed_batch_sizes_do_not_sum_to_the_rows", Raises::ShapeError,
        {"PackedSequence", "sum to 4 rows", "[5, 1]"}, [] {
          PackedSequence(ones({5, 1}), lengths_of({2, 2}));
        });
  t.add("packed_sorted_indices_not_a_permutation", Raises::Error,
        {"PackedSequence", "sorted_indices is not a permutation of [0, 2)", "1"}, [] {
          PackedSequence(ones({4, 1}), lengths_of({2, 2}), lengths_of({1, 1}));
        });
  t.add("packed_unsorted_indices_alone", Raises::Error,
        {"PackedSequence", "unsorted_indices given without sorted_indices"}, [] {
          PackedSequence(ones({4, 1}), lengths_of({2, 2}), Tensor(), lengths_of({1, 0}));
        });
  t.add("pad_packed_total_length_too_short", Raises::ShapeError,
        {"pad_packed_sequence", "total_length 2", "longest sequence, 3"}, [] {
          pad_packed_sequence(pack_padded_sequence(ones({3, 2, 1}), lengths_of({3, 1})), false, 0.0,
                              2);
        });
  t.add("pad_packed_of_nothing", Raises::Error, {"pad_packed_sequence", "empty"},
        [] { pad_packed_sequence(PackedSequence()); });
  t.add("pad_sequence_of_nothing", Raises::Error, {"pad_sequence", "at least one sequence"},
        [] { pad_sequence({}); });
  t.add("pad_sequence_trailing_shapes_differ", Raises::ShapeError,
        {"pad_sequence", "sequence 1 has shape [2, 3]", "[4, 2]"}, [] {
          pad_sequence({ones({4, 2}), ones({2, 3})});
        });
  t.add("pad_sequence_dtypes_differ", Raises::DTypeError, {"pad_sequence", "float64", "float32"},
        [] {
          pad_sequence({ones({4, 2}), ones({2, 2}, kFloat64)});
        });
  t.add("pack_sequence_of_an_empty_sequence", Raises::ShapeError,
        {"pack_padded_sequence", "length 0 of sequence 1"}, [] {
          pack_sequence({ones({2, 1}), ones({0, 1})});
        });
  t.add("lstm_packed_features_differ", Raises::ShapeError,
        {"LSTM", "packed data of shape (rows, input_size = 3)", "[5, 2]"}, [] {
          nn::LSTM(3, 4)->forward_with_packed_input(
              pack_padded_sequence(ones({3, 2, 2}), lengths_of({3, 2})));
        });
  t.add("gru_packed_state_of_another_batch", Raises::ShapeError,
        {"GRU", "h0 of shape [1, 2, 4]", "got [1, 3, 4]"}, [] {
          nn::GRU(3, 4)->forward_with_packed_input(
              pack_padded_sequence(ones({3, 2, 3}), lengths_of({3, 2})), ones({1, 3, 4}));
        });
  t.add("rnn_packed_of_nothing", Raises::Error, {"RNN", "empty"},
        [] { nn::RNN(3, 4)->forward_with_packed_input(PackedSequence()); });
  t.add("lstm_packed_h0_without_c0", Raises::Error, {"LSTM", "both h0 and c0 or neither"}, [] {
    nn::LSTM(3, 4)->forward_with_packed_input(
        pack_padded_sequence(ones({3, 2, 3}), lengths_of({3, 2})),
        std::make_tuple(ones({1, 2, 4}), Tensor()));
  });
  return t.cases();
}
LG_MISUSE_SUITE(PackedSequence, packed_sequence_cases());

}  // namespace
}  // namespace leangrad::test
