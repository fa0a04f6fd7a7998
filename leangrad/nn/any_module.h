// nn::AnyValue and nn::AnyModule: LibTorch's type-erased value and module. An AnyModule holds any
// module and calls its forward, whatever that forward takes and returns, with the arguments
// checked at run time; nn::Sequential keeps one per child, so a chain may start from several
// inputs and pass tuples along (nn/container.h).
//   nn::AnyModule linear(nn::Linear(3, 4));
//   Tensor y = linear.forward(x);                         // Tensor by default
//   nn::AnyModule lstm(nn::LSTM(8, 16));
//   auto [out, state] = lstm.forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(seq);
//   nn::AnyValue v = lstm.any_forward(seq, std::optional<std::tuple<Tensor, Tensor>>(state));
//   linear.get<nn::LinearImpl>().weight;  linear.ptr<nn::LinearImpl>();  linear.ptr();
// Which forward it calls (Note [AnyModule's forward]): the one named by the class's
// `using ForwardSignature = R(Args...);` when it has one (a class whose forward is overloaded,
// as `using Module::forward;` makes it), else the class's only forward, else nn::Module's (one
// tensor in and out). Trailing arguments may be left out when the class says what they default
// to, as LibTorch's FORWARD_HAS_DEFAULT_ARGS does (C++'s own defaults cannot be seen through a
// pointer to the function):
//   LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(Tensor())})
// Each argument must hold exactly the type the parameter names (cv and reference removed), as
// in LibTorch: pass std::int64_t{3}, not 3, to an std::int64_t parameter.
#pragma once

#include <any>
#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {
class AnyValue;
}  // namespace leangrad::nn

namespace leangrad::detail {
// What AnyValue's constructor takes: any value but another AnyValue (that one is copied).
template <typename T>
concept NotAnyValue = !std::same_as<std::remove_cvref_t<T>, nn::AnyValue>;
// The errors of AnyValue::get and AnyModule::forward (any_module.cpp), naming the types.
[[noreturn]] void throw_any_value_cast(const std::type_info& asked, const std::type_info& held);
[[noreturn]] void throw_any_module_empty();
[[noreturn]] void throw_any_module_arity(const nn::Module& module, std::size_t required,
                                         std::size_t arity, std::size_t given);
[[noreturn]] void throw_any_module_argument(const nn::Module& module, std::size_t index,
                                            const std::type_info& expected,
                                            const std::type_info& given);
[[noreturn]] void throw_any_module_result(const nn::Module& module, const std::type_info& asked,
                                          const std::type_info& returned);
[[noreturn]] void throw_any_module_type(const nn::Module& module, const std::type_info& asked);
}  // namespace leangrad::detail

namespace leangrad::nn {

// A value of any copyable type, as LibTorch's AnyValue: what AnyModule's forward returns and what
// a Sequential passes from one child to the next.
class AnyValue {
 public:
  template <detail::NotAnyValue T>
  explicit AnyValue(T&& value) : value_(std::forward<T>(value)) {
    static_assert(std::is_copy_constructible_v<std::decay_t<T>>,
                  "AnyValue holds copyable values only (it is a std::any)");
  }

