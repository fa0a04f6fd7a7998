// autograd::checkpoint: a graph node that stands for a whole segment of the forward.
// See Note [Checkpoint recompute].
#include <leangrad/autograd/checkpoint.h>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/views.h>

namespace leangrad::autograd {

namespace {

// Note [Checkpoint recompute]: the node saves the segment's inputs and the generators' state.
// In backward it (1) makes detached copies of the inputs that need gradients into leaves,
// (2) rewinds the generators so random ops (dropout) draw the same numbers as in the forward,
// (3) reruns fn with grad mode on, (4) restores the generators to where the outer program had
// them, and (5) backpropagates the incoming gradients through the recomputed graph with its own
// run of the engine. The recompute runs under the autocast state of the forward (so it computes
// the same dtypes), whatever the state is where backward runs. The input leaves' .grad are this
// node's results; parameters captured by fn are leaves of the recomputed graph and accumulate their
// gradients directly.
class CheckpointNode final : public Node {
 public:
  CheckpointNode(CheckpointFn fn, const std::vector<Tensor>& inputs, RngSnapshot rng,
                 amp::AutocastState autocast_cpu, amp::AutocastState autocast_cuda)
      : Node("CheckpointBackward"),
        fn_(std::move(fn)),
        rng_(std::move(rng)),
        autocast_cpu_(autocast_cpu),
        autocast_cuda_(autocast_cuda) {
    saved_inputs_.reserve(inputs.size());
    for (const Tensor& in : inputs)
      saved_inputs_.emplace_back(in);
  }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    // The recompute accumulates the segment's parameters' gradients into their .grad and hands
    // back plain tensors: neither autograd::grad (which must touch no .grad) nor create_graph
    // (which needs the backward's graph) can go through it. PyTorch's reentrant checkpoint
    // refuses both as well.
    LG_CHECK(!backward_captures(),
             "checkpoint: autograd::grad cannot go through a "
             "checkpointed segment (its recompute accumulates into the parameters' .grad); "
             "call backward() instead");
    LG_CHECK(!grad_mode_enabled(),
             "checkpoint: double backward (create_graph=true) through "
             "a checkpointed segment is not supported");
    std::vector<Tensor> inputs;
    inputs.reserve(saved_inputs_.size());
    for (std::size_t i = 0; i < saved_inputs_.size(); ++i) {
      Tensor in = saved_inputs_[i].unpack(name());
      if (in.defined()) {
        in = in.detach();
        if (next_edges[i].valid()) in.requires_grad_(true);
      }
      inputs.push_back(std::move(in));
    }

    std::vector<Tensor> outputs;
    {
      // The generators go back to where the caller had them however fn_ returns: a recompute
      // that throws must not leave them at the forward's snapshot (the next draw would repeat it).
      struct RestoreRng {
        RngSnapshot outer = snapshot_rng();
        ~RestoreRng() { restore_rng(outer); }
      } restore;
      restore_rng(rng_);
      GradModeGuard enable_grad(true);
      amp::AutocastGuard forward_autocast_cpu(autocast_cpu_);
      amp::AutocastGuard forward_autocast_cuda(autocast_cuda_);
      outputs = fn_(inputs);
    }
    LG_CHECK(outputs.size() == output_meta.size(), "checkpoint: the recomputed segment returned ",
             outputs.size(), " outputs, the forward returned ", output_meta.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      LG_CHECK(outputs[i].defined() == forward_defined_[i], "checkpoint: output ", i,
               " of the recomputed segment is ", outputs[i].defined() ? "defined" : "undefined",
               "; the forward's was not");
      if (!outputs[i].defined()) continue;
      const TensorMeta& forward = output_meta[i];
      LG_CHECK(outputs[i].shape() == forward.shape && outputs[i].dtype() == forward.dtype &&
                   outputs[i].device() == forward.device,
               "checkpoint: output ", i, " of the recomputed segment has shape ",
               outputs[i].shape(), ", ", outputs[i].dtype(), " on ", outputs[i].device(),
               "; the forward's had shape ", forward.shape, ", ", forward.dtype, " on ",
               forward.device, " (the segment must compute the same thing both times)");
    }

    std::vector<Edge> roots;
    std::vector<Tensor> root_grads;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (!grads[i].defined() || !outputs[i].defined() || !outputs[i].requires_grad()) continue;
      roots.push_back(gradient_edge(outputs[i]));
      root_grads.push_back(std::move(grads[i]));
    }
    if (!roots.empty()) run_backward(roots, std::move(root_grads), /*retain_graph=*/false);

    std::vector<Tensor> input_grads;
    input_grads.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      input_grads.push_back(next_edges[i].valid() ? inputs[i].grad() : Tensor());
    }
    return input_grads;
  }

  void release_saved() override {
    for (SavedTensor& s : saved_inputs_)
      s.release();
  }
  void prefetch_saved() override {
    for (SavedTensor& s : saved_inputs_)
      s.prefetch();
  }

  // One output of the forward: its meta for the engine, and whether it was defined (an
  // undefined one has an empty TensorMeta, which a 0-d float32 CPU tensor also has).
  void record_forward_output(const Tensor& out) {
    output_meta.push_back(out.defined() ? TensorMeta::of(out) : TensorMeta{});
    forward_defined_.push_back(out.defined());
  }

 private:
  std::vector<bool> forward_defined_;
  CheckpointFn fn_;
  std::vector<SavedTensor> saved_inputs_;
  RngSnapshot rng_;
  amp::AutocastState autocast_cpu_;  // the forward's autocast settings, per device type
  amp::AutocastState autocast_cuda_;
};

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
  LG_CHECK(static_cast<bool>(fn), "checkpoint: expected a function");
  if (!grad_mode_enabled()) return fn(inputs);

  // Make sure the generators fn may draw from exist, so the snapshot covers them.
  default_generator(Device::cpu());
  for (const Tensor& in : inputs) {
    if (in.defined()) default_generator(in.device());
  }
  RngSnapshot rng = snapshot_rng();
  std::vector<Tensor> outputs;
  {
    NoGradGuard no_grad;
    outputs = fn(inputs);
  }
  // Parameters used by fn may require grad even when no input does, so the node is recorded
  // whenever grad mode is on.
  auto node =
      make_node<CheckpointNode>(fn, inputs, std::move(rng), amp::autocast_state(DeviceType::CPU),
                                amp::autocast_state(DeviceType::CUDA));
  for (const Tensor& in : inputs)
    node->next_edges.push_back(gradient_edge(in));
  for (std::uint32_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    node->record_forward_output(out);
    if (!out.defined() || !is_floating(out.dtype())) continue;
    // History goes on a tensor of our own. A fresh result of fn (no autograd state, not a view,
    // its memory shared with no input and no other output) is aliased; anything else is cloned:
    // (a view of) an input, a view, a tensor fn did not make (a captured parameter: giving it
    // this node's history would make it a non-leaf and the recompute run through this very
    // node), outputs sharing memory (an in-place change of one would reach the other unseen).
    bool shared = out.impl().view.active() || out.impl().autograd_meta != nullptr;
    for (const Tensor& in : inputs)
      shared = shared || (in.defined() && out.shares_storage(in));
    for (std::uint32_t j = 0; j < outputs.size(); ++j)
      shared = shared || (j != i && outputs[j].defined() && out.shares_storage(outputs[j]));
    out = shared ? out.clone() : views::alias(out);
    set_history(out, node, i);
  }
  return outputs;
}

}  // namespace leangrad::autograd
