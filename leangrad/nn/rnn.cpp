// The recurrent modules (nn/rnn.h).
#include <leangrad/nn/rnn.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::nn {

// Note [Recurrent layers by steps]
// A layer runs its T steps as differentiable functions, the graph growing by a few nodes a step,
// as PyTorch's own CPU RNNs do:
//  - the input's part of every step's gates, x W_ih^T + b_ih (+ b_hh where it adds plainly, RNN and
//    LSTM), is one matmul over the whole sequence (T N, input) x (input, G hidden) before the loop,
//    cut into its T steps by one node (StepsOf) whose backward stacks the T gradients: a select
//    per step would instead send T full-size gradients back, each (T, N, G hidden) and mostly
//    zeros, to be summed, T^2 N G hidden of memory traffic where T N G hidden is due;
//  - a step adds h W_hh^T, one (N, hidden) x (hidden, G hidden) matmul, and applies the gates;
//    it is linear(h, W_hh), whose gradient reaches W_hh in W_hh's own layout: mm(h, W_hh.t())
//    with one transposed view for all steps hands that view T transposed gradients to sum, which
//    took 60% of an LSTM's forward and backward before Note [Transposed operands of elementwise
//    ops] (kernels/ops_copy.cpp), and still costs a copy of each;
//  - the reverse direction runs the same steps from t = T-1 down to 0, and its outputs are
//    concatenated after the forward direction's on the features;
//  - dropout (training only) acts on every layer's output but the last;
//  - a step's input is a block of rows: the whole batch for a padded input ((T, N, input) is read
//    as T N rows), the sequences still running for a PackedSequence, whose step t holds
//    batch_sizes[t] rows, longest sequence first, each step's rows a prefix of the step before's.
//    Forward, the state of the sequences that ended is set aside (a narrow of it) and the rest
//    runs on; reverse, a step whose batch grows adds the new sequences' initial states below the
//    running ones. Each sequence's h_n (c_n) is thus its state after its own last element; the
//    set-aside states are put back in row order at the end.
// Backward is the chain of the steps' backwards, so saved-tensor hooks, checkpointing and
// anomaly mode see these layers as any other, on every device.

