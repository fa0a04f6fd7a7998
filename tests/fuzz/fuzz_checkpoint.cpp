// libFuzzer target: leangrad-train's resume path (tools/train_checkpoint.h) on arbitrary bytes as
// the newest checkpoint of a folder. resume must load it, or skip it as damaged and fail with
// leangrad::Error (there is no older one); ASan and UBSan report anything else.
#include <cstdint>
#include <sstream>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace leangrad;
  static const fuzz::ScratchDir dir;
  dir.write("step-00000008.safetensors", data, size);
  fuzz::Training training = fuzz::make_training(0);
  std::ostringstream warnings;
  fuzz::refused_or_read([&] {
    tools::resume(dir.path(), fuzz::checkpoint_spec(), *training.model, *training.optimizer,
                  warnings);
  });
  return 0;
}
