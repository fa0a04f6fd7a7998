// leangrad-train's checkpoints (train_checkpoint.h): writing them, and reading them back with
// every field validated (Note [Validating a checkpoint]).
#include "train_checkpoint.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <utility>

namespace leangrad::tools {
namespace {

// Epoch records nest two levels ([{...}]); anything deeper is hostile.
constexpr int kMaxEpochsLogDepth = 4;
// The largest CUDA device index a checkpoint may name.
constexpr int kMaxCudaDevice = 1023;

std::string exact_double(double value) {  // hexadecimal: read back to the same bits
  char text[40];
  std::snprintf(text, sizeof(text), "%a", value);
  return text;
}

// Options that checkpoints of the same format written by earlier versions lack, and the value
// those runs had: --precision came with mixed precision, and every run before it was float32.
const std::map<std::string, std::string> kOptionsAddedLater = {{"precision", "f32"},
                                                               {"world-size", "1"}};

// Strict readers of a checkpoint's metadata: each field must be present and hold exactly what the
// writer writes (no sign or space where none belongs, nothing after the number); an error names
// the file, the field, what was expected and what is there.
class MetadataReader {
 public:
  MetadataReader(const SafetensorsMetadata& metadata, const std::string& path)
      : metadata_(metadata), path_(path) {}

  const std::string& text(const std::string& key) const {
    const auto it = metadata_.find(key);
    LG_CHECK(it != metadata_.end(), "checkpoint '", path_, "': no field '", key,
             "' in its metadata");
    return it->second;
  }

  // text(key), or the value a checkpoint written before the option existed was trained with.
  const std::string& text_or_default(const std::string& key) const {
    const auto added = kOptionsAddedLater.find(key);
    if (added != kOptionsAddedLater.end() && !metadata_.count(key)) return added->second;
    return text(key);
  }

  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max) const {
    const std::string& value = text(key);
    std::int64_t n = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (error != std::errc() || end != value.data() + value.size() || n < min || n > max)
      invalid(key, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
              value);
    return n;
  }

  std::uint64_t unsigned_integer(const std::string& key) const {
    const std::string& value = text(key);
    std::uint64_t n = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (error != std::errc() || end != value.data() + value.size())
      invalid(key, "an integer in [0, 2^64)", value);
    return n;
  }

  // A number >= 0, as exact_double writes it ("0x1.8p+1") or in decimal; or, a diverged run's
  // loss, exactly as exact_double writes NaN and infinity ("nan", "-nan", "inf").
  double loss_number(const std::string& key) const {
    const std::string& value = text(key);
    if (value == "nan" || value == "-nan") return std::numeric_limits<double>::quiet_NaN();
    if (value == "inf") return std::numeric_limits<double>::infinity();
    const bool hex = value.rfind("0x", 0) == 0;
    const char* begin = value.data() + (hex ? 2 : 0);
    const char* last = value.data() + value.size();
    double x = 0;
    const auto [end, error] =
        std::from_chars(begin, last, x, hex ? std::chars_format::hex : std::chars_format::general);
    if (error != std::errc() || end != last || !std::isfinite(x) || x < 0)
      invalid(key, "a number >= 0 (or nan, inf: a diverged run's)", value);
    return x;
  }

  [[noreturn]] void invalid(const std::string& key, const std::string& expected,
                            const std::string& value) const {
    LG_THROW(Error, "checkpoint '", path_, "': field '", key, "' must be ", expected, ", got '",
             printable(value), "'");
  }

  const std::string& path() const { return path_; }

