// The container modules: nn::Sequential (a chain of modules, each fed the previous one's output),
// nn::ModuleList (an indexable list of submodules with no forward of its own) and nn::ModuleDict
// (submodules by name), built as in LibTorch from module holders (or shared_ptrs); and
// nn::ParameterList and nn::ParameterDict, parameters by index or by name. The lists' entries are
// named by their index, "0", "1", ..., so parameter names are PyTorch's ("0.weight", "2.bias");
// a Sequential's may be named instead.
//   nn::Sequential mlp(nn::Flatten(), nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
//   Tensor logits = mlp(images);  // (B, 1, 28, 28) -> (B, 10)
//   mlp->push_back(nn::Dropout(0.1));  auto fc = mlp->ptr<nn::LinearImpl>(1);
//   nn::Sequential named({{"fc", nn::Linear(4, 8)}, {"act", nn::ReLU()}});  // "fc.weight"
//   nn::Sequential rnn(nn::LSTM(8, 16), ...);  rnn->forward<Out>(x, hx);  // any signatures
//   nn::ModuleDict heads;  heads->insert("class", nn::Linear(64, 10));
//   heads->insert("box", nn::Linear(64, 4));
//   Tensor boxes = heads->at<nn::LinearImpl>("box")->forward(features);
//   nn::ParameterList scales;  scales->append(ones({8}).requires_grad_());
#pragma once

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {
class IndexedModules;
}  // namespace leangrad::nn

namespace leangrad::detail {
// What a container takes as a module: a holder (nn::Linear(2, 3), which converts) or a
// std::shared_ptr to a module.
template <typename T>
concept ModuleArgument = std::is_convertible_v<T, std::shared_ptr<nn::Module>>;
// A container of modules to extend a list with, other than a Sequential or ModuleList (those
// take extend(const IndexedModules&)).
template <typename T>
concept NotIndexedModules = !std::is_base_of_v<nn::IndexedModules, T>;
}  // namespace leangrad::detail

