// nn::Functional (nn/functional_module.h).
#include <leangrad/nn/functional_module.h>

#include <leangrad/core/error.h>

namespace leangrad::nn {

FunctionalImpl::FunctionalImpl(Function function)
    : Module("Functional"), function_(std::move(function)) {
  LG_CHECK(static_cast<bool>(function_), "Functional: expected a function, got an empty one");
}

Tensor FunctionalImpl::forward(const Tensor& input) {
  return function_(input);
}

}  // namespace leangrad::nn
