// Basic indexing with LibTorch's spelling (torch::indexing):
//   using namespace leangrad::indexing;
//   t.index({Slice(0, 2), 1})              // t[0:2, 1]
//   t.index({"...", None, Slice(None, None, 2)})   // t[..., None, ::2]
//   t.index_put_({Slice(), 0}, 0.0)        // t[:, 0] = 0
// An index is an integer (selects, removing the dim), a Slice (start, stop, step; each may be
// None, negative counts from the end, out-of-range bounds are clamped as in Python), None (adds
// a dim of size 1) or Ellipsis / "..." (as many full slices as the other indices leave). The
// result is a view (Tensor::index in autograd/tensor_methods.cpp). Tensor indices (gathering by
// an index tensor or a boolean mask) are not supported: no TensorIndex is made from a Tensor or a
// bool, so such an index does not compile.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <leangrad/core/error.h>

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

// One entry of an index list: built implicitly from an integer, a Slice, None, Ellipsis or
// "..." (LibTorch's spellings).
class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis };

  TensorIndex(std::int64_t integer) : kind_(Kind::Integer), integer_(integer) {}  // NOLINT
  TensorIndex(int integer) : TensorIndex(static_cast<std::int64_t>(integer)) {}   // NOLINT
  TensorIndex(Slice slice) : kind_(Kind::Slice), slice_(slice) {}                  // NOLINT
  TensorIndex(bool) = delete;  // PyTorch's t[True] adds a dim; not supported
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}                               // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}                        // NOLINT
  TensorIndex(const char* text) : kind_(Kind::Ellipsis) {                          // NOLINT
    LG_CHECK(text != nullptr && std::string_view(text) == "...",
             "TensorIndex: the only string index is \"...\" (Ellipsis), got \"",
             text == nullptr ? "(null)" : text, "\"");
  }

  Kind kind() const { return kind_; }
  std::int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  std::int64_t integer_ = 0;
  Slice slice_;
};

}  // namespace indexing
}  // namespace leangrad
