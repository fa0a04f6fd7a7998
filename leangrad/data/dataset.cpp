// TensorDataset: examples as slices of two tensors along dim 0; and gathering such slices into a
// batch in one pass (gather_rows).
#include <leangrad/data/dataset.h>

#include <cstring>
#include <typeinfo>

#include <leangrad/core/creation.h>
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

std::optional<Batch> TensorDataset::get_batch(std::span<const std::int64_t> indices,
                                              bool pinned) const {
  // A subclass may override get() (an augmentation): its batches must come from it.
  if (typeid(*this) != typeid(TensorDataset)) return std::nullopt;
  std::optional<Tensor> data = gather_rows("TensorDataset", data_, indices, pinned);
  if (!data) return std::nullopt;
  if (!targets_.defined()) return Batch{std::move(*data), Tensor()};
  std::optional<Tensor> targets = gather_rows("TensorDataset", targets_, indices, pinned);
  if (!targets) return std::nullopt;
  return Batch{std::move(*data), std::move(*targets)};
}

std::optional<Tensor> gather_rows(const char* dataset, const Tensor& rows,
                                  std::span<const std::int64_t> indices, bool pinned) {
  if (!rows.device().is_cpu() || !rows.is_contiguous()) return std::nullopt;
  const std::int64_t count = rows.size(0);
  for (const std::int64_t index : indices) {
    LG_CHECK(index >= 0 && index < count, dataset, ": index ", index,
             " out of range for a dataset of ", count, " examples");
  }
  Shape shape = rows.shape();
  shape[0] = static_cast<std::int64_t>(indices.size());
  Tensor out = empty(shape, TensorOptions(rows.dtype()).pinned_memory(pinned));
  // A row's bytes: the tensor's over its rows (count > 0 here unless there are no indices).
  const std::size_t row_bytes = count == 0 ? 0 : rows.nbytes() / static_cast<std::size_t>(count);
  if (row_bytes == 0) return out;
  const auto* from = static_cast<const char*>(rows.data_ptr());
  auto* to = static_cast<char*>(out.data_ptr());
  for (std::size_t i = 0; i < indices.size(); ++i)
    std::memcpy(to + i * row_bytes, from + static_cast<std::size_t>(indices[i]) * row_bytes,
                row_bytes);
  return out;
}

}  // namespace leangrad::data
