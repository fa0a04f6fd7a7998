// The caching allocator's pooling policy, the same for every device: CPU, CUDA and pinned host
// memory all go through this file, and the backends (cpu_backend.cpp, cuda/cuda_backends.cpp)
// only get and return raw segments. Declared in core/allocator.h.
//
// Policy
// - Sizes round up to 512 bytes. Requests of at most 1 MiB come from the small pool, carved out
//   of 2 MiB segments. Larger requests come from the large pool: a request below 10 MiB gets a
//   20 MiB segment, a larger one gets its own segment rounded up to 2 MiB.
// - A request takes the smallest free block of its pool and stream that fits (best fit), and
//   splits off the rest when the rest is big enough to be useful.
//   See Note [Splitting and max_split_size].
// - A freed block merges with its free neighbours in the same segment, so a segment nobody uses
//   is one block again and can serve a request as large as itself.
// - A block is reused only on the stream it was allocated on, at once when freed; a block that
//   was also used on other streams (record_stream) waits for events recorded on them.
//   See Note [Stream-ordered reuse].
// - Memory goes back to the backend only in empty_cache() and when an allocation fails: then
//   every completely free segment is released and the allocation retried once, and if the
//   segment is larger than the request, once more with a segment of the request's own size,
//   before OutOfMemoryError. memory_cap makes growth past the cap fail like the backend would.
//   See Note [OOM retry].
// - With caching off every allocate and every free is a backend call (for memory checkers).
// - Under AddressSanitizer, host memory the caller may not touch is poisoned: the rounding tail
//   of every block and every free block. See Note [AddressSanitizer and the pool].
// - One mutex guards everything, backend calls included. The stats are exact: `allocated`
//   counts the rounded request of every live block, `reserved` every live segment.
#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <vector>

#include <leangrad/core/allocator.h>
#include <leangrad/core/error.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/memory_history.h>

#if LG_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

namespace leangrad {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::size_t kMinBlockBytes = 512;                // every size is a multiple of this
constexpr std::size_t kSmallRequestMaxBytes = 1 * kMiB;    // larger requests use the large pool
constexpr std::size_t kSmallSegmentBytes = 2 * kMiB;       // segments of the small pool
constexpr std::size_t kLargeSegmentBytes = 20 * kMiB;      // shared segments of the large pool
constexpr std::size_t kOwnSegmentMinBytes = 10 * kMiB;     // from here a request gets its own
constexpr std::size_t kSegmentRoundingBytes = 2 * kMiB;    // ... segment, rounded to this
constexpr std::size_t kLargeSplitMinBytes = 1 * kMiB;      // large-pool rests must exceed this
constexpr std::size_t kOversizeMaxWasteBytes = 20 * kMiB;  // Note [Splitting and max_split_size]
constexpr std::size_t kMaxRequestBytes = std::size_t{1} << 60;

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// "512 B", "1.50 MiB", "12.00 GiB".
std::string format_bytes(std::size_t n) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (n < kKiB) return std::to_string(n) + " B";
  double value = static_cast<double>(n);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f %s", value, kUnits[unit]);
  return text;
}

// "1.50 GiB (1610612736 bytes)": readable and exact.
std::string format_bytes_exact(std::size_t n) {
  return format_bytes(n) + " (" + std::to_string(n) + " bytes)";
}

double to_mib(std::int64_t n) {
  return static_cast<double>(n) / static_cast<double>(kMiB);
}

// ---- Blocks and pools ----------------------------------------------------------------------

struct Pool;

// A piece of a segment. The blocks of one segment form a doubly linked list in address order;
// a segment is one backend allocation, and all its blocks belong to the stream it was made for.
struct Block {
  enum class State : std::uint8_t {
    kFree,           // in its pool's free set
    kAllocated,      // handed out in a DataPtr
    kWaitingEvents,  // freed, but still used by other streams: Note [Stream-ordered reuse]
  };

  CachingAllocator::Impl* owner = nullptr;
  Pool* pool = nullptr;
  char* ptr = nullptr;
  std::size_t size = 0;           // bytes, a multiple of 512
  std::size_t request_bytes = 0;  // the rounded request while allocated (for the stats)
  StreamRef stream;               // the stream the segment was allocated for
  Block* prev = nullptr;          // neighbours in the same segment
  Block* next = nullptr;
  State state = State::kFree;
  int pending_events = 0;
  std::vector<StreamRef> stream_uses;  // other streams given to record_stream

