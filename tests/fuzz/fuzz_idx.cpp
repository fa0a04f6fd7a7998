// libFuzzer target: the IDX reader (plain and gzipped) on arbitrary bytes. read_idx must return a
// tensor whose bytes the file's dims describe, or throw leangrad::Error; ASan and UBSan report
// anything else (an over-read, an overflow, an inflate past the bounds of Note [Bounded
// decompression]).
#include <cstdint>
#include <cstdlib>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const leangrad::fuzz::ScratchDir dir;
  const std::string path = dir.write("input-idx", data, size);
  leangrad::fuzz::refused_or_read([&] {
    const leangrad::Tensor t = leangrad::data::read_idx(path);
    // An uncompressed file holds exactly its header (4 bytes + 4 per dim) and its elements.
    const bool gzipped = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if (!gzipped && size != 4 + 4 * static_cast<std::size_t>(t.dim()) + t.nbytes()) std::abort();
  });
  return 0;
}
