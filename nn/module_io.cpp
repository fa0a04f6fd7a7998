// Module::save / Module::load: a module's state_dict() as a safetensors checkpoint
// (data/safetensors.h), readable by PyTorch (safetensors.torch.load_file) with the same names.
#include "data/safetensors.h"
#include "nn/module.h"

namespace leangrad::nn {

void Module::save(const std::string& path) const {
  // "format": "pt" is what Hugging Face's loaders look for in a PyTorch-layout checkpoint.
  save_safetensors(path, state_dict(), {{"format", "pt"}});
}

void Module::load(const std::string& path, bool strict) {
  // Loaded on the CPU; load_state_dict copies each tensor to its parameter's device and dtype.
  load_state_dict(load_safetensors(path, Device::cpu()), strict);
}

}  // namespace leangrad::nn
