// SavedTensor: every tensor a graph node keeps for backward goes through this one type, and the
// saved-tensor hooks (the mechanism behind CPU offload and recompute) act here.
// Design after PyTorch's saved_variable.h: the version of the tensor is recorded at save time and
// checked at unpack time, so an in-place change after saving is reported with the node's name;
// the stored tensor is a detached alias (sharing data and version counter, no autograd state),
// so saving an op's own output makes no reference cycle between the output and its node.
#pragma once

#include <any>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <leangrad/core/tensor.h>

namespace leangrad::autograd {

// What a tensor that stands for another must look like: its shape, dtype and device, not its
// strides. A gradient has its forward tensor's (graph.h), an unpacked tensor the saved one's.
struct TensorMeta {
  Shape shape;
  DType dtype = kFloat32;
  Device device;
  static TensorMeta of(const Tensor& t) { return TensorMeta{t.shape(), t.dtype(), t.device()}; }
  // Throws a ShapeError, DTypeError or DeviceError "<what> of shape [3] for <target> of shape
  // [2]<hint>" unless `t` has this shape, dtype and device. `what` starts with the op
  // ("set_grad: a gradient"), `target` names the tensor ("a leaf", "the output of MulBackward").
  void check(const Tensor& t, std::string_view what, std::string_view target,
             std::string_view hint = {}) const;
};

using PackHook = std::function<std::any(const Tensor&)>;
using UnpackHook = std::function<Tensor(const std::any&)>;

// While alive, every tensor saved for backward on this thread (the one that made the guard) is
// passed to `pack`, and what pack returned is handed to `unpack` when backward needs the tensor.
// Guards nest: the innermost applies. A guard that dies out of order (held by a unique_ptr) or on
// another thread takes off its own hooks only (Note [Closing a guard] in saved_tensor.cpp).
// (PyTorch's C++ frontend has no way to install such hooks; this is ours.)
class SavedTensorHooksGuard {
 public:
  SavedTensorHooksGuard(PackHook pack, UnpackHook unpack);
  ~SavedTensorHooksGuard();
  SavedTensorHooksGuard(const SavedTensorHooksGuard&) = delete;
  SavedTensorHooksGuard& operator=(const SavedTensorHooksGuard&) = delete;

 private:
  std::shared_ptr<std::atomic<bool>> closed_;  // shared with its entry on the thread's stack
};

// Number of SavedTensorHooksGuards alive on this thread.
int saved_tensor_hooks_depth();

class Node;

class SavedTensor {
 public:
  SavedTensor() = default;  // saves nothing (an undefined tensor)
  // Saves `t` (an undefined t saves nothing), through the innermost pack hook if any.
  // `output_nr` >= 0 says t is that output of the node that saves it (its history is set after
  // the save; see unpack).
  explicit SavedTensor(const Tensor& t, int output_nr = -1);

  // The saved tensor. Throws Error naming `node_name` if the graph was freed (a second backward
  // without retain_graph), if the tensor was modified in place after it was saved, or if an
  // unpack hook returned a tensor of another shape, dtype or device than the saved one (its
  // strides may differ). See Note [What an unpack hook returns] in saved_tensor.cpp.
  // In a backward with grad mode off (every plain backward) it is a plain tensor. Under
  // create_graph (grad mode on) it keeps its place in the graph, so the backward formula's own
  // graph reaches it: a saved input is the input itself, a saved output an alias whose grad_fn is
  // `owner` (the saving node; for an output owner wrote through a view, the view's history made
  // from its base's CopySlices node: saved_output_through_view in graph.h), as PyTorch's
  // SavedVariable restores it. See Note [Double backward] in engine.cpp.
  Tensor unpack(const std::string& node_name, const std::shared_ptr<Node>& owner = nullptr) const;
  // Marks the saved tensor as output `output_nr` of its node when it is `out` (a custom
  // function saves before its outputs have their history).
  void mark_if_output(const Tensor& out, std::uint32_t output_nr);
  // With hooks, runs the unpack hook now and keeps the result for the next unpack, so work the
  // hook starts (an asynchronous copy back to the GPU) overlaps what runs before it.
  void prefetch();
  // Drops the saved data (after backward, unless retain_graph).
  void release();

  bool defined() const { return defined_; }
  bool released() const { return released_; }

 private:
  Tensor data_;      // without hooks: the detached alias
  Tensor original_;  // without hooks, an input that requires grad: the tensor itself (a view:
                     // an alias sharing its autograd state)
  const TensorImpl* source_ = nullptr;  // identity only (mark_if_output), never dereferenced
  int output_nr_ = -1;
  bool requires_grad_ = false;
  std::any packed_;    // with hooks: what pack returned
  UnpackHook unpack_;  // with hooks: the matching unpack
  TensorMeta meta_;    // with hooks: what unpack must give back
  mutable Tensor prefetched_;
  std::shared_ptr<VersionCounter> version_counter_;
  std::uint32_t saved_version_ = 0;
  bool defined_ = false;
  bool released_ = false;
};

}  // namespace leangrad::autograd