  bool is_whole_segment() const { return prev == nullptr && next == nullptr; }
};

// Free blocks ordered by (stream, size, address): lower_bound gives the best fit on a stream.
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream.id != b->stream.id) return a->stream.id < b->stream.id;
    if (a->stream.device != b->stream.device) return a->stream.device < b->stream.device;
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
};

struct Pool {
  explicit Pool(bool is_small) : is_small(is_small) {}
  const bool is_small;
  std::set<Block*, BlockOrder> free_blocks;
  std::int64_t segments = 0;
};

}  // namespace

struct CachingAllocator::Impl {
  Impl(AllocatorBackend& backend, AllocatorConfig config)
      : backend(backend), device(backend.device()), name(backend.name()), config(config) {}

  DataPtr allocate(std::size_t nbytes, StreamRef stream);
  void free(Block* block) noexcept;
  void record_stream(Block* block, StreamRef stream);
  void empty_cache();
  std::string summary() const;
  void set_config(const AllocatorConfig& new_config);

  Pool& pool_for(std::size_t size) {
    return size <= kSmallRequestMaxBytes ? small_pool : large_pool;
  }
  std::size_t segment_size(std::size_t size) const;
  bool is_oversize(const Block* block) const;
  bool should_split(const Block* block, std::size_t size) const;
  Block* take_free_block(Pool& pool, StreamRef stream, std::size_t size);
  Block* allocate_segment(Pool& pool, StreamRef stream, std::size_t size, std::size_t nbytes);
  void* try_backend_allocate(std::size_t bytes);
  void split(Block* block, std::size_t size);
  void return_to_pool(Block* block);
  void release_segment(Block* block);
  void release_free_segments();
  void process_completed_events();
  void synchronize_pending_events();
  void poison(const char* ptr, std::size_t bytes) const;
  void unpoison(const char* ptr, std::size_t bytes) const;
  [[noreturn]] void throw_out_of_memory(std::size_t nbytes, std::size_t segment_bytes);

  AllocatorBackend& backend;
  const Device device;
  const std::string name;
  AllocatorConfig config;
  mutable std::mutex mutex;
  Pool small_pool{true};
  Pool large_pool{false};
  // (event, block) for every freed block still used by another stream, oldest first.
  std::vector<std::pair<void*, Block*>> pending_events;
  MemoryStats stats;
};

namespace {

// The DataPtr deleter: context is the Block. Never throws (Impl::free is noexcept).
void free_block(void* context, void* /*ptr*/) {
  auto* block = static_cast<Block*>(context);
  block->owner->free(block);
}

}  // namespace

// Note [Splitting and max_split_size]
// Splitting lets one segment serve many requests; its cost is fragmentation: a long-lived small
// block in the middle of a 20 MiB segment keeps the whole segment from being released, and the
// free pieces around it may be too small for the next big request. The rules:
// - small pool: any rest (>= 512 bytes) is split off; small segments are only 2 MiB.
// - large pool: a rest is split off only if it is larger than 1 MiB (smaller rests could only
//   serve small requests, which never come to the large pool), so a large-pool block can be up
//   to 1 MiB bigger than its request.
// - max_split_size (large pool only; 0 = no limit) bounds fragmentation: a block larger than it
//   ("oversize") is never split. A request below max_split_size never takes an oversize block
//   (that would pin a big block under a small tensor), and a request at or above it takes an
//   oversize block only if less than 20 MiB is wasted. Requests above max_split_size get a
//   segment of their own (rounded to 2 MiB), and a shared segment never exceeds max_split_size,
//   so requests below it always find splittable blocks and recurring sizes stay cached.
std::size_t CachingAllocator::Impl::segment_size(std::size_t size) const {
  if (!config.caching) return size;
  if (size <= kSmallRequestMaxBytes) return kSmallSegmentBytes;
  const std::size_t max_split = config.max_split_size_bytes;
  if (max_split != 0 && size > max_split) return round_up(size, kSegmentRoundingBytes);
  std::size_t segment =
      size < kOwnSegmentMinBytes ? kLargeSegmentBytes : round_up(size, kSegmentRoundingBytes);
  if (max_split != 0 && segment > max_split) {
    segment = std::max(size, max_split / kMinBlockBytes * kMinBlockBytes);
  }
  return segment;
}

