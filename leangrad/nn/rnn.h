// The recurrent modules, configured and called as LibTorch's:
//   nn::LSTM lstm(nn::LSTMOptions(64, 128).num_layers(2).batch_first(true).dropout(0.1));
//   auto [out, state] = lstm(x);                  // out (N, T, 128); state = (h_n, c_n)
//   auto [h_n, c_n] = state;                      // each (num_layers * directions, N, 128)
//   nn::GRU gru(nn::GRUOptions(64, 128).bidirectional(true));
//   auto [y, h] = gru(x, h0);                     // y (T, N, 256), h (2, N, 128)
//   nn::LSTMCell cell(64, 128);  auto [h1, c1] = cell(x_t, std::make_tuple(h0, c0));
// RNN (tanh or relu), LSTM (with projections, proj_size) and GRU over one or more layers and one
// or two directions; inputs sequence first (T, N, input_size) as LibTorch's, batch first
// (N, T, input_size) with batch_first(true), or unbatched (T, input_size). Parameters, their
// names and order are PyTorch's (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0,
// then *_reverse, then l1, ...; the cells' weight_ih, weight_hh, bias_ih, bias_hh), with
// PyTorch's gate order (LSTM: input, forget, cell, output; GRU: reset, update, new) and its
// initialisation U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), so PyTorch's state dicts load and
// the same recipe trains the same way. The modules are composed of differentiable functions
// (Note [Recurrent layers by steps] in nn/rnn.cpp), so they run on every device and take
// saved-tensor hooks, checkpointing and autocast as any other layer. Sequences of different
// lengths in one batch go in as a PackedSequence (nn/packed_sequence.h), through
// forward_with_packed_input, as LibTorch's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/init.h>
#include <leangrad/nn/module_holder.h>
#include <leangrad/nn/packed_sequence.h>

namespace leangrad::nn {

// The options every recurrent module has, as LibTorch's: each options class below declares them
// itself, so that every setter returns that class and any order of calls chains.
#define LEANGRAD_RNN_COMMON_OPTIONS                                                         \
  LG_ARG(std::int64_t, input_size);                                                         \
  LG_ARG(std::int64_t, hidden_size);                                                        \
  LG_ARG(std::int64_t, num_layers) = 1;                                                     \
  LG_ARG(bool, bias) = true;                                                                \
  /* (N, T, features) in and out; the states stay (num_layers * directions, N, features) */ \
  LG_ARG(bool, batch_first) = false;                                                        \
  /* on the outputs of every layer but the last, in training */                             \
  LG_ARG(double, dropout) = 0.0;                                                            \
  LG_ARG(bool, bidirectional) = false

class RNNOptions {
 public:
  RNNOptions(std::int64_t input_size, std::int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LEANGRAD_RNN_COMMON_OPTIONS;
  // kTanh (default) or kReLU, LibTorch's spellings.
  LG_ARG(init::Nonlinearity, nonlinearity) = init::Nonlinearity::Tanh;
};

class LSTMOptions {
 public:
  LSTMOptions(std::int64_t input_size, std::int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LEANGRAD_RNN_COMMON_OPTIONS;
  // When positive, h is projected to proj_size features (weight_hr, no bias): the output and h_n
  // have proj_size features, c_n keeps hidden_size. Must be below hidden_size.
  LG_ARG(std::int64_t, proj_size) = 0;
};

class GRUOptions {
 public:
  GRUOptions(std::int64_t input_size, std::int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LEANGRAD_RNN_COMMON_OPTIONS;
};

// The common options of any of the three (what RNNImplBase keeps).
class RNNOptionsBase {
 public:
  template <typename Options>
  explicit RNNOptionsBase(const Options& o)
      : input_size_(o.input_size()),
        hidden_size_(o.hidden_size()),
        num_layers_(o.num_layers()),
        bias_(o.bias()),
        batch_first_(o.batch_first()),
        dropout_(o.dropout()),
        bidirectional_(o.bidirectional()) {}
  LEANGRAD_RNN_COMMON_OPTIONS;
};

// What RNN, LSTM and GRU share: the parameters, their initialisation and the layers' loop.
class RNNImplBase : public Module {
 public:
  enum class Mode : std::uint8_t { RNNTanh, RNNReLU, LSTM, GRU };