  // The value as T, or nullptr when it holds another type.
  template <typename T>
  T* try_get() noexcept {
    return std::any_cast<T>(&value_);
  }
  template <typename T>
  const T* try_get() const noexcept {
    return std::any_cast<T>(&value_);
  }
  // The value as T (an Error naming both types when it holds another).
  template <typename T>
  T get() const {
    if (const T* value = try_get<T>()) return *value;
    detail::throw_any_value_cast(typeid(T), type_info());
  }
  // The type held.
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

// What LEANGRAD_FORWARD_HAS_DEFAULT_ARGS lists: (argument index, value) of each default.
using ForwardDefaults = std::vector<std::pair<std::size_t, AnyValue>>;

}  // namespace leangrad::nn

// Inside a module class: the values of forward's trailing arguments an AnyModule (and so a
// Sequential) may leave out, by argument index; they must be the last ones, with no gap.
//   LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(Tensor())}, {2, nn::AnyValue(true)})
#define LEANGRAD_FORWARD_HAS_DEFAULT_ARGS(...)                         \
  static ::leangrad::nn::ForwardDefaults forward_default_arguments() { \
    return {__VA_ARGS__};                                              \
  }

namespace leangrad::detail {

template <typename M>
concept HasForwardSignature = requires {
  typename M::ForwardSignature;
};
template <typename M>
concept HasOneForward = requires {
  &M::forward;
};
template <typename M>
concept HasForwardDefaults = requires {
  { M::forward_default_arguments() } -> std::same_as<nn::ForwardDefaults>;
};

// The class that declares the one-tensor forward &M::forward names: M or a base when it
// overrides nn::Module's, nn::Module itself when only `using Module::forward;` brings it in
// (deduction picks the one overload of that type from the set).
template <typename C>
C* one_tensor_forward_class(Tensor (C::*)(const Tensor&));
template <typename M>
concept NamesOneTensorForward = requires {
  one_tensor_forward_class(&M::forward);
};
template <typename M>
concept OverridesOneTensorForward = NamesOneTensorForward<M> &&
    !std::is_same_v<decltype(one_tensor_forward_class(&M::forward)), nn::Module*>;

// Whether a call with one tensor goes through module(x): when that reaches the forward an
// AnyModule of M would call for one tensor (Note [AnyModule's forward]).
template <typename M>
constexpr bool one_tensor_through_call() {
  if constexpr (HasForwardSignature<M>)
    return OverridesOneTensorForward<M>;
  else if constexpr (HasOneForward<M>)
    return OneTensorForward<M>;
  else
    return true;
}

// The forward an AnyModule of M calls (Note [AnyModule's forward]).
template <typename M>
constexpr auto any_forward_method() {
  if constexpr (HasForwardSignature<M>)
    return static_cast<typename M::ForwardSignature M::*>(&M::forward);
  else if constexpr (HasOneForward<M>)
    return &M::forward;
  else
    return &nn::Module::forward;
}

// The parameters and result of a pointer to a member function.
template <typename Method>
struct method_traits;
template <typename C, typename R, typename... P>
struct method_traits<R (C::*)(P...)> {
  using Result = R;
  using Params = std::tuple<P...>;
};
template <typename C, typename R, typename... P>
struct method_traits<R (C::*)(P...) const> : method_traits<R (C::*)(P...)> {};
template <typename C, typename R, typename... P>
struct method_traits<R (C::*)(P...) noexcept> : method_traits<R (C::*)(P...)> {};
template <typename C, typename R, typename... P>
struct method_traits<R (C::*)(P...) const noexcept> : method_traits<R (C::*)(P...)> {};

// How many leading arguments are required, given the defaults' indices; an Error naming the
// class when they are not the last `arity` ones without a gap (any_module.cpp).
std::size_t required_forward_arguments(const nn::Module& module,
                                       const nn::ForwardDefaults& defaults, std::size_t arity);

// The argument at `index` as the parameter type P takes it (moved from when P is by value).
template <typename P>
decltype(auto) any_argument(const nn::Module& module, std::vector<nn::AnyValue>& args,
                            std::size_t index) {
  using Value = std::remove_cvref_t<P>;
  Value* value = args[index].template try_get<Value>();
  if (value == nullptr)
    throw_any_module_argument(module, index, typeid(Value), args[index].type_info());
  if constexpr (std::is_lvalue_reference_v<P>)
    return static_cast<P>(*value);
  else
    return std::move(*value);
}

// Calls M's forward (any_forward_method) on `module` with `args`. See Note [AnyModule's forward].
template <typename M>
nn::AnyValue call_any_forward(nn::Module& base, std::vector<nn::AnyValue>& args) {
  constexpr auto method = any_forward_method<M>();
  using Traits = method_traits<std::remove_const_t<decltype(method)>>;
  using Params = typename Traits::Params;
  static_assert(!std::is_void_v<typename Traits::Result>,
                "AnyModule: forward must return a value (LibTorch's AnyModule asks the same)");
  constexpr std::size_t arity = std::tuple_size_v<Params>;

  // With defaults, forward may be given `required` to `arity` arguments; without, `arity`.
  std::size_t required = arity;
  const nn::ForwardDefaults* defaults = nullptr;
  if constexpr (HasForwardDefaults<M>) {
    static const nn::ForwardDefaults class_defaults = M::forward_default_arguments();
    static const std::size_t first_default =
        required_forward_arguments(base, class_defaults, arity);
    required = first_default;
    defaults = &class_defaults;
  }
  // One tensor to a module whose one-tensor forward is its own: module(x), hooks and wrapper run.
  if constexpr (one_tensor_through_call<M>()) {
    if (args.size() == 1)
      if (const Tensor* input = args[0].try_get<Tensor>()) return nn::AnyValue(base(*input));
  }
  if (args.size() < required || args.size() > arity)
    throw_any_module_arity(base, required, arity, args.size());
  for (std::size_t i = args.size(); i < arity; ++i)
    args.push_back((*defaults)[i - required].second);
  M& module = static_cast<M&>(base);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return nn::AnyValue(
        (module.*method)(any_argument<std::tuple_element_t<I, Params>>(base, args, I)...));
  }
  (std::make_index_sequence<arity>{});
}

}  // namespace leangrad::detail