bool CachingAllocator::Impl::is_oversize(const Block* block) const {
  return !block->pool->is_small && config.max_split_size_bytes != 0 &&
         block->size > config.max_split_size_bytes;
}

bool CachingAllocator::Impl::should_split(const Block* block, std::size_t size) const {
  const std::size_t rest = block->size - size;
  if (block->pool->is_small) return rest >= kMinBlockBytes;
  return rest > kLargeSplitMinBytes && !is_oversize(block);
}

// Best fit: the smallest free block of `pool` on `stream` with at least `size` bytes.
Block* CachingAllocator::Impl::take_free_block(Pool& pool, StreamRef stream, std::size_t size) {
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.free_blocks.lower_bound(&key);
  if (it == pool.free_blocks.end() || !((*it)->stream == stream)) return nullptr;
  Block* block = *it;
  // The set is ordered by size, so if the best fit is refused every larger block is too.
  if (is_oversize(block) &&
      (size < config.max_split_size_bytes || block->size - size >= kOversizeMaxWasteBytes)) {
    return nullptr;
  }
  pool.free_blocks.erase(it);
  return block;
}

void CachingAllocator::Impl::split(Block* block, std::size_t size) {
  auto* rest = new Block;
  rest->owner = this;
  rest->pool = block->pool;
  rest->ptr = block->ptr + size;
  rest->size = block->size - size;
  rest->stream = block->stream;
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  block->pool->free_blocks.insert(rest);
}

void* CachingAllocator::Impl::try_backend_allocate(std::size_t bytes) {
  const std::size_t cap = config.memory_cap_bytes;
  if (cap != 0 && static_cast<std::size_t>(stats.reserved) + bytes > cap) return nullptr;
  return backend.allocate(bytes);
}

// Note [OOM retry]
// A backend failure (nullptr from the backend, or the memory cap reached) is often caused by the
// cache itself: free segments of one pool or stream that the request cannot use. So before
// giving up the allocator (1) waits for the events of blocks freed while in use on other streams
// and puts those blocks back, (2) tries the free blocks again, (3) returns every completely free
// segment to the backend, and (4) asks the backend once more; (5) when that segment is larger
// than the request (a shared 20 MiB segment for an 8 MiB request, a 2 MiB small segment, a request
// rounded up to 2 MiB), it asks for a segment of exactly the request's 512-rounded size, which
// serves that block alone: under memory_cap_mb:16 an 8 MiB tensor must not fail for want of
// 20 MiB. Only then OutOfMemoryError is thrown, with enough numbers in its message to tell
// fragmentation (reserved >> allocated) from a real shortage. alloc_retries counts the failures
// that went through this path.
Block* CachingAllocator::Impl::allocate_segment(Pool& pool, StreamRef stream, std::size_t size,
                                                std::size_t nbytes) {
  std::size_t segment_bytes = segment_size(size);
  void* ptr = try_backend_allocate(segment_bytes);
  if (ptr == nullptr) {
    ++stats.alloc_retries;
    synchronize_pending_events();
    if (config.caching) {
      if (Block* block = take_free_block(pool, stream, size)) return block;
    }
    release_free_segments();
    ptr = try_backend_allocate(segment_bytes);
    if (ptr == nullptr && segment_bytes > size) {
      segment_bytes = size;
      ptr = try_backend_allocate(segment_bytes);
    }
    if (ptr == nullptr) throw_out_of_memory(nbytes, segment_bytes);
  }
  poison(static_cast<char*>(ptr), segment_bytes);  // nothing in it is handed out yet
  auto* block = new Block;
  block->owner = this;
  block->pool = &pool;
  block->ptr = static_cast<char*>(ptr);
  block->size = segment_bytes;
  block->stream = stream;
  ++pool.segments;
  ++stats.backend_allocs;
  stats.reserved += static_cast<std::int64_t>(segment_bytes);
  stats.peak_reserved = std::max(stats.peak_reserved, stats.reserved);
  return block;
}