namespace leangrad::nn {

// What Sequential and ModuleList share: submodules in order, each also kept as an AnyModule
// (its forward, whatever its signature), appended under their index.
class IndexedModules : public Module {
 public:
  // Appends `module` as child std::to_string(size()).
  template <typename M>
  void push_back(std::shared_ptr<M> module) {
    push_back(AnyModule(std::move(module)));
  }
  template <typename M>
  void push_back(const ModuleHolder<M>& module) {
    push_back(module.ptr());
  }
  void push_back(AnyModule module) { append(std::to_string(size()), std::move(module)); }
  // Appends each of `other`'s modules (shared, not copied; a list extended with itself gets each
  // once more), named by index.
  void extend(const IndexedModules& other);
  // Appends each module of a container of shared_ptrs, holders or AnyModules, as LibTorch's.
  template <detail::NotIndexedModules Container>
  void extend(const Container& modules) {
    for (const auto& module : modules)
      push_back(module);
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
  std::shared_ptr<Module> ptr(std::size_t index) const { return (*this)[index]; }
  // The module itself, as LibTorch's at<T>(index): seq->at<nn::LinearImpl>(1).weight.
  template <typename M>
  detail::module_type_t<M>& at(std::size_t index) const {
    return *ptr<M>(index);
  }
  // The modules in order (LibTorch's ModuleList iteration): for (const auto& m : *list).
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 protected:
  explicit IndexedModules(std::string name) : Module(std::move(name)) {}
  // Registers `module` as the child `name` and appends it.
  void append(const std::string& name, AnyModule module);
  // Puts `module` before position `index` (size(): at the end); every child is then renamed by
  // its new index, as LibTorch's ModuleList::insert does.
  void insert_at(std::size_t index, AnyModule module);
  const std::vector<AnyModule>& any_modules() const { return any_modules_; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  std::vector<AnyModule> any_modules_;  // the same modules, with their forward
};

// A chain: each child's output is the next one's input, as LibTorch's Sequential. The first
// child may take several arguments and any child may return any type (a tuple, a PackedSequence)
// that the next one takes: forward<R>(args...) and any_forward(args...) pass AnyValues along
// (nn/any_module.h). forward(x) of one tensor is the identity when empty, as PyTorch's.
class SequentialImpl : public IndexedModules {
 public:
  SequentialImpl() : IndexedModules("Sequential") {}
  // nn::Sequential(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10)).
  template <detail::ModuleArgument... Modules>
  explicit SequentialImpl(Modules&&... modules) : SequentialImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  // Children named as given, LibTorch's named construction:
  //   nn::Sequential({{"conv", nn::Conv2d(1, 8, 3)}, {"act", nn::ReLU()}})
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules);

  using IndexedModules::push_back;
  // Appends `module` as the child `name` (a name taken, or with a '.', is an Error).
  template <typename M>
  void push_back(const std::string& name, std::shared_ptr<M> module) {
    append(name, AnyModule(std::move(module)));
  }
  template <typename M>
  void push_back(const std::string& name, const ModuleHolder<M>& module) {
    push_back(name, module.ptr());
  }
  void push_back(const std::string& name, AnyModule module) { append(name, std::move(module)); }

  // modules[n-1](...(modules[0](input))), each child called as module(x) (hooks and wrappers
  // run, Note [Module call]); the identity when empty, as in PyTorch.
  Tensor forward(const Tensor& input) override;
  // The chain from any arguments: the first child's forward takes `args`, each next one the
  // previous result; the last result as R (Tensor by default), or as an AnyValue. An Error names
  // the child whose arguments or result did not fit, and an empty Sequential takes one argument.
  template <typename R = Tensor, typename... Args>
  R forward(Args&&... args) {
    if constexpr (sizeof...(Args) == 1 && std::is_same_v<R, Tensor> &&
                  (std::is_same_v<std::remove_cvref_t<Args>, Tensor> && ...)) {
      return forward(static_cast<const Tensor&>(args)...);  // the virtual one
    } else {
      return any_forward(std::forward<Args>(args)...).template get<R>();
    }
  }
  template <typename... Args>
  AnyValue any_forward(Args&&... args) {
    if (is_empty()) {
      if constexpr (sizeof...(Args) == 1)
        return AnyValue(std::forward<Args>(args)...);
      else
        LG_THROW(Error, name(), ": forward of an empty Sequential takes one argument ",
                 "(returned as it is), got ", sizeof...(Args));
    }
    AnyValue value = any_modules().front().any_forward(std::forward<Args>(args)...);
    return forward_rest(std::move(value));
  }

 private:
  // Feeds `value` (the first child's result) through children 1, 2, ...
  AnyValue forward_rest(AnyValue value);
};

// The holder, with LibTorch's named construction: nn::Sequential({{"fc", nn::Linear(4, 8)}}).
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using Impl = SequentialImpl;
  Sequential() : ModuleHolder() {}
  Sequential(std::initializer_list<NamedAnyModule> named_modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(named_modules)) {}
};

class ModuleListImpl : public IndexedModules {
 public:
  ModuleListImpl() : IndexedModules("ModuleList") {}
  template <detail::ModuleArgument... Modules>
  explicit ModuleListImpl(Modules&&... modules) : ModuleListImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  // Puts `module` at `index` (0..size(); an Error beyond), renaming the children after it by
  // their new index, as LibTorch's insert.
  template <typename M>
  void insert(std::size_t index, std::shared_ptr<M> module) {
    insert_at(index, AnyModule(std::move(module)));
  }
  template <typename M>
  void insert(std::size_t index, const ModuleHolder<M>& module) {
    insert(index, module.ptr());
  }
  // forward() is Module's, which throws: a ModuleList only holds modules (iterate it yourself).
};
LEANGRAD_MODULE(ModuleList);

// Submodules by name, in insertion order, as LibTorch's ModuleDict: the names are the children's
// (parameter "box.weight"). No forward of its own (Module's, which throws).
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);

  // Adds `module` under `key`, or puts it in the place of the one there (LibTorch's insert).
  template <typename M>
  void insert(const std::string& key, std::shared_ptr<M> module) {
    if (contains(key))
      replace_module(key, std::move(module));
    else
      register_module(key, std::move(module));
  }
  template <typename M>
  void insert(const std::string& key, const ModuleHolder<M>& module) {
    insert(key, module.ptr());
  }
  // insert() of each entry, in order.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  // Removes and returns the module under `key` (an absent key is an Error listing the keys).
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();

  bool contains(const std::string& key) const { return named_children().contains(key); }
  std::size_t size() const { return named_children().size(); }
  bool empty() const { return named_children().is_empty(); }
  std::vector<std::string> keys() const { return named_children().keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return named_children().values(); }
  const OrderedDict<std::string, std::shared_ptr<Module>>& items() const {
    return named_children();
  }
  // The module under `key` (an absent key is an Error listing the keys).
  std::shared_ptr<Module> operator[](const std::string& key) const { return named_children()[key]; }
  // The same, as its concrete type (an Error when it is another): dict->at<nn::LinearImpl>("fc").
  template <typename M>
  std::shared_ptr<detail::module_type_t<M>> at(const std::string& key) const {
    auto module = std::dynamic_pointer_cast<detail::module_type_t<M>>((*this)[key]);
    LG_CHECK(module != nullptr, name(), "['", key, "'] is a ", (*this)[key]->name(),
             ", not the type asked for (", detail::demangle(typeid(M)), ")");
    return module;
  }
  auto begin() const { return named_children().begin(); }
  auto end() const { return named_children().end(); }
};
LEANGRAD_MODULE(ModuleDict);

