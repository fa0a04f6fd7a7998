// nn::Functional, as LibTorch's: a module around a function of one tensor, for a step of a
// Sequential that has no module of its own. Arguments after the function are bound after the
// input, as LibTorch's (std::bind) are.
//   nn::Sequential net(nn::Linear(4, 8), nn::Functional(leangrad::relu), nn::Linear(8, 2));
//   nn::Functional soft(leangrad::elu, /*alpha=*/0.5);           // elu(input, 0.5)
//   nn::Functional scale([](const Tensor& x) { return x * 2.0; });
// No parameters, buffers or submodules of its own (a function that uses some, a closure over a
// module's weight, keeps them out of parameters(): register them on a module instead).
#pragma once

#include <functional>
#include <utility>

#include <leangrad/core/tensor.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  // An empty function is an Error naming the module.
  explicit FunctionalImpl(Function function);
  template <typename SomeFunction, typename First, typename... Rest>
  explicit FunctionalImpl(SomeFunction original_function, First&& first, Rest&&... rest)
      : FunctionalImpl(Function([f = std::move(original_function), a = std::forward<First>(first),
                                 ... bound = std::forward<Rest>(rest)](Tensor input) {
          return f(input, a, bound...);
        })) {}
  // function(input).
  Tensor forward(const Tensor& input) override;

 private:
  Function function_;
};
LEANGRAD_MODULE(Functional);

}  // namespace leangrad::nn