void CachingAllocator::Impl::throw_out_of_memory(std::size_t nbytes, std::size_t segment_bytes) {
  ++stats.oom_count;
  const std::size_t cap = config.memory_cap_bytes;
  const auto reserved = static_cast<std::size_t>(stats.reserved);
  const bool cap_reached = cap != 0 && reserved + segment_bytes > cap;
  LG_THROW(OutOfMemoryError, "out of memory on ", name, ": tried to allocate ",
           format_bytes_exact(nbytes), "; a new segment of ", format_bytes(segment_bytes),
           cap_reached ? " would exceed the memory cap" : " was refused by the backend",
           ". Allocated ", format_bytes_exact(static_cast<std::size_t>(stats.allocated)),
           ", reserved ", format_bytes_exact(reserved), ", cap ",
           cap != 0 ? format_bytes_exact(cap) : std::string("none"),
           ". Hint: set LEANGRAD_ALLOC_CONF=max_split_size_mb:<MiB> (or a larger memory_cap_mb) "
           "or reduce batch size; memory::summary(",
           device.str(), ") shows the pools.");
}

DataPtr CachingAllocator::Impl::allocate(std::size_t nbytes, StreamRef stream) {
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device);
  std::lock_guard<std::mutex> lock(mutex);
  if (nbytes > kMaxRequestBytes) throw_out_of_memory(nbytes, nbytes);
  if (!pending_events.empty()) process_completed_events();

  const std::size_t size = round_up(nbytes, kMinBlockBytes);
  Pool& pool = pool_for(size);
  Block* block = config.caching ? take_free_block(pool, stream, size) : nullptr;
  if (block == nullptr) block = allocate_segment(pool, stream, size, nbytes);
  if (should_split(block, size)) split(block, size);

  block->state = Block::State::kAllocated;
  block->request_bytes = size;
  unpoison(block->ptr, nbytes);  // exactly the request: Note [AddressSanitizer and the pool]
  stats.allocated += static_cast<std::int64_t>(size);
  stats.peak_allocated = std::max(stats.peak_allocated, stats.allocated);
  ++stats.active_blocks;
  if (memory::detail::records_history_of(&backend)) [[unlikely]]
    memory::detail::record_history_event(&backend, static_cast<std::int64_t>(size), block->ptr,
                                         block->stream.id);
  return DataPtr(block->ptr, block, &free_block, device);
}