namespace {

std::int64_t gate_count(RNNImplBase::Mode mode) {
  switch (mode) {
    case RNNImplBase::Mode::LSTM:
      return 4;
    case RNNImplBase::Mode::GRU:
      return 3;
    default:
      return 1;
  }
}

const char* mode_name(RNNImplBase::Mode mode) {
  switch (mode) {
    case RNNImplBase::Mode::LSTM:
      return "LSTM";
    case RNNImplBase::Mode::GRU:
      return "GRU";
    default:
      return "RNN";
  }
}

// U(-1/sqrt(hidden), 1/sqrt(hidden)) for each tensor in order, from the CPU default generator.
void uniform_all(const std::vector<Tensor>& tensors, std::int64_t hidden_size) {
  if (hidden_size <= 0) return;
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  Generator& gen = default_generator(Device::cpu());
  for (const Tensor& t : tensors)
    ops::uniform_(t, -bound, bound, gen);
}

init::Nonlinearity checked_nonlinearity(const char* module, init::Nonlinearity nonlinearity) {
  LG_CHECK(nonlinearity == init::Nonlinearity::Tanh || nonlinearity == init::Nonlinearity::ReLU,
           module, ": nonlinearity must be kTanh or kReLU");
  return nonlinearity;
}

// x's rows cut into consecutive pieces of `sizes` rows, as one node: views in forward, the cat of
// their gradients in backward (a piece whose output took no part gets zeros). A padded batch's
// pieces are its T steps of N rows; a PackedSequence's, its steps of batch_sizes[t] rows. See
// Note [Recurrent layers by steps].
struct StepsOf : autograd::Function<StepsOf> {
  static std::vector<Tensor> forward(autograd::Context* /*ctx*/, const Tensor& x,
                                     const std::vector<std::int64_t>& sizes) {
    std::vector<Tensor> pieces;
    pieces.reserve(sizes.size());
    std::int64_t start = 0;
    for (const std::int64_t size : sizes) {
      pieces.push_back(narrow(x, 0, start, size));
      start += size;
    }
    return pieces;
  }
  static std::vector<Tensor> backward(autograd::Context* /*ctx*/, std::vector<Tensor> grads) {
    return {grads.size() == 1 ? grads[0] : cat(grads, 0), Tensor()};
  }
};

// The gates of one step from their pre-activations (the sums of the input's and the state's
// parts, biases included).
// LSTM: gates (N, 4H) in the order input, forget, cell, output -> (h', c').
std::tuple<Tensor, Tensor> lstm_gates(const Tensor& gates, const Tensor& c, std::int64_t hidden) {
  const Tensor input_forget = sigmoid(narrow(gates, 1, 0, 2 * hidden));
  const Tensor cell = tanh(narrow(gates, 1, 2 * hidden, hidden));
  const Tensor output = sigmoid(narrow(gates, 1, 3 * hidden, hidden));
  const Tensor i = narrow(input_forget, 1, 0, hidden);
  const Tensor f = narrow(input_forget, 1, hidden, hidden);
  Tensor c_next = add(mul(f, c), mul(i, cell));
  Tensor h_next = mul(output, tanh(c_next));
  return {std::move(h_next), std::move(c_next)};
}

// GRU: the input's part xg and the state's part hg, each (N, 3H) with its bias, in the order
// reset, update, new -> h' = n + z (h - n), n = tanh(x_n + r h_n).
Tensor gru_gates(const Tensor& xg, const Tensor& hg, const Tensor& h, std::int64_t hidden) {
  const Tensor reset_update =
      sigmoid(add(narrow(xg, 1, 0, 2 * hidden), narrow(hg, 1, 0, 2 * hidden)));
  const Tensor r = narrow(reset_update, 1, 0, hidden);
  const Tensor z = narrow(reset_update, 1, hidden, hidden);
  const Tensor n =
      tanh(add(narrow(xg, 1, 2 * hidden, hidden), mul(r, narrow(hg, 1, 2 * hidden, hidden))));
  return add(n, mul(z, sub(h, n)));
}

// input and the parameters' dtype and device agree; `what` names the tensor in the Error.
void check_like_parameters(const char* module, const char* what, const Tensor& t,
                           const Tensor& parameter) {
  LG_CHECK_DTYPE(t.dtype() == parameter.dtype(), module, ": ", what, " is ", t.dtype(),
                 " but the parameters are ", parameter.dtype());
  LG_CHECK_DEVICE(t.device() == parameter.device(), module, ": ", what, " is on ", t.device(),
                  " but the parameters are on ", parameter.device());
}

}  // namespace

// ---- RNN, LSTM, GRU -------------------------------------------------------------------------

RNNImplBase::RNNImplBase(const char* name, Mode mode, const RNNOptionsBase& opts,
                         std::int64_t proj_size)
    : Module(name), options_base_(opts), mode_(mode), proj_size_(proj_size) {
  LG_CHECK(opts.input_size() >= 0, name, ": input_size must be non-negative, got ",
           opts.input_size());
  LG_CHECK(opts.hidden_size() > 0, name, ": hidden_size must be positive, got ",
           opts.hidden_size());
  LG_CHECK(opts.num_layers() >= 1, name, ": num_layers must be at least 1, got ",
           opts.num_layers());
  LG_CHECK(opts.dropout() >= 0.0 && opts.dropout() <= 1.0, name,
           ": dropout must be in [0, 1], got ", opts.dropout());
  LG_CHECK(proj_size >= 0 && proj_size < opts.hidden_size(), name,
           ": proj_size must be in [0, hidden_size = ", opts.hidden_size(), "), got ", proj_size);
  const std::int64_t gates = checked_mul(gate_count(mode), opts.hidden_size(), name);
  const std::int64_t out_size = proj_size > 0 ? proj_size : opts.hidden_size();
  const int directions = opts.bidirectional() ? 2 : 1;
  for (std::int64_t layer = 0; layer < opts.num_layers(); ++layer) {
    const std::int64_t layer_input = layer == 0 ? opts.input_size() : out_size * directions;
    for (int direction = 0; direction < directions; ++direction) {
      const std::string suffix = "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
      Weights w;
      w.w_ih = register_parameter("weight_ih" + suffix, empty({gates, layer_input}));
      w.w_hh = register_parameter("weight_hh" + suffix, empty({gates, out_size}));
      if (opts.bias()) {
        w.b_ih = register_parameter("bias_ih" + suffix, empty({gates}));
        w.b_hh = register_parameter("bias_hh" + suffix, empty({gates}));
      }
      if (proj_size > 0)
        w.w_hr = register_parameter("weight_hr" + suffix, empty({proj_size, opts.hidden_size()}));
      weights_.push_back(std::move(w));
    }
  }
  reset_parameters();
}

