// DataLoader: worker threads assemble batches; the consumer receives them in batch order.
//
// Design:
// - The order is fixed before any thread starts: begin() computes the epoch's index list (the
//   dataset's order, random_permutation(size, seed, epoch), or a DistributedSampler's share) and
//   cuts it into batches numbered 0..num_batches-1. Batch b is a pure function of its indices,
//   so the batches are bitwise the same for any num_workers. See Note [Ordering by batch index].
// - Workers are std::threads started by begin() and joined when the epoch ends, when the next
//   begin() starts, or when the loader is destroyed. Each claims the next unclaimed batch index
//   under one mutex, assembles the batch without the lock, and files it in `finished` under its
//   index. The consumer waits for exactly the index it needs next.
// - Prefetch depth: a worker may claim batch b only while b < next_to_yield + num_workers *
//   prefetch_factor, so at most that many batches are in flight or waiting (PyTorch's bound).
// - num_workers == 0: no threads; the consumer assembles each batch when it asks for it.
// - Assembly: the batch tensor (B, ...) is allocated once, in the pinned host pool with
//   pin_memory, and each example is copied straight into its row (no intermediate stack). See
//   Note [Pinned batches and the copy stream] for device batches.
// - Random draws: each batch is assembled under default generators seeded from (seed, rank,
//   epoch, batch index), on whichever thread assembles it, so a random augmentation is as
//   reproducible as the order and never moves the training thread's stream. See Note [Random
//   draws in a batch].
// - Errors: an exception while assembling batch b is stored in b's slot and re-thrown in the
//   consumer when it reads b (earlier batches are still delivered); the epoch goes on, and the
//   next increment yields b + 1. See Note [A failed batch] and Note [Which example failed].
// - Shutdown: stop_epoch() sets `stopping`, wakes every waiter and joins. A worker finishes the
//   batch it is assembling (Dataset::get cannot be interrupted) and then exits; nothing throws
//   from the destructor.
#include <leangrad/data/dataloader.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/philox.h>
#include <leangrad/core/profiler.h>

namespace leangrad::data {

namespace {

// One finished batch, or the exception that stopped its assembly.
struct Slot {
  Batch batch;
  std::exception_ptr error;
  std::unique_ptr<cuda::Event> copied;  // device batches: recorded after the copy was queued
};

// Stacks one field (data or target) of a batch's examples into a new (B, ...) tensor, directly
// in the pinned pool when `pinned`. All examples must agree in shape and dtype.
Tensor stack_field(const std::vector<Tensor>& parts, const std::int64_t* indices, bool pinned,
                   const char* field) {
  const Tensor& first = parts.front();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    LG_CHECK(parts[i].defined() == first.defined(), "DataLoader: example ", indices[i],
             first.defined() ? " has no " : " has a ", field, " but example ", indices[0],
             first.defined() ? " has one" : " has none");
  }
  if (!first.defined()) return Tensor();
  Shape shape = first.shape();
  shape.insert(shape.begin(), static_cast<std::int64_t>(parts.size()));
  Tensor out = empty(shape, TensorOptions(first.dtype()).pinned_memory(pinned));
  const std::size_t row_bytes = first.nbytes();
  auto* rows = static_cast<char*>(out.data_ptr());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Tensor& part = parts[i];
    LG_CHECK_SHAPE(part.shape() == first.shape() && part.dtype() == first.dtype(),
                   "DataLoader: cannot batch the ", field, " of example ", indices[i], " (",
                   part.dtype(), " ", part.shape(), ") with that of example ", indices[0], " (",
                   first.dtype(), " ", first.shape(), ")");
    if (row_bytes == 0) continue;
    if (part.device().is_cpu() && part.is_contiguous()) {
      std::memcpy(rows + i * row_bytes, part.data_ptr(), row_bytes);
    } else {
      out.select(0, static_cast<std::int64_t>(i)).copy_(part);
    }
  }
  return out;
}