// Note [Stream-ordered reuse]
// On a GPU, "freed" only means the host will queue no more work using the block; kernels queued
// earlier may still be reading it. Reusing it on the same stream is safe at once: later work on
// that stream runs after the earlier work. So each segment belongs to the stream it was
// allocated for, and its blocks are only handed out on that stream (the free sets are keyed by
// stream first; by a stream id that is never reused, see StreamRef). When a tensor is also used on
// another stream S2, its owner calls record_stream(ptr, S2). On free, the allocator records an
// event on every such stream and keeps the block out of the pool (state kWaitingEvents) until all
// those events have completed: pending events are polled at the start of every allocate, and waited
// for in empty_cache and before giving up on an allocation (Note [OOM retry]). The pinned host pool
// uses the same mechanism: a host-to-device copy records its stream on the pinned source block, so
// the block is not overwritten while the copy is still reading it. Backends without streams return
// nullptr events, which count as completed.
//
// Note [Default streams of several GPUs]
// Every GPU's default stream is id 0, handle 0 (the legacy stream, which means "the current
// device's"). A device's own allocator sees only its own streams, but the pinned pool serves
// every GPU: a pinned block copied to cuda:0 and to cuda:1 on their default streams has two uses
// that differ only in StreamRef::device. So StreamRefs compare by id and device (two entries in
// stream_uses, two events), and the pinned backend records each event on the stream's own device
// (not the device current when the block is freed, which may be another: the event would then
// fence the wrong GPU's work, and the block could be overwritten while a copy still reads it).
void CachingAllocator::Impl::free(Block* block) noexcept {
  std::lock_guard<std::mutex> lock(mutex);
  poison(block->ptr, block->size);
  stats.allocated -= static_cast<std::int64_t>(block->request_bytes);
  if (memory::detail::records_history_of(&backend)) [[unlikely]]
    memory::detail::record_history_event(&backend, -static_cast<std::int64_t>(block->request_bytes),
                                         block->ptr, block->stream.id);
  --stats.active_blocks;
  block->request_bytes = 0;
  block->state = Block::State::kWaitingEvents;
  if (!block->stream_uses.empty()) {
    // Every stream's event first, then all of them at once into pending_events: a failure part
    // way must not leave some of them there, whose completion would return the block to the pool
    // while a stream whose event failed may still use it.
    std::vector<void*> events;
    try {
      events.reserve(block->stream_uses.size());
      for (StreamRef stream : block->stream_uses) {
        void* event = backend.record_event(stream);
        if (event != nullptr) events.push_back(event);
      }
      if (pending_events.capacity() < pending_events.size() + events.size())
        pending_events.reserve(
            std::max(2 * pending_events.capacity(), pending_events.size() + events.size()));
    } catch (const std::exception& e) {
      // Without its events the block can never be known to be safe again: leave it out of the
      // pool for good (a leak is better than a race).
      for (void* event : events) {
        try {
          backend.destroy_event(event);
        } catch (const std::exception&) {  // free() is noexcept: the event then leaks too
        }
      }
      block->stream_uses.clear();
      std::fprintf(stderr,
                   "leangrad: %s allocator: could not record a stream event, a block of %s "
                   "is leaked: %s\n",
                   name.c_str(), format_bytes(block->size).c_str(), e.what());
      return;
    }
    for (void* event : events)
      pending_events.emplace_back(event, block);  // the capacity is reserved: cannot throw
    block->pending_events += static_cast<int>(events.size());
    block->stream_uses.clear();
    if (block->pending_events > 0) return;
  }
  return_to_pool(block);
}

// Puts a freed block into its pool's free set, merged with its free neighbours.
void CachingAllocator::Impl::return_to_pool(Block* block) {
  Pool& pool = *block->pool;
  if (Block* prev = block->prev; prev != nullptr && prev->state == Block::State::kFree) {
    pool.free_blocks.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && next->state == Block::State::kFree) {
    pool.free_blocks.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  block->state = Block::State::kFree;
  pool.free_blocks.insert(block);
  if (!config.caching && block->is_whole_segment()) release_segment(block);
}

void CachingAllocator::Impl::release_segment(Block* block) {
  Pool& pool = *block->pool;
  pool.free_blocks.erase(block);
  unpoison(block->ptr, block->size);  // the backend's memory again, to reuse or unmap
  backend.deallocate(block->ptr, block->size);
  --pool.segments;
  ++stats.backend_frees;
  stats.reserved -= static_cast<std::int64_t>(block->size);
  delete block;
}

void CachingAllocator::Impl::release_free_segments() {
  for (Pool* pool : {&small_pool, &large_pool}) {
    std::vector<Block*> whole;
    for (Block* block : pool->free_blocks) {
      if (block->is_whole_segment()) whole.push_back(block);
    }
    for (Block* block : whole)
      release_segment(block);
  }
}

void CachingAllocator::Impl::process_completed_events() {
  for (auto it = pending_events.begin(); it != pending_events.end();) {
    auto [event, block] = *it;
    if (!backend.event_completed(event)) {
      ++it;
      continue;
    }
    backend.destroy_event(event);
    it = pending_events.erase(it);
    if (--block->pending_events == 0) return_to_pool(block);
  }
}

void CachingAllocator::Impl::synchronize_pending_events() {
  while (!pending_events.empty()) {
    auto [event, block] = pending_events.front();
    backend.synchronize_event(event);
    backend.destroy_event(event);
    pending_events.erase(pending_events.begin());
    if (--block->pending_events == 0) return_to_pool(block);
  }
}

// Note [AddressSanitizer and the pool]
// AddressSanitizer sees only the backend's allocations: a 2 MiB segment is one addressable range
// to it, and with every size rounded to 512 bytes even caching:0 leaves up to 511 bytes after a
// tensor that ASan believes are in bounds. So in an ASan build (LG_ADDRESS_SANITIZER) the pool
// tells ASan, through its manual poisoning interface, what callers may touch: exactly the
// requested bytes of every live block. A new segment is poisoned whole, allocate unpoisons the
// request (its rounding tail stays poisoned), free poisons the block again, and a segment is
// unpoisoned just before it goes back to the backend (which may reuse or unmap it). So writing one
// element past a tensor, or reading a tensor's memory after it was freed into the cache, is an
// ASan report with or without caching. Only host memory is poisoned: ASan's shadow describes the
// host's address space, and device pointers are not in it.
void CachingAllocator::Impl::poison(const char* ptr, std::size_t bytes) const {
#if LG_ADDRESS_SANITIZER
  if (device.is_cpu()) ASAN_POISON_MEMORY_REGION(ptr, bytes);
#else
  (void)ptr, (void)bytes;
#endif
}

void CachingAllocator::Impl::unpoison(const char* ptr, std::size_t bytes) const {
#if LG_ADDRESS_SANITIZER
  if (device.is_cpu()) ASAN_UNPOISON_MEMORY_REGION(ptr, bytes);
#else
  (void)ptr, (void)bytes;
#endif
}

void CachingAllocator::Impl::record_stream(Block* block, StreamRef stream) {
  std::lock_guard<std::mutex> lock(mutex);
  if (stream == block->stream) return;
  auto& uses = block->stream_uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
}

void CachingAllocator::Impl::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex);
  synchronize_pending_events();
  release_free_segments();
}

