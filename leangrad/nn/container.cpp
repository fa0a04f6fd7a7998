// The containers (nn/container.h): Sequential and ModuleList register their children under
// their index (a Sequential's may be named), ModuleDict under their keys; ParameterList and
// ParameterDict keep parameters as the module's own. Sequential calls its children through their
// AnyModules (nn/any_module.h).
#include <leangrad/nn/container.h>

#include <algorithm>
#include <string>
#include <utility>

namespace leangrad::nn {

std::shared_ptr<Module> IndexedModules::operator[](std::size_t index) const {
  LG_CHECK(index < size(), name(), "[", index, "]: index out of range (size ", size(), ")");
  return modules_[index];
}

void IndexedModules::append(const std::string& name, AnyModule module) {
  modules_.push_back(register_module(name, module.ptr()));
  any_modules_.push_back(std::move(module));
}

void IndexedModules::insert_at(std::size_t index, AnyModule module) {
  LG_CHECK(index <= size(), name(), ".insert(", index, "): index out of range (size ", size(),
           "; at most ", size(), " appends)");
  std::shared_ptr<Module> inserted = module.ptr();
  for (std::size_t i = 0; i < size(); ++i)
    unregister_module(std::to_string(i));
  const auto at = static_cast<std::ptrdiff_t>(index);
  modules_.insert(modules_.begin() + at, std::move(inserted));
  any_modules_.insert(any_modules_.begin() + at, std::move(module));
  for (std::size_t i = 0; i < size(); ++i)
    register_module(std::to_string(i), modules_[i]);
}

void IndexedModules::extend(const IndexedModules& other) {
  // A copy first: extending a list with itself appends each module once.
  const std::vector<AnyModule> modules = other.any_modules_;
  for (const AnyModule& module : modules)
    push_back(module);
}

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules)
    : SequentialImpl() {
  for (const NamedAnyModule& named : named_modules)
    push_back(named.name(), named.module());
}

Tensor SequentialImpl::forward(const Tensor& input) {
  const AnyValue result = any_forward(input);  // the identity when empty
  if (const Tensor* output = result.try_get<Tensor>()) return *output;
  LG_THROW(Error, name(), ": forward(const Tensor&) returns a Tensor, but the last module (",
           (*this)[size() - 1]->name(), ") returned ", detail::demangle(result.type_info()),
           "; call forward<R>(x) or any_forward(x)");
}

AnyValue SequentialImpl::forward_rest(AnyValue value) {
  for (std::size_t i = 1; i < size(); ++i)
    value = any_modules()[i].any_forward(std::move(value));
  return value;
}

ModuleDictImpl::ModuleDictImpl(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules)
    : ModuleDictImpl() {
  update(modules);
}

ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules)
    : ModuleDictImpl() {
  update(modules.pairs());
}

void ModuleDictImpl::update(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, module] : modules)
    insert(key, module);
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> module = (*this)[key];
  unregister_module(key);
  return module;
}

void ModuleDictImpl::clear() {
  for (const std::string& key : keys())
    unregister_module(key);
}

ParameterListImpl::ParameterListImpl(const std::vector<Tensor>& parameters) : ParameterListImpl() {
  extend(parameters);
}

void ParameterListImpl::append(const Tensor& parameter) {
  LG_CHECK(parameter.defined(), name(), ": append got an undefined Tensor()");
  register_parameter(std::to_string(size()), parameter, parameter.requires_grad());
}

void ParameterListImpl::extend(const std::vector<Tensor>& parameters) {
  for (const Tensor& parameter : parameters)
    append(parameter);
}

Tensor& ParameterListImpl::operator[](std::size_t index) {
  LG_CHECK(index < size(), name(), "[", index, "]: index out of range (size ", size(), ")");
  return own_parameters()[index].second;
}

ParameterDictImpl::ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& parameters)
    : ParameterDictImpl() {
  update(parameters);
}

std::size_t ParameterDictImpl::position(const std::string& key) const {
  const NamedTensors& own = own_parameters();
  return static_cast<std::size_t>(
      std::find_if(own.begin(), own.end(), [&](const auto& item) { return item.first == key; }) -
      own.begin());
}

Tensor& ParameterDictImpl::insert(const std::string& key, const Tensor& parameter) {
  LG_CHECK(parameter.defined(), name(), ": insert('", key, "') got an undefined Tensor()");
  const std::size_t at = position(key);
  if (at < size()) return own_parameters()[at].second = parameter;
  return register_parameter(key, parameter, parameter.requires_grad());
}

void ParameterDictImpl::update(const std::vector<std::pair<std::string, Tensor>>& parameters) {
  for (const auto& [key, parameter] : parameters)
    insert(key, parameter);
}

Tensor& ParameterDictImpl::operator[](const std::string& key) {
  const std::size_t at = position(key);
  if (at == size()) {
    std::string known;
    for (const std::string& k : keys())
      known += (known.empty() ? "'" : ", '") + k + "'";
    LG_THROW(Error, name(), ": no parameter '", key, "' (there are ", size(),
             size() > 0 ? ": " : "", known, ")");
  }
  return own_parameters()[at].second;
}

Tensor ParameterDictImpl::pop(const std::string& key) {
  Tensor parameter = (*this)[key];
  own_parameters().erase(own_parameters().begin() + static_cast<std::ptrdiff_t>(position(key)));
  return parameter;
}

void ParameterDictImpl::clear() {
  own_parameters().clear();
}

bool ParameterDictImpl::contains(const std::string& key) const {
  return position(key) < size();
}

std::size_t ParameterDictImpl::size() const {
  return own_parameters().size();
}

std::vector<std::string> ParameterDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, parameter] : own_parameters())
    out.push_back(key);
  return out;
}

std::vector<Tensor> ParameterDictImpl::values() const {
  std::vector<Tensor> out;
  for (const auto& [key, parameter] : own_parameters())
    out.push_back(parameter);
  return out;
}

}  // namespace leangrad::nn
