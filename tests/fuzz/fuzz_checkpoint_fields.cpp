// libFuzzer target, structure-aware: the input edits a valid leangrad-train checkpoint (made once,
// at the first input) rather than being one, so every edit reaches the validation of Note
// [Validating a checkpoint] instead of stopping at the safetensors header. The input is read with
// FuzzedDataProvider as up to 8 metadata edits (a known field or any key, set to text, an integer,
// a float in decimal or hex, or an epochs_log of fuzzed records, or removed) and up to 3 tensor
// edits (a known tensor or any name, replaced by a fuzzed 0-d or 1-d tensor of a fuzzed dtype, or
// removed). The edited checkpoint is written with save_safetensors and resumed: it must load or
// be refused with leangrad::Error.
#include <fuzzer/FuzzedDataProvider.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"

namespace {

using namespace leangrad;

const char* const kFields[] = {"format",
                               "epoch",
                               "step_in_epoch",
                               "global_step",
                               "loss_sum",
                               "epochs_log",
                               "dataloader_epoch",
                               "rng_devices",
                               "rng.cpu.seed",
                               "rng.cpu.offset",
                               "rng.cuda:0.seed",
                               "rng.cuda:0.offset",
                               "model",
                               "seed"};
const char* const kTensors[] = {"model.weight",
                                "model.bias",
                                "optim.state.0.step",
                                "optim.state.0.exp_avg",
                                "optim.state.1.exp_avg_sq",
                                "optim.state.2.step",
                                "optim.param_groups.0.lr",
                                "optim.param_groups.0.weight_decay",
                                "optim.param_groups.1.lr"};
const DType kDTypes[] = {kFloat64, kFloat32, kInt64, kInt32, kBool, kUInt8, kFloat16};

template <typename T, std::size_t N>
const T& pick(FuzzedDataProvider& in, const T (&options)[N]) {
  return options[in.ConsumeIntegralInRange<std::size_t>(0, N - 1)];
}

std::string number_text(FuzzedDataProvider& in) {
  char text[64];
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return std::to_string(in.ConsumeIntegral<std::int64_t>());
    case 1:
      return std::to_string(in.ConsumeIntegral<std::uint64_t>());
    case 2:
      std::snprintf(text, sizeof(text), "%a", in.ConsumeFloatingPoint<double>());
      return text;
    default:
      std::snprintf(text, sizeof(text), "%.17g", in.ConsumeFloatingPoint<double>());
      return text;
  }
}

// A JSON value for an epoch record's field: usually a number, sometimes something else.
nlohmann::json record_value(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
      return in.ConsumeIntegral<std::int64_t>();
    case 1:
      return in.ConsumeRandomLengthString(8);
    case 2:
      return nullptr;
    default:
      return in.ConsumeFloatingPoint<double>();
  }
}

std::string epochs_log(FuzzedDataProvider& in) {
  nlohmann::json log = nlohmann::json::array();
  const int records = in.ConsumeIntegralInRange(0, 3);
  const char* const keys[] = {"epoch", "loss", "accuracy", "psnr_db", "ms_per_step", "seconds"};
  for (int r = 0; r < records; ++r) {
    nlohmann::json record = nlohmann::json::object();
    const int fields = in.ConsumeIntegralInRange(0, 6);
    for (int f = 0; f < fields; ++f)
      record[pick(in, keys)] = record_value(in);
    log.push_back(record);
  }
  // Fuzzed strings are any bytes; JSON text is UTF-8, so bytes that are not become U+FFFD here
  // (a text field that is not UTF-8 at all is field_value's case 0).
  return log.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string field_value(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return in.ConsumeRandomLengthString(32);
    case 1:
      return epochs_log(in);
    default:
      return number_text(in);
  }
}

Tensor fuzzed_tensor(FuzzedDataProvider& in) {
  const DType dtype = pick(in, kDTypes);
  const Shape shape =
      in.ConsumeBool() ? Shape{} : Shape{in.ConsumeIntegralInRange<std::int64_t>(0, 7)};
  Tensor t = empty(shape, TensorOptions(kFloat64));
  auto* values = static_cast<double*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    values[i] = in.ConsumeFloatingPoint<double>();
  return t.to(dtype);
}

void edit_metadata(FuzzedDataProvider& in, SafetensorsMetadata& metadata) {
  const int edits = in.ConsumeIntegralInRange(0, 8);
  for (int e = 0; e < edits; ++e) {
    const std::string key = in.ConsumeIntegralInRange(0, 9) == 0 ? in.ConsumeRandomLengthString(16)
                                                                 : std::string(pick(in, kFields));
    if (in.ConsumeIntegralInRange(0, 7) == 0) {
      metadata.erase(key);
    } else {
      metadata[key] = field_value(in);
    }
  }
}

void edit_tensors(FuzzedDataProvider& in, NamedTensors& tensors) {
  const int edits = in.ConsumeIntegralInRange(0, 3);
  for (int e = 0; e < edits; ++e) {
    const std::string name = in.ConsumeIntegralInRange(0, 9) == 0 ? in.ConsumeRandomLengthString(16)
                                                                  : std::string(pick(in, kTensors));
    const bool remove = in.ConsumeIntegralInRange(0, 5) == 0;
    const Tensor value = fuzzed_tensor(in);
    bool found = false;
    for (auto it = tensors.begin(); it != tensors.end(); ++it) {
      if (it->first != name) continue;
      found = true;
      if (remove) {
        tensors.erase(it);
      } else {
        it->second = value;
      }
      break;
    }
    if (!found && !remove) tensors.emplace_back(name, value);
  }
}

struct ValidCheckpoint {
  NamedTensors tensors;
  SafetensorsMetadata metadata;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchDir source, dir;
  static const ValidCheckpoint valid = [] {
    const std::string path = fuzz::write_valid_checkpoint(source.path());
    return ValidCheckpoint{load_safetensors(path), load_safetensors_metadata(path)};
  }();

  FuzzedDataProvider in(data, size);
  NamedTensors tensors = valid.tensors;
  SafetensorsMetadata metadata = valid.metadata;
  edit_metadata(in, metadata);
  edit_tensors(in, tensors);
  // Names and metadata save_safetensors refuses (empty, duplicate, not UTF-8) cannot be written:
  // that refusal is itself a valid outcome.
  fuzz::refused_or_read([&] {
    save_safetensors(tools::checkpoint_path(dir.path(), 8), tensors, metadata);
    fuzz::Training training = fuzz::make_training(0);
    std::ostringstream warnings;
    tools::resume(dir.path(), fuzz::checkpoint_spec(), *training.model, *training.optimizer,
                  warnings);
  });
  return 0;
}
