// offload::SaveOnCpu: saved-tensor hooks that park the CUDA tensors autograd saves in host memory.
//
// Policy
// - CPU tensors, tensors sharing storage with keep_on_device, and the device copies of parameters
//   that offload::ParameterOffload streams in (it brings them back itself), are saved as they are.
// - One copy stream per GPU, process-wide, made on first use; every offload copy runs on it, so
//   the compute stream never waits for a copy to the host. See Note [One copy stream per device]
//   in offload/copy_stream.cpp.
// - pack: the copy stream waits for the compute stream's work so far (an event, no host wait),
//   copies the tensor's contiguous form into a pinned host block and records an event that the
//   copy back will wait for. See Note [Copy stream ordering].
// - The device block returns to the caching allocator when the last reference to the tensor
//   goes, and is reused only once the copy has read it. See Note [Releasing the device block].
// - unpack: the copy back is allocated and run on the copy stream; the CURRENT stream waits for
//   it with an event, and the host never blocks. The engine calls unpack one node early
//   (SavedTensor::prefetch), so the copy overlaps the compute queued before it.
//   See Note [Unpack ordering].
// - A pinned block is reused by the pinned pool only after both copies through it are done.
//   See Note [Pinned block lifetime].
// - pin_memory = false: pageable host memory, and every copy blocks the host until it is done.
// - Unpacked tensors are contiguous with the saved shape and dtype; strides are not kept
//   (backward formulas only read values).
// - Without CUDA, or without a GPU, every tensor is a CPU tensor and nothing is copied.
#include <leangrad/offload/save_on_cpu.h>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/offload/copy_stream.h>
#include <leangrad/offload/parameter_offload.h>