namespace leangrad::nn {

// Any module, with a forward of any signature, as LibTorch's AnyModule. Copying one aliases the
// module (as copying a holder does); LibTorch's clone() is not there (no module is cloneable).
class AnyModule {
 public:
  // Empty: forward and get throw; is_empty() is true.
  AnyModule() = default;
  template <typename M>
  explicit AnyModule(std::shared_ptr<M> module)
      : module_(std::move(module)), type_(&typeid(M)), call_(&detail::call_any_forward<M>) {
    static_assert(std::is_base_of_v<Module, M>, "AnyModule holds nn::Module subclasses");
    if (module_ == nullptr) detail::throw_any_module_empty();
    detail::bind_forward(static_cast<M&>(*module_));
  }
  template <typename M>
  explicit AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}
  template <typename M>
  AnyModule& operator=(std::shared_ptr<M> module) {
    return *this = AnyModule(std::move(module));
  }

  // forward(args...) as an AnyValue: each argument is checked against forward's parameter type
  // and left-out trailing ones take the class's defaults (LEANGRAD_FORWARD_HAS_DEFAULT_ARGS). An
  // AnyValue argument is passed as the value it holds.
  template <typename... Args>
  AnyValue any_forward(Args&&... args) const {
    if (module_ == nullptr) detail::throw_any_module_empty();
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Args));
    (values.push_back(to_any(std::forward<Args>(args))), ...);
    return call_(*module_, values);
  }
  // The same as R (Tensor by default; an Error naming both types when forward returned another).
  template <typename R = Tensor, typename... Args>
  R forward(Args&&... args) const {
    const AnyValue result = any_forward(std::forward<Args>(args)...);
    if (const R* value = result.template try_get<R>()) return *value;
    detail::throw_any_module_result(*module_, typeid(R), result.type_info());
  }

  // The module as M, which may be a holder type (get<nn::Linear>() returns the holder, as
  // LibTorch's); an Error naming both types when it is another.
  template <typename M>
  decltype(auto) get() const {
    if constexpr (detail::HolderType<M>)
      return M(ptr<typename M::ContainedType>());
    else
      return static_cast<M&>(*ptr<M>());
  }
  std::shared_ptr<Module> ptr() const {
    if (module_ == nullptr) detail::throw_any_module_empty();
    return module_;
  }
  template <typename M>
  std::shared_ptr<detail::module_type_t<M>> ptr() const {
    auto module = std::dynamic_pointer_cast<detail::module_type_t<M>>(ptr());
    if (module == nullptr) detail::throw_any_module_type(*module_, typeid(M));
    return module;
  }
  // The type it was made with (typeid(nn::LinearImpl)); typeid(void) when empty.
  const std::type_info& type_info() const noexcept { return type_ ? *type_ : typeid(void); }
  bool is_empty() const noexcept { return module_ == nullptr; }

 private:
  template <typename T>
  static AnyValue to_any(T&& value) {
    if constexpr (std::is_same_v<std::remove_cvref_t<T>, AnyValue>)
      return std::forward<T>(value);
    else
      return AnyValue(std::forward<T>(value));
  }

  std::shared_ptr<Module> module_;
  const std::type_info* type_ = nullptr;
  AnyValue (*call_)(Module&, std::vector<AnyValue>&) = nullptr;
};

