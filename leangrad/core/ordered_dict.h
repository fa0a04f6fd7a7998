// OrderedDict: LibTorch's torch::OrderedDict, the insertion-ordered map that nn::Module returns
// from named_parameters(), named_buffers(), named_children() and named_modules():
//   auto params = model->named_parameters();
//   params["fc.weight"];                       // the value; throws Error naming the missing key
//   if (Tensor* w = params.find("fc.weight"))  // nullptr when absent
//   for (const auto& item : params) item.key(), item.value();
// Items are also std::pairs, so `for (const auto& [name, tensor] : params)` works too.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <leangrad/core/error.h>

namespace leangrad {

template <typename Key, typename Value>
class OrderedDict {
 public:
  // One entry: key() and value() as LibTorch's OrderedDict::Item; first and second as a pair.
  class Item : public std::pair<Key, Value> {
   public:
    Item(Key key, Value value) : std::pair<Key, Value>(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return this->first; }
    Value& value() noexcept { return this->second; }
    const Value& value() const noexcept { return this->second; }
    const std::pair<Key, Value>& pair() const noexcept { return *this; }
    Value& operator*() noexcept { return this->second; }
    const Value& operator*() const noexcept { return this->second; }
    Value* operator->() noexcept { return &this->second; }
    const Value* operator->() const noexcept { return &this->second; }
  };
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  // `key_description` names the keys in error messages ("parameter", "submodule").
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}

  const std::string& key_description() const noexcept { return key_description_; }

  // Adds `key` at the end; a key that is already there is an error.
  Value& insert(Key key, Value value) {
    LG_CHECK(index_.find(key) == index_.end(), key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }

  // The value under `key`; an absent key is an error that lists the keys there are.
  Value& operator[](const Key& key) { return items_[checked_index(key)].second; }
  const Value& operator[](const Key& key) const { return items_[checked_index(key)].second; }
  // The entry at `index` in insertion order (bounds-checked).
  Item& operator[](std::size_t index) { return items_[checked_position(index)]; }
  const Item& operator[](std::size_t index) const { return items_[checked_position(index)]; }

  // A pointer to the value under `key`, or nullptr.
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const Key& key) const noexcept { return index_.find(key) != index_.end(); }

  Iterator begin() { return items_.begin(); }
  ConstIterator begin() const { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator end() const { return items_.end(); }
  Item& front() { return items_[checked_position(0)]; }
  const Item& front() const { return items_[checked_position(0)]; }
  Item& back() { return items_[checked_position(size() - 1)]; }
  const Item& back() const { return items_[checked_position(size() - 1)]; }

  // Removes the entry under `key` (an absent key is an error), keeping the others' order.
  void erase(const Key& key) {
    const std::size_t at = checked_index(key);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    index_.erase(key);
    for (auto& [k, i] : index_)
      if (i > at) --i;
  }

  std::size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }

  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& item : items_)
      out.push_back(item.first);
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& item : items_)
      out.push_back(item.second);
    return out;
  }
  // The entries as plain pairs (NamedTensors, for a state dict or a checkpoint file).
  std::vector<std::pair<Key, Value>> pairs() const {
    return std::vector<std::pair<Key, Value>>(items_.begin(), items_.end());
  }

 private:
  std::size_t checked_index(const Key& key) const {
    auto it = index_.find(key);
    if (it == index_.end()) [[unlikely]] {
      std::string known;
      for (std::size_t i = 0; i < items_.size() && i < 8; ++i)
        known += (i > 0 ? ", '" : "'") + detail::str_cat(items_[i].first) + "'";
      if (items_.size() > 8) known += ", ...";
      LG_THROW(Error, key_description_, " '", key, "' is not defined (there are ", items_.size(),
               items_.empty() ? "" : ": ", known, ")");
    }
    return it->second;
  }
  std::size_t checked_position(std::size_t index) const {
    LG_CHECK(index < items_.size(), key_description_, " index ", index, " is out of range (size ",
             items_.size(), ")");
    return index;
  }

  std::string key_description_;
  std::vector<Item> items_;
  std::unordered_map<Key, std::size_t> index_;
};

}  // namespace leangrad