 private:
  const SafetensorsMetadata& metadata_;
  const std::string& path_;
};

SafetensorsMetadata checkpoint_metadata(const CheckpointSpec& spec, const TrainPosition& position,
                                        std::uint64_t loader_epoch) {
  SafetensorsMetadata metadata = spec.options;
  metadata["format"] = kCheckpointFormat;
  metadata["epoch"] = std::to_string(position.epoch);
  metadata["step_in_epoch"] = std::to_string(position.step_in_epoch);
  metadata["global_step"] = std::to_string(position.global_step);
  metadata["loss_sum"] = exact_double(position.loss_sum);
  metadata["epochs_log"] = position.epochs_log.dump();
  metadata["dataloader_epoch"] = std::to_string(loader_epoch);
  std::string devices;
  for (const auto& [device, state] : snapshot_rng().states) {
    devices += (devices.empty() ? "" : ",") + device.str();
    metadata["rng." + device.str() + ".seed"] = std::to_string(state.seed);
    metadata["rng." + device.str() + ".offset"] = std::to_string(state.offset);
  }
  metadata["rng_devices"] = devices;
  return metadata;
}

// ---- Validation ------------------------------------------------------------------------------
// Note [Validating a checkpoint]: a checkpoint is hostile input (a disk error, a truncated copy, a
// hand edit). Before anything is loaded:
// - "format" is ours, and every option the run shares with it is there and equal (else
//   CheckpointMismatch: the user's choice, not corruption);
// - the position is consistent: 1 <= epoch, 0 <= step_in_epoch <= the run's steps per epoch,
//   global_step = (epoch - 1) * steps per epoch + step_in_epoch (checked arithmetic) and equals the
//   step in the file's name, dataloader_epoch = epoch - 1, loss_sum is a number >= 0 (or NaN or
//   infinity, as a run whose loss diverged writes it: its checkpoints are its own, not damage);
// - epochs_log is JSON at most kMaxEpochsLogDepth deep: an array of exactly epoch - 1 records
//   {epoch = its 1-based index, loss, <score>, ms_per_step, seconds}, all finite numbers but the
//   loss and the score, which are null where the run diverged, and ms_per_step, null for an epoch
//   whose steps all ran in an earlier process (a run resumed at the epoch's end only evaluated it);
// - the RNG devices are distinct, include the CPU, and each has the run's seed and an offset;
// then the tensors: model.* and optim.* (and scaler.* exactly when the run has a loss scaler),
// loaded by the model's, the optimizer's and the scaler's own checked load_state_dict, after which
// every parameter group must have the hyperparameters the run built it with (the checkpoint may not
// change the learning rate or the weight decay) and no parameter may have taken more steps than
// global_step. Numbers are parsed strictly (std::from_chars over the whole field): "-5" is not an
// offset, "12abc" not a step.

void check_options(const MetadataReader& reader, const CheckpointSpec& spec) {
  LG_CHECK(reader.text("format") == kCheckpointFormat, "checkpoint '", reader.path(),
           "' is not a leangrad-train checkpoint (format '", printable(reader.text("format")),
           "')");
  for (const auto& [option, value] : spec.options) {
    const std::string& saved = reader.text_or_default(option);
    // Every option is a flag but the number of processes, which the launcher sets.
    const std::string name = option == "world-size" ? "WORLD_SIZE=" : "--" + option + " ";
    LG_CHECK_TYPED(CheckpointMismatch, saved == value, "cannot resume from '", reader.path(),
                   "': it was written with ", name, printable(saved), ", this run has ", name,
                   value, " (use the same options or another --checkpoint-dir)");
  }
}

// The epoch records: the JSON of `text`, no deeper than kMaxEpochsLogDepth, as validated above.
nlohmann::json parse_epochs_log(const MetadataReader& reader, const CheckpointSpec& spec,
                                int epoch) {
  const std::string& text = reader.text("epochs_log");
  bool too_deep = false;
  const nlohmann::json log = nlohmann::json::parse(
      text,
      [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        too_deep = too_deep || depth > kMaxEpochsLogDepth;
        return !too_deep;
      },
      /*allow_exceptions=*/false);
  if (too_deep) reader.invalid("epochs_log", "a JSON array of epoch records", text);
  if (log.is_discarded()) reader.invalid("epochs_log", "valid JSON", text);
  const auto expected_records = static_cast<std::size_t>(epoch - 1);
  if (!log.is_array() || log.size() != expected_records)
    reader.invalid("epochs_log",
                   "an array of " + std::to_string(expected_records) +
                       " epoch records (the epochs before epoch " + std::to_string(epoch) + ")",
                   text);
  // The loss and the score of a diverged run are null (how JSON writes NaN and infinity), and so
  // is the step time of an epoch that the process evaluating it ran no step of.
  const char* numbers[] = {"loss", spec.score_name.c_str(), "ms_per_step", "seconds"};
  const char* may_be_null[] = {"loss", spec.score_name.c_str(), "ms_per_step"};
  for (std::size_t i = 0; i < log.size(); ++i) {
    const nlohmann::json& record = log[i];
    bool valid = record.is_object() && record.size() == 5 && record.contains("epoch") &&
                 record["epoch"].is_number_integer() &&
                 record["epoch"].get<std::int64_t>() == static_cast<std::int64_t>(i + 1);
    for (const char* key : numbers) {
      const bool null_allowed =
          std::any_of(std::begin(may_be_null), std::end(may_be_null),
                      [&](const char* k) { return std::strcmp(k, key) == 0; });
      valid = valid && record.contains(key) &&
              ((record[key].is_null() && null_allowed) ||
               (record[key].is_number() && std::isfinite(record[key].get<double>())));
    }
    if (!valid)
      reader.invalid("epochs_log",
                     "epoch records {epoch: " + std::to_string(i + 1) + ", loss, " +
                         spec.score_name + ", ms_per_step, seconds}; record " + std::to_string(i),
                     record.dump());
  }
  return log;
}

TrainPosition read_position(const MetadataReader& reader, const CheckpointSpec& spec,
                            std::int64_t step_in_name) {
  TrainPosition position;
  position.epoch =
      static_cast<int>(reader.integer("epoch", 1, std::numeric_limits<int>::max() - 1));
  position.step_in_epoch = reader.integer("step_in_epoch", 0, spec.steps_per_epoch);
  position.global_step = reader.integer("global_step", 0, std::numeric_limits<std::int64_t>::max());
  std::int64_t expected = 0;
  LG_CHECK(
      !__builtin_mul_overflow(std::int64_t{position.epoch - 1}, spec.steps_per_epoch, &expected) &&
          !__builtin_add_overflow(expected, position.step_in_epoch, &expected) &&
          expected == position.global_step,
      "checkpoint '", reader.path(), "': field 'global_step' is ", position.global_step,
      ", which is not (epoch - 1) * ", spec.steps_per_epoch, " + step_in_epoch for epoch ",
      position.epoch, ", step_in_epoch ", position.step_in_epoch, " (", spec.steps_per_epoch,
      " steps per epoch)");
  LG_CHECK(step_in_name == position.global_step, "checkpoint '", reader.path(),
           "': its name says global step ", step_in_name, ", its field 'global_step' says ",
           position.global_step);
  if (reader.unsigned_integer("dataloader_epoch") != static_cast<std::uint64_t>(position.epoch - 1))
    reader.invalid("dataloader_epoch", "epoch - 1 = " + std::to_string(position.epoch - 1),
                   reader.text("dataloader_epoch"));
  position.loss_sum = reader.loss_number("loss_sum");
  position.epochs_log = parse_epochs_log(reader, spec, position.epoch);
  return position;
}

Device parse_rng_device(const MetadataReader& reader, const std::string& name) {
  if (name == "cpu") return Device::cpu();
  int index = -1;
  const char* last = name.data() + name.size();
  const bool cuda = name.rfind("cuda:", 0) == 0;
  const auto [end, error] = std::from_chars(name.data() + (cuda ? 5 : 0), last, index);
  if (!cuda || error != std::errc() || end != last || index < 0 || index > kMaxCudaDevice)
    reader.invalid("rng_devices",
                   "a list of cpu and cuda:<0.." + std::to_string(kMaxCudaDevice) + ">",
                   reader.text("rng_devices"));
  return Device::cuda(index);
}

RngSnapshot read_rng(const MetadataReader& reader, const CheckpointSpec& spec) {
  const std::string& devices = reader.text("rng_devices");
  RngSnapshot rng;
  std::set<std::string> seen;
  for (std::size_t start = 0; start <= devices.size();) {
    std::size_t end = devices.find(',', start);
    if (end == std::string::npos) end = devices.size();
    const std::string name = devices.substr(start, end - start);
    const Device device = parse_rng_device(reader, name);
    if (!seen.insert(name).second) reader.invalid("rng_devices", "distinct devices", devices);
    Generator::State state;
    state.seed = reader.unsigned_integer("rng." + name + ".seed");
    if (state.seed != spec.seed)
      reader.invalid("rng." + name + ".seed", "the run's --seed " + std::to_string(spec.seed),
                     reader.text("rng." + name + ".seed"));
    state.offset = reader.unsigned_integer("rng." + name + ".offset");
    rng.states.emplace_back(device, state);
    start = end + 1;
  }
  if (!seen.count("cpu")) reader.invalid("rng_devices", "a list that includes cpu", devices);
  return rng;
}

// Runs `load`; an Error it throws (other than running out of memory, which is not the file's
// fault) is rethrown naming the checkpoint.
template <typename F>
void naming_the_checkpoint(const std::string& path, const F& load) {
  try {
    load();
  } catch (const OutOfMemoryError&) {
    throw;
  } catch (const Error& e) {
    LG_THROW(Error, "checkpoint '", path, "': ", e.message());
  }
}

void load_tensors(const std::string& path, nn::Module& model, optim::Optimizer& optimizer,
                  amp::GradScaler* scaler) {
  NamedTensors model_state, optim_state, scaler_state;
  for (auto& [name, tensor] : load_safetensors(path)) {
    if (name.rfind("model.", 0) == 0) {
      model_state.emplace_back(name.substr(6), std::move(tensor));
    } else if (name.rfind("optim.", 0) == 0) {
      optim_state.emplace_back(name.substr(6), std::move(tensor));
    } else {
      LG_CHECK(scaler != nullptr && name.rfind("scaler.", 0) == 0, "checkpoint '", path,
               "': unexpected tensor '", printable(name), "' (expected model.*, optim.*",
               scaler ? " and scaler.*)" : "; scaler.* only with --precision f16)");
      scaler_state.emplace_back(name.substr(7), std::move(tensor));
    }
  }
  naming_the_checkpoint(path, [&] { model.load_state_dict(model_state); });
  naming_the_checkpoint(path, [&] { optimizer.load_state_dict(optim_state); });
  if (scaler != nullptr) {
    LG_CHECK(!scaler_state.empty(), "checkpoint '", path,
             "': no loss-scaler state (scaler.*) for this --precision f16 run");
    naming_the_checkpoint(path, [&] { scaler->load_state_dict(scaler_state); });
  }
}

void check_optimizer(const std::string& path, const optim::Optimizer& optimizer,
                     const std::vector<optim::ParamGroup>& built, const TrainPosition& position) {
  const std::vector<optim::ParamGroup>& loaded = optimizer.param_groups();
  for (std::size_t g = 0; g < loaded.size(); ++g) {
    LG_CHECK(loaded[g].lr == built[g].lr && loaded[g].weight_decay == built[g].weight_decay,
             "checkpoint '", path, "': param_groups.", g, " has lr ", loaded[g].lr.value_or(NAN),
             " and weight_decay ", loaded[g].weight_decay.value_or(NAN), ", the run has lr ",
             built[g].lr.value_or(NAN), " and weight_decay ", built[g].weight_decay.value_or(NAN));
  }
  for (std::size_t i = 0; i < optimizer.num_params(); ++i) {
    const std::int64_t steps = optimizer.state(i).step;
    LG_CHECK(steps <= position.global_step, "checkpoint '", path, "': state.", i, ".step is ",
             steps, ", more than the ", position.global_step, " steps of the run");
  }
}

std::int64_t step_in_name(const std::filesystem::path& path) {
  static const std::regex pattern(R"(step-([0-9]{1,18})\.safetensors)");
  const std::string name = path.filename().string();
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return -1;
  return std::stoll(match[1].str());  // at most 18 digits: fits int64
}

}  // namespace