// A name and a module, what Sequential's named construction takes (LibTorch's NamedAnyModule):
//   nn::Sequential net({{"fc", nn::Linear(4, 8)}, {"act", nn::ReLU()}});
class NamedAnyModule {
 public:
  template <typename M>
  NamedAnyModule(std::string name, std::shared_ptr<M> module)
      : name_(std::move(name)), module_(std::move(module)) {}
  template <typename M>
  NamedAnyModule(std::string name, const ModuleHolder<M>& holder)
      : name_(std::move(name)), module_(holder) {}
  NamedAnyModule(std::string name, AnyModule module)
      : name_(std::move(name)), module_(std::move(module)) {}

  const std::string& name() const noexcept { return name_; }
  const AnyModule& module() const noexcept { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

// An options field holding a module, as LibTorch's TORCH_ARG(AnyModule, name): the setter takes
// an AnyModule or what makes one (a holder, a shared_ptr), so .norm(nn::LayerNorm(...)) and
// .norm(nn::AnyModule(nn::LayerNorm(...))) both read as expected; empty by default.
#define LG_ANY_MODULE_ARG(name)                                   \
 public:                                                          \
  template <typename M>                                           \
  requires std::constructible_from<::leangrad::nn::AnyModule, M>  \
  auto name(M&& module)->decltype(*this) {                        \
    name##_ = ::leangrad::nn::AnyModule(std::forward<M>(module)); \
    return *this;                                                 \
  }                                                               \
  const ::leangrad::nn::AnyModule& name() const {                 \
    return name##_;                                               \
  }                                                               \
                                                                  \
 private:                                                         \
  ::leangrad::nn::AnyModule name##_

// Note [AnyModule's forward]
// An AnyModule is made where the module's type M is known, and keeps a pointer to
// call_any_forward<M>: that function knows M's forward and unpacks a vector of AnyValues into
// its parameters, checking each. The forward is found at compile time: M::ForwardSignature when
// M names one (static_cast picks that overload), else &M::forward when it names one function,
// else nn::Module's virtual forward(const Tensor&) (M then has several forwards and named none:
// AnyModule reaches the one-tensor one, as nn::Module does). One tensor given to a module goes
// through module(x), so hooks and the forward wrapper (recompute, offload) run as they do for a
// holder's call, when that call reaches the module's own code: M overrides forward(const
// Tensor&) (EmbeddingBag, whose ForwardSignature is the form with offsets), or M's only forward
// takes one tensor (by value too, bound by Note [Bound forward]; C++ defaults for the rest), or
// M named no forward. A class that names a ForwardSignature and only has nn::Module's one-tensor
// forward through `using Module::forward;` (the losses) gets its own forward, or an Error for too
// few arguments, not Module's "not implemented". Every other call is the forward itself, as
// LibTorch's. C++'s default arguments belong to the call expression, not to the
// function, so a left-out argument takes the value the class gave with
// LEANGRAD_FORWARD_HAS_DEFAULT_ARGS; without it, every parameter must be given (except for the
// one-tensor call above, which uses the C++ defaults through module(x)).

}  // namespace leangrad::nn
