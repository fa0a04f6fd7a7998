// nn::Module: the base of every layer, as in LibTorch. A module owns named parameters, buffers
// and submodules; names compose with dots the way PyTorch forms them ("fc1.weight",
// "layers.0.bias"), so a state dict maps one-to-one onto a PyTorch model's. Modules are used
// through holders (nn/module_holder.h), as in LibTorch:
//   struct NetImpl : nn::Module {
//     NetImpl() { fc1 = register_module("fc1", nn::Linear(784, 128)); }
//     Tensor forward(Tensor x) { return relu(fc1(x)); }
//     nn::Linear fc1{nullptr};
//   };
//   LEANGRAD_MODULE(Net);  // Net holds a std::shared_ptr<NetImpl>
// forward may be LibTorch's `Tensor forward(Tensor x)` or `Tensor forward(const Tensor& x)
// override`; see Note [Bound forward].
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/core/ordered_dict.h>
#include <leangrad/core/tensor.h>

namespace leangrad::nn {

class Module;
template <typename Contained>
class ModuleHolder;  // nn/module_holder.h

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

}  // namespace leangrad::nn

namespace leangrad::detail {
// M's forward takes one tensor and returns a tensor, whatever its spelling (by value, by const
// reference, a template, with defaulted extra arguments).
template <typename M>
concept OneTensorForward = requires(M& module, const Tensor& input) {
  { module.forward(input) } -> std::same_as<Tensor>;
};
// Lets calls through nn::Module reach M's own forward when it hides the virtual one (Note [Bound
// forward]). Called wherever M is known: holders, register_module, Sequential and ModuleList.
template <typename M>
void bind_forward(M& module);
// A holder type (nn::Linear, a LEANGRAD_MODULE): it names the module type it holds.
template <typename T>
concept HolderType = requires {
  typename T::ContainedType;
};
// The module type M names: M itself, or the module a holder type holds (nn::Linear: LinearImpl).
template <typename M>
struct module_type {
  using type = M;
};
template <HolderType M>
struct module_type<M> {
  using type = typename M::ContainedType;
};
template <typename M>
using module_type_t = typename module_type<M>::type;
}  // namespace leangrad::detail

namespace leangrad::nn {

class Module : public std::enable_shared_from_this<Module> {
 public:
  // A module whose name() is its class's, demangled ("NetImpl"), as LibTorch's.
  Module() = default;
  // A module named `name` in messages and printouts (the built-in modules: "Linear").
  explicit Module(std::string name) : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The computation. Override it (`Tensor forward(const Tensor& input) override`), or declare
  // LibTorch's `Tensor forward(Tensor x)` and use the module through its holder or register it
  // (Note [Bound forward]). This default runs that bound forward, or throws naming the class.
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
  // Adds `module` as the child `name` and returns it, as LibTorch's; a holder is taken by value:
  //   fc = register_module("fc", nn::Linear(8, 32));  // fc: an nn::Linear member
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    detail::bind_forward(*module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, const ModuleHolder<M>& holder) {
    return register_module(name, holder.ptr());
  }
  // Puts `module` in the place of the child `name` (its position kept), as LibTorch's; the
  // child must exist.
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    LG_CHECK(module != nullptr, this->name(), ": replace_module('", name, "') got a null module");
    children_[name] = module;
    detail::bind_forward(*module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, const ModuleHolder<M>& holder) {
    return replace_module(name, holder.ptr());
  }
  // Removes the child `name`, as LibTorch's (an absent name is an Error naming the children).
  void unregister_module(const std::string& name) { children_.erase(name); }

  // True when M declares forward(const Tensor&) (the virtual, overridden or inherited); false
  // when M's own forward hides it (LibTorch's by-value spelling, say).
  template <typename M>
  static constexpr bool overrides_forward = requires {
    static_cast<Tensor (M::*)(const Tensor&)>(&M::forward);
  };