// Note [Which example failed]: an error from Dataset::get (or a transform it runs) reaches the
// consumer far from where it happened, so a leangrad::Error (or one of its four subclasses) is
// re-thrown as the same type, file and line with the example and batch in front of its message:
// "DataLoader: example 37 (batch 9): <message>"; from Dataset::get_batch, whose message names
// the index, "DataLoader: batch 9: <message>". Any other exception, and a subclass of Error the
// caller defined, is re-thrown unchanged: rebuilding it would change its type.
// An error from Dataset::get_batch names the batch alone (the dataset's message names the index).
[[noreturn]] void rethrow_with_prefix(const Error& error, const std::string& prefix) {
  const std::string message = prefix + error.message();
  const std::type_info& type = typeid(error);
  if (type == typeid(Error)) throw Error(message, error.file(), error.line());
  if (type == typeid(ShapeError)) throw ShapeError(message, error.file(), error.line());
  if (type == typeid(DTypeError)) throw DTypeError(message, error.file(), error.line());
  if (type == typeid(DeviceError)) throw DeviceError(message, error.file(), error.line());
  if (type == typeid(OutOfMemoryError)) throw OutOfMemoryError(message, error.file(), error.line());
  throw;  // the exception being handled, as it is
}

[[noreturn]] void rethrow_naming_the_example(const Error& error, std::int64_t index,
                                             std::int64_t batch) {
  rethrow_with_prefix(error,
                      detail::str_cat("DataLoader: example ", index, " (batch ", batch, "): "));
}

[[noreturn]] void rethrow_naming_the_batch(const Error& error, std::int64_t batch) {
  rethrow_with_prefix(error, detail::str_cat("DataLoader: batch ", batch, ": "));
}

// Note [Random draws in a batch]: batch b of epoch e is assembled (Dataset::get, the transforms
// it runs) under a DefaultGeneratorsGuard seeded from (the loader's seed, the sampler's rank, e,
// b), on whichever thread assembles it: a worker, or the consumer without workers. So a random
// augmentation draws the same numbers for a batch whatever num_workers and the threads' timing
// are, a run resumed at epoch e draws them again, and the training thread's own stream (dropout,
// initialisation) is never moved by the dataset. PyTorch seeds each worker process once, with
// base_seed + worker_id (base_seed drawn from the training process's generator at each epoch),
// so its draws depend on which worker assembles a batch, and so on num_workers; a seed per batch
// does not.
//
// The seed is two Philox blocks: (rank, a tag) under the loader's seed gives a key, and (batch,
// epoch) under that key gives the batch's seed. random_permutation's blocks use the seed itself
// as key, so the shuffle and the draws are unrelated streams; the rank (a sampler's, else 0)
// gives each process of a distributed run draws of its own, where PyTorch processes that share a
// manual_seed all draw the same.
std::uint64_t batch_seed(const DataLoaderOptions& options, std::uint64_t epoch,
                         std::int64_t batch) {
  constexpr std::uint32_t kTag0 = 0x62617463u, kTag1 = 0x68726e67u;  // "batc", "hrng"
  const std::uint64_t seed = options.seed();
  const auto rank = static_cast<std::uint32_t>(options.sampler() ? options.sampler()->rank() : 0);
  const philox::Block key = philox::philox4x32_10(philox::Block{{rank, 0u, kTag0, kTag1}},
                                                  static_cast<std::uint32_t>(seed),
                                                  static_cast<std::uint32_t>(seed >> 32));
  const auto b = static_cast<std::uint64_t>(batch);
  const philox::Block r = philox::philox4x32_10(
      philox::Block{{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32),
                     static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)}},
      key.x[0], key.x[1]);
  return (std::uint64_t{r.x[0]} << 32) | r.x[1];
}

}  // namespace

struct DataLoader::Epoch {
  std::vector<std::int64_t> order;  // the epoch's dataset indices, batch after batch
  std::uint64_t epoch = 0;          // seeds the shuffle and the batches' random draws
  std::int64_t num_batches = 0;
  std::int64_t max_in_flight = 0;  // num_workers * prefetch_factor

  std::mutex mutex;
  std::condition_variable batch_finished;  // a worker filed a slot (the consumer waits)
  std::condition_variable window_moved;    // the consumer took a batch, or stopping
  std::int64_t next_to_claim = 0;
  std::int64_t next_to_yield = 0;
  bool stopping = false;
  std::map<std::int64_t, Slot> finished;
  std::vector<std::thread> workers;

