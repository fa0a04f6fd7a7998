// nn::Sequential and nn::ModuleList (nn/container.h): children registered under their index.
#include <leangrad/nn/container.h>

#include <string>
#include <utility>

namespace leangrad::nn {

IndexedModules::IndexedModules(std::string name, std::vector<std::shared_ptr<Module>> modules)
    : Module(std::move(name)) {
  for (auto& module : modules)
    push_back(std::move(module));
}

void IndexedModules::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(size()), std::move(module));
}

std::shared_ptr<Module> IndexedModules::operator[](std::size_t index) const {
  LG_CHECK(index < size(), name(), "[", index, "]: index out of range (size ", size(), ")");
  return named_children()[index].second;
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& [name, module] : named_children())
    x = (*module)(x);  // hooks and wrappers run (Note [Module call])
  return x;
}

}  // namespace leangrad::nn
