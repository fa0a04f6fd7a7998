// nn::ModuleHolder and LEANGRAD_MODULE: LibTorch's module idiom (TORCH_MODULE). A module class
// `NetImpl` gets a holder `Net`, a shared handle to one NetImpl (copying a holder aliases, as
// copying a Tensor does); every built-in module is used this way (nn::Linear holds an
// nn::LinearImpl):
//   struct NetImpl : nn::Module { ... };
//   LEANGRAD_MODULE(Net);
//   Net net;                        // a new NetImpl (its default constructor)
//   Net net(784, 10);               // NetImpl(784, 10)
//   nn::Linear fc{nullptr};         // empty: assign before use
//   fc = register_module("fc", nn::Linear(8, 32));
//   Tensor y = fc(x);               // the call: hooks and forward (Note [Module call])
//   fc->weight; fc->forward(x);     // the module itself
// holder(args...) calls the module's forward with those arguments, whatever its spelling.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/nn/module.h>

namespace leangrad::detail {
// Throws the error of an empty holder of `contained` (its C++ type).
[[noreturn]] void throw_empty_holder(const std::type_info& contained);
// What a holder is made of, besides a module's constructor arguments: nullptr, another holder,
// a pointer to the module.
template <typename Arg, typename Holder>
concept HolderSource = std::is_same_v<std::remove_cvref_t<Arg>, std::nullptr_t> ||
    std::is_base_of_v<Holder, std::remove_cvref_t<Arg>> ||
    std::is_convertible_v<Arg, std::shared_ptr<typename Holder::ContainedType>>;
}  // namespace leangrad::detail

namespace leangrad::nn {

template <typename Contained>
class ModuleHolder {
  static_assert(std::is_base_of_v<Module, Contained>,
                "ModuleHolder<T>: T must derive from nn::Module");

 public:
  using ContainedType = Contained;

  // A new module from its default constructor: `nn::ReLU relu;`. For an empty holder to assign
  // later, write `nn::Linear fc{nullptr};` (LibTorch's spelling).
  ModuleHolder() : impl_(make_default()) {
    static_assert(std::is_default_constructible_v<Contained>,
                  "this module has no default constructor: give it its arguments, or write "
                  "`= nullptr` / `{nullptr}` for an empty holder to assign later (as in LibTorch)");
  }
  // The empty holder; using it throws an Error naming the module type.
  ModuleHolder(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): LibTorch's idiom
  // Holds `module` (register_module returns one: `fc = register_module("fc", ...)`).
  ModuleHolder(std::shared_ptr<Contained> module)  // NOLINT(google-explicit-constructor)
      : impl_(std::move(module)) {
    if (impl_) detail::bind_forward(*impl_);
  }
  // A new module from its constructor's arguments: nn::Linear(784, 128). (One argument that is
  // nullptr, a holder or a module pointer goes to the constructors above.)
  template <typename Head, typename... Tail,
            typename = std::enable_if_t<(sizeof...(Tail) > 0) ||
                                        !detail::HolderSource<Head, ModuleHolder>>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {
    detail::bind_forward(*impl_);
  }

  bool is_empty() const noexcept { return impl_ == nullptr; }

  // The module (an Error naming its type when the holder is empty).
  Contained* get() { return checked(); }
  const Contained* get() const { return checked(); }
  Contained* operator->() { return checked(); }
  const Contained* operator->() const { return checked(); }
  Contained& operator*() { return *checked(); }
  const Contained& operator*() const { return *checked(); }
  const std::shared_ptr<Contained>& ptr() const {
    checked();
    return impl_;
  }
  // The module as an nn::Module pointer (null when empty), for what takes one:
  // DistributedDataParallel(model, ...), offload::ParameterOffload(model), planner blocks.
  operator std::shared_ptr<Module>() const {  // NOLINT(google-explicit-constructor)
    return impl_;
  }

  // Calls the module's forward with `args`, as LibTorch's holders do. With one tensor and a
  // forward that maps a tensor to a tensor, this is module(x): the hooks and the forward wrapper
  // run (Note [Module call]); other forwards (two inputs, other results) are called directly.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    Contained& module = *checked();
    if constexpr (sizeof...(Args) == 1 && (std::is_convertible_v<Args, const Tensor&> && ...) &&
                  detail::OneTensorForward<Contained>) {
      return static_cast<Module&>(module)(std::forward<Args>(args)...);
    } else {
      return module.forward(std::forward<Args>(args)...);
    }
  }
  // seq[i], list[i]: the container's operator[].
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*checked())[std::forward<Arg>(arg)];
  }

 private:
  static std::shared_ptr<Contained> make_default() {
    if constexpr (std::is_default_constructible_v<Contained>) {
      auto module = std::make_shared<Contained>();
      detail::bind_forward(*module);
      return module;
    } else {
      return nullptr;  // the static_assert in the constructor reports it
    }
  }
  Contained* checked() const {
    if (!impl_) [[unlikely]]
      detail::throw_empty_holder(typeid(Contained));
    return impl_.get();
  }

  std::shared_ptr<Contained> impl_;
};

// Prints the module tree, as `std::cout << *holder` does.
template <typename Contained>
std::ostream& operator<<(std::ostream& out, const ModuleHolder<Contained>& holder) {
  return out << *holder;
}

}  // namespace leangrad::nn

// Defines `Name` as the holder of `ImplType` (LibTorch's TORCH_MODULE_IMPL).
#define LEANGRAD_MODULE_IMPL(Name, ImplType)                    \
  class Name : public ::leangrad::nn::ModuleHolder<ImplType> {  \
   public:                                                      \
    using ::leangrad::nn::ModuleHolder<ImplType>::ModuleHolder; \
    using Impl = ImplType;                                      \
  }

// Defines `Name` as the holder of `NameImpl` (LibTorch's TORCH_MODULE): LEANGRAD_MODULE(Net);
#define LEANGRAD_MODULE(Name) LEANGRAD_MODULE_IMPL(Name, Name##Impl)
