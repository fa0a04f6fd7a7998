// A small Transformer encoder learns to reverse sequences of digits: token and position
// embeddings, nn::TransformerEncoder, and a linear head that predicts, at each position i, the
// digit at position L - 1 - i. Only attention can move a digit across the sequence, so the task
// fails unless attention works. Prints the loss as it trains and exits non-zero unless at least
// 95% of the digits of fresh sequences come out right (ctest runs it: examples/CMakeLists.txt).
//   example_transformer_reverse [steps]
#include <leangrad/leangrad.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using namespace leangrad;

constexpr std::int64_t kVocabulary = 10;  // the digits 0..9
constexpr std::int64_t kLength = 8;
constexpr std::int64_t kModel = 32;

struct ReverserImpl : nn::Module {
  ReverserImpl() {
    tokens = register_module("tokens", nn::Embedding(kVocabulary, kModel));
    positions = register_module("positions", nn::Embedding(kLength, kModel));
    encoder = register_module(
        "encoder", nn::TransformerEncoder(
                       nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(kModel, 4)
                                                       .dim_feedforward(64)
                                                       .dropout(0.0)
                                                       .batch_first(true)),
                       2));
    head = register_module("head", nn::Linear(kModel, kVocabulary));
  }
  // (B, L) int64 digits -> (B, L, 10) logits of the reversed sequence.
  Tensor forward(const Tensor& digits) override {
    const Tensor where = arange(static_cast<double>(kLength), TensorOptions().dtype(kInt64));
    return head(encoder(tokens(digits) + positions(where)));
  }
  nn::Embedding tokens{nullptr}, positions{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::Linear head{nullptr};
};
LEANGRAD_MODULE(Reverser);

// A batch of random digit sequences and their reverses, both (B, L) int64.
std::pair<Tensor, Tensor> batch(std::int64_t size) {
  const Tensor digits = randint(0, kVocabulary, {size, kLength}, TensorOptions().dtype(kInt64));
  std::vector<Tensor> columns;  // the last column first
  for (std::int64_t i = kLength - 1; i >= 0; --i)
    columns.push_back(digits.slice(1, i, i + 1));
  return {digits, cat(columns, 1)};
}

int run(int steps) {
  manual_seed(0);
  Reverser model;
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(3e-3));
  for (int step = 1; step <= steps; ++step) {
    auto [digits, reversed] = batch(64);
    optimizer.zero_grad();
    Tensor loss = cross_entropy(model(digits).reshape({-1, kVocabulary}), reversed.reshape({-1}));
    loss.backward();
    optimizer.step();
    if (step % 100 == 0) std::printf("step %d: loss %.4f\n", step, loss.item<double>());
  }
  model->eval();
  NoGradGuard no_grad;
  auto [digits, reversed] = batch(1000);
  const Tensor predicted = model(digits).argmax(-1);
  const double accuracy =
      100.0 * predicted.eq(reversed).to(kInt64).sum().item<double>() / (1000.0 * kLength);
  std::printf("digits reversed correctly: %.2f%%\n", accuracy);
  return accuracy >= 95.0 ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return run(argc > 1 ? std::stoi(argv[1]) : 300);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transformer_reverse: %s\n", e.what());
    return 1;
  }
}
