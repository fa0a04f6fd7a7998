// data::DataLoader: batches of a Dataset, assembled by worker threads, in an order that depends
// only on the seed and the epoch. The threading, ordering and pinned-memory design is described
// at the top of data/dataloader.cpp and in docs/data.md.
//   data::DataLoader loader(data::FashionMNIST(root, data::Split::Train),
//                           data::DataLoaderOptions().batch_size(64).shuffle(true).num_workers(2));
//   for (const auto& [data, target] : loader) { ... }  // (B, 1, 28, 28) float32, (B,) int64
#pragma once

#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>

#include <leangrad/core/cuda.h>
#include <leangrad/core/device.h>
#include <leangrad/core/macros.h>
#include <leangrad/data/dataset.h>
#include <leangrad/data/sampler.h>

namespace leangrad::data {

// Options in LibTorch's builder style; defaults as PyTorch's DataLoader (seed 0 here: the
// order and the random draws are reproducible unless a seed is chosen).
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;

  // Examples per batch (the last batch of an epoch may be smaller unless drop_last).
  LG_ARG(std::int64_t, batch_size) = 1;
  // A new permutation per epoch, random_permutation(size, seed, epoch); else dataset order.
  LG_ARG(bool, shuffle) = false;
  // Worker threads assembling batches; 0 assembles them in the consumer's thread on demand.
  LG_ARG(int, num_workers) = 0;

 public:
  // LibTorch's name for num_workers.
  DataLoaderOptions& workers(int value) { return num_workers(value); }
  int workers() const { return num_workers(); }

  // Batches are assembled in the pinned host pool (fast asynchronous copies to a GPU).
  LG_ARG(bool, pin_memory) = false;
  // Batches each worker may have ready ahead of the consumer (num_workers * this in total).
  LG_ARG(int, prefetch_factor) = 2;
  // Drop the last batch of an epoch when it is smaller than batch_size.
  LG_ARG(bool, drop_last) = false;
  // Seeds the shuffle and, with the epoch and batch index, the default generators each batch is
  // assembled under (random draws in Dataset::get; see Note [Random draws in a batch]).
  LG_ARG(std::uint64_t, seed) = 0;
  // Where batches are handed out. A CUDA device: each batch is copied there ahead of use on a
  // copy stream (non_blocking from pinned memory), and the consumer's stream waits for it.
  LG_ARG(Device, device) = Device::cpu();

 public:
  // Indices from a DistributedSampler instead of the whole dataset (shuffle must be false: the
  // sampler shuffles). The loader's first epoch is the sampler's epoch() when it is given; each
  // begin() then sets the sampler's epoch to the loader's (set_epoch below).
  DataLoaderOptions& sampler(const DistributedSampler& sampler) {
    sampler_ = sampler;
    return *this;
  }
  const std::optional<DistributedSampler>& sampler() const { return sampler_; }

 private:
  std::optional<DistributedSampler> sampler_;
};

class DataLoader {
 public:
  // Takes a dataset by value (datasets hold tensor handles: copies are cheap) ...
  template <std::derived_from<Dataset> D>
  DataLoader(D dataset, DataLoaderOptions options = {})
      : DataLoader(std::make_shared<D>(std::move(dataset)), std::move(options)) {}
  // ... or shared with the caller.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  // Stops the workers of a running epoch and joins them (never throws).
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Walks the batches of one epoch. Moving an iterator forward may block until the batch is
  // ready. When assembling a batch failed, reading it (*it, it->) re-throws the exception it
  // threw, with its type, and ++it goes on with the next batch: PyTorch's iterator, whose next()
  // raises a worker's exception and then yields the following batch. A range-for loop leaves at
  // the exception, as in PyTorch; to skip failed batches, catch around *it:
  //   for (auto it = loader.begin(); it != loader.end(); ++it) {
  //     Batch batch;
  //     try { batch = *it; } catch (const Error& e) { log(e); continue; }  // skips the batch
  //     train(batch);
  //   }
  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    const Batch& operator*() const {
      if (error_) std::rethrow_exception(error_);
      return batch_;
    }
    const Batch* operator->() const { return &**this; }
    Iterator& operator++();
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.loader_ == b.loader_; }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader) : loader_(loader) {}
    DataLoader* loader_;  // null at the end
    Batch batch_;
    std::exception_ptr error_;  // what assembling this batch threw, or null
  };

  // Starts an epoch (stopping one still running: earlier iterators become invalid) and returns
  // an iterator at its first batch.
  Iterator begin();
  Iterator end() { return Iterator(nullptr); }

  // The epoch the next begin() starts (each begin() then advances it by one; it starts at 0, or
  // at the sampler's epoch). The shuffle and a sampler's partition depend only on (seed, epoch).
  void set_epoch(std::uint64_t epoch) { next_epoch_ = epoch; }
  std::uint64_t next_epoch() const { return next_epoch_; }

  // Batches per epoch.
  std::int64_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }

 private:
  struct Epoch;  // the running epoch's queue and workers (data/dataloader.cpp)

  // The next batch of the running epoch (or the exception assembling it threw, in `error`), or
  // false at its end.
  bool next(Batch& batch, std::exception_ptr& error);
  void stop_epoch() noexcept;
  void start_worker(Epoch* e);  // one worker thread of the epoch e
  std::int64_t num_indices() const;
  std::int64_t checked_dataset_size() const;  // dataset_->size(), an Error when negative

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  std::uint64_t next_epoch_ = 0;
  std::unique_ptr<Epoch> epoch_;
  // Host-to-device copies of batches go here when options_.device() is a CUDA device.
  std::optional<cuda::Stream> copy_stream_;
};

// LibTorch's factory: `auto loader = data::make_data_loader(std::move(ds), options);` and then
// `for (auto& batch : *loader)`. The loader owns the dataset.
template <std::derived_from<Dataset> D>
std::unique_ptr<DataLoader> make_data_loader(D dataset, DataLoaderOptions options = {}) {
  return std::make_unique<DataLoader>(std::move(dataset), std::move(options));
}
template <std::derived_from<Dataset> D>
std::unique_ptr<DataLoader> make_data_loader(D dataset, std::int64_t batch_size) {
  return make_data_loader(std::move(dataset), DataLoaderOptions().batch_size(batch_size));
}

}  // namespace leangrad::data
