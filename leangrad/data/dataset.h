// Datasets: indexable collections of examples, the input of data::DataLoader (data/dataloader.h).
// A Dataset hands out one Example (data, target) per index; the loader stacks them into batches.
// get() is called from the loader's worker threads at once, so it must be safe to call
// concurrently (the datasets here only read tensors they never change).
#pragma once

#include <cstdint>

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
};

// Examples are slices of two tensors along dim 0: get(i) = {data[i], targets[i]}.
//   data::TensorDataset ds(randn({100, 3}), arange(100, kInt64));  // (N, F), (N,)
class TensorDataset : public Dataset {
 public:
  // `targets` may be undefined (examples then have no target); otherwise its dim 0 must equal
  // data's. Both must have at least one dim.
  TensorDataset(Tensor data, Tensor targets);

  std::int64_t size() const override;
  Example get(std::int64_t index) const override;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
};

}  // namespace leangrad::data
