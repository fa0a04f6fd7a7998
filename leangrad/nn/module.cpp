// nn::Module: registration, traversal with dotted names, train/eval, to(), state dicts and their
// safetensors checkpoints (save, load), printing.
#include <leangrad/nn/module.h>
#include <leangrad/nn/module_holder.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <typeinfo>
#include <unordered_set>
#include <utility>
#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/error.h>
#include <leangrad/data/safetensors.h>

void leangrad::detail::throw_empty_holder(const std::type_info& contained) {
  // The holder's name is the module's less "Impl", as LEANGRAD_MODULE forms it.
  const std::string impl = demangle(contained);
  const bool suffixed = impl.size() > 4 && impl.ends_with("Impl");
  const std::string holder = suffixed ? impl.substr(0, impl.size() - 4) : impl;
  LG_THROW(Error, "empty module holder ", holder, (suffixed ? " (of " + impl + ")" : ""),
           ": it was made from nullptr (`", holder, " m{nullptr};`) and no module was ",
           "assigned to it; assign one first (`m = register_module(\"m\", ", holder, "(...));`)");
}

namespace leangrad::nn {

std::string Module::name() const {
  // typeid(*this) is the dynamic type here (not during construction, which is why the name is
  // not computed in the constructor, as LibTorch's).
  return name_.empty() ? detail::demangle(typeid(*this)) : name_;
}

Tensor Module::forward(const Tensor& input) {
  if (bound_forward_ != nullptr) return bound_forward_(*this, input);  // Note [Bound forward]
  const std::string class_name = detail::demangle(typeid(*this));
  const std::string label = name_.empty() || name_ == class_name
                                ? class_name
                                : detail::str_cat(name_, " (", class_name, ")");
  LG_THROW(Error, label,
           ": forward(const Tensor&) is not implemented, or this module's own forward cannot be "
           "reached through nn::Module (containers, DistributedDataParallel, module(x)). Either "
           "override `Tensor forward(const Tensor& input) override`, or keep LibTorch's "
           "`Tensor forward(Tensor x)` (one tensor in, one out) and make the module with its "
           "holder (LEANGRAD_MODULE) or register it (register_module, Sequential), which binds "
           "that forward; a forward taking other arguments is called through the holder only");
}

// Note [Module call]
// module(x) is the one entry that runs what others attach to a module; forward(x) is only the
// computation. Order of one call:
//   wrapper(x, call)            the memory policy, if any (checkpoint: call now without a graph,
//                               and again during backward; SaveOnCpu: call under its guard)
//     call(x) = pre-hooks(x); y = forward(x); hooks(x, y); return y
// The hooks sit inside the wrapper so that a recompute materialises offloaded parameters again
// (ParameterOffload's pre-hook) exactly as the first forward did. Hooks are copied before they
// run, so a hook may remove itself or add others; those take effect from the next call.
struct HookHandle::Hooks {
  std::int64_t next_id = 0;
  std::vector<std::pair<std::int64_t, ForwardPreHook>> pre;
  std::vector<std::pair<std::int64_t, ForwardHook>> post;
  ForwardWrapper wrapper;
};

void HookHandle::remove() {
  if (const std::shared_ptr<Hooks> hooks = hooks_.lock()) {
    std::erase_if(hooks->pre, [&](const auto& entry) { return entry.first == id_; });
    std::erase_if(hooks->post, [&](const auto& entry) { return entry.first == id_; });
  }
  hooks_.reset();
}

HookHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  LG_CHECK(hook != nullptr, name(), ": register_forward_pre_hook got an empty function");
  if (!hooks_) hooks_ = std::make_shared<HookHandle::Hooks>();
  const std::int64_t id = hooks_->next_id++;
  hooks_->pre.emplace_back(id, std::move(hook));
  return HookHandle(hooks_, id);
}

HookHandle Module::register_forward_hook(ForwardHook hook) {
  LG_CHECK(hook != nullptr, name(), ": register_forward_hook got an empty function");
  if (!hooks_) hooks_ = std::make_shared<HookHandle::Hooks>();
  const std::int64_t id = hooks_->next_id++;
  hooks_->post.emplace_back(id, std::move(hook));
  return HookHandle(hooks_, id);
}

void Module::set_forward_wrapper(ForwardWrapper wrapper) {
  if (!hooks_) hooks_ = std::make_shared<HookHandle::Hooks>();
  hooks_->wrapper = std::move(wrapper);
}

bool Module::has_forward_wrapper() const {
  return hooks_ && hooks_->wrapper != nullptr;
}

