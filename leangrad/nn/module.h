// nn::Module: the base of every layer, as in LibTorch. A module owns named parameters, buffers
// and submodules; names compose with dots the way PyTorch forms them ("fc1.weight",
// "layers.0.bias"), so a state dict maps one-to-one onto a PyTorch model's.
//   struct Net : nn::Module {
//     std::shared_ptr<nn::Linear> fc1 = register_module("fc1", std::make_shared<nn::Linear>(784,
//     128)); Tensor forward(const Tensor& x) override { return relu(fc1->forward(x)); }
//   };
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::nn {

class Module;

// What register_forward_pre_hook / register_forward_hook / set_forward_wrapper take.
using ForwardPreHook = std::function<void(Module& module, const Tensor& input)>;
using ForwardHook = std::function<void(Module& module, const Tensor& input, const Tensor& output)>;
using ForwardCall = std::function<Tensor(const Tensor& input)>;
using ForwardWrapper = std::function<Tensor(const Tensor& input, const ForwardCall& call)>;

// Returned by register_forward_pre_hook / register_forward_hook: remove() takes the hook off
// (PyTorch's RemovableHandle). Safe to call twice, or after the module is gone.
class HookHandle {
 public:
  HookHandle() = default;
  void remove();

 private:
  friend class Module;
  struct Hooks;
  HookHandle(std::weak_ptr<Hooks> hooks, std::int64_t id) : hooks_(std::move(hooks)), id_(id) {}
  std::weak_ptr<Hooks> hooks_;
  std::int64_t id_ = -1;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "Module") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The computation. Modules that are not single-input (containers, losses) throw by default.
  virtual Tensor forward(const Tensor& input);
  // Calls the module: forward(input) with the hooks and the wrapper below around it. Containers
  // call their children this way; calling forward() directly skips the hooks, as in PyTorch.
  // See Note [Module call].
  Tensor operator()(const Tensor& input);

  // Hooks run by operator(), in registration order: pre-hooks before forward, hooks after it
  // with its output (PyTorch's register_forward_pre_hook / register_forward_hook; here they
  // observe and cannot replace the input or output). What ParameterOffload and the memory planner
  // use to act around each submodule.
  HookHandle register_forward_pre_hook(ForwardPreHook hook);
  HookHandle register_forward_hook(ForwardHook hook);
  // One wrapper around the whole call, hooks included: wrapper(input, call) returns the output
  // and must call `call`; it may keep a copy of `call` to run it again later (a recompute during
  // backward runs the hooks again too). A null wrapper removes it. Used to apply a per-module
  // memory policy (autograd::checkpoint, offload::SaveOnCpu) without changing the module.
  void set_forward_wrapper(ForwardWrapper wrapper);
  bool has_forward_wrapper() const;

  // Registration: names must be non-empty, unique within the module and contain no '.'.
  Tensor& register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(const std::string& name, Tensor tensor);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    static_assert(overrides_forward<M>,
                  "register_module: this module's forward hides nn::Module::forward instead of "
                  "overriding it; declare it `Tensor forward(const Tensor& input) override` "
                  "(LibTorch's `Tensor forward(Tensor x)` takes its argument by value)");
    add_child(name, module);
    return module;
  }

  // False when M declares a forward other than forward(const Tensor&) (LibTorch's by-value
  // spelling, say), which hides the virtual one: calls through nn::Module would then throw.
  template <typename M>
  static constexpr bool overrides_forward = requires {
    static_cast<Tensor (M::*)(const Tensor&)>(&M::forward);
  };

  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }

  // Training mode (dropout active, ...) for this module and all its submodules.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Moves / converts every parameter and buffer in place: tensors keep their identity, so an
  // optimizer built on parameters() stays valid. Only floating tensors change dtype.
  void to(Device device);
  void to(DType dtype);
  // Drops (set_to_none) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true);

  // Parameters and buffers by their dotted names.
  NamedTensors state_dict() const;
  // Copies values into the module's tensors (shapes must match; dtypes are converted). strict:
  // every key of the module must be given and nothing else; the error lists what is missing and
  // what is unexpected. Every entry is checked before any is copied: on an error the module is
  // unchanged.
  void load_state_dict(const NamedTensors& state, bool strict = true);
  // state_dict() to / from a safetensors file (nn/module.cpp): save writes atomically, load
  // reads onto the CPU and copies into the module's tensors as load_state_dict(state, strict).
  void save(const std::string& path) const;
  void load(const std::string& path, bool strict = true);

  const std::string& name() const { return name_; }
  // One line describing this module ("Linear(in_features=784, out_features=128, bias=true)").
  virtual std::string extra_repr() const { return ""; }
  // The module tree, as PyTorch prints it.
  void pretty_print(std::ostream& out, int indent = 0) const;

 protected:
  // Parameters and buffers of this module only (not submodules), in registration order.
  NamedTensors& own_parameters() { return parameters_; }
  NamedTensors& own_buffers() { return buffers_; }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name, const char* what) const;
  template <typename F>
  void visit_tensors(const F& f);

  Tensor call_with_hooks(const Tensor& input);

  std::string name_;
  bool training_ = true;
  std::shared_ptr<HookHandle::Hooks> hooks_;  // created by the first hook or wrapper
  NamedTensors parameters_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

std::ostream& operator<<(std::ostream& out, const Module& module);

}  // namespace leangrad::nn
