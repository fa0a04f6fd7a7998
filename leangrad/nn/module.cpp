// nn::Module: registration, traversal with dotted names, train/eval, to(), state dicts and their
// safetensors checkpoints (save, load), printing.
#include <leangrad/nn/module.h>

#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <typeinfo>
#include <utility>
#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/data/safetensors.h>

namespace leangrad::nn {

namespace {

// The dynamic type's name as written in C++ ("Net", "leangrad::nn::Sequential").
std::string class_name(const Module& module) {
  const char* mangled = typeid(module).name();
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? demangled.get() : mangled;
}

}  // namespace

Tensor Module::forward(const Tensor& /*input*/) {
  // The usual cause: a subclass declared LibTorch's spelling `Tensor forward(Tensor x)`, which
  // hides this virtual instead of overriding it (register_module catches that at compile time).
  LG_THROW(Error, name_, " (", class_name(*this),
           "): forward(const Tensor&) is not implemented; a module called through nn::Module "
           "(containers, DistributedDataParallel, module(x)) must override "
           "`Tensor forward(const Tensor& input) override` (a `forward(Tensor)` taking its "
           "argument by value hides it instead)");
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
  LG_CHECK(hook != nullptr, name_, ": register_forward_pre_hook got an empty function");
  if (!hooks_) hooks_ = std::make_shared<HookHandle::Hooks>();
  const std::int64_t id = hooks_->next_id++;
  hooks_->pre.emplace_back(id, std::move(hook));
  return HookHandle(hooks_, id);
}

HookHandle Module::register_forward_hook(ForwardHook hook) {
  LG_CHECK(hook != nullptr, name_, ": register_forward_hook got an empty function");
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
  if (!hooks_) return forward(input);
  const auto pre = hooks_->pre;
  for (const auto& [id, hook] : pre)
    hook(*this, input);
  Tensor output = forward(input);
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
  LG_CHECK(!name.empty() && name.find('.') == std::string::npos, name_, ": invalid ", what,
           " name '", name, "' (names are non-empty and contain no '.')");
  auto taken = [&](const auto& list) {
    for (const auto& [n, v] : list) {
      if (n == name) return true;
    }
    return false;
  };
  LG_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_), name_, ": the name '",
           name, "' is already used by a parameter, buffer or submodule");
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

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "submodule");
  LG_CHECK(module != nullptr, name_, ": register_module('", name, "') got a null module");
  children_.emplace_back(name, std::move(module));
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  for (const auto& [name, t] : parameters_) {
    if (t.defined()) out.emplace_back(name, t);
  }
  if (recurse) {
    for (const auto& [child_name, child] : children_) {
      for (auto& [name, t] : child->named_parameters(true)) {
        out.emplace_back(child_name + "." + name, t);
      }
    }
  }
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  for (const auto& [name, t] : buffers_) {
    if (t.defined()) out.emplace_back(name, t);
  }
  if (recurse) {
    for (const auto& [child_name, child] : children_) {
      for (auto& [name, t] : child->named_buffers(true)) {
        out.emplace_back(child_name + "." + name, t);
      }
    }
  }
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters(recurse))
    out.push_back(t);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers(recurse))
    out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [name, child] : children_)
    out.push_back(child);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_)
    child->train(on);
}

template <typename F>
void Module::visit_tensors(const F& f) {
  for (auto& [name, t] : parameters_) {
    if (t.defined()) f(t);
  }
  for (auto& [name, t] : buffers_) {
    if (t.defined()) f(t);
  }
  for (auto& [name, child] : children_)
    child->visit_tensors(f);
}

void Module::to(Device device) {
  NoGradGuard no_grad;
  visit_tensors([&](Tensor& t) {
    if (t.device() == device) return;
    t.set_data(t.to(device));
    if (t.grad().defined()) t.set_grad(t.grad().to(device));
  });
}

void Module::to(DType dtype) {
  NoGradGuard no_grad;
  visit_tensors([&](Tensor& t) {
    if (!is_floating(t.dtype()) || t.dtype() == dtype) return;
    t.set_data(t.to(dtype));
    if (t.grad().defined()) t.set_grad(t.grad().to(dtype));
  });
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
  NamedTensors out = named_parameters(true);
  for (auto& entry : named_buffers(true))
    out.push_back(std::move(entry));
  return out;
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
                   source.shape(), " in the state dict and ", target.shape(), " in ", name_);
    copies.emplace_back(target, &source);
    given.erase(it);
  }
  if (strict && (!missing.empty() || !given.empty())) {
    std::ostringstream message;
    message << "load_state_dict (strict) for " << name_ << ":";
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
  out << name_ << "(" << extra_repr();
  if (!children_.empty()) {
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
