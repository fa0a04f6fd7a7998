// Storage allocation: every tensor's memory comes from a caching allocator (or the pinned pool).
#include <leangrad/core/storage.h>

#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>

namespace leangrad {

std::shared_ptr<Storage> Storage::allocate(std::size_t nbytes, Device device, bool pinned) {
  if (pinned) {
    LG_CHECK_DEVICE(device.is_cpu(), "pinned memory is host memory: cannot pin on ", device);
    return std::make_shared<Storage>(pinned_allocator().allocate(nbytes, kHostStream), nbytes,
                                     device, true);
  }
  const StreamRef stream =
      device.is_cuda() ? cuda::current_stream(device.index).ref() : StreamRef{};
  return std::make_shared<Storage>(allocator_for(device).allocate(nbytes, stream), nbytes, device,
                                   false);
}

}  // namespace leangrad
