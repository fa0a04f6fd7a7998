// The errors of nn::AnyValue and nn::AnyModule (nn/any_module.h).
#include <leangrad/nn/any_module.h>

#include <algorithm>

namespace leangrad::detail {
namespace {
// "AnyModule(Linear)": the module as messages name it.
std::string label(const nn::Module& module) {
  return str_cat("AnyModule(", module.name(), ")");
}
}  // namespace

void throw_any_value_cast(const std::type_info& asked, const std::type_info& held) {
  LG_THROW(Error, "AnyValue::get<", demangle(asked), ">(): it holds ", demangle(held));
}

void throw_any_module_empty() {
  LG_THROW(Error,
           "AnyModule is empty: it was made with no module (AnyModule()) or from a null "
           "pointer; assign a module first");
}

void throw_any_module_arity(const nn::Module& module, std::size_t required, std::size_t arity,
                            std::size_t given) {
  if (required == arity)
    LG_THROW(Error, label(module), "::forward takes ", arity, " argument", arity == 1 ? "" : "s",
             ", got ", given);
  LG_THROW(Error, label(module), "::forward takes ", required, " to ", arity,
           " arguments (the last ", arity - required, " have defaults), got ", given);
}

void throw_any_module_argument(const nn::Module& module, std::size_t index,
                               const std::type_info& expected, const std::type_info& given) {
  LG_THROW(Error, label(module), "::forward: argument #", index, " must be ", demangle(expected),
           ", got ", demangle(given), " (the type must match exactly, as in LibTorch)");
}

void throw_any_module_result(const nn::Module& module, const std::type_info& asked,
                             const std::type_info& returned) {
  LG_THROW(Error, label(module), "::forward<", demangle(asked), ">(): forward returned ",
           demangle(returned), "; ask for that type, or call any_forward");
}

void throw_any_module_type(const nn::Module& module, const std::type_info& asked) {
  LG_THROW(Error, label(module), " holds ", demangle(typeid(module)), ", not the type asked for (",
           demangle(asked), ")");
}

std::size_t required_forward_arguments(const nn::Module& module,
                                       const nn::ForwardDefaults& defaults, std::size_t arity) {
  // The indices must be arity - defaults.size(), ..., arity - 1, in order.
  const std::size_t first = arity - std::min(arity, defaults.size());
  bool trailing = defaults.size() <= arity;
  for (std::size_t i = 0; trailing && i < defaults.size(); ++i)
    trailing = defaults[i].first == first + i;
  if (!trailing) {
    std::string indices;
    for (const auto& [index, value] : defaults)
      indices += str_cat(indices.empty() ? "" : ", ", index);
    LG_THROW(Error, demangle(typeid(module)),
             ": LEANGRAD_FORWARD_HAS_DEFAULT_ARGS must name forward's last arguments in order, "
             "with no gap; forward takes ",
             arity, " and the defaults are for [", indices, "]");
  }
  return first;
}

}  // namespace leangrad::detail
