// An LSTM learns to echo its input a few steps late: at step t of a digit sequence it must name
// the digit it saw at step t - kDelay. Nothing but the recurrent state can carry a digit across
// those steps, so the task fails unless the LSTM's memory (and its backward through time) works.
// Token embeddings, a two-layer nn::LSTM (batch first), a linear head; prints the loss as it
// trains and exits non-zero unless at least 95% of the echoed digits of fresh sequences are right
// (ctest runs it: examples/CMakeLists.txt).
//   example_lstm_delayed_echo [steps]
#include <leangrad/leangrad.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>

using namespace leangrad;

constexpr std::int64_t kVocabulary = 8;
constexpr std::int64_t kLength = 12;
constexpr std::int64_t kDelay = 3;
constexpr std::int64_t kHidden = 48;

struct EchoImpl : nn::Module {
  EchoImpl() {
    tokens = register_module("tokens", nn::Embedding(kVocabulary, 16));
    lstm = register_module("lstm",
                           nn::LSTM(nn::LSTMOptions(16, kHidden).num_layers(2).batch_first(true)));
    head = register_module("head", nn::Linear(kHidden, kVocabulary));
  }
  // (B, L) int64 digits -> (B, L, vocabulary) logits of the digit kDelay steps earlier.
  Tensor forward(const Tensor& digits) override {
    // lstm(x) is (output (B, L, hidden), (h_n, c_n)), as LibTorch's.
    return head(std::get<0>(lstm(tokens(digits))));
  }
  nn::Embedding tokens{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Linear head{nullptr};
};
LEANGRAD_MODULE(Echo);

// A batch of random digit sequences (B, L) and the targets of the steps from kDelay on: the
// digits kDelay steps earlier, (B, L - kDelay).
std::pair<Tensor, Tensor> batch(std::int64_t size) {
  const Tensor digits = randint(0, kVocabulary, {size, kLength}, TensorOptions().dtype(kInt64));
  return {digits, digits.slice(1, 0, kLength - kDelay)};
}

// The logits of the steps that have a target.
Tensor scored(const Tensor& logits) {
  return logits.slice(1, kDelay, kLength);
}

int run(int steps) {
  manual_seed(0);
  Echo model;
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-2));
  for (int step = 1; step <= steps; ++step) {
    auto [digits, echoed] = batch(64);
    optimizer.zero_grad();
    Tensor loss =
        cross_entropy(scored(model(digits)).reshape({-1, kVocabulary}), echoed.reshape({-1}));
    loss.backward();
    optim::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    if (step % 50 == 0) std::printf("step %d: loss %.4f\n", step, loss.item<double>());
  }
  model->eval();
  NoGradGuard no_grad;
  auto [digits, echoed] = batch(1000);
  const Tensor predicted = scored(model(digits)).argmax(-1);
  const double accuracy =
      100.0 * predicted.eq(echoed).to(kInt64).sum().item<double>() / (1000.0 * (kLength - kDelay));
  std::printf("digits echoed correctly: %.2f%%\n", accuracy);
  return accuracy >= 95.0 ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return run(argc > 1 ? std::stoi(argv[1]) : 300);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lstm_delayed_echo: %s\n", e.what());
    return 1;
  }
}