std::string checkpoint_path(const std::string& dir, std::int64_t global_step) {
  char name[48];
  std::snprintf(name, sizeof(name), "step-%08lld.safetensors", static_cast<long long>(global_step));
  return (std::filesystem::path(dir) / name).string();
}

std::vector<std::filesystem::path> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::int64_t step = step_in_name(entry.path());
    if (step >= 0 && entry.is_regular_file(error)) found.emplace_back(step, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> paths;
  for (auto& [step, path] : found)
    paths.push_back(std::move(path));
  return paths;
}

namespace {

// Removes one checkpoint file; a failure is an Error naming it (not std::filesystem's exception).
void remove_checkpoint(const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::remove(path, error);
  LG_CHECK(!error, "--checkpoint-dir: cannot remove the old checkpoint '", path.string(),
           "': ", error.message());
}

}  // namespace

std::size_t prepare_checkpoint_dir(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  LG_CHECK(!error, "--checkpoint-dir: cannot create '", dir, "': ", error.message());
  check_writable(checkpoint_path(dir, 0), "--checkpoint-dir");
  return remove_abandoned_temporaries(dir).size();
}

void save_checkpoint(const std::string& dir, int keep, const CheckpointSpec& spec,
                     const nn::Module& model, const optim::Optimizer& optimizer,
                     const TrainPosition& position, const amp::GradScaler* scaler) {
  NamedTensors tensors;
  for (const auto& [name, tensor] : model.state_dict())
    tensors.emplace_back("model." + name, tensor);
  for (const auto& [name, tensor] : optimizer.state_dict())
    tensors.emplace_back("optim." + name, tensor);
  if (scaler != nullptr) {
    for (const auto& [name, tensor] : scaler->state_dict())
      tensors.emplace_back("scaler." + name, tensor);
  }
  const auto loader_epoch = static_cast<std::uint64_t>(position.epoch - 1);
  const std::string path = checkpoint_path(dir, position.global_step);
  save_safetensors(path, tensors, checkpoint_metadata(spec, position, loader_epoch));
  // Checkpoints of a later step than this one are those a resume skipped (it takes the newest
  // one it can load): they are renamed aside to "<name>.skipped", out of the listing but kept
  // (a read error may have been passing), and then all but the `keep` newest of the rest go, so
  // the one just written always stays.
  std::vector<std::filesystem::path> kept;
  for (const std::filesystem::path& checkpoint : list_checkpoints(dir)) {
    if (step_in_name(checkpoint) > position.global_step) {
      std::error_code error;
      std::filesystem::rename(checkpoint, checkpoint.string() + ".skipped", error);
      LG_CHECK(!error, "--checkpoint-dir: cannot rename the skipped checkpoint '",
               checkpoint.string(), "' aside: ", error.message());
    } else {
      kept.push_back(checkpoint);
    }
  }
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < kept.size(); ++i)
    remove_checkpoint(kept[i]);
}

