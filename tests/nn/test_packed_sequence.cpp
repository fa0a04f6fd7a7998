// PackedSequence (nn/packed_sequence.h) and the recurrent modules' forward_with_packed_input:
// against PyTorch 1.13 (tests/data/packed_sequence.json, written by make_packed_sequence.py:
// a padded batch of unequal lengths packed, run, unpacked; outputs, final states and every
// gradient, in float64), against plain loops over the padded layout, against each sequence run
// alone, and by finite differences. Bad arguments: the PackedSequence table of
// tests/misuse/test_misuse_rnn.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/packed_sequence.h>
#include <leangrad/nn/rnn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/rnn_testing.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using nn::utils::rnn::pack_padded_sequence;
using nn::utils::rnn::pack_sequence;
using nn::utils::rnn::PackedSequence;
using nn::utils::rnn::pad_packed_sequence;
using nn::utils::rnn::pad_sequence;
using test::expect_close;

std::vector<std::int64_t> int64_values(const Tensor& t) {
  std::vector<std::int64_t> out;
  for (const double v : test::to_vector(t))
    out.push_back(static_cast<std::int64_t>(v));
  return out;
}

TEST(PackedRecurrentModules, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("packed_sequence.json")) {
    const auto& p = c.params;
    SCOPED_TRACE(c.name);
    ++checked;
    const std::string kind = p.at("kind").get<std::string>();
    const std::int64_t input_size = p.at("input_size").get<std::int64_t>();
    const std::int64_t hidden = p.at("hidden_size").get<std::int64_t>();
    const bool batch_first = p.at("batch_first").get<bool>();
    const auto configure = [&](auto options) {
      return options.num_layers(p.at("num_layers").get<std::int64_t>())
          .batch_first(batch_first)
          .bidirectional(p.at("bidirectional").get<bool>());
    };
    Tensor input = c.at("input").clone().requires_grad_();
    const Tensor h0 = test::state_leaf(c, "h0"), c0 = test::state_leaf(c, "c0");
    const PackedSequence packed = pack_padded_sequence(input, c.at("lengths"), batch_first,
                                                       p.at("enforce_sorted").get<bool>());
    EXPECT_EQ(int64_values(packed.batch_sizes()), int64_values(c.at("batch_sizes")));
    // Sorted batches pack in the given order, so the rows are PyTorch's; an unsorted batch's
    // ties may be ordered otherwise (torch.sort is not stable), which the unpacked results do not
    // see.
    if (p.at("enforce_sorted").get<bool>()) {
      EXPECT_TRUE(test::all_close(packed.data(), test::to_vector(c.at("packed_data")), 0, 0));
    }
    PackedSequence out;
    Tensor h_n, c_n;
    std::vector<Tensor> parameters;
    if (kind == "rnn") {
      nn::RNN rnn(configure(nn::RNNOptions(input_size, hidden))
                      .nonlinearity(p.at("nonlinearity").get<std::string>() == "relu"
                                        ? nn::init::Nonlinearity::ReLU
                                        : nn::init::Nonlinearity::Tanh));
      test::load_parameters(*rnn, c);
      std::tie(out, h_n) = rnn->forward_with_packed_input(packed, h0);
      parameters = rnn->all_weights();
    } else if (kind == "lstm") {
      nn::LSTM lstm(configure(nn::LSTMOptions(input_size, hidden))
                        .proj_size(p.at("proj_size").get<std::int64_t>()));
      test::load_parameters(*lstm, c);
      std::tuple<Tensor, Tensor> state;
      if (h0.defined())
        std::tie(out, state) = lstm->forward_with_packed_input(packed, std::make_tuple(h0, c0));
      else
        std::tie(out, state) = lstm->forward_with_packed_input(packed);
      std::tie(h_n, c_n) = state;
      parameters = lstm->all_weights();
    } else {
      nn::GRU gru(configure(nn::GRUOptions(input_size, hidden)));
      test::load_parameters(*gru, c);
      std::tie(out, h_n) = gru->forward_with_packed_input(packed, h0);
      parameters = gru->all_weights();
    }
    auto [output, lengths] = pad_packed_sequence(out, batch_first);
    EXPECT_EQ(int64_values(lengths), int64_values(c.at("lengths")));
    const double units = test::bound_units(p, output.size(batch_first ? 1 : 0));
    expect_close(output, c.at("output"), units, "output");
    expect_close(h_n, c.at("h_n"), units, "h_n");
    if (kind == "lstm") expect_close(c_n, c.at("c_n"), units, "c_n");
    test::case_loss(c, output, h_n, c_n).backward();
    expect_close(input.grad(), c.at("d.input"), units, "the input's gradient");
    if (h0.defined()) expect_close(h0.grad(), c.at("d.h0"), units, "h0's gradient");
    if (c0.defined()) expect_close(c0.grad(), c.at("d.c0"), units, "c0's gradient");
    const auto names = p.at("parameter_names").get<std::vector<std::string>>();
    ASSERT_EQ(parameters.size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i)
      expect_close(parameters[i].grad(), c.at("d." + names[i]), units, "gradient of " + names[i]);
  }
  EXPECT_EQ(checked, 6);
}