  // Batch b's dataset indices, order[b * batch_size, ...), and how many (the last may be short).
  std::pair<const std::int64_t*, std::int64_t> batch_indices(std::int64_t b,
                                                             std::int64_t batch_size) const {
    const std::int64_t first = b * batch_size;
    const std::int64_t count =
        std::min<std::int64_t>(batch_size, static_cast<std::int64_t>(order.size()) - first);
    return {order.data() + first, count};
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  LG_CHECK(dataset_ != nullptr, "DataLoader: expected a dataset, got null");
  LG_CHECK(options_.batch_size() >= 1, "DataLoader: batch_size must be >= 1, got ",
           options_.batch_size());
  LG_CHECK(options_.num_workers() >= 0, "DataLoader: num_workers must be >= 0, got ",
           options_.num_workers());
  LG_CHECK(options_.prefetch_factor() >= 1, "DataLoader: prefetch_factor must be >= 1, got ",
           options_.prefetch_factor());
  LG_CHECK(!(options_.shuffle() && options_.sampler()),
           "DataLoader: shuffle and sampler are mutually exclusive (the sampler shuffles)");
  checked_dataset_size();
  if (options_.sampler()) {
    // The sampler must not split more examples than the dataset has: a larger one would index
    // past the end in some epoch (any epoch's shuffle may reach every index below its size, not
    // only this epoch's). A smaller one trains on the first examples.
    LG_CHECK(options_.sampler()->dataset_size() <= dataset_->size(),
             "DataLoader: the sampler splits a dataset of ", options_.sampler()->dataset_size(),
             " examples, but the dataset has ", dataset_->size());
    // The first epoch is the sampler's own: one set_epoch(e) on it before it is given starts
    // the loader at epoch e (each begin() then sets the sampler's epoch to the loader's).
    next_epoch_ = options_.sampler()->epoch();
  }
  if (options_.device().is_cuda()) {
    LG_CHECK_DEVICE(cuda::is_available(), "DataLoader: batches requested on ", options_.device(),
                    " but CUDA is not available (not built in, or no GPU)");
    LG_CHECK_DEVICE(options_.device().index >= 0 && options_.device().index < cuda::device_count(),
                    "DataLoader: batches requested on ", options_.device(), " but ",
                    cuda::device_count(), " CUDA device(s) are visible");
    copy_stream_ = cuda::Stream::create(options_.device().index);
  }
}

DataLoader::~DataLoader() {
  stop_epoch();
}

std::int64_t DataLoader::num_indices() const {
  return options_.sampler() ? options_.sampler()->num_samples() : checked_dataset_size();
}

std::int64_t DataLoader::checked_dataset_size() const {
  const std::int64_t n = dataset_->size();
  LG_CHECK(n >= 0, "DataLoader: the dataset's size() is ", n, " (expected >= 0)");
  return n;
}

std::int64_t DataLoader::size() const {
  const std::int64_t n = num_indices(), b = options_.batch_size();
  // ceil(n / b) without forming n + b - 1, which overflows for a batch_size near INT64_MAX.
  return options_.drop_last() || n == 0 ? n / b : (n - 1) / b + 1;
}

namespace {

// Note [Pinned batches and the copy stream]: a batch for a CUDA device is assembled on the host
// (pinned with pin_memory), then copied on the loader's copy stream by the thread that assembled
// it, so the copy of batch b+1 overlaps the consumer's work on batch b. From pinned memory the
// copy is non_blocking: the thread only queues it, and the pinned pool keeps the host block
// until the copy is done (ops::copy_ records the stream on it). An event recorded after the
// copy lets the consumer's stream wait on the GPU, not on the host; the device tensors are then
// marked as used on the consumer's stream so the allocator does not reuse them too early.
Slot assemble(const Dataset& dataset, std::uint64_t epoch, std::int64_t batch,
              const std::int64_t* indices, std::int64_t count, const DataLoaderOptions& options,
              const std::optional<cuda::Stream>& copy_stream) {
  const profiler::Span span("DataLoader.assemble", profiler::Category::DataLoader);
  Slot slot;
  try {
    // See Note [Random draws in a batch].
    const DefaultGeneratorsGuard batch_generators(batch_seed(options, epoch, batch));
    NoGradGuard no_grad;
    const bool pinned = options.pin_memory();
    // The whole batch from the dataset where it gathers one (Dataset::get_batch), else each
    // example's get() stacked here.
    std::optional<Batch> gathered;
    try {
      gathered = dataset.get_batch({indices, static_cast<std::size_t>(count)}, pinned);
    } catch (const Error& error) {
      rethrow_naming_the_batch(error, batch);
    }
    if (gathered) {
      slot.batch = std::move(*gathered);
    } else {
      std::vector<Tensor> data, targets;
      data.reserve(static_cast<std::size_t>(count));
      targets.reserve(static_cast<std::size_t>(count));
      for (std::int64_t i = 0; i < count; ++i) {
        Example example;
        try {
          example = dataset.get(indices[i]);
        } catch (const Error& error) {
          rethrow_naming_the_example(error, indices[i], batch);
        }
        data.push_back(std::move(example.data));
        targets.push_back(std::move(example.target));
      }
      slot.batch.data = stack_field(data, indices, pinned, "data");
      slot.batch.target = stack_field(targets, indices, pinned, "target");
    }
    if (copy_stream) {
      // The batch's device current for the copy: the event below belongs to the device current
      // when it is made, and must be the copy stream's. Workers make it current once; without
      // workers this is the training thread, whose current device may be another GPU (a rank on
      // cuda:1 never makes cuda:1 current).
      const Device device = options.device();
      const cuda::DeviceGuard on_device(device);
      cuda::StreamGuard on_copy_stream(*copy_stream);
      slot.batch.data = slot.batch.data.to(device, /*non_blocking=*/pinned);
      if (slot.batch.target.defined())
        slot.batch.target = slot.batch.target.to(device, /*non_blocking=*/pinned);
      slot.copied = std::make_unique<cuda::Event>(/*enable_timing=*/false);
      slot.copied->record(*copy_stream);
    }
  } catch (...) {
    slot.error = std::current_exception();
  }
  return slot;
}

// Hands a finished batch to the consumer: orders the consumer's stream after the batch's copy
// (see Note [Pinned batches and the copy stream]).
Batch deliver(Slot slot, const DataLoaderOptions& options) {
  if (slot.copied) {
    const cuda::Stream consumer = cuda::current_stream(options.device().index);
    consumer.wait(*slot.copied);
    slot.batch.data.record_stream(consumer);
    if (slot.batch.target.defined()) slot.batch.target.record_stream(consumer);
  }
  return std::move(slot.batch);
}

}  // namespace

// Note [Ordering by batch index]: workers finish batches in any order, but each is filed under
// its index and the consumer always takes `next_to_yield`, so delivery order is the index order
// whatever the thread timing. Combined with an index list fixed at begin(), the stream of
// batches depends only on (dataset, options, epoch), never on num_workers or scheduling.
DataLoader::Iterator DataLoader::begin() {
  stop_epoch();
  const std::uint64_t epoch = next_epoch_++;
  auto state = std::make_unique<Epoch>();
  state->epoch = epoch;
  if (options_.sampler()) {
    DistributedSampler sampler = *options_.sampler();
    sampler.set_epoch(epoch);
    state->order = sampler.indices();
  } else if (options_.shuffle()) {
    state->order = random_permutation(checked_dataset_size(), options_.seed(), epoch);
  } else {
    state->order.resize(static_cast<std::size_t>(checked_dataset_size()));
    std::iota(state->order.begin(), state->order.end(), std::int64_t{0});
  }
  state->num_batches = size();
  state->max_in_flight =
      static_cast<std::int64_t>(options_.num_workers()) * options_.prefetch_factor();
  epoch_ = std::move(state);

  Epoch* e = epoch_.get();
  for (int w = 0; w < options_.num_workers(); ++w) {
    // The system may refuse a thread (too many for its limits): the workers started so far stop,
    // and the failure is a leangrad Error naming num_workers, not a std::system_error.
    try {
      start_worker(e);
    } catch (const std::system_error& failure) {
      const int started = static_cast<int>(e->workers.size());
      stop_epoch();
      LG_THROW(Error, "DataLoader: could not start worker thread ", started + 1, " of ",
               options_.num_workers(), " (num_workers): ", failure.what());
    }
  }
  Iterator it(this);
  if (!next(it.batch_, it.error_)) it.loader_ = nullptr;
  return it;
}

void DataLoader::start_worker(Epoch* e) {
  e->workers.emplace_back([this, e] {
    if (copy_stream_) {
      try {
        cuda::set_device(options_.device().index);
      } catch (...) {
        // The copies in assemble() will fail too, and report the error with the batch.
      }
    }
    for (;;) {
      std::int64_t b = 0;
      {
        std::unique_lock<std::mutex> lock(e->mutex);
        e->window_moved.wait(lock, [e] {
          return e->stopping || e->next_to_claim >= e->num_batches ||
                 e->next_to_claim < e->next_to_yield + e->max_in_flight;
        });
        if (e->stopping || e->next_to_claim >= e->num_batches) return;
        b = e->next_to_claim++;
      }
      const auto [indices, count] = e->batch_indices(b, options_.batch_size());
      Slot slot = assemble(*dataset_, e->epoch, b, indices, count, options_, copy_stream_);
      {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->finished.emplace(b, std::move(slot));
      }
      e->batch_finished.notify_all();
    }
  });
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  LG_CHECK(loader_ != nullptr, "DataLoader: incrementing an iterator past the end");
  if (!loader_->next(batch_, error_)) loader_ = nullptr;
  return *this;
}

// Note [A failed batch]: the exception that stopped batch b's assembly is handed to the
// iterator with b's place in the order, and *it re-throws it; the epoch goes on (the workers
// keep assembling b + 1, ... within the prefetch window), so ++it yields b + 1 as an error-free
// run would, its random draws included (Note [Random draws in a batch]). PyTorch's iterator does
// the same: next() raises the worker's exception, and the following next() yields the following
// batch. Nothing else changes: a range-for loop leaves at the exception, and the workers are
// stopped and joined by the next begin() or the loader's destructor, as after a break.
bool DataLoader::next(Batch& batch, std::exception_ptr& error) {
  // The training thread's wait for the batch (or, without workers, its assembly).
  const profiler::Span span("DataLoader.next", profiler::Category::DataLoader);
  Epoch* e = epoch_.get();
  LG_CHECK(e != nullptr, "DataLoader: no epoch is running (call begin())");
  batch = Batch();
  error = nullptr;
  if (e->next_to_yield >= e->num_batches) {
    stop_epoch();
    return false;
  }
  const std::int64_t b = e->next_to_yield;
  Slot slot;
  if (e->workers.empty()) {
    const auto [indices, count] = e->batch_indices(b, options_.batch_size());
    slot = assemble(*dataset_, e->epoch, b, indices, count, options_, copy_stream_);
    ++e->next_to_yield;
  } else {
    std::unique_lock<std::mutex> lock(e->mutex);
    e->batch_finished.wait(lock, [e, b] { return e->finished.count(b) > 0; });
    auto node = e->finished.extract(b);
    slot = std::move(node.mapped());
    ++e->next_to_yield;
    lock.unlock();
    e->window_moved.notify_all();
  }
  if (slot.error) {
    error = slot.error;
    return true;
  }
  try {
    batch = deliver(std::move(slot), options_);
  } catch (...) {  // the consumer's stream could not be ordered after the copy: this batch's error
    error = std::current_exception();
  }
  return true;
}

void DataLoader::stop_epoch() noexcept {
  if (!epoch_) return;
  {
    std::lock_guard<std::mutex> lock(epoch_->mutex);
    epoch_->stopping = true;
  }
  epoch_->window_moved.notify_all();
  for (std::thread& worker : epoch_->workers)
    if (worker.joinable()) worker.join();
  epoch_.reset();
}

}  // namespace leangrad::data