  // The parameters in PyTorch's order (LibTorch's all_weights()).
  std::vector<Tensor> all_weights() const;
  // U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter, in order, as PyTorch's.
  void reset_parameters();
  // LibTorch packs the weights into one buffer for cuDNN here; leangrad has no cuDNN RNN, and
  // its layers read the parameters as they are, so there is nothing to do.
  void flatten_parameters() {}
  std::string extra_repr() const override;

  const RNNOptionsBase& options_base() const { return options_base_; }
  Mode mode() const { return mode_; }

 protected:
  RNNImplBase(const char* name, Mode mode, const RNNOptionsBase& options,
              std::int64_t proj_size = 0);

  // The layers over input, from the initial states h0 (and c0 for an LSTM; undefined: zeros):
  // (output, h_n, c_n), c_n undefined but for an LSTM. Checks the shapes, dtypes and devices.
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& h0, const Tensor& c0);
  // The same over a PackedSequence, the states in the batch's original order.
  std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> run_packed(
      const utils::rnn::PackedSequence& input, const Tensor& h0, const Tensor& c0);

 private:
  // The layers' loop over `rows` (sum of batch_sizes, input_size), each step's rows after the
  // step before's (a padded batch: N every step), from h_init and c_init (layers * directions, N,
  // features): (output rows, h_n, c_n).
  std::tuple<Tensor, Tensor, Tensor> layers(Tensor rows,
                                            const std::vector<std::int64_t>& batch_sizes,
                                            const Tensor& h_init, const Tensor& c_init);
  // A given initial state checked against (layers * directions, [N,] features) and returned
  // batched; undefined: zeros like `like`.
  Tensor initial_state(const Tensor& given, const char* what, std::int64_t features,
                       std::int64_t batch, bool batched, const Shape& input_shape,
                       const Tensor& like) const;

  RNNOptionsBase options_base_;
  Mode mode_;
  std::int64_t proj_size_;
  // Per layer and direction (l0, l0_reverse, l1, ...): weight_ih, weight_hh, bias_ih, bias_hh
  // (undefined without bias), weight_hr (undefined without projections).
  struct Weights {
    Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
  };
  std::vector<Weights> weights_;
};

// Note [Recurrent forwards]: these forwards return tuples, as LibTorch's, so they hide
// nn::Module's virtual Tensor forward(const Tensor&) instead of overriding it (Note [Bound
// forward]); calling one of these modules through nn::Module throws naming it.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#endif

class RNNImpl : public RNNImplBase {
 public:
  RNNImpl(std::int64_t input_size, std::int64_t hidden_size);
  explicit RNNImpl(const RNNOptions& options);

  // input (T, N, input_size) (or batch first, or unbatched (T, input_size)), hx
  // (num_layers * directions, N, hidden_size) (or unbatched without N; undefined: zeros) ->
  // (output (T, N, directions * hidden_size), h_n shaped as hx).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  // A PackedSequence of (rows, input_size) steps, hx (num_layers * directions, N, hidden_size)
  // in the batch's original order -> (the output packed as the input, h_n: each sequence's own
  // last state, in the original order).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = Tensor());

  RNNOptions options;
};
LEANGRAD_MODULE(RNN);

class LSTMImpl : public RNNImplBase {
 public:
  LSTMImpl(std::int64_t input_size, std::int64_t hidden_size);
  explicit LSTMImpl(const LSTMOptions& options);

  // input as RNN's; hx_opt (h0, c0): h0 (num_layers * directions, N, proj_size or hidden_size),
  // c0 (num_layers * directions, N, hidden_size); none: zeros ->
  // (output (T, N, directions * (proj_size or hidden_size)), (h_n, c_n)).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})
  // As RNN's, with (h_n, c_n).
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input,
      std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);

  LSTMOptions options;
};
LEANGRAD_MODULE(LSTM);

class GRUImpl : public RNNImplBase {
 public:
  GRUImpl(std::int64_t input_size, std::int64_t hidden_size);
  explicit GRUImpl(const GRUOptions& options);

  // As RNN's.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = Tensor());