std::vector<Tensor> RNNImplBase::all_weights() const {
  return parameters(/*recurse=*/false);
}

void RNNImplBase::reset_parameters() {
  uniform_all(all_weights(), options_base_.hidden_size());
}

std::string RNNImplBase::extra_repr() const {
  std::ostringstream out;
  out << options_base_.input_size() << ", " << options_base_.hidden_size();
  if (proj_size_ > 0) out << ", proj_size=" << proj_size_;
  if (options_base_.num_layers() != 1) out << ", num_layers=" << options_base_.num_layers();
  if (mode_ == Mode::RNNReLU) out << ", nonlinearity=relu";
  if (!options_base_.bias()) out << ", bias=false";
  if (options_base_.batch_first()) out << ", batch_first=true";
  if (options_base_.dropout() != 0.0) out << ", dropout=" << options_base_.dropout();
  if (options_base_.bidirectional()) out << ", bidirectional=true";
  return out.str();
}

Tensor RNNImplBase::initial_state(const Tensor& given, const char* what, std::int64_t features,
                                  std::int64_t batch, bool batched, const Shape& input_shape,
                                  const Tensor& like) const {
  const char* name = mode_name(mode_);
  const std::int64_t states = options_base_.num_layers() * (options_base_.bidirectional() ? 2 : 1);
  if (!given.defined()) return zeros({states, batch, features}, like.options());
  const Shape want = batched ? Shape{states, batch, features} : Shape{states, features};
  LG_CHECK_SHAPE(given.shape() == want, name, ": expected ", what, " of shape ", want,
                 " for input ", input_shape, ", got ", given.shape());
  check_like_parameters(name, what, given, weights_[0].w_ih);
  return batched ? given : unsqueeze(given, 1);
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::layers(Tensor rows,
                                                       const std::vector<std::int64_t>& batch_sizes,
                                                       const Tensor& h_init, const Tensor& c_init) {
  const RNNOptionsBase& opts = options_base_;
  const std::int64_t hidden = opts.hidden_size();
  const int directions = opts.bidirectional() ? 2 : 1;
  const auto steps = static_cast<std::int64_t>(batch_sizes.size());
  std::vector<Tensor> h_last, c_last;
  for (std::int64_t layer = 0; layer < opts.num_layers(); ++layer) {
    std::vector<Tensor> direction_outputs;
    for (int direction = 0; direction < directions; ++direction) {
      const std::int64_t index = layer * directions + direction;
      const Weights& w = weights_[static_cast<std::size_t>(index)];
      // The input's part of every step's gates, biases folded in where they add plainly.
      Tensor x_bias = w.b_ih;
      if (w.b_ih.defined() && mode_ != Mode::GRU) x_bias = add(w.b_ih, w.b_hh);
      const std::vector<Tensor> x_gates = StepsOf::apply(linear(rows, w.w_ih, x_bias), batch_sizes);
      const Tensor h_start = select(h_init, 0, index);
      const Tensor c_start = c_init.defined() ? select(c_init, 0, index) : Tensor();
      // The state of the sequences still running (Note [Recurrent layers by steps]); forward,
      // the states of those that ended, the latest first.
      Tensor h = h_start, c = c_start;
      std::vector<Tensor> ended_h, ended_c;
      if (direction == 1 && batch_sizes.back() < h.size(0)) {
        h = narrow(h_start, 0, 0, batch_sizes.back());
        if (c.defined()) c = narrow(c_start, 0, 0, batch_sizes.back());
      }
      std::vector<Tensor> outputs(static_cast<std::size_t>(steps));
      for (std::int64_t k = 0; k < steps; ++k) {
        const std::int64_t step = direction == 0 ? k : steps - 1 - k;
        const std::int64_t running = batch_sizes[static_cast<std::size_t>(step)];
        if (running < h.size(0)) {  // forward: sequences ended at the step before
          ended_h.push_back(narrow(h, 0, running, h.size(0) - running));
          h = narrow(h, 0, 0, running);
          if (c.defined()) {
            ended_c.push_back(narrow(c, 0, running, c.size(0) - running));
            c = narrow(c, 0, 0, running);
          }
        } else if (running > h.size(0)) {  // reverse: sequences that start here, from h0
          const std::int64_t started = running - h.size(0);
          h = cat({h, narrow(h_start, 0, h.size(0), started)}, 0);
          if (c.defined()) c = cat({c, narrow(c_start, 0, c.size(0), started)}, 0);
        }
        const Tensor& xg = x_gates[static_cast<std::size_t>(step)];
        switch (mode_) {
          case Mode::RNNTanh:
            h = tanh(add(xg, linear(h, w.w_hh)));
            break;
          case Mode::RNNReLU:
            h = relu(add(xg, linear(h, w.w_hh)));
            break;
          case Mode::LSTM:
            std::tie(h, c) = lstm_gates(add(xg, linear(h, w.w_hh)), c, hidden);
            if (w.w_hr.defined()) h = linear(h, w.w_hr);
            break;
          case Mode::GRU:
            h = gru_gates(xg, linear(h, w.w_hh, w.b_hh), h, hidden);
            break;
        }
        outputs[static_cast<std::size_t>(step)] = h;
      }
      direction_outputs.push_back(steps == 1 ? outputs[0] : cat(outputs, 0));
      const auto with_ended = [](Tensor state, std::vector<Tensor>& ended) {
        if (ended.empty()) return state;
        ended.push_back(std::move(state));
        std::reverse(ended.begin(), ended.end());
        return cat(ended, 0);
      };
      h_last.push_back(with_ended(h, ended_h));
      if (c.defined()) c_last.push_back(with_ended(c, ended_c));
    }
    rows = directions == 1 ? direction_outputs[0] : cat(direction_outputs, 1);
    if (layer + 1 < opts.num_layers() && opts.dropout() > 0.0 && is_training())
      rows = dropout(rows, opts.dropout(), /*training=*/true);
  }
  return {std::move(rows), stack(h_last, 0), c_last.empty() ? Tensor() : stack(c_last, 0)};
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, const Tensor& h0,
                                                    const Tensor& c0) {
  const char* name = mode_name(mode_);
  const RNNOptionsBase& opts = options_base_;
  const std::int64_t out_size = proj_size_ > 0 ? proj_size_ : opts.hidden_size();
  LG_CHECK(input.defined(), name, ": input is an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 2 || input.dim() == 3, name,
                 ": expected input of 3 dims (batched) or 2 (unbatched), got ", input.shape());
  LG_CHECK_SHAPE(input.size(-1) == opts.input_size(), name,
                 ": expected input with input_size = ", opts.input_size(),
                 " features in its last dim, got ", input.shape());
  check_like_parameters(name, "input", input, weights_[0].w_ih);
  const bool batched = input.dim() == 3;
  // (T, N, input) from here on.
  const Tensor x =
      batched ? (opts.batch_first() ? transpose(input, 0, 1) : input) : unsqueeze(input, 1);
  const std::int64_t steps = x.size(0), batch = x.size(1);
  LG_CHECK_SHAPE(steps > 0, name, ": expected a sequence length above 0, got input ",
                 input.shape());
  const Tensor h_init = initial_state(h0, "h0", out_size, batch, batched, input.shape(), x);
  const Tensor c_init = mode_ == Mode::LSTM ? initial_state(c0, "c0", opts.hidden_size(), batch,
                                                            batched, input.shape(), x)
                                            : Tensor();
  // Every step runs the whole batch.
  auto [rows, h_n, c_n] =
      layers(reshape(x, {checked_mul(steps, batch, name), x.size(2)}),
             std::vector<std::int64_t>(static_cast<std::size_t>(steps), batch), h_init, c_init);
  const Tensor y = reshape(rows, {steps, batch, rows.size(1)});
  Tensor output = batched ? (opts.batch_first() ? transpose(y, 0, 1) : y) : squeeze(y, 1);
  if (!batched) {
    h_n = squeeze(h_n, 1);
    if (c_n.defined()) c_n = squeeze(c_n, 1);
  }
  return {std::move(output), std::move(h_n), std::move(c_n)};
}

std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> RNNImplBase::run_packed(
    const utils::rnn::PackedSequence& input, const Tensor& h0, const Tensor& c0) {
  const char* name = mode_name(mode_);
  const RNNOptionsBase& opts = options_base_;
  const std::int64_t out_size = proj_size_ > 0 ? proj_size_ : opts.hidden_size();
  LG_CHECK(input.defined(), name, ": the PackedSequence is empty (default-constructed)");
  const Tensor& data = input.data();
  LG_CHECK_SHAPE(data.dim() == 2 && data.size(1) == opts.input_size(), name,
                 ": expected packed data of shape (rows, input_size = ", opts.input_size(),
                 "), got ", data.shape());
  check_like_parameters(name, "input", data, weights_[0].w_ih);
  const std::vector<std::int64_t>& batch_sizes = input.batch_size_list();
  const std::int64_t batch = batch_sizes[0];
  // The states in the batch's original order, rows sorted by length as the data's.
  const auto sorted = [&](const Tensor& state) {
    return input.sorted_indices().defined() ? index_select(state, 1, input.sorted_indices())
                                            : state;
  };
  const auto unsorted = [&](const Tensor& state) {
    return state.defined() && input.unsorted_indices().defined()
               ? index_select(state, 1, input.unsorted_indices())
               : state;
  };
  const Shape batch_shape{batch, opts.input_size()};
  const Tensor h_init = sorted(initial_state(h0, "h0", out_size, batch, true, batch_shape, data));
  const Tensor c_init =
      mode_ == Mode::LSTM
          ? sorted(initial_state(c0, "c0", opts.hidden_size(), batch, true, batch_shape, data))
          : Tensor();
  auto [rows, h_n, c_n] = layers(data, batch_sizes, h_init, c_init);
  return {utils::rnn::PackedSequence(rows, input.batch_sizes(), input.sorted_indices(),
                                     input.unsorted_indices()),
          unsorted(h_n), unsorted(c_n)};
}

RNNImpl::RNNImpl(std::int64_t input_size, std::int64_t hidden_size)
    : RNNImpl(RNNOptions(input_size, hidden_size)) {}

RNNImpl::RNNImpl(const RNNOptions& opts)
    : RNNImplBase("RNN",
                  checked_nonlinearity("RNN", opts.nonlinearity()) == init::Nonlinearity::ReLU
                      ? Mode::RNNReLU
                      : Mode::RNNTanh,
                  RNNOptionsBase(opts)),
      options(opts) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  LG_PROFILE_OP(input);
  auto [output, h_n, c_n] = run(input, hx, Tensor());
  return {std::move(output), std::move(h_n)};
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const Tensor& hx) {
  LG_PROFILE_OP(packed_input.data());
  auto [output, h_n, c_n] = run_packed(packed_input, hx, Tensor());
  return {std::move(output), std::move(h_n)};
}

