// A LibTorch program, ported: LibTorch's tutorial custom function (LinearFunction, "Using
// custom autograd function in C++"), checked against the built-in linear; then two things
// LibTorch's C++ frontend does not have and PyTorch has in Python, on the same function:
// saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) that keep every tensor saved for
// backward as a compact copy, and gradient checkpointing (torch.utils.checkpoint), which keeps
// only a block's input and recomputes the rest during backward. Every gradient must be bitwise
// the one of plain training. docs/api-notes.md ("Porting a LibTorch program") lists the lines
// that differ from LibTorch. ctest runs it (examples/CMakeLists.txt); it exits 1 on a failure.
#include <leangrad/leangrad.h>

#include <any>
#include <iostream>
#include <string>
#include <vector>

namespace torch = leangrad;  // LibTorch's names, leangrad's implementation

using torch::autograd::AutogradContext;
using torch::autograd::Function;
using torch::autograd::tensor_list;

// LibTorch's tutorial function, as the tutorial writes it (bias is optional).
class LinearFunction : public Function<LinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) {
      output += bias.unsqueeze(0).expand_as(output);
    }
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto bias = saved[2];

    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) {
      grad_bias = grad_output.sum(0);
    }
    return {grad_input, grad_weight, grad_bias};
  }
};

bool check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok      " : "FAILED  ") << what << std::endl;
  return ok;
}

// A two-layer block built on LinearFunction: (B, 16) -> (B, 16).
struct Block {
  torch::Tensor w1 = (torch::randn({64, 16}) * 0.25).requires_grad_();
  torch::Tensor b1 = torch::zeros({64}).requires_grad_();
  torch::Tensor w2 = (torch::randn({16, 64}) * 0.125).requires_grad_();
  torch::Tensor b2 = torch::zeros({16}).requires_grad_();

  torch::Tensor operator()(const torch::Tensor& x) const {
    return LinearFunction::apply(torch::tanh(LinearFunction::apply(x, w1, b1)), w2, b2);
  }
  std::vector<torch::Tensor> parameters() const { return {w1, b1, w2, b2}; }
  void zero_grad() const {
    for (const auto& p : parameters())
      p.mutable_grad() = torch::Tensor();
  }
};

// The gradients of the block's parameters and of x after backward of sum(block(x)^2).
std::vector<torch::Tensor> gradients(const Block& block, const torch::Tensor& x_value,
                                     bool checkpointed) {
  block.zero_grad();
  torch::Tensor x = x_value.detach().requires_grad_();
  torch::Tensor y;
  if (checkpointed) {
    // LibTorch has no checkpoint; PyTorch: y = torch.utils.checkpoint.checkpoint(block, x)
    y = torch::autograd::checkpoint(
        [&](const std::vector<torch::Tensor>& in) {
          return std::vector<torch::Tensor>{block(in[0])};
        },
        {x})[0];
  } else {
    y = block(x);
  }
  y.pow(2).sum().backward();
  std::vector<torch::Tensor> grads = {x.grad()};
  for (const auto& p : block.parameters())
    grads.push_back(p.grad());
  return grads;
}

bool all_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  bool same = a.size() == b.size();
  for (size_t i = 0; same && i < a.size(); ++i)
    same = torch::equal(a[i], b[i]);
  return same;
}

int main() {
  torch::manual_seed(0);
  bool ok = true;

  // The tutorial's use, in float64, against the built-in linear: values and gradients.
  auto x = torch::randn({8, 3}, torch::kFloat64).requires_grad_();
  auto weight = torch::randn({4, 3}, torch::kFloat64).requires_grad_();
  auto bias = torch::randn({4}, torch::kFloat64).requires_grad_();
  auto y = LinearFunction::apply(x, weight, bias);
  y.pow(2).sum().backward();
  auto x_ref = x.detach().requires_grad_();
  auto weight_ref = weight.detach().requires_grad_();
  auto bias_ref = bias.detach().requires_grad_();
  auto y_ref = torch::linear(x_ref, weight_ref, bias_ref);
  y_ref.pow(2).sum().backward();
  ok &= check(torch::allclose(y, y_ref, 1e-12, 1e-12), "LinearFunction equals linear");
  ok &= check(torch::allclose(x.grad(), x_ref.grad(), 1e-12, 1e-12) &&
                  torch::allclose(weight.grad(), weight_ref.grad(), 1e-12, 1e-12) &&
                  torch::allclose(bias.grad(), bias_ref.grad(), 1e-12, 1e-12),
              "its gradients equal linear's");
  // Without a bias (apply given two tensors): the third gradient is dropped, as in LibTorch.
  x.mutable_grad() = torch::Tensor();
  LinearFunction::apply(x, weight).sum().backward();
  ok &= check(torch::allclose(x.grad(), weight.sum(0).expand({8, 3}), 1e-12, 1e-12),
              "without bias: d sum(x W^T) / dx = column sums of W");

  // Saved-tensor hooks: every tensor an op saves for backward goes through pack, and comes back
  // through unpack when backward needs it. Here pack keeps a copy (offload::SaveOnCpu moves it
  // to pinned host memory the same way) and counts.
  Block block;
  torch::Tensor input = torch::randn({32, 16});  // (B, 16)
  const std::vector<torch::Tensor> plain = gradients(block, input, /*checkpointed=*/false);
  int packed = 0, unpacked = 0;
  std::vector<torch::Tensor> hooked;
  {
    // PyTorch: with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    torch::autograd::SavedTensorHooksGuard guard(
        [&](const torch::Tensor& t) -> std::any {
          ++packed;
          return t.clone();
        },
        [&](const std::any& stored) {
          ++unpacked;
          return std::any_cast<torch::Tensor>(stored);
        });
    hooked = gradients(block, input, /*checkpointed=*/false);
  }
  std::cout << "hooks: " << packed << " tensors packed, " << unpacked << " unpacked" << std::endl;
  // LinearFunction saves (input, weight, bias) twice, tanh its output, pow its input.
  ok &= check(packed == 8 && unpacked == 8, "8 saved tensors went through the hooks");
  ok &= check(all_equal(hooked, plain), "gradients with hooks are bitwise the plain ones");

  // Checkpoint: during forward only the block's input is saved; backward recomputes the block.
  int saved_in_forward = 0;
  std::vector<torch::Tensor> recomputed;
  {
    torch::autograd::SavedTensorHooksGuard guard(
        [&](const torch::Tensor& t) -> std::any {
          ++saved_in_forward;
          return t;
        },
        [](const std::any& stored) { return std::any_cast<torch::Tensor>(stored); });
    block.zero_grad();
    torch::Tensor x_leaf = input.detach().requires_grad_();
    torch::Tensor out = torch::autograd::checkpoint(
        [&](const std::vector<torch::Tensor>& in) {
          return std::vector<torch::Tensor>{block(in[0])};
        },
        {x_leaf})[0];
    std::cout << "checkpoint: " << saved_in_forward << " tensors saved in forward" << std::endl;
    ok &= check(out.sizes() == input.sizes(), "the checkpointed block maps (32, 16) to (32, 16)");
    ok &= check(saved_in_forward == 1, "a checkpointed forward saves only the block's input");
  }
  recomputed = gradients(block, input, /*checkpointed=*/true);
  ok &= check(all_equal(recomputed, plain), "checkpointed gradients are bitwise the plain ones");
  return ok ? 0 : 1;
}
