// TensorDataset: examples as slices of two tensors along dim 0.
#include <leangrad/data/dataset.h>

#include <leangrad/core/error.h>

namespace leangrad::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  LG_CHECK(data_.defined(), "TensorDataset: expected a defined data tensor");
  LG_CHECK_SHAPE(data_.dim() >= 1, "TensorDataset: data must have a dim 0 (examples), got shape ",
                 data_.shape());
  if (targets_.defined()) {
    LG_CHECK_SHAPE(targets_.dim() >= 1 && targets_.size(0) == data_.size(0),
                   "TensorDataset: data of shape ", data_.shape(), " and targets of shape ",
                   targets_.shape(), " must have the same size in dim 0");
  }
}

std::int64_t TensorDataset::size() const {
  return data_.size(0);
}

Example TensorDataset::get(std::int64_t index) const {
  LG_CHECK(index >= 0 && index < size(), "TensorDataset: index ", index,
           " out of range for a dataset of ", size(), " examples");
  return {data_.select(0, index), targets_.defined() ? targets_.select(0, index) : Tensor()};
}

}  // namespace leangrad::data