LSTMImpl::LSTMImpl(std::int64_t input_size, std::int64_t hidden_size)
    : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}

LSTMImpl::LSTMImpl(const LSTMOptions& opts)
    : RNNImplBase("LSTM", Mode::LSTM, RNNOptionsBase(opts), opts.proj_size()), options(opts) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  LG_PROFILE_OP(input);
  Tensor h0, c0;
  if (hx_opt) {
    std::tie(h0, c0) = *hx_opt;
    LG_CHECK(h0.defined() == c0.defined(), "LSTM: expected both h0 and c0 or neither, got ",
             h0.defined() ? "h0 only" : "c0 only");
  }
  auto [output, h_n, c_n] = run(input, h0, c0);
  return {std::move(output), {std::move(h_n), std::move(c_n)}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>>
LSTMImpl::forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                    std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  LG_PROFILE_OP(packed_input.data());
  Tensor h0, c0;
  if (hx_opt) {
    std::tie(h0, c0) = *hx_opt;
    LG_CHECK(h0.defined() == c0.defined(), "LSTM: expected both h0 and c0 or neither, got ",
             h0.defined() ? "h0 only" : "c0 only");
  }
  auto [output, h_n, c_n] = run_packed(packed_input, h0, c0);
  return {std::move(output), {std::move(h_n), std::move(c_n)}};
}

