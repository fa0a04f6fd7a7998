// Storage: a reference-counted block of device or host memory that tensors view into.
// Several tensors (views) share one Storage; the memory goes back to its caching allocator when
// the last one is gone.
#pragma once

#include <cstddef>
#include <memory>

#include <leangrad/core/allocator.h>
#include <leangrad/core/device.h>

namespace leangrad {

class Storage {
 public:
  // Memory from the caching allocator of `device` (or the pinned pool), on the current stream.
  static std::shared_ptr<Storage> allocate(std::size_t nbytes, Device device, bool pinned = false);

  Storage(DataPtr data, std::size_t nbytes, Device device, bool pinned = false)
      : data_(std::move(data)), nbytes_(nbytes), device_(device), pinned_(pinned) {}

  void* data() const { return data_.get(); }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool is_pinned() const { return pinned_; }
  const DataPtr& data_ptr() const { return data_; }

  // For offload::ParameterOffload (Note [Releasable device storage] in
  // offload/parameter_offload.cpp): the memory can be handed back while tensors (saved for
  // backward) still refer to this storage, and a new block of nbytes() put in its place before
  // they are used again. Tensor::data_ptr() refuses a storage without its memory with an Error.
  DataPtr release_memory() { return std::move(data_); }
  void adopt_memory(DataPtr data) { data_ = std::move(data); }
  // Tensor::resize_ growing this storage: `data` (nbytes, this storage's device and pool, holding
  // the old bytes) replaces the memory, and every tensor viewing the storage sees it.
  void replace_memory(DataPtr data, std::size_t nbytes) {
    data_ = std::move(data);
    nbytes_ = nbytes;
  }
  bool has_memory() const { return data_.get() != nullptr || nbytes_ == 0; }

 private:
  DataPtr data_;
  std::size_t nbytes_;
  Device device_;
  bool pinned_;
};

}  // namespace leangrad
