// The caching allocator: one device-independent pooling policy (caching_allocator.cpp) over small
// backends that only know how to get and return raw memory (CPU, CUDA, pinned host).
// Tensors hold their memory through DataPtr, a move-only handle that gives the block back to the
// pool it came from. See caching_allocator.cpp for the policy and its Notes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <leangrad/core/device.h>
#include <leangrad/core/memory.h>

namespace leangrad {

// A stream as the allocator sees it. `id` keys the free lists and is never reused within a
// process: the driver hands out the cudaStream_t of a destroyed stream again, and a new stream
// keyed by that handle would be given blocks still in use by the old stream's queued work.
// `handle` is the cudaStream_t (0: the default stream) that stream events are recorded on, and
// `device` the GPU it belongs to: every GPU's default stream has id 0 and handle 0, so only the
// device tells them apart (Note [Default streams of several GPUs] in caching_allocator.cpp).
// On the CPU every allocation is on the default StreamRef{}. See Note [Stream-ordered reuse].
struct StreamRef {
  std::uint64_t id = 0;
  std::uintptr_t handle = 0;
  int device = 0;
  friend bool operator==(const StreamRef& a, const StreamRef& b) {
    return a.id == b.id && a.device == b.device;
  }
};
// The "stream" of pinned host blocks: host memory belongs to no CUDA stream, so a use on any
// stream, the default stream included, must be recorded before the block may be reused.
constexpr StreamRef kHostStream{~std::uint64_t{0}, 0};

// Owning handle to a block of memory. The deleter is called with (context, ptr) on destruction.
class DataPtr {
 public:
  using Deleter = void (*)(void* context, void* ptr);

  DataPtr() = default;
  DataPtr(void* ptr, void* context, Deleter deleter, Device device)
      : ptr_(ptr), context_(context), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& other) noexcept { *this = std::move(other); }
  DataPtr& operator=(DataPtr&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = other.ptr_;
      context_ = other.context_;
      deleter_ = other.deleter_;
      device_ = other.device_;
      other.ptr_ = nullptr;
      other.context_ = nullptr;
      other.deleter_ = nullptr;
    }
    return *this;
  }
  ~DataPtr() { reset(); }

  void reset() noexcept {
    if (deleter_ != nullptr) deleter_(context_, ptr_);
    ptr_ = nullptr;
    context_ = nullptr;
    deleter_ = nullptr;
  }

  void* get() const { return ptr_; }
  void* context() const { return context_; }
  Deleter deleter() const { return deleter_; }
  Device device() const { return device_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void* ptr_ = nullptr;
  void* context_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_;
};

// What a memory source must provide. Implementations: CpuBackend (64-byte-aligned host memory),
// CudaBackend (cudaMalloc/cudaFree, events on streams), PinnedBackend (cudaHostAlloc, or plain
// host memory when built without CUDA). Tests add fakes (controllable events, failing mallocs).
class AllocatorBackend {
 public:
  virtual ~AllocatorBackend() = default;
  // Returns nullptr when the memory source is exhausted; throws only for programming errors.
  virtual void* allocate(std::size_t nbytes) = 0;
  virtual void deallocate(void* ptr, std::size_t nbytes) = 0;
  virtual Device device() const = 0;
  // Short name for messages and summaries: "cpu", "cuda:0", "pinned".
  virtual std::string name() const = 0;

  // Stream-ordered reuse (see Note [Stream-ordered reuse]). Backends without streams return
  // nullptr from record_event, and a nullptr event counts as completed.
  virtual void* record_event(StreamRef /*stream*/) { return nullptr; }
  virtual bool event_completed(void* /*event*/) { return true; }
  // Blocks until the event has completed (empty_cache, and before giving up on an allocation).
  // A backend whose record_event returns events must override it.
  virtual void synchronize_event(void* /*event*/) {}
  virtual void destroy_event(void* /*event*/) {}
};

struct AllocatorConfig {
  // Blocks larger than this are never split (0 = no limit).
  std::size_t max_split_size_bytes = 0;
  // Total reserved bytes may not exceed this (0 = no cap): a 12 GB card on an 80 GB one.
  std::size_t memory_cap_bytes = 0;
  // false: every free goes straight back to the backend (for memory checkers).
  bool caching = true;
};

// Parses "max_split_size_mb:256,memory_cap_mb:12288,caching:0" (the LEANGRAD_ALLOC_CONF syntax).
// Unknown keys or malformed values throw Error naming the offending item, its key and value; a
// size of 0 is malformed (a key left out means no limit).
AllocatorConfig parse_allocator_config(const std::string& conf);

class CachingAllocator {
 public:
  CachingAllocator(std::unique_ptr<AllocatorBackend> backend, AllocatorConfig config);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least nbytes usable on `stream`. nbytes == 0 gives an empty DataPtr.
  // Throws OutOfMemoryError after releasing the cache and retrying once.
  DataPtr allocate(std::size_t nbytes, StreamRef stream = {});

  // Marks the block behind `ptr` (a DataPtr from this allocator) as used on `stream`: when freed,
  // it becomes reusable only after the work queued on `stream` up to now has completed.
  void record_stream(const DataPtr& ptr, StreamRef stream);

  // True when `ptr` came from this allocator (a DataPtr's deleter and context identify it).
  bool owns(const DataPtr& ptr) const;

  MemoryStats stats() const;
  void reset_peak();
  // Returns every cached, completely free segment to the backend.
  void empty_cache();
  // A human-readable table of the stats and pool occupancy.
  std::string summary() const;

  void set_config(const AllocatorConfig& config);
  AllocatorConfig config() const;
  AllocatorBackend& backend() { return *backend_; }

  struct Impl;

 private:
  std::unique_ptr<AllocatorBackend> backend_;
  std::unique_ptr<Impl> impl_;
};

// The process-wide allocators: one per device, plus the pinned host pool. Created on first use
// with the configuration from LEANGRAD_ALLOC_CONF (or memory::configure).
CachingAllocator& allocator_for(Device device);
CachingAllocator& pinned_allocator();

}  // namespace leangrad