GRUImpl::GRUImpl(std::int64_t input_size, std::int64_t hidden_size)
    : GRUImpl(GRUOptions(input_size, hidden_size)) {}

GRUImpl::GRUImpl(const GRUOptions& opts)
    : RNNImplBase("GRU", Mode::GRU, RNNOptionsBase(opts)), options(opts) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  LG_PROFILE_OP(input);
  auto [output, h_n, c_n] = run(input, hx, Tensor());
  return {std::move(output), std::move(h_n)};
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const Tensor& hx) {
  LG_PROFILE_OP(packed_input.data());
  auto [output, h_n, c_n] = run_packed(packed_input, hx, Tensor());
  return {std::move(output), std::move(h_n)};
}

// ---- Cells ------------------------------------------------------------------------------------

RNNCellImplBase::RNNCellImplBase(const char* name, const RNNCellOptionsBase& opts,
                                 std::int64_t gates)
    : Module(name), options_base_(opts) {
  LG_CHECK(opts.input_size() >= 0, name, ": input_size must be non-negative, got ",
           opts.input_size());
  LG_CHECK(opts.hidden_size() > 0, name, ": hidden_size must be positive, got ",
           opts.hidden_size());
  const std::int64_t rows = checked_mul(gates, opts.hidden_size(), name);
  weight_ih = register_parameter("weight_ih", empty({rows, opts.input_size()}));
  weight_hh = register_parameter("weight_hh", empty({rows, opts.hidden_size()}));
  if (opts.bias()) {
    bias_ih = register_parameter("bias_ih", empty({rows}));
    bias_hh = register_parameter("bias_hh", empty({rows}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  uniform_all(parameters(/*recurse=*/false), options_base_.hidden_size());
}

std::string RNNCellImplBase::extra_repr() const {
  std::ostringstream out;
  out << options_base_.input_size() << ", " << options_base_.hidden_size();
  if (!options_base_.bias()) out << ", bias=false";
  return out.str();
}

bool RNNCellImplBase::check_input(const Tensor& input, const Tensor& state,
                                  const char* state_name) const {
  const std::string module_name = name();
  const char* module = module_name.c_str();
  LG_CHECK(input.defined(), module, ": input is an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 1 || input.dim() == 2, module,
                 ": expected input of 2 dims (batched) or 1 (unbatched), got ", input.shape());
  LG_CHECK_SHAPE(input.size(-1) == options_base_.input_size(), module,
                 ": expected input with input_size = ", options_base_.input_size(),
                 " features in its last dim, got ", input.shape());
  check_like_parameters(module, "input", input, weight_ih);
  const bool batched = input.dim() == 2;
  if (state.defined()) {
    const Shape want = batched ? Shape{input.size(0), options_base_.hidden_size()}
                               : Shape{options_base_.hidden_size()};
    LG_CHECK_SHAPE(state.shape() == want, module, ": expected ", state_name, " of shape ", want,
                   " for input ", input.shape(), ", got ", state.shape());
    check_like_parameters(module, state_name, state, weight_ih);
  }
  return batched;
}

namespace {

// The cells' common start: input and state as (N, features) (a state undefined: zeros).
Tensor batched(const Tensor& t, bool is_batched) {
  return is_batched ? t : unsqueeze(t, 0);
}
Tensor state_or_zeros(const Tensor& state, const Tensor& x, std::int64_t hidden) {
  return state.defined() ? state : zeros({x.size(0), hidden}, x.options());
}
Tensor unbatched(const Tensor& t, bool is_batched) {
  return is_batched ? t : squeeze(t, 0);
}

}  // namespace

RNNCellImpl::RNNCellImpl(std::int64_t input_size, std::int64_t hidden_size)
    : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& opts)
    : RNNCellImplBase("RNNCell", RNNCellOptionsBase(opts), 1), options(opts) {
  checked_nonlinearity("RNNCell", opts.nonlinearity());
}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  LG_PROFILE_OP(input);
  const bool is_batched = check_input(input, hx, "hx");
  const Tensor x = batched(input, is_batched);
  const Tensor h =
      state_or_zeros(hx.defined() ? batched(hx, is_batched) : Tensor(), x, options.hidden_size());
  const Tensor out = options.nonlinearity() == init::Nonlinearity::ReLU
                         ? rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                         : rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched(out, is_batched);
}

std::string RNNCellImpl::extra_repr() const {
  std::string repr = RNNCellImplBase::extra_repr();
  if (options.nonlinearity() == init::Nonlinearity::ReLU) repr += ", nonlinearity=relu";
  return repr;
}

LSTMCellImpl::LSTMCellImpl(std::int64_t input_size, std::int64_t hidden_size)
    : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& opts)
    : RNNCellImplBase("LSTMCell", RNNCellOptionsBase(opts), 4), options(opts) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  LG_PROFILE_OP(input);
  Tensor h0, c0;
  if (hx_opt) {
    std::tie(h0, c0) = *hx_opt;
    LG_CHECK(h0.defined() == c0.defined(), "LSTMCell: expected both h and c or neither, got ",
             h0.defined() ? "h only" : "c only");
  }
  const bool is_batched = check_input(input, h0, "h");
  check_input(input, c0, "c");
  const Tensor x = batched(input, is_batched);
  const std::int64_t hidden = options.hidden_size();
  const Tensor h = state_or_zeros(h0.defined() ? batched(h0, is_batched) : Tensor(), x, hidden);
  const Tensor c = state_or_zeros(c0.defined() ? batched(c0, is_batched) : Tensor(), x, hidden);
  auto [h_next, c_next] = lstm_cell(x, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
  return {unbatched(h_next, is_batched), unbatched(c_next, is_batched)};
}