namespace leangrad::offload {
namespace {

using detail::copy_stream;
using detail::CurrentDeviceScope;
using detail::record_event;

// What pack returns: either the tensor itself (kept) or its host copy.
struct PackedTensor {
  Tensor kept;                          // CPU or kept-on-device tensors: saved as they are
  Tensor host;                          // otherwise: the host copy, contiguous
  Device device;                        // ... the device it came from
  std::shared_ptr<cuda::Event> copied;  // ... recorded on the copy stream after the copy to host
};

// Note [Copy stream ordering]
// The compute stream S has queued the kernel that writes t, possibly not run yet. The copy stream
// C must not read t before that kernel is done, so C waits on an event recorded on S now
// (cudaStreamWaitEvent: a dependency between the streams, no host wait). S waits for nothing: the
// forward goes on while C copies. The host block comes from the pinned pool (the current stream
// does not matter there), the copy runs with non_blocking under a StreamGuard on C, and an event
// recorded on C after it tells the copy back when the host block holds the data.
//
// Note [Releasing the device block]
// t's block was allocated on S, so the allocator would hand it out again on S as soon as t is
// freed, and a kernel on S could overwrite it while C still reads it. t.record_stream(C) prevents
// that: when the last reference to t goes (the forward drops the activation; the saved tensor
// holds only the host copy), the allocator records an event on C and keeps the block out of the
// pool until that event, which follows our copy, has completed. See Note [Stream-ordered reuse]
// in core/caching_allocator.cpp. The `allocated` counter drops at the free, so peak_allocated
// already shows the saving; reserved memory may lag while copies are in flight.
PackedTensor copy_to_host(const Tensor& t, bool pin_memory) {
  const int device = t.device().index;
  CurrentDeviceScope on_device(device);
  const cuda::Stream compute = cuda::current_stream(device);
  const cuda::Stream copy = copy_stream(device);

  // A non-contiguous tensor is made contiguous on S first (the copy needs dense bytes); that
  // temporary is the block C reads, and the one whose release must wait for C.
  const Tensor source = t.contiguous();
  copy.wait(*record_event(compute));

  PackedTensor packed;
  packed.device = t.device();
  packed.host = empty(t.shape(), TensorOptions(t.dtype()).pinned_memory(pin_memory));
  {
    cuda::StreamGuard on_copy_stream(copy);
    // Pinned: queued, returns at once, and records C on the host block (Note [Pinned copies],
    // kernels/ops_copy.cpp). Pageable: returns once the data is on the host.
    packed.host.copy_(source, /*non_blocking=*/true);
  }
  source.record_stream(copy);
  packed.copied = record_event(copy);
  return packed;
}

// Note [Unpack ordering]
// The engine calls unpack for the node that runs NEXT, before it queues the current node's
// kernels (Note [Prefetching saved tensors], autograd/engine.cpp), and the current stream S must
// wait for the copy right away: SavedTensor hands the prefetched tensor to the backward formula
// with no further call into this file. So the copy must not depend on S's pending work, or S
// would wait for C while C waits for S, and nothing would overlap. Hence:
// - the device tensor is allocated on C (under the StreamGuard): its block comes from C's pool,
//   whose previous users were on C or recorded themselves, so C may write it at once. A block
//   from S's pool could still be read by kernels queued on S, and writing it from C would race.
// - C waits for the pack's event (the host block must hold the data before we read it; a no-op
//   with one stream per device, kept because correctness should not hinge on that).
// - after the copy, an event on C, and S waits on it: every kernel queued on S from now on, the
//   backward formula included, sees the data; the host never waits.
// - out.record_stream(S): the block belongs to C's pool, but S will read it; when it is freed
//   the allocator waits for S before C's pool reuses it.
// Timeline: the copy for node N+1 runs while S still works on the nodes queued before N, and S
// starts N only once the copy for N+1 has landed: a pipeline one node deep.
//
// Note [Pinned block lifetime]
// The pinned host block is read by the copy back long after the copy to host wrote it. Both are
// non_blocking copies on C between CUDA and pinned memory, and ops::copy_ records the copy's
// stream on the pinned block in both directions (it records it on whichever side is the host).
// The block is freed when the saved tensor is released (after its node ran); the pinned pool then
// records an event on C and reuses the block only after it completes. C is never the pool's own
// stream id (0), so the record is not skipped.
Tensor copy_to_device(const PackedTensor& packed) {
  const int device = packed.device.index;
  CurrentDeviceScope on_device(device);
  const cuda::Stream compute = cuda::current_stream(device);
  const cuda::Stream copy = copy_stream(device);

  Tensor out;
  {
    cuda::StreamGuard on_copy_stream(copy);
    out = empty(packed.host.shape(), TensorOptions(packed.host.dtype()).device(packed.device));
    copy.wait(*packed.copied);
    out.copy_(packed.host, /*non_blocking=*/true);
  }
  compute.wait(*record_event(copy));
  out.record_stream(compute);
  return out;
}

Tensor unpack(const std::any& value) {
  const auto& packed = std::any_cast<const PackedTensor&>(value);
  return packed.kept.defined() ? packed.kept : copy_to_device(packed);
}

}  // namespace

SaveOnCpu::SaveOnCpu(bool pin_memory) : SaveOnCpu(pin_memory, {}) {}

SaveOnCpu::SaveOnCpu(bool pin_memory, const std::vector<Tensor>& keep_on_device)
    : pin_memory_(pin_memory),
      kept_storages_([&] {
        std::vector<std::shared_ptr<Storage>> storages;
        for (const Tensor& t : keep_on_device) {
          if (t.defined()) storages.push_back(t.storage());
        }
        return storages;
      }()),
      // pack runs only while this guard is on the hook stack, so capturing `this` is safe;
      // unpack runs after the guard is gone and captures nothing.
      hooks_([this](const Tensor& t) { return pack(t); }, unpack) {}

bool SaveOnCpu::keeps(const Tensor& t) const {
  if (detail::is_offloaded_parameter_storage(t.storage().get())) return true;
  for (const auto& storage : kept_storages_) {
    if (storage == t.storage()) return true;
  }
  return false;
}

std::any SaveOnCpu::pack(const Tensor& t) const {
  if (!t.is_cuda() || keeps(t)) {
    PackedTensor packed;
    packed.kept = t;
    return packed;
  }
  return copy_to_host(t, pin_memory_);
}

}  // namespace leangrad::offload