  // A tensor registered under several names (tied weights) is listed once, under the first name
  // met, as PyTorch's parameters() and named_parameters() do: an optimizer or a gradient
  // clipper then sees it once. state_dict() keeps every name.
  std::vector<Tensor> parameters(bool recurse = true) const;
  // The parameters by dotted name, in registration order, depth first ("fc1.weight", "0.bias"):
  // params["fc1.weight"], params.find("fc1.weight") (nullptr when absent), item.key()/value().
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  // The direct submodules, in registration order.
  std::vector<std::shared_ptr<Module>> children() const;
  const OrderedDict<std::string, std::shared_ptr<Module>>& named_children() const {
    return children_;
  }
  // This module (under the key `name_prefix`, when include_self) and every module below it,
  // depth first in registration order; a module registered twice is listed once, under its first
  // name (PyTorch's named_modules). Listing this module needs it to be held by a shared_ptr (a
  // holder or std::make_shared): include_self = false otherwise.
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = std::string(), bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  // Calls fn on this module, then on every module below it (the order and the once-only rule of
  // named_modules), as LibTorch's apply: model->apply([](nn::Module& m) { ... }). The named form
  // gives each module's dotted name ("" for this one, or `name_prefix`).
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const std::string&, Module&)>& fn,
             const std::string& name_prefix = std::string());
  // This module as M (LibTorch's as<>): nullptr when it is another type. M may be a holder:
  //   if (auto* linear = m.as<nn::Linear>()) nn::init::zeros_(linear->bias);
  template <typename M>
  detail::module_type_t<M>* as() noexcept {
    return dynamic_cast<detail::module_type_t<M>*>(this);
  }
  template <typename M>
  const detail::module_type_t<M>* as() const noexcept {
    return dynamic_cast<const detail::module_type_t<M>*>(this);
  }

  // Training mode (dropout active, ...) for this module and all its submodules.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Moves / converts every parameter and buffer in place: tensors keep their identity, so an
  // optimizer built on parameters() stays valid. Only floating tensors change dtype. Gradients
  // are converted with their tensors. All or nothing: on an Error (out of memory, a .grad that
  // does not fit its tensor) the module is exactly as it was.
  void to(Device device);
  void to(DType dtype);
  // Drops (set_to_none) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true);

  // Parameters and buffers by their dotted names, in PyTorch's order: this module's parameters,
  // then its buffers, then each child's entries in turn (a tied weight under each of its names).
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

  // The name given to the constructor, else the class's C++ name ("NetImpl"). Every error a
  // module raises names it.
  std::string name() const;
  // One line describing this module ("Linear(in_features=784, out_features=128, bias=true)").
  virtual std::string extra_repr() const { return ""; }
  // The module tree, as PyTorch prints it.
  void pretty_print(std::ostream& out, int indent = 0) const;

 protected:
  // Parameters and buffers of this module only (not submodules), in registration order.
  NamedTensors& own_parameters() { return parameters_; }
  const NamedTensors& own_parameters() const { return parameters_; }
  NamedTensors& own_buffers() { return buffers_; }

 private:
  template <typename M>
  friend void ::leangrad::detail::bind_forward(M& module);
  using BoundForward = Tensor (*)(Module& module, const Tensor& input);

  void add_child(const std::string& name, const std::shared_ptr<Module>& module);
  void check_new_name(const std::string& name, const char* what) const;
  template <typename F>
  void visit_tensors(const std::string& prefix, const F& f);
  template <typename Changes, typename Convert>
  void convert_tensors(const std::string& call, const Changes& changes, const Convert& convert);
  template <typename List>
  void collect_tensors(const List& list, const std::string& prefix, bool recurse,
                       OrderedDict<std::string, Tensor>& out) const;
  // state_dict()'s entries of this module and those below it, keys prefixed, appended to `out`.
  void collect_state(const std::string& prefix, NamedTensors& out) const;
  template <typename List>
  void collect_values(const List& list, bool recurse, std::vector<Tensor>& out) const;
  // Adds every module below this one, depth first, each once, to `out` (keys prefixed).
  void collect_modules(const std::string& prefix,
                       OrderedDict<std::string, std::shared_ptr<Module>>& out,
                       std::vector<const Module*>& seen) const;

  Tensor call_with_hooks(const Tensor& input);

  std::string name_;  // empty: name() is the class's
  bool training_ = true;
  BoundForward bound_forward_ = nullptr;      // Note [Bound forward]
  std::shared_ptr<HookHandle::Hooks> hooks_;  // created by the first hook or wrapper
  NamedTensors parameters_;
  NamedTensors buffers_;
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"submodule"};
};

// Note [Bound forward]
// LibTorch's Module has no virtual forward: its holders and containers call the concrete class's
// forward through templates, so `Tensor forward(Tensor x)` is the usual spelling. Here forward is
// also a virtual (containers, DistributedDataParallel, hooks and the memory planner call modules
// through nn::Module), and that spelling hides it instead of overriding it. So wherever the
// concrete type M is known (a holder is made, register_module, Sequential/ModuleList push_back),
// bind_forward<M> stores a function that calls M's own forward; the default Module::forward and
// operator() run it. A module never seen with its type (std::make_shared<NetImpl>() called through
// a std::shared_ptr<nn::Module>) has nothing bound, and forward throws naming its class.
// (clang and GCC 13 warn -Woverloaded-virtual at the hiding declaration; the call is correct.)
}  // namespace leangrad::nn

template <typename M>
void leangrad::detail::bind_forward(M& module) {
  if constexpr (!nn::Module::overrides_forward<M> && OneTensorForward<M>) {
    static_cast<nn::Module&>(module).bound_forward_ = [](nn::Module& self,
                                                         const Tensor& input) -> Tensor {
      return static_cast<M&>(self).forward(input);
    };
  }
}

namespace leangrad::nn {

std::ostream& operator<<(std::ostream& out, const Module& module);

}  // namespace leangrad::nn

namespace leangrad {
// LibTorch's torch::save(model, path) and torch::load(model, path) for a module (a holder or a
// shared_ptr): its state dict as a safetensors file, nn::Module::save and load. LibTorch writes
// a TorchScript archive instead; PyTorch reads these files with safetensors.torch.load_file.
void save(const std::shared_ptr<nn::Module>& module, const std::string& path);
void load(const std::shared_ptr<nn::Module>& module, const std::string& path);
}  // namespace leangrad
