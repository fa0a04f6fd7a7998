// Custom autograd functions, as in LibTorch:
//   struct TanhExp : autograd::Function<TanhExp> {
//     static Tensor forward(autograd::Context* ctx, const Tensor& x) {
//       ctx->save_for_backward({x});
//       return x * tanh(exp(x));
//     }
//     static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
//       const Tensor x = ctx->saved()[0];
//       ...
//       return {grads[0] * derivative};
//     }
//   };
//   Tensor y = TanhExp::apply(x);
// forward runs with grad mode off and may return a Tensor or a std::vector<Tensor>; backward
// returns one gradient per Tensor argument of forward (or one per argument, undefined for the
// non-tensor ones). Saved tensors go through SavedTensor, so hooks and version checks apply.
#pragma once

#include <algorithm>
#include <any>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/error.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::autograd {

class Context;
// LibTorch's names, so that its custom functions port unchanged:
//   static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs);
using AutogradContext = Context;
using tensor_list = std::vector<Tensor>;
using variable_list = std::vector<Tensor>;

class Context {
 public:
  // Keeps tensors for backward (inputs or outputs of forward); call at most once per forward.
  // As in LibTorch, they are saved (their versions recorded, the saved-tensor hooks run) when
  // forward has returned, and only when the call records a graph (grad mode on and an input
  // that requires grad): under NoGradGuard, or in a checkpoint's first pass, nothing is kept.
  void save_for_backward(const std::vector<Tensor>& tensors);
  // The saved tensors; throws if one was modified in place since, or the graph was freed.
  std::vector<Tensor> saved() const;
  std::vector<Tensor> get_saved_variables() const { return saved(); }  // LibTorch's name
  // Whether the i-th Tensor argument of forward needs a gradient (valid in backward).
  bool needs_input_grad(std::size_t i) const {
    return i < needs_input_grad_.size() && needs_input_grad_[i];
  }
  // Anything else backward needs (sizes, flags, scalars), as LibTorch's ctx->saved_data.
  std::unordered_map<std::string, std::any> saved_data;
  // In forward, as LibTorch's (Note [Dirty and non-differentiable outputs]):
  // - mark_dirty: these inputs were modified in place by forward and are returned as outputs;
  //   they keep their identity and the function becomes their history, as a built-in in-place
  //   op (through a view: its base's history, as a write through a view). Refused for a leaf
  //   that requires grad, a marked tensor that is not both an input and an output, a view that
  //   a built-in in-place op could not write either, and a view marked by a function that
  //   returns more than that one tensor (as LibTorch).
  // - mark_non_differentiable: these outputs get no history (requires_grad() false); backward
  //   receives zeros for them.
  void mark_dirty(const std::vector<Tensor>& inputs);
  void mark_non_differentiable(const std::vector<Tensor>& outputs);
  // Whether backward receives zeros for the outputs no gradient reached (the default, as
  // LibTorch's) or undefined tensors, so that it can skip their terms (a term that would be 0 *
  // inf, as an eigenvector's gradient at a repeated eigenvalue).
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  bool materialize_grads() const { return materialize_grads_; }

  // Engine side.
  void set_name(std::string name) { name_ = std::move(name); }
  // The node this context belongs to (saved outputs point back at it under create_graph).
  void set_owner(std::weak_ptr<Node> owner) { owner_ = std::move(owner); }
  void mark_if_output(const Tensor& out, std::uint32_t output_nr) {
    for (SavedTensor& s : saved_)
      s.mark_if_output(out, output_nr);
  }
  void set_needs_input_grad(std::vector<bool> needs) { needs_input_grad_ = std::move(needs); }
  bool is_dirty(const Tensor& t) const { return contains(dirty_, t); }
  bool is_non_differentiable(const Tensor& t) const { return contains(non_differentiable_, t); }
  // Checks the dirty tensors against forward's inputs and outputs (throws as mark_dirty says).
  void check_dirty(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) const;
  // Forgets the marks once apply has used them: they hold forward's outputs, which will hold
  // this node.
  void clear_marks() {
    dirty_.clear();
    non_differentiable_.clear();
  }
  // Saves what save_for_backward was given; Function::apply calls it when it records the node.
  void save_pending();
  void release() {
    for (SavedTensor& s : saved_)
      s.release();
  }
  void prefetch() {
    for (SavedTensor& s : saved_)
      s.prefetch();
  }

 private:
  static bool contains(const std::vector<Tensor>& tensors, const Tensor& t) {
    return std::any_of(tensors.begin(), tensors.end(),
                       [&](const Tensor& m) { return m.is_same(t); });
  }

  std::vector<Tensor> dirty_, non_differentiable_;  // marked in forward, until apply ends
  std::vector<Tensor> to_save_;  // given to save_for_backward, saved by save_pending
  bool save_called_ = false;
  std::vector<SavedTensor> saved_;
  std::weak_ptr<Node> owner_;
  std::vector<bool> needs_input_grad_;
  std::string name_;
  bool materialize_grads_ = true;
};

