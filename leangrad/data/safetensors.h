// Checkpoints in the safetensors format (the one PyTorch and Hugging Face read): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
// then the raw little-endian bytes. Module::save / Module::load (nn/module.cpp) use these.
// docs/data.md describes the format and the checks the reader makes.
#pragma once

#include <map>
#include <string>

#include <leangrad/core/device.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// Free-form string pairs stored under the header's "__metadata__" key.
using SafetensorsMetadata = std::map<std::string, std::string>;

// Writes `tensors` (any dtype, device, strides; written contiguous, listed in the given order,
// their bytes laid out largest element first so each is aligned to its element size, as the
// reference writer does) and `metadata` to `path` atomically: the bytes go to a temporary file in
// the same folder, which is flushed, fsync'ed and renamed over `path`, so `path` is always either
// the old file or the complete new one. Throws Error on duplicate or empty names and on any I/O
// failure (the temporary file is removed and an existing `path` is left untouched).
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const SafetensorsMetadata& metadata = {});

// Reads every tensor of a safetensors file onto `device`, in the order its header lists them
// (the order save_safetensors was given; the reference writer's order, by dtype and name). Every
// field is validated (see docs/data.md): a malformed or hostile file throws Error naming the file
// and the problem, never reads out of bounds.
NamedTensors load_safetensors(const std::string& path, Device device = Device::cpu());

// The "__metadata__" of a safetensors file (empty when it has none). Reads only the header,
// which is validated as in load_safetensors.
SafetensorsMetadata load_safetensors_metadata(const std::string& path);

}  // namespace leangrad
