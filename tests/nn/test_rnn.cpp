// nn::RNN, nn::LSTM, nn::GRU and their cells against PyTorch 1.13 (tests/data/rnn.json, written
// by make_rnn.py): outputs, final states and the gradients of the input, the initial states and
// every parameter, in float64, for tanh and relu RNNs, LSTMs with and without projections and
// biases, GRUs, one and two layers and directions, sequence first, batch first and unbatched;
// the parameters' names and order are PyTorch's. Then properties no reference covers: the
// initialisation's bound, an LSTM equal to its cell stepped by hand, dropout between layers only
// and only in training. Bad options and inputs: the Recurrent table of
// tests/misuse/test_misuse_rnn.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/rnn.h>
#include "testing/reference_data.h"
#include "testing/rnn_testing.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

using test::bound_units;
using test::case_loss;
using test::expect_close;
using test::load_parameters;
using test::state_leaf;

const std::vector<test::ReferenceCase>& cases() {
  static const std::vector<test::ReferenceCase> all = test::load_reference("rnn.json");
  return all;
}

TEST(RecurrentModules, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    const auto& p = c.params;
    const std::string kind = p.at("kind").get<std::string>();
    if (kind != "rnn" && kind != "lstm" && kind != "gru") continue;
    SCOPED_TRACE(c.name);
    ++checked;
    const std::int64_t input_size = p.at("input_size").get<std::int64_t>();
    const std::int64_t hidden = p.at("hidden_size").get<std::int64_t>();
    const auto configure = [&](auto options) {
      return options.num_layers(p.at("num_layers").get<std::int64_t>())
          .bias(p.at("bias").get<bool>())
          .batch_first(p.at("batch_first").get<bool>())
          .bidirectional(p.at("bidirectional").get<bool>());
    };
    Tensor input = c.at("input").clone().requires_grad_();
    const Tensor h0 = state_leaf(c, "h0"), c0 = state_leaf(c, "c0");
    Tensor output, h_n, c_n;
    std::vector<Tensor> parameters;
    if (kind == "rnn") {
      nn::RNN rnn(configure(nn::RNNOptions(input_size, hidden))
                      .nonlinearity(p.at("nonlinearity").get<std::string>() == "relu"
                                        ? nn::init::Nonlinearity::ReLU
                                        : nn::init::Nonlinearity::Tanh));
      load_parameters(*rnn, c);
      std::tie(output, h_n) = rnn(input, h0);
      parameters = rnn->all_weights();
    } else if (kind == "lstm") {
      nn::LSTM lstm(configure(nn::LSTMOptions(input_size, hidden))
                        .proj_size(p.at("proj_size").get<std::int64_t>()));
      load_parameters(*lstm, c);
      std::tuple<Tensor, Tensor> state;
      if (h0.defined())
        std::tie(output, state) = lstm(input, std::make_tuple(h0, c0));
      else
        std::tie(output, state) = lstm(input);
      std::tie(h_n, c_n) = state;
      parameters = lstm->all_weights();
    } else {
      nn::GRU gru(configure(nn::GRUOptions(input_size, hidden)));
      load_parameters(*gru, c);
      std::tie(output, h_n) = gru(input, h0);
      parameters = gru->all_weights();
    }
    const bool batch_first = p.at("batch_first").get<bool>() && input.dim() == 3;
    const double units = bound_units(p, input.size(batch_first ? 1 : 0));
    expect_close(output, c.at("output"), units, "output");
    expect_close(h_n, c.at("h_n"), units, "h_n");
    if (kind == "lstm") expect_close(c_n, c.at("c_n"), units, "c_n");
    case_loss(c, output, h_n, c_n).backward();
    expect_close(input.grad(), c.at("d.input"), units, "the input's gradient");
    if (h0.defined()) expect_close(h0.grad(), c.at("d.h0"), units, "h0's gradient");
    if (c0.defined()) expect_close(c0.grad(), c.at("d.c0"), units, "c0's gradient");
    const auto names = p.at("parameter_names").get<std::vector<std::string>>();
    ASSERT_EQ(parameters.size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i)
      expect_close(parameters[i].grad(), c.at("d." + names[i]), units, "gradient of " + names[i]);
  }
  EXPECT_EQ(checked, 9);
}