namespace detail {

template <typename T>
std::string type_name() {
  return leangrad::detail::demangle(typeid(T));
}

template <typename Arg>
void collect_tensor(std::vector<Tensor>& tensors, std::vector<bool>& is_tensor, const Arg& arg) {
  if constexpr (std::is_same_v<std::decay_t<Arg>, Tensor>) {
    tensors.push_back(arg);
    is_tensor.push_back(true);
  } else {
    is_tensor.push_back(false);
  }
}

// The node of a custom function: calls T::backward with the function's Context.
template <typename T>
class CppNode final : public Node {
 public:
  CppNode() : Node(detail::type_name<T>() + "Backward") { ctx.set_name(name()); }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined() && ctx.materialize_grads()) {  // zeros, as PyTorch's
        const TensorMeta& m = output_meta[i];
        grads[i] = zeros(m.shape, TensorOptions(m.dtype).device(m.device));
      }
    }
    std::vector<Tensor> results = T::backward(&ctx, std::move(grads));
    // One gradient per Tensor argument, or one per argument of forward.
    if (results.size() == is_tensor_arg.size() && results.size() != next_edges.size()) {
      std::vector<Tensor> tensor_grads;
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (is_tensor_arg[i]) tensor_grads.push_back(std::move(results[i]));
      }
      results = std::move(tensor_grads);
    }
    // More results than inputs are allowed when the extra ones are undefined (LibTorch's rule:
    // the gradient of a defaulted argument that apply was not given), and dropped.
    if (results.size() > next_edges.size() &&
        std::all_of(results.begin() + static_cast<std::ptrdiff_t>(next_edges.size()), results.end(),
                    [](const Tensor& g) { return !g.defined(); })) {
      results.resize(next_edges.size());
    }
    LG_CHECK(results.size() == next_edges.size(), name(), ": backward returned ", results.size(),
             " gradients, expected ", next_edges.size(), " (one per Tensor argument of forward)");
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!next_edges[i].valid() || !results[i].defined()) {
        results[i] = Tensor();
        continue;
      }
      const TensorMeta& in = input_meta[i];
      LG_CHECK_SHAPE(results[i].shape() == in.shape, name(),
                     ": backward returned a gradient of "
                     "shape ",
                     results[i].shape(), " for input ", i, " of shape ", in.shape);
      if (results[i].dtype() != in.dtype || results[i].device() != in.device) {
        results[i] = results[i].to(in.device).to(in.dtype);
      }
    }
    return results;
  }
  void release_saved() override { ctx.release(); }
  void prefetch_saved() override { ctx.prefetch(); }

  Context ctx;
  std::vector<TensorMeta> input_meta;
  std::vector<bool> is_tensor_arg;
};

}  // namespace detail

template <typename T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    std::vector<Tensor> inputs;
    std::vector<bool> is_tensor;
    (detail::collect_tensor(inputs, is_tensor, args), ...);
    auto node = make_node<detail::CppNode<T>>();
    node->ctx.set_owner(node);
    node->is_tensor_arg = is_tensor;

    using Output = decltype(T::forward(&node->ctx, std::forward<Args>(args)...));
    static_assert(std::is_same_v<Output, Tensor> || std::is_same_v<Output, std::vector<Tensor>>,
                  "Function<T>::forward must return Tensor or std::vector<Tensor>");
    Output output;
    {
      NoGradGuard no_grad;
      output = T::forward(&node->ctx, std::forward<Args>(args)...);
    }
    std::vector<Tensor> outputs;
    if constexpr (std::is_same_v<Output, Tensor>) {
      outputs = {output};
    } else {
      outputs = output;
    }
    node->ctx.check_dirty(inputs, outputs);
    if (!any_requires_grad(inputs)) {  // no graph: nothing is saved
      node->ctx.clear_marks();
      return output;
    }
    // What forward gave save_for_backward, saved now that a node is recorded and before the
    // outputs get their history (attach marks the saved outputs).
    node->ctx.save_pending();

    std::vector<bool> needs;
    for (const Tensor& in : inputs) {
      node->input_meta.push_back(in.defined() ? TensorMeta::of(in) : TensorMeta{});
      node->next_edges.push_back(gradient_edge(in));
      needs.push_back(node->next_edges.back().valid());
    }
    node->ctx.set_needs_input_grad(std::move(needs));
    auto attach = [&](Tensor& out, std::uint32_t index) {
      node->output_meta.push_back(out.defined() ? TensorMeta::of(out) : TensorMeta{});
      if (!out.defined() || !is_floating(out.dtype())) return;  // not differentiable
      if (node->ctx.is_non_differentiable(out)) {
        if (std::any_of(inputs.begin(), inputs.end(),
                        [&](const Tensor& in) { return out.is_same(in); })) {
          out = out.detach();  // an input returned as is keeps its own history
        }
        return;
      }
      // A dirty input is rebased: the function becomes its history (Note [Dirty and
      // non-differentiable outputs]). Any other input returned as is becomes a new alias, so
      // the input keeps its own history.
      if (!node->ctx.is_dirty(out)) {
        for (const Tensor& in : inputs) {
          if (out.is_same(in)) {
            out = views::as_strided(out, out.shape(), out.strides(), out.storage_offset());
          }
        }
      }
      if (node->ctx.is_dirty(out) && out.impl().view.active()) {
        const auto input = std::find_if(inputs.begin(), inputs.end(),
                                        [&](const Tensor& in) { return out.is_same(in); });
        rebase_history_through_view(out, node, static_cast<std::size_t>(input - inputs.begin()));
      } else {
        set_history(out, node, index);
      }
      node->ctx.mark_if_output(out, index);
    };
    if constexpr (std::is_same_v<Output, Tensor>) {
      attach(output, 0);
    } else {
      for (std::uint32_t i = 0; i < output.size(); ++i)
        attach(output[i], i);
    }
    node->ctx.clear_marks();
    return output;
  }
};

}  // namespace leangrad::autograd