// Packing reads each sequence's first `length` steps in step-major order, longest first;
// unpacking puts them back and fills the rest: checked exactly against loops over the padded
// (T, N, F) layout, both ways round and with a total_length.
TEST(PackedSequence, PackAndPadAreTheirLoops) {
  const std::int64_t steps = 5, batch = 4, features = 2;
  const std::vector<std::int64_t> lengths{3, 5, 1, 3};
  const Tensor x = test::uniform_input({steps, batch, features}, -1, 1, 500).detach();
  const std::vector<double> xv = test::to_vector(x);
  const PackedSequence packed = pack_padded_sequence(x, tensor(lengths), false, false);
  // Longest first, ties in batch order: 1, 0, 3, 2.
  EXPECT_EQ(int64_values(packed.sorted_indices()), (std::vector<std::int64_t>{1, 0, 3, 2}));
  EXPECT_EQ(int64_values(packed.unsorted_indices()), (std::vector<std::int64_t>{1, 0, 3, 2}));
  EXPECT_EQ(int64_values(packed.batch_sizes()), (std::vector<std::int64_t>{4, 3, 3, 1, 1}));
  const std::vector<std::int64_t> order{1, 0, 3, 2};
  std::vector<double> rows;
  for (std::int64_t t = 0; t < steps; ++t)
    for (const std::int64_t i : order)
      if (t < lengths[static_cast<std::size_t>(i)])
        for (std::int64_t f = 0; f < features; ++f)
          rows.push_back(xv[static_cast<std::size_t>((t * batch + i) * features + f)]);
  EXPECT_TRUE(test::all_close(packed.data(), rows, 0, 0));
  for (const bool batch_first : {false, true}) {
    SCOPED_TRACE(batch_first ? "batch first" : "sequence first");
    auto [padded, out_lengths] = pad_packed_sequence(packed, batch_first, -7.0, 6);
    EXPECT_EQ(int64_values(out_lengths), lengths);
    std::vector<double> expected;
    const auto at = [&](std::int64_t t, std::int64_t i, std::int64_t f) {
      return t < lengths[static_cast<std::size_t>(i)]
                 ? xv[static_cast<std::size_t>((t * batch + i) * features + f)]
                 : -7.0;
    };
    for (std::int64_t a = 0; a < (batch_first ? batch : 6); ++a)
      for (std::int64_t b = 0; b < (batch_first ? 6 : batch); ++b)
        for (std::int64_t f = 0; f < features; ++f)
          expected.push_back(batch_first ? at(b, a, f) : at(a, b, f));
    EXPECT_EQ(padded.shape(),
              batch_first ? (Shape{batch, 6, features}) : (Shape{6, batch, features}));
    EXPECT_TRUE(test::all_close(padded, expected, 0, 0));
  }
}

// The gradient of pack then pad is the upstream gradient where a sequence has steps and 0 in
// its padding (nothing of padding_value reaches the input).
TEST(PackedSequence, GradientsSkipThePadding) {
  const Tensor x = test::uniform_input({2, 4, 3}, -1, 1, 501);  // batch first: (N, T, F)
  const std::vector<std::int64_t> lengths{2, 4};
  auto [padded, unused] =
      pad_packed_sequence(pack_padded_sequence(x, tensor(lengths), true, false), true, 5.0);
  const Tensor g = test::uniform_input({2, 4, 3}, -1, 1, 502).detach();
  sum(mul(padded, g)).backward();
  std::vector<double> expected = test::to_vector(g);
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const std::size_t sequence = k / 12, step = (k / 3) % 4;
    if (static_cast<std::int64_t>(step) >= lengths[sequence]) expected[k] = 0;
  }
  EXPECT_TRUE(test::all_close(x.grad(), expected, 0, 0));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        const PackedSequence packed =
            pack_padded_sequence(in[0], tensor<std::int64_t>({2, 4}), true, false);
        return std::get<0>(pad_packed_sequence(packed, true, 1.5)).pow(2.0);
      },
      {test::uniform_input({2, 4, 3}, -1, 1, 503)}));
}