TEST(RecurrentCells, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    const auto& p = c.params;
    const std::string kind = p.at("kind").get<std::string>();
    if (kind.find("cell") == std::string::npos) continue;
    SCOPED_TRACE(c.name);
    ++checked;
    const std::int64_t input_size = p.at("input_size").get<std::int64_t>();
    const std::int64_t hidden = p.at("hidden_size").get<std::int64_t>();
    Tensor input = c.at("input").clone().requires_grad_();
    const Tensor h0 = state_leaf(c, "h0"), c0 = state_leaf(c, "c0");
    Tensor h, cell_state;
    std::shared_ptr<nn::Module> module;
    if (kind == "rnn_cell" || kind == "rnn_cell_relu") {
      nn::RNNCell cell(nn::RNNCellOptions(input_size, hidden)
                           .nonlinearity(kind == "rnn_cell_relu" ? nn::init::Nonlinearity::ReLU
                                                                 : nn::init::Nonlinearity::Tanh));
      load_parameters(*cell, c);
      h = cell(input, h0);
      module = cell.ptr();
    } else if (kind == "lstm_cell") {
      nn::LSTMCell cell(input_size, hidden);
      load_parameters(*cell, c);
      if (h0.defined())
        std::tie(h, cell_state) = cell(input, std::make_tuple(h0, c0));
      else
        std::tie(h, cell_state) = cell(input);
      module = cell.ptr();
    } else {
      nn::GRUCell cell(input_size, hidden);
      load_parameters(*cell, c);
      h = cell(input, h0);
      module = cell.ptr();
    }
    const double units = bound_units(p, 1);
    expect_close(h, c.at("h_n"), units, "h'");
    if (kind == "lstm_cell") expect_close(cell_state, c.at("c_n"), units, "c'");
    case_loss(c, Tensor(), h, cell_state).backward();
    expect_close(input.grad(), c.at("d.input"), units, "the input's gradient");
    if (h0.defined()) expect_close(h0.grad(), c.at("d.h0"), units, "h's gradient");
    if (c0.defined()) expect_close(c0.grad(), c.at("d.c0"), units, "c's gradient");
    for (auto& item : module->named_parameters())
      expect_close(item.value().grad(), c.at("d." + item.key()), units,
                   "gradient of " + item.key());
  }
  EXPECT_EQ(checked, 6);
}

// PyTorch's initialisation: every parameter within 1/sqrt(hidden_size), spread over the range.
TEST(RecurrentModules, InitialisationBound) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(10, 16).num_layers(2).bidirectional(true).proj_size(4));
  nn::GRUCell cell(10, 25);
  const auto check = [](const std::vector<Tensor>& tensors, double bound) {
    double lo = 0, hi = 0;
    for (const Tensor& t : tensors) {
      for (double v : test::to_vector(t)) {
        ASSERT_LE(std::abs(v), bound);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
    // Thousands of uniform draws come within a tenth of both ends.
    EXPECT_LT(lo, -0.9 * bound);
    EXPECT_GT(hi, 0.9 * bound);
  };
  check(lstm->all_weights(), 0.25);
  EXPECT_EQ(lstm->all_weights().size(), 20u);
  check(cell->parameters(), 0.2);
}

// An LSTM layer is its cell stepped over the sequence: the same weights give the same outputs
// and final states (float64; the two sum the biases in another order, hence the bound).
TEST(RecurrentModules, LSTMEqualsItsCellStepped) {
  manual_seed(4);
  nn::LSTM lstm(nn::LSTMOptions(3, 5));
  nn::LSTMCell cell(3, 5);
  lstm->to(kFloat64);
  cell->to(kFloat64);
  {
    NoGradGuard no_grad;
    cell->weight_ih.copy_(lstm->named_parameters()["weight_ih_l0"]);
    cell->weight_hh.copy_(lstm->named_parameters()["weight_hh_l0"]);
    cell->bias_ih.copy_(lstm->named_parameters()["bias_ih_l0"]);
    cell->bias_hh.copy_(lstm->named_parameters()["bias_hh_l0"]);
  }
  const Tensor x = randn({6, 2, 3}, kFloat64);
  auto [output, state] = lstm(x);
  Tensor h = zeros({2, 5}, kFloat64), c = zeros({2, 5}, kFloat64);
  for (std::int64_t t = 0; t < 6; ++t) {
    std::tie(h, c) = cell(select(x, 0, t), std::make_tuple(h, c));
    expect_close(h, select(output, 0, t), 64 * 5 * 6, "step " + std::to_string(t));
  }
  expect_close(h, select(std::get<0>(state), 0, 0), 64 * 5 * 6, "h_n");
  expect_close(c, select(std::get<1>(state), 0, 0), 64 * 5 * 6, "c_n");
}

// Dropout acts between layers, in training only: one layer's output never changes; two layers'
// change in training and equal the dropout-free module's in eval mode.
TEST(RecurrentModules, DropoutBetweenLayersInTrainingOnly) {
  manual_seed(5);
  const Tensor x = randn({4, 3, 6});
  nn::GRU one(nn::GRUOptions(6, 8).dropout(0.5));
  nn::GRU plain_one(nn::GRUOptions(6, 8));
  nn::GRU two(nn::GRUOptions(6, 8).num_layers(2).dropout(0.5));
  nn::GRU plain_two(nn::GRUOptions(6, 8).num_layers(2));
  NoGradGuard no_grad;
  for (auto& item : plain_one->named_parameters())
    item.value().copy_(one->named_parameters()[item.key()]);
  for (auto& item : plain_two->named_parameters())
    item.value().copy_(two->named_parameters()[item.key()]);
  const auto output = [&](nn::GRU& gru) { return std::get<0>(gru(x)); };
  EXPECT_TRUE(equal(output(one), output(plain_one)));
  EXPECT_FALSE(equal(output(two), output(plain_two)));
  two->eval();
  EXPECT_TRUE(equal(output(two), output(plain_two)));
}

}  // namespace
}  // namespace leangrad
