// The container modules: nn::Sequential (a chain of modules, each fed the previous one's output)
// and nn::ModuleList (an indexable list of submodules with no forward of its own), built as in
// LibTorch from module holders (or shared_ptrs). Children are named by their index, "0", "1",
// ..., so parameter names are PyTorch's ("0.weight", "2.bias").
//   nn::Sequential mlp(nn::Flatten(), nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
//   Tensor logits = mlp(images);  // (B, 1, 28, 28) -> (B, 10)
//   mlp->push_back(nn::Dropout(0.1));  auto fc = mlp->ptr<nn::LinearImpl>(1);
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::detail {
// What a container takes as a module: a holder (nn::Linear(2, 3), which converts) or a
// std::shared_ptr to a module.
template <typename T>
concept ModuleArgument = std::is_convertible_v<T, std::shared_ptr<nn::Module>>;
}  // namespace leangrad::detail

namespace leangrad::nn {

// What Sequential and ModuleList share: submodules appended under their index.
class IndexedModules : public Module {
 public:
  // Appends `module` as child std::to_string(size()).
  template <typename M>
  void push_back(std::shared_ptr<M> module) {
    modules_.push_back(register_module(std::to_string(size()), std::move(module)));
  }
  template <typename M>
  void push_back(const ModuleHolder<M>& module) {
    push_back(module.ptr());
  }
  std::size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  // The module at `index` (throws Error when out of range).
  std::shared_ptr<Module> operator[](std::size_t index) const;
  // The same, as its concrete type (throws Error when it is another type), as LibTorch's:
  // seq->ptr<nn::LinearImpl>(1); a holder type names its module type (seq->ptr<nn::Linear>(1)).
  template <typename M>
  std::shared_ptr<detail::module_type_t<M>> ptr(std::size_t index) const {
    auto module = std::dynamic_pointer_cast<detail::module_type_t<M>>((*this)[index]);
    LG_CHECK(module != nullptr, name(), "[", index, "] is a ", (*this)[index]->name(),
             ", not the type asked for (", detail::demangle(typeid(M)), ")");
    return module;
  }
  // The modules in order (LibTorch's ModuleList iteration): for (const auto& m : *list).
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 protected:
  explicit IndexedModules(std::string name) : Module(std::move(name)) {}

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

class SequentialImpl : public IndexedModules {
 public:
  SequentialImpl() : IndexedModules("Sequential") {}
  // nn::Sequential(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10)).
  template <detail::ModuleArgument... Modules>
  explicit SequentialImpl(Modules&&... modules) : SequentialImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  // modules[n-1](...(modules[0](input))); the identity when empty, as in PyTorch.
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Sequential);

class ModuleListImpl : public IndexedModules {
 public:
  ModuleListImpl() : IndexedModules("ModuleList") {}
  template <detail::ModuleArgument... Modules>
  explicit ModuleListImpl(Modules&&... modules) : ModuleListImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  // forward() is Module's, which throws: a ModuleList only holds modules (iterate it yourself).
};
LEANGRAD_MODULE(ModuleList);

}  // namespace leangrad::nn