namespace {

// load_checkpoint against the parameter groups the run built (`built`), taken before any
// checkpoint was tried: a damaged one that loaded its own learning rate before being refused
// must not become the reference its predecessors are checked against.
TrainPosition load_checkpoint_built(const std::string& path, const CheckpointSpec& spec,
                                    nn::Module& model, optim::Optimizer& optimizer,
                                    amp::GradScaler* scaler,
                                    const std::vector<optim::ParamGroup>& built) {
  const SafetensorsMetadata metadata = load_safetensors_metadata(path);
  const MetadataReader reader(metadata, path);
  check_options(reader, spec);
  TrainPosition position = read_position(reader, spec, step_in_name(path));
  const RngSnapshot rng = read_rng(reader, spec);
  load_tensors(path, model, optimizer, scaler);
  check_optimizer(path, optimizer, built, position);
  restore_rng(rng);
  return position;
}

}  // namespace

TrainPosition load_checkpoint(const std::string& path, const CheckpointSpec& spec,
                              nn::Module& model, optim::Optimizer& optimizer,
                              amp::GradScaler* scaler) {
  // A copy: loading the checkpoint changes the optimizer's own groups.
  const std::vector<optim::ParamGroup> built = optimizer.param_groups();
  return load_checkpoint_built(path, spec, model, optimizer, scaler, built);
}

std::optional<Resumed> resume(const std::string& dir, const CheckpointSpec& spec, nn::Module& model,
                              optim::Optimizer& optimizer, std::ostream& warnings,
                              amp::GradScaler* scaler) {
  const std::vector<std::filesystem::path> checkpoints = list_checkpoints(dir);
  const std::vector<optim::ParamGroup> built = optimizer.param_groups();
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    try {
      return Resumed{it->string(),
                     load_checkpoint_built(it->string(), spec, model, optimizer, scaler, built)};
    } catch (const CheckpointMismatch&) {
      throw;
    } catch (const OutOfMemoryError&) {
      throw;
    } catch (const Error& e) {
      warnings << "leangrad-train: warning: skipping a damaged checkpoint: " << e.message()
               << std::endl;
    }
  }
  LG_CHECK(checkpoints.empty(), "--checkpoint-dir '", dir, "' holds ", checkpoints.size(),
           " checkpoint(s) and none is intact (see the warnings above); move them away to start "
           "over");
  return std::nullopt;
}

}  // namespace leangrad::tools
