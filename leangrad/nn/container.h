// The container modules: nn::Sequential (a chain of modules, each fed the previous one's output)
// and nn::ModuleList (an indexable list of submodules with no forward of its own). Children are
// named by their index, "0", "1", ..., so parameter names are PyTorch's ("0.weight", "2.bias").
//   auto mlp = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
//       std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 128),
//       std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(128, 10)});
//   Tensor logits = mlp->forward(images);  // (B, 1, 28, 28) -> (B, 10)
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/nn/module.h>

namespace leangrad::nn {

// What Sequential and ModuleList share: submodules appended under their index.
class IndexedModules : public Module {
 public:
  // Appends `module` as child std::to_string(size()).
  void push_back(std::shared_ptr<Module> module);
  std::size_t size() const { return named_children().size(); }
  bool empty() const { return size() == 0; }
  // The module at `index` (throws Error when out of range).
  std::shared_ptr<Module> operator[](std::size_t index) const;
  // The same, as its concrete type (throws Error when it is another type): seq.ptr<Linear>(1).
  template <typename M>
  std::shared_ptr<M> ptr(std::size_t index) const {
    auto module = std::dynamic_pointer_cast<M>((*this)[index]);
    LG_CHECK(module != nullptr, name(), "[", index, "] is a ", (*this)[index]->name(),
             ", not the type asked for");
    return module;
  }

 protected:
  IndexedModules(std::string name, std::vector<std::shared_ptr<Module>> modules);
};

class Sequential : public IndexedModules {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules = {})
      : IndexedModules("Sequential", std::move(modules)) {}
  // modules[n-1](...(modules[0](input))); the identity when empty, as in PyTorch.
  Tensor forward(const Tensor& input) override;
};

class ModuleList : public IndexedModules {
 public:
  explicit ModuleList(std::vector<std::shared_ptr<Module>> modules = {})
      : IndexedModules("ModuleList", std::move(modules)) {}
  // forward() is Module's, which throws: a ModuleList only holds modules (iterate it yourself).
};

}  // namespace leangrad::nn