Tensor Module::call_with_hooks(const Tensor& input) {
  // The bound forward first: a class derived from a built-in module may hide its forward too.
  if (!hooks_) return bound_forward_ ? bound_forward_(*this, input) : forward(input);
  const auto pre = hooks_->pre;
  for (const auto& [id, hook] : pre)
    hook(*this, input);
  Tensor output = bound_forward_ ? bound_forward_(*this, input) : forward(input);
  const auto post = hooks_->post;
  for (const auto& [id, hook] : post)
    hook(*this, input, output);
  return output;
}

Tensor Module::operator()(const Tensor& input) {
  if (!hooks_ || !hooks_->wrapper) return call_with_hooks(input);
  // The wrapper may keep `call` past this call (a recompute): it holds the module, not `this`
  // frame. A module that is not owned by a shared_ptr is captured by address.
  const ForwardWrapper wrapper = hooks_->wrapper;
  std::shared_ptr<Module> self = weak_from_this().lock();
  Module* raw = this;
  const ForwardCall call = [self = std::move(self), raw](const Tensor& x) {
    return raw->call_with_hooks(x);
  };
  return wrapper(input, call);
}

void Module::check_new_name(const std::string& name, const char* what) const {
  LG_CHECK(!name.empty() && name.find('.') == std::string::npos, this->name(), ": invalid ", what,
           " name '", name, "' (names are non-empty and contain no '.')");
  auto taken = [&](const auto& list) {
    for (const auto& [n, v] : list) {
      if (n == name) return true;
    }
    return false;
  };
  LG_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_), this->name(),
           ": the name '", name, "' is already used by a parameter, buffer or submodule");
}

Tensor& Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  if (tensor.defined() && requires_grad) tensor.requires_grad_(true);
  parameters_.emplace_back(name, std::move(tensor));
  return parameters_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor tensor) {
  check_new_name(name, "buffer");
  buffers_.emplace_back(name, std::move(tensor));
  return buffers_.back().second;
}

void Module::add_child(const std::string& name, const std::shared_ptr<Module>& module) {
  check_new_name(name, "submodule");
  LG_CHECK(module != nullptr, this->name(), ": register_module('", name, "') got a null module");
  children_.insert(name, module);
}

// The defined tensors of `list` in every module below `module`, keys prefixed with the path.
template <typename List>
void Module::collect_tensors(const List& list, const std::string& prefix, bool recurse,
                             OrderedDict<std::string, Tensor>& out) const {
  for (const auto& [name, t] : this->*list) {
    if (t.defined()) out.insert(prefix + name, t);
  }
  if (!recurse) return;
  for (const auto& [child_name, child] : children_)
    child->collect_tensors(list, prefix + child_name + ".", true, out);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> all(name() + " parameter");
  collect_tensors(&Module::parameters_, "", recurse, all);
  // Tied weights once, under their first name (as PyTorch's remove_duplicate=True).
  OrderedDict<std::string, Tensor> out(name() + " parameter");
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& item : all) {
    if (seen.insert(&item.value().impl()).second) out.insert(item.key(), item.value());
  }
  return out;
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out(name() + " buffer");
  collect_tensors(&Module::buffers_, "", recurse, out);
  return out;
}

// named_parameters' order without its names: parameters() runs every step (zero_grad).
template <typename List>
void Module::collect_values(const List& list, bool recurse, std::vector<Tensor>& out) const {
  for (const auto& [name, t] : this->*list) {
    if (t.defined()) out.push_back(t);
  }
  if (!recurse) return;
  for (const auto& [child_name, child] : children_)
    child->collect_values(list, true, out);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> all;
  collect_values(&Module::parameters_, recurse, all);
  // Tied weights once (named_parameters' rule): a linear scan for the usual few dozen tensors, a
  // hash set beyond (this runs every step, in zero_grad).
  std::vector<Tensor> out;
  out.reserve(all.size());
  if (all.size() <= 64) {
    for (Tensor& t : all) {
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const Tensor& kept) { return kept.is_same(t); });
      if (!seen) out.push_back(std::move(t));
    }
    return out;
  }
  std::unordered_set<const TensorImpl*> seen;
  for (Tensor& t : all) {
    if (seen.insert(&t.impl()).second) out.push_back(std::move(t));
  }
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  collect_values(&Module::buffers_, recurse, out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  return children_.values();
}