// Parameters by index, named "0", "1", ... (state_dict keys "0", "scales.1"), as LibTorch's
// ParameterList. append keeps each tensor's requires_grad, as LibTorch's does.
class ParameterListImpl : public Module {
 public:
  ParameterListImpl() : Module("ParameterList") {}
  explicit ParameterListImpl(const std::vector<Tensor>& parameters);

  void append(const Tensor& parameter);
  void extend(const std::vector<Tensor>& parameters);
  std::size_t size() const { return own_parameters().size(); }
  bool is_empty() const { return size() == 0; }
  // The parameter at `index` (out of range: an Error naming the size).
  Tensor& operator[](std::size_t index);
  Tensor& at(std::size_t index) { return (*this)[index]; }
  // Each parameter as (name, tensor), in order: for (auto& [name, p] : *list).
  auto begin() { return own_parameters().begin(); }
  auto end() { return own_parameters().end(); }
};
LEANGRAD_MODULE(ParameterList);

// Parameters by name, in insertion order, as LibTorch's ParameterDict.
class ParameterDictImpl : public Module {
 public:
  ParameterDictImpl() : Module("ParameterDict") {}
  explicit ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& parameters);

  // Adds `parameter` under `key` (keeping its requires_grad), or replaces the one there.
  Tensor& insert(const std::string& key, const Tensor& parameter);
  void update(const std::vector<std::pair<std::string, Tensor>>& parameters);
  // Removes and returns the parameter under `key` (absent: an Error listing the keys).
  Tensor pop(const std::string& key);
  void clear();

  bool contains(const std::string& key) const;
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  std::vector<std::string> keys() const;
  std::vector<Tensor> values() const;
  // The parameter under `key` (absent: an Error listing the keys).
  Tensor& operator[](const std::string& key);
  Tensor& get(const std::string& key) { return (*this)[key]; }
  auto begin() { return own_parameters().begin(); }
  auto end() { return own_parameters().end(); }

 private:
  // The position of `key` among the parameters, or size() when absent.
  std::size_t position(const std::string& key) const;
};
LEANGRAD_MODULE(ParameterDict);

}  // namespace leangrad::nn
