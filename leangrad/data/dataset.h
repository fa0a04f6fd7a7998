// Datasets: indexable collections of examples, the input of data::DataLoader (data/dataloader.h).
// A Dataset hands out one Example (data, target) per index; the loader stacks them into batches,
// or asks the dataset for the whole batch at once (get_batch) where it can gather one faster.
// get() and get_batch() are called from the loader's worker threads at once, so they must be safe
// to call concurrently (the datasets here only read tensors they never change).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/core/tensor.h>

namespace leangrad::data {

// One example, or a batch of them (the loader's batches stack examples along a new dim 0).
// `target` may be undefined for datasets without labels.
struct Example {
  Tensor data;
  Tensor target;
};
using Batch = Example;

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::int64_t size() const = 0;
  // Example `index` in [0, size()). Thread-safe (see above).
  virtual Example get(std::int64_t index) const = 0;
  // The examples at `indices`, stacked along a new dim 0 exactly as the loader stacks get()'s
  // (same values, dtypes and shapes), in pinned host memory when `pinned`
  // (DataLoaderOptions::pin_memory); or std::nullopt, the default, for the loader to get() and
  // stack each example itself. LibTorch's BatchDataset::get_batch, for the datasets whose examples
  // are rows of tensors: TensorDataset and MNIST copy the rows in one pass (gather_rows) instead of
  // making two tensors per example. An index out of range is an Error naming it. Thread-safe as
  // get().
  virtual std::optional<Batch> get_batch(std::span<const std::int64_t> indices, bool pinned) const {
    (void)indices, (void)pinned;
    return std::nullopt;
  }
};

// rows[indices[0]], rows[indices[1]], ... stacked along a new dim 0 by one copy per row, in pinned
// host memory when `pinned`; each index is checked against rows.size(0) (an Error naming
// `dataset`, the index and the size). std::nullopt when rows is not a contiguous CPU tensor
// (the caller then stacks examples as the loader does). For a Dataset of rows of its own to
// implement get_batch with.
std::optional<Tensor> gather_rows(const char* dataset, const Tensor& rows,
                                  std::span<const std::int64_t> indices, bool pinned);

class MapDataset;

namespace transforms {
template <typename Target>
struct Stack;
}  // namespace transforms

// A dataset that can be mapped, LibTorch's spelling of a per-example transform:
//   auto ds = data::FashionMNIST(root).map(data::transforms::Normalize<>(0.2860, 0.3530));
// map takes a callable Example(Example) (the transforms of data/transforms.h, or a lambda) and
// returns a MapDataset that owns a copy of this dataset (datasets hold tensor handles: copies
// are cheap). The loader calls the transform from its worker threads at once: it must be safe to
// call concurrently. map(transforms::Stack<>()) returns the dataset itself: the loader always
// stacks examples into batches.
template <typename Self>
class MappableDataset : public Dataset {
 public:
  template <typename Transform>
  requires std::invocable<const Transform&, Example> MapDataset map(Transform transform)
  const;
  template <typename Target>
  Self map(const transforms::Stack<Target>&) const {
    return static_cast<const Self&>(*this);
  }
};

// The examples of another dataset passed through a transform (MappableDataset::map).
class MapDataset : public MappableDataset<MapDataset> {
 public:
  using Transform = std::function<Example(Example)>;
  MapDataset(std::shared_ptr<const Dataset> inner, Transform transform)
      : inner_(std::move(inner)), transform_(std::move(transform)) {
    LG_CHECK(inner_ != nullptr && static_cast<bool>(transform_),
             "MapDataset: expected a dataset and a transform, got ",
             inner_ == nullptr ? "a null dataset" : "an empty transform");
  }

  std::int64_t size() const override { return inner_->size(); }
  Example get(std::int64_t index) const override { return transform_(inner_->get(index)); }

 private:
  std::shared_ptr<const Dataset> inner_;
  Transform transform_;
};

template <typename Self>
template <typename Transform>
requires std::invocable<const Transform&, Example> MapDataset
MappableDataset<Self>::map(Transform transform)
const {
  return MapDataset(std::make_shared<Self>(static_cast<const Self&>(*this)),
                    [t = std::move(transform)](Example e) { return t(std::move(e)); });
}

// Examples are slices of two tensors along dim 0: get(i) = {data[i], targets[i]}.
//   data::TensorDataset ds(randn({100, 3}), arange(100, kInt64));  // (N, F), (N,)
class TensorDataset : public MappableDataset<TensorDataset> {
 public:
  // `targets` may be undefined (examples then have no target); otherwise its dim 0 must equal
  // data's. Both must have at least one dim.
  TensorDataset(Tensor data, Tensor targets);

  std::int64_t size() const override;
  Example get(std::int64_t index) const override;
  // The rows of data and targets at `indices` (gather_rows), when both are contiguous
  // CPU tensors; std::nullopt in a subclass, whose get() may differ (it can override get_batch
  // with gather_rows itself).
  std::optional<Batch> get_batch(std::span<const std::int64_t> indices, bool pinned) const override;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
};

}  // namespace leangrad::data