void CachingAllocator::Impl::set_config(const AllocatorConfig& new_config) {
  std::lock_guard<std::mutex> lock(mutex);
  config = new_config;
  if (!config.caching) release_free_segments();
}

std::string CachingAllocator::Impl::summary() const {
  std::lock_guard<std::mutex> lock(mutex);
  auto config_size = [](std::size_t bytes) {
    return bytes == 0 ? std::string("none") : format_bytes(bytes);
  };
  char line[160];
  std::ostringstream out;
  out << "caching allocator for " << name << " (device " << device.str() << ")\n";
  out << "  config: max_split_size " << config_size(config.max_split_size_bytes) << ", memory_cap "
      << config_size(config.memory_cap_bytes) << ", caching " << (config.caching ? "on" : "off")
      << "\n";
  std::snprintf(line, sizeof(line), "  %-12s %14s %14s\n", "", "current MiB", "peak MiB");
  out << line;
  std::snprintf(line, sizeof(line), "  %-12s %14.2f %14.2f\n", "allocated", to_mib(stats.allocated),
                to_mib(stats.peak_allocated));
  out << line;
  std::snprintf(line, sizeof(line), "  %-12s %14.2f %14.2f\n", "reserved", to_mib(stats.reserved),
                to_mib(stats.peak_reserved));
  out << line;
  std::snprintf(line, sizeof(line), "  %-12s %14s %14s %14s\n", "pool", "segments", "free blocks",
                "free MiB");
  out << line;
  for (const Pool* pool : {&small_pool, &large_pool}) {
    std::size_t free_bytes = 0;
    for (const Block* block : pool->free_blocks)
      free_bytes += block->size;
    std::snprintf(line, sizeof(line), "  %-12s %14lld %14zu %14.2f\n",
                  pool->is_small ? "small" : "large", static_cast<long long>(pool->segments),
                  pool->free_blocks.size(), to_mib(static_cast<std::int64_t>(free_bytes)));
    out << line;
  }
  out << "  active blocks " << stats.active_blocks << ", stream events pending "
      << pending_events.size() << "\n";
  out << "  backend allocs " << stats.backend_allocs << ", backend frees " << stats.backend_frees
      << ", OOMs " << stats.oom_count << ", alloc retries " << stats.alloc_retries << "\n";
  return out.str();
}

// ---- CachingAllocator: the public face ----------------------------------------------------

CachingAllocator::CachingAllocator(std::unique_ptr<AllocatorBackend> backend,
                                   AllocatorConfig config)
    : backend_(std::move(backend)) {
  LG_CHECK(backend_ != nullptr, "CachingAllocator: backend must not be null");
  impl_ = std::make_unique<Impl>(*backend_, config);
}