  GRUOptions options;
};
LEANGRAD_MODULE(GRU);

// ---- Cells: one step, (N, input_size) or unbatched (input_size) ---------------------------------

#define LEANGRAD_RNN_CELL_COMMON_OPTIONS \
  LG_ARG(std::int64_t, input_size);      \
  LG_ARG(std::int64_t, hidden_size);     \
  LG_ARG(bool, bias) = true

class RNNCellOptions {
 public:
  RNNCellOptions(std::int64_t input_size, std::int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LEANGRAD_RNN_CELL_COMMON_OPTIONS;
  LG_ARG(init::Nonlinearity, nonlinearity) = init::Nonlinearity::Tanh;  // kTanh or kReLU
};

class LSTMCellOptions {
 public:
  LSTMCellOptions(std::int64_t input_size, std::int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LEANGRAD_RNN_CELL_COMMON_OPTIONS;
};

class GRUCellOptions {
 public:
  GRUCellOptions(std::int64_t input_size, std::int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LEANGRAD_RNN_CELL_COMMON_OPTIONS;
};

// The common options of any of the three (what RNNCellImplBase keeps).
class RNNCellOptionsBase {
 public:
  template <typename Options>
  explicit RNNCellOptionsBase(const Options& o)
      : input_size_(o.input_size()), hidden_size_(o.hidden_size()), bias_(o.bias()) {}
  LEANGRAD_RNN_CELL_COMMON_OPTIONS;
};

// What the cells share: weight_ih (G hidden_size, input_size), weight_hh (G hidden_size,
// hidden_size), bias_ih and bias_hh (G hidden_size), G = 1, 4 or 3 gates.
class RNNCellImplBase : public Module {
 public:
  void reset_parameters();  // as RNNImplBase's
  std::string extra_repr() const override;

  Tensor weight_ih;
  Tensor weight_hh;
  Tensor bias_ih;  // undefined with bias(false)
  Tensor bias_hh;

 protected:
  RNNCellImplBase(const char* name, const RNNCellOptionsBase& options, std::int64_t gates);
  // The checks of input and a state (h or c; undefined: fine); returns whether input is batched.
  bool check_input(const Tensor& input, const Tensor& state, const char* state_name) const;

  RNNCellOptionsBase options_base_;
};

class RNNCellImpl : public RNNCellImplBase {
 public:
  RNNCellImpl(std::int64_t input_size, std::int64_t hidden_size);
  explicit RNNCellImpl(const RNNCellOptions& options);

  // input (N, input_size) or (input_size), hx (N, hidden_size) or (hidden_size) (undefined:
  // zeros) -> h' = tanh or relu(x W_ih^T + b_ih + h W_hh^T + b_hh).
  Tensor forward(const Tensor& input, const Tensor& hx = Tensor());
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  std::string extra_repr() const override;

  RNNCellOptions options;
};
LEANGRAD_MODULE(RNNCell);

class LSTMCellImpl : public RNNCellImplBase {
 public:
  LSTMCellImpl(std::int64_t input_size, std::int64_t hidden_size);
  explicit LSTMCellImpl(const LSTMCellOptions& options);

  // input as RNNCell's, hx_opt (h, c) (none: zeros) -> (h', c').
  std::tuple<Tensor, Tensor> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})

  LSTMCellOptions options;
};
LEANGRAD_MODULE(LSTMCell);

class GRUCellImpl : public RNNCellImplBase {
 public:
  GRUCellImpl(std::int64_t input_size, std::int64_t hidden_size);
  explicit GRUCellImpl(const GRUCellOptions& options);

  // As RNNCell's, with GRU's gates.
  Tensor forward(const Tensor& input, const Tensor& hx = Tensor());
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})

  GRUCellOptions options;
};
LEANGRAD_MODULE(GRUCell);

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

}  // namespace leangrad::nn

namespace leangrad {

// One step of an LSTM, a GRU or an Elman RNN from explicit weights, as torch::lstm_cell, gru_cell,
// rnn_tanh_cell and rnn_relu_cell (the cell modules above compute theirs with these): input
// (N, input_size), the state hx (N, H) (lstm_cell: {h, c}, both (N, H)), w_ih (G H, input_size)
// and w_hh (G H, H) with G = 4, 3 and 1 gates in PyTorch's order, and the biases (G H) optional.
// Returns h' (lstm_cell: (h', c')). Every operand shares input's dtype and device.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih = std::nullopt,
                                     const std::optional<Tensor>& b_hh = std::nullopt);
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih = std::nullopt,
                const std::optional<Tensor>& b_hh = std::nullopt);
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = std::nullopt,
                     const std::optional<Tensor>& b_hh = std::nullopt);
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = std::nullopt,
                     const std::optional<Tensor>& b_hh = std::nullopt);

}  // namespace leangrad
