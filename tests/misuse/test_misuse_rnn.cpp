// Misuse of the recurrent modules (nn/rnn.h): options out of range, inputs of the wrong rank,
// features, length, dtype or device, initial states of the wrong shape, an LSTM given h0 without
// c0, and a module whose forward returns a tuple called through nn::Module. Tables of the misuse
// suite (tests/misuse/misuse_testing.h).
#include <memory>
#include <tuple>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
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

}  // namespace
}  // namespace leangrad::test
