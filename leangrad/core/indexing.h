// Indexing with LibTorch's spelling (torch::indexing):
//   using namespace leangrad::indexing;
//   t.index({Slice(0, 2), 1})              // t[0:2, 1]
//   t.index({"...", None, Slice(None, None, 2)})   // t[..., None, ::2]
//   t.index_put_({Slice(), 0}, 0.0)        // t[:, 0] = 0
//   t.index({idx})                         // t[idx]: rows by an int64 (or int32) index tensor
//   t.index_put_({t < 0}, 0.0)             // t[t < 0] = 0: a bool (or uint8) mask
// An index is an integer (selects, removing the dim), a Slice (start, stop, step; each may be
// None, negative counts from the end, out-of-range bounds are clamped as in Python), None (adds
// a dim of size 1), Ellipsis / "..." (as many full slices as the other indices leave), or a
// Tensor: integers (positions along one dim, negative from the end) or a bool mask (over as many
// dims as it has, standing for the positions of its true elements). The basic indices give a
// view (Tensor::index in autograd/tensor_methods.cpp); tensor indices gather a copy, with
// PyTorch's rules for where their broadcast dims go (Note [Advanced indexing] in
// autograd/advanced_indexing.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/core/tensor.h>

namespace leangrad {
namespace indexing {

// Python's None: an absent slice bound, or, as an index, a new dim of size 1.
inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};

// start:stop:step, each bound optional (None: from the start, to the end, step 1).
class Slice {
 public:
  Slice(std::optional<std::int64_t> start = None, std::optional<std::int64_t> stop = None,
        std::optional<std::int64_t> step = None)
      : start_(start), stop_(stop), step_(step.value_or(1)) {
    LG_CHECK(step_ > 0, "Slice: step must be positive, got ", step_,
             " (negative steps are not supported, as in LibTorch)");
  }
  std::optional<std::int64_t> start() const { return start_; }
  std::optional<std::int64_t> stop() const { return stop_; }
  std::int64_t step() const { return step_; }

 private:
  std::optional<std::int64_t> start_;
  std::optional<std::int64_t> stop_;
  std::int64_t step_;
};

// One entry of an index list: built implicitly from an integer, a Slice, None, Ellipsis, "..."
// or a Tensor (LibTorch's spellings).
class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Tensor };

  TensorIndex(std::int64_t integer) : kind_(Kind::Integer), integer_(integer) {}  // NOLINT
  TensorIndex(int integer) : TensorIndex(static_cast<std::int64_t>(integer)) {}   // NOLINT
  TensorIndex(Slice slice) : kind_(Kind::Slice), slice_(slice) {}                 // NOLINT
  TensorIndex(bool) = delete;                         // PyTorch's t[True] adds a dim; not supported
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}                       // NOLINT
  TensorIndex(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {  // NOLINT
    LG_CHECK(tensor_.defined(), "TensorIndex: expected a defined index tensor, got an undefined ",
             "Tensor()");
  }
  TensorIndex(const char* text) : kind_(Kind::Ellipsis) {  // NOLINT
    LG_CHECK(text != nullptr && std::string_view(text) == "...",
             "TensorIndex: the only string index is \"...\" (Ellipsis), got \"",
             text == nullptr ? "(null)" : text, "\"");
  }

  Kind kind() const { return kind_; }
  std::int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  std::int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace indexing
}  // namespace leangrad
