// libFuzzer target: the safetensors reader on arbitrary bytes. load_safetensors_metadata and
// load_safetensors must return or throw leangrad::Error (ASan and UBSan report anything else), and
// what loads must survive a round trip: saved again and reloaded, the same names, dtypes, shapes,
// bytes and metadata.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fuzz_support.h"

namespace {

using namespace leangrad;

bool same(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Tensor& x = a[i].second;
    const Tensor& y = b[i].second;
    if (a[i].first != b[i].first || x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
    if (x.nbytes() != y.nbytes()) return false;
    if (x.nbytes() > 0 && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchDir dir;
  const std::string path = dir.write("input.safetensors", data, size);
  fuzz::refused_or_read([&] { load_safetensors_metadata(path); });
  NamedTensors loaded;
  SafetensorsMetadata metadata;
  bool read = false;
  fuzz::refused_or_read([&] {
    loaded = load_safetensors(path);
    metadata = load_safetensors_metadata(path);
    read = true;
  });
  if (!read) return 0;
  // What the reader accepted, the writer must write and the reader read back the same: an Error
  // here is the writer and the reader disagreeing, not a refusal of the input.
  try {
    const std::string copy = dir.file("copy.safetensors");
    save_safetensors(copy, loaded, metadata);
    if (!same(load_safetensors(copy), loaded) || load_safetensors_metadata(copy) != metadata)
      std::abort();
  } catch (const Error&) {
    std::abort();
  }
  return 0;
}