// Blocks still handed out when the allocator dies are leaked (their DataPtrs would free into a
// dead allocator): an allocator must outlive its DataPtrs. The process-wide ones are never
// destroyed (see Note [The registry is never destroyed] in memory.cpp).
CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    impl_->synchronize_pending_events();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leangrad: %s allocator: waiting for stream events failed: %s\n",
                 impl_->name.c_str(), e.what());
  }
  impl_->release_free_segments();
}

DataPtr CachingAllocator::allocate(std::size_t nbytes, StreamRef stream) {
  return impl_->allocate(nbytes, stream);
}

void CachingAllocator::record_stream(const DataPtr& ptr, StreamRef stream) {
  if (!ptr) return;  // an empty allocation is used by nobody
  LG_CHECK(owns(ptr), "record_stream: the pointer was not allocated by the ", impl_->name,
           " caching allocator");
  impl_->record_stream(static_cast<Block*>(ptr.context()), stream);
}

bool CachingAllocator::owns(const DataPtr& ptr) const {
  return ptr.deleter() == &free_block &&
         static_cast<const Block*>(ptr.context())->owner == impl_.get();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->stats.peak_allocated = impl_->stats.allocated;
  impl_->stats.peak_reserved = impl_->stats.reserved;
}

void CachingAllocator::empty_cache() {
  impl_->empty_cache();
}
std::string CachingAllocator::summary() const {
  return impl_->summary();
}
void CachingAllocator::set_config(const AllocatorConfig& config) {
  impl_->set_config(config);
}

AllocatorConfig CachingAllocator::config() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->config;
}

// ---- LEANGRAD_ALLOC_CONF -------------------------------------------------------------------

namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// A size in MiB, as bytes. Throws naming the key and the value of `item` unless `value` is a
// plain positive integer. 0 is refused: AllocatorConfig spells "no limit" 0, but a user writing
// memory_cap_mb:0 means something else (nothing may be allocated?) and must not silently get no
// cap; leaving the key out is how the string says "none".
std::size_t parse_mib(const std::string& key, const std::string& value, const std::string& item) {
  constexpr std::size_t kMaxMiB = std::size_t{1} << 40;  // 1 EiB: far beyond any device
  const bool digits_only =
      !value.empty() && value.size() <= 13 &&
      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  LG_CHECK(digits_only && std::stoull(value) <= kMaxMiB, "allocator config: bad value in '", item,
           "': expected ", key, " to be a positive integer number of MiB, got '", value, "'");
  const std::size_t mib = std::stoull(value);
  LG_CHECK(mib > 0, "allocator config: bad value in '", item, "': ", key,
           " must be at least 1 MiB, got 0 (to set no limit, leave ", key, " out)");
  return mib * kMiB;
}

bool parse_switch(const std::string& key, const std::string& value, const std::string& item) {
  if (value == "1" || value == "true" || value == "on") return true;
  if (value == "0" || value == "false" || value == "off") return false;
  LG_THROW(Error, "allocator config: bad value in '", item, "': expected ", key,
           " to be one of 0, 1, true, false, on, off, got '", value, "'");
}

}  // namespace

AllocatorConfig parse_allocator_config(const std::string& conf) {
  AllocatorConfig config;
  std::istringstream items(conf);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    const auto colon = item.find(':');
    LG_CHECK(colon != std::string::npos, "allocator config: expected key:value, got '", item, "'");
    const std::string key = trim(item.substr(0, colon));
    const std::string value = trim(item.substr(colon + 1));
    if (key == "max_split_size_mb") {
      config.max_split_size_bytes = parse_mib(key, value, item);
    } else if (key == "memory_cap_mb") {
      config.memory_cap_bytes = parse_mib(key, value, item);
    } else if (key == "caching") {
      config.caching = parse_switch(key, value, item);
    } else {
      LG_THROW(Error, "allocator config: unknown key '", key, "' in '", item,
               "' (known keys: max_split_size_mb, memory_cap_mb, caching)");
    }
  }
  return config;
}

namespace memory {

std::int64_t allocated_size(std::int64_t nbytes) {
  if (nbytes <= 0) return 0;
  return static_cast<std::int64_t>(round_up(static_cast<std::size_t>(nbytes), kMinBlockBytes));
}

}  // namespace memory

}  // namespace leangrad