void Module::collect_modules(const std::string& prefix,
                             OrderedDict<std::string, std::shared_ptr<Module>>& out,
                             std::vector<const Module*>& seen) const {
  for (const auto& [child_name, child] : children_) {
    if (std::find(seen.begin(), seen.end(), child.get()) != seen.end()) continue;
    seen.push_back(child.get());
    const std::string name = prefix.empty() ? child_name : prefix + "." + child_name;
    out.insert(name, child);
    child->collect_modules(name, out, seen);
  }
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix, bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out(name() + " module");
  std::vector<const Module*> seen = {this};
  if (include_self) {
    std::shared_ptr<const Module> self = weak_from_this().lock();
    LG_CHECK(self != nullptr, name(),
             ": named_modules/modules with include_self need the module to be held by a "
             "std::shared_ptr (made by its holder or std::make_shared); this one is not, so pass "
             "include_self = false");
    out.insert(name_prefix, std::const_pointer_cast<Module>(self));
  }
  collect_modules(name_prefix, out, seen);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

void Module::apply(const std::function<void(Module&)>& fn) {
  apply([&fn](const std::string&, Module& module) { fn(module); });
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn,
                   const std::string& name_prefix) {
  // Not named_modules(): this module need not be held by a shared_ptr.
  OrderedDict<std::string, std::shared_ptr<Module>> below;
  std::vector<const Module*> seen = {this};
  collect_modules(name_prefix, below, seen);
  fn(name_prefix, *this);
  for (const auto& [name, module] : below)
    fn(name, *module);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_)
    child->train(on);
}

// Every defined parameter and buffer below this module with its dotted name; a tensor registered
// twice (tied weights, a shared submodule) is visited under each name.
template <typename F>
void Module::visit_tensors(const std::string& prefix, const F& f) {
  for (auto& [name, t] : parameters_) {
    if (t.defined()) f(prefix + name, t);
  }
  for (auto& [name, t] : buffers_) {
    if (t.defined()) f(prefix + name, t);
  }
  for (auto& [name, child] : children_)
    child->visit_tensors(prefix + name + ".", f);
}

// Note [Module::to changes all or nothing]
// to() gives each parameter and buffer new data in place (the tensor keeps its identity, so the
// optimizer's handles follow) and converts its .grad alike, also where only the .grad differs. What
// can fail must fail before anything changes: an allocation on the device, or a .grad assigned
// through mutable_grad() (unchecked, Note [What .grad holds]) that would not fit the converted
// tensor. So every converted tensor and gradient is made and checked first, and only then are they
// installed, by swaps and moves that cannot throw. On an Error the module is exactly as it was
// (PyTorch's Module._apply converts one tensor after the other and can stop half-way). The old data
// is freed when the conversions go out of scope, so the module briefly holds both copies.
// `changes(t)` says whether tensor t is converted; `convert` converts it and its gradient.
template <typename Changes, typename Convert>
void Module::convert_tensors(const std::string& call, const Changes& changes,
                             const Convert& convert) {
  NoGradGuard no_grad;
  struct Conversion {
    Tensor tensor;                // the module's
    Tensor data;                  // its converted data (its old data after the swap)
    Tensor* grad_slot = nullptr;  // its .grad, when it has one
    Tensor grad;                  // the converted .grad
  };
  std::vector<Conversion> conversions;
  std::unordered_set<const TensorImpl*> seen;  // a tied tensor is converted once
  visit_tensors("", [&](const std::string& name, Tensor& t) {
    // The .grad is looked at on its own: one assigned through mutable_grad() can be on another
    // device or dtype than a tensor that is already converted (PyTorch converts it too).
    const bool data_changes = changes(t);
    const bool grad_changes = t.grad().defined() && (data_changes || changes(t.grad()));
    if (!(data_changes || grad_changes) || !seen.insert(&t.impl()).second) return;
    Conversion c{t, data_changes ? convert(t) : Tensor(), nullptr, Tensor()};
    if (grad_changes) {
      c.grad_slot = &t.mutable_grad();
      c.grad = convert(t.grad());
      autograd::TensorMeta::of(data_changes ? c.data : t)
          .check(
              c.grad, detail::str_cat(this->name(), ".", call, ": the .grad of '", name, "'"),
              "the tensor",
              " (a .grad assigned through mutable_grad() must have its tensor's shape, dtype and "
              "device: assign one that fits, or clear it with set_grad(Tensor())); nothing was "
              "converted");
    }
    conversions.push_back(std::move(c));
  });
  for (Conversion& c : conversions) {  // nothing here throws
    if (c.data.defined()) c.tensor.swap_data(c.data);
    if (c.grad_slot != nullptr) *c.grad_slot = std::move(c.grad);
  }
}

