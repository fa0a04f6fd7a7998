// nn::Sequential and nn::ModuleList (nn/container.h): children registered under their index.
#include <leangrad/nn/container.h>

#include <string>
#include <utility>

namespace leangrad::nn {

std::shared_ptr<Module> IndexedModules::operator[](std::size_t index) const {
  LG_CHECK(index < size(), name(), "[", index, "]: index out of range (size ", size(), ")");
  return modules_[index];
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& module : *this)
    x = (*module)(x);  // hooks and wrappers run (Note [Module call])
  return x;
}

}  // namespace leangrad::nn