TEST(PackedSequence, PadSequenceAndPackSequence) {
  const Tensor a = test::uniform_input({3, 2}, -1, 1, 510).detach();
  const Tensor b = test::uniform_input({1, 2}, -1, 1, 511).detach();
  const Tensor c = test::uniform_input({2, 2}, -1, 1, 512).detach();
  const Tensor padded = pad_sequence({a, b, c}, /*batch_first=*/true, 9.0);
  ASSERT_EQ(padded.shape(), (Shape{3, 3, 2}));
  std::vector<double> expected;
  for (const Tensor& s : {a, b, c}) {
    const std::vector<double> v = test::to_vector(s);
    for (std::size_t k = 0; k < 6; ++k)
      expected.push_back(k < v.size() ? v[k] : 9.0);
  }
  EXPECT_TRUE(test::all_close(padded, expected, 0, 0));
  EXPECT_TRUE(test::all_close(pad_sequence({a, b, c}, false, 9.0),
                              test::to_vector(padded.transpose(0, 1)), 0, 0));
  const PackedSequence packed = pack_sequence({a, b, c}, /*enforce_sorted=*/false);
  const PackedSequence by_padding =
      pack_padded_sequence(pad_sequence({a, b, c}), tensor<std::int64_t>({3, 1, 2}), false, false);
  EXPECT_TRUE(test::all_close(packed.data(), test::to_vector(by_padding.data()), 0, 0));
  EXPECT_EQ(int64_values(packed.batch_sizes()), (std::vector<std::int64_t>{3, 2, 1}));
  // The step rows of a, c, b in turn.
  const std::vector<double> av = test::to_vector(a), bv = test::to_vector(b),
                            cv = test::to_vector(c);
  EXPECT_TRUE(test::all_close(
      packed.data(),
      {av[0], av[1], cv[0], cv[1], bv[0], bv[1], av[2], av[3], cv[2], cv[3], av[4], av[5]}, 0, 0));
}

// A packed batch runs each sequence as if alone: the outputs and final states of a two-layer
// bidirectional LSTM over a packed batch equal the same LSTM's over each sequence by itself
// (float64; another batch size may sum a matrix product in another order, hence the bound).
TEST(PackedRecurrentModules, EachSequenceAsIfAlone) {
  manual_seed(9);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  lstm->to(kFloat64);
  const std::vector<std::int64_t> lengths{2, 5, 3};
  const Tensor x = randn({3, 5, 3}, kFloat64);
  auto [packed_out, state] =
      lstm->forward_with_packed_input(pack_padded_sequence(x, tensor(lengths), true, false));
  const Tensor output = std::get<0>(pad_packed_sequence(packed_out, true));
  const double units = 64.0 * 4 * 5 * 2;
  for (std::int64_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(::testing::Message() << "sequence " << i);
    const std::int64_t length = lengths[static_cast<std::size_t>(i)];
    const Tensor alone = narrow(narrow(x, 0, i, 1), 1, 0, length);
    auto [out_alone, state_alone] = lstm(alone);
    expect_close(narrow(narrow(output, 0, i, 1), 1, 0, length), out_alone, units, "output");
    expect_close(narrow(std::get<0>(state), 1, i, 1), std::get<0>(state_alone), units, "h_n");
    expect_close(narrow(std::get<1>(state), 1, i, 1), std::get<1>(state_alone), units, "c_n");
    if (length < 5) {  // the padding of the output is zeros
      EXPECT_TRUE(test::all_close(
          narrow(narrow(output, 0, i, 1), 1, length, 5 - length),
          std::vector<double>(static_cast<std::size_t>((5 - length) * 8), 0.0), 0, 0));
    }
  }
}

TEST(PackedRecurrentModules, GradientsByFiniteDifferences) {
  manual_seed(10);
  nn::GRU gru(nn::GRUOptions(2, 3).bidirectional(true));
  gru->to(kFloat64);
  const Tensor x = test::uniform_input({4, 3, 2}, -1, 1, 520);
  const Tensor h0 = test::uniform_input({2, 3, 3}, -1, 1, 521);
  EXPECT_TRUE(test::gradcheck(
      [&](const std::vector<Tensor>& in) {
        const PackedSequence packed =
            pack_padded_sequence(in[0], tensor<std::int64_t>({2, 4, 1}), false, false);
        auto [out, h_n] = gru->forward_with_packed_input(packed, in[1]);
        return cat({out.data().flatten(), h_n.flatten()}, 0);
      },
      {x, h0}));
}

TEST(PackedSequence, MovesToADevice) {
  const PackedSequence packed =
      pack_padded_sequence(randn({3, 2, 2}), tensor<std::int64_t>({2, 3}), false, false);
  const PackedSequence moved = packed.to(Device::cpu());
  EXPECT_FALSE(moved.is_cuda());
  EXPECT_TRUE(moved.batch_sizes().device().is_cpu());
  EXPECT_TRUE(test::all_close(moved.data(), test::to_vector(packed.data()), 0, 0));
  EXPECT_EQ(int64_values(moved.unsorted_indices()), (std::vector<std::int64_t>{1, 0}));
  EXPECT_FALSE(PackedSequence().defined());
}

}  // namespace
}  // namespace leangrad