void Module::to(Device device) {
  convert_tensors(
      detail::str_cat("to(", device, ")"), [&](const Tensor& t) { return t.device() != device; },
      [&](const Tensor& t) { return t.to(device); });
}

void Module::to(DType dtype) {
  convert_tensors(
      detail::str_cat("to(", dtype, ")"),
      [&](const Tensor& t) { return is_floating(t.dtype()) && t.dtype() != dtype; },
      [&](const Tensor& t) { return t.to(dtype); });
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      NoGradGuard no_grad;
      p.mutable_grad().zero_();
    }
  }
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  collect_state("", out);
  return out;
}

// Module by module, as PyTorch's _save_to_state_dict: own parameters, own buffers, then the
// children. Every name, tied weights under each (as PyTorch's state_dict), unlike
// named_parameters().
void Module::collect_state(const std::string& prefix, NamedTensors& out) const {
  for (const auto& [name, t] : parameters_) {
    if (t.defined()) out.emplace_back(prefix + name, t);
  }
  for (const auto& [name, t] : buffers_) {
    if (t.defined()) out.emplace_back(prefix + name, t);
  }
  for (const auto& [child_name, child] : children_)
    child->collect_state(prefix + child_name + ".", out);
}

void Module::load_state_dict(const NamedTensors& state, bool strict) {
  std::map<std::string, const Tensor*> given;
  for (const auto& [name, t] : state)
    given[name] = &t;
  // Everything is checked before anything is copied: a state dict that does not fit leaves the
  // module as it was.
  std::vector<std::pair<Tensor, const Tensor*>> copies;  // (target, source)
  std::vector<std::string> missing;
  for (auto& [name, target] : state_dict()) {
    auto it = given.find(name);
    if (it == given.end()) {
      missing.push_back(name);
      continue;
    }
    const Tensor& source = *it->second;
    LG_CHECK(source.defined(), "load_state_dict: '", name, "' is an undefined tensor");
    LG_CHECK_SHAPE(source.shape() == target.shape(), "load_state_dict: '", name, "' has shape ",
                   source.shape(), " in the state dict and ", target.shape(), " in ", this->name());
    copies.emplace_back(target, &source);
    given.erase(it);
  }
  if (strict && (!missing.empty() || !given.empty())) {
    std::ostringstream message;
    message << "load_state_dict (strict) for " << name() << ":";
    if (!missing.empty()) {
      message << " missing keys:";
      for (const auto& m : missing)
        message << " '" << m << "'";
      message << ";";
    }
    if (!given.empty()) {
      message << " unexpected keys:";
      for (const auto& [name, t] : given)
        message << " '" << name << "'";
    }
    LG_THROW(Error, message.str());
  }
  NoGradGuard no_grad;
  for (auto& [target, source] : copies)
    target.copy_(*source);
}

void Module::pretty_print(std::ostream& out, int indent) const {
  out << name() << "(" << extra_repr();
  if (!children_.is_empty()) {
    out << "\n";
    for (const auto& [child_name, child] : children_) {
      out << std::string(indent + 2, ' ') << "(" << child_name << "): ";
      child->pretty_print(out, indent + 2);
      out << "\n";
    }
    out << std::string(indent, ' ');
  }
  out << ")";
}

std::ostream& operator<<(std::ostream& out, const Module& module) {
  module.pretty_print(out);
  return out;
}

// ---- Checkpoints -------------------------------------------------------------------------------
// state_dict() as a safetensors file (data/safetensors.h), readable by PyTorch
// (safetensors.torch.load_file) with the same names.

void Module::save(const std::string& path) const {
  // "format": "pt" is what Hugging Face's loaders look for in a PyTorch-layout checkpoint.
  save_safetensors(path, state_dict(), {{"format", "pt"}});
}

void Module::load(const std::string& path, bool strict) {
  // Loaded on the CPU; load_state_dict copies each tensor to its parameter's device and dtype.
  load_state_dict(load_safetensors(path, Device::cpu()), strict);
}

}  // namespace leangrad::nn

namespace leangrad {

void save(const std::shared_ptr<nn::Module>& module, const std::string& path) {
  LG_CHECK(module != nullptr, "save('", path, "'): the module is null (an empty holder?)");
  module->save(path);
}

void load(const std::shared_ptr<nn::Module>& module, const std::string& path) {
  LG_CHECK(module != nullptr, "load('", path, "'): the module is null (an empty holder?)");
  module->load(path);
}

}  // namespace leangrad
