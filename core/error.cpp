// Error construction: appends the throw site so every message says where it came from.
#include "core/error.h"

namespace leangrad {

Error::Error(std::string message, const char* file, int line)
    : std::runtime_error(detail::str_cat(message, " (at ", file, ":", line, ")")),
      message_(std::move(message)) {}

}  // namespace leangrad

namespace leangrad::detail {

void throw_cuda_not_built(const char* what) {
  throw DeviceError(str_cat(what, ": leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF);",
                            " rebuild with the CUDA toolkit to use CUDA tensors"),
                    __FILE__, __LINE__);
}

}  // namespace leangrad::detail