GRUCellImpl::GRUCellImpl(std::int64_t input_size, std::int64_t hidden_size)
    : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& opts)
    : RNNCellImplBase("GRUCell", RNNCellOptionsBase(opts), 3), options(opts) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  LG_PROFILE_OP(input);
  const bool is_batched = check_input(input, hx, "hx");
  const Tensor x = batched(input, is_batched);
  const std::int64_t hidden = options.hidden_size();
  const Tensor h = state_or_zeros(hx.defined() ? batched(hx, is_batched) : Tensor(), x, hidden);
  const Tensor out = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched(out, is_batched);
}

}  // namespace leangrad::nn

namespace leangrad {

namespace {

// The operands of a functional cell of `gates` gates: input (N, I), hx (N, H), w_ih (G H, I),
// w_hh (G H, H) and the biases (G H) when defined, one dtype and device. Returns H.
std::int64_t check_cell(const char* op, std::int64_t gates, const Tensor& input, const Tensor& hx,
                        const Tensor& w_ih, const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                        const std::optional<Tensor>& b_hh) {
  std::vector<Tensor> operands{input, hx, w_ih, w_hh};
  const char* names[] = {"input", "hx", "w_ih", "w_hh", "b_ih", "b_hh"};
  for (const std::optional<Tensor>* bias : {&b_ih, &b_hh})
    operands.push_back(bias->has_value() ? **bias : Tensor());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Tensor& t = operands[i];
    if (i >= 4 && !t.defined()) continue;  // no bias
    LG_CHECK(t.defined(), op, ": ", names[i], " is an undefined Tensor()");
    LG_CHECK_DTYPE(t.dtype() == input.dtype(), op, ": ", names[i], " is ", t.dtype(),
                   " but input is ", input.dtype());
    LG_CHECK_DEVICE(t.device() == input.device(), op, ": ", names[i], " is on ", t.device(),
                    " but input is on ", input.device());
  }
  LG_CHECK_SHAPE(input.dim() == 2, op, ": expected input (N, input_size), got shape ",
                 input.shape());
  LG_CHECK_SHAPE(w_hh.dim() == 2 && w_hh.size(0) == gates * w_hh.size(1), op, ": expected w_hh (",
                 gates, " hidden_size, hidden_size), got shape ", w_hh.shape());
  const std::int64_t hidden = w_hh.size(1);
  LG_CHECK_SHAPE(w_ih.dim() == 2 && w_ih.size(0) == gates * hidden && w_ih.size(1) == input.size(1),
                 op, ": expected w_ih (", gates * hidden, ", ", input.size(1), "), got shape ",
                 w_ih.shape());
  LG_CHECK_SHAPE(hx.shape() == Shape({input.size(0), hidden}), op, ": expected a state (",
                 input.size(0), ", ", hidden, "), got shape ", hx.shape());
  for (std::size_t i = 4; i < operands.size(); ++i) {
    LG_CHECK_SHAPE(!operands[i].defined() || operands[i].shape() == Shape({gates * hidden}), op,
                   ": expected ", names[i], " (", gates * hidden, "), got shape ",
                   operands[i].shape());
  }
  return hidden;
}

Tensor bias_or_none(const std::optional<Tensor>& bias) {
  return bias.value_or(Tensor());
}

// The sum of the input's and the state's parts of the gates (biases included).
Tensor cell_gates(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                  const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return add(linear(input, w_ih, bias_or_none(b_ih)), linear(hx, w_hh, bias_or_none(b_hh)));
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih,
                                     const std::optional<Tensor>& b_hh) {
  LG_PROFILE_OP(input);
  const char* op = "lstm_cell";
  LG_CHECK(hx.size() == 2, op, ": expected the state {h, c}, got ", hx.size(), " tensors");
  const std::int64_t hidden = check_cell(op, 4, input, hx[0], w_ih, w_hh, b_ih, b_hh);
  LG_CHECK(hx[1].defined(), op, ": c is an undefined Tensor()");
  LG_CHECK_SHAPE(hx[1].shape() == hx[0].shape(), op, ": expected c of h's shape ", hx[0].shape(),
                 ", got ", hx[1].shape());
  LG_CHECK_DTYPE(hx[1].dtype() == input.dtype() && hx[1].device() == input.device(), op, ": c is ",
                 hx[1].dtype(), " on ", hx[1].device(), " but input is ", input.dtype(), " on ",
                 input.device());
  return nn::lstm_gates(cell_gates(input, hx[0], w_ih, w_hh, b_ih, b_hh), hx[1], hidden);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  LG_PROFILE_OP(input);
  const std::int64_t hidden = check_cell("gru_cell", 3, input, hx, w_ih, w_hh, b_ih, b_hh);
  // The new gate scales only the state's part by the reset gate: the parts stay apart.
  return nn::gru_gates(linear(input, w_ih, bias_or_none(b_ih)),
                       linear(hx, w_hh, bias_or_none(b_hh)), hx, hidden);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  LG_PROFILE_OP(input);
  check_cell("rnn_tanh_cell", 1, input, hx, w_ih, w_hh, b_ih, b_hh);
  return tanh(cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh));
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  LG_PROFILE_OP(input);
  check_cell("rnn_relu_cell", 1, input, hx, w_ih, w_hh, b_ih, b_hh);
  return relu(cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh));
}

}  // namespace leangrad
