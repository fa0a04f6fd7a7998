// leangrad-train's checkpoints: one safetensors file per checkpoint,
// DIR/step-<global step, 8 digits>.safetensors, holding the model's state_dict under "model.", the
// optimizer's under "optim.", the f16 loss scaler's under "scaler.", and in __metadata__ the
// training position, the RNG states, the epoch records logged so far and the options a resumed run
// must share (docs/training.md). A checkpoint is read as hostile input: every field is validated
// before anything is loaded (Note [Validating a checkpoint]), and resume falls back to the newest
// intact one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/leangrad.h>
#include <nlohmann/json.hpp>

namespace leangrad::tools {

inline constexpr const char* kCheckpointFormat = "leangrad-train checkpoint 1";

// Where training stands after an optimizer step: `epoch` (1-based) has had `step_in_epoch`
// optimizer steps, whose losses add up to `loss_sum`; `epochs_log` holds the records of the
// epochs finished before it.
struct TrainPosition {
  int epoch = 1;
  std::int64_t step_in_epoch = 0;
  std::int64_t global_step = 0;
  double loss_sum = 0;
  nlohmann::json epochs_log = nlohmann::json::array();
};

// What a run requires of a checkpoint it resumes from.
struct CheckpointSpec {
  // The options the checkpoint must have been written with ("model", "batch-size", ...: the data
  // order, the model and the update rule depend on them), as strings.
  SafetensorsMetadata options;
  std::uint64_t seed = 0;            // --seed: every RNG stream's seed
  double lr = 0;                     // every parameter group's learning rate
  std::int64_t steps_per_epoch = 0;  // optimizer steps in one epoch
  std::string score_name;            // the epoch records' score: "accuracy" or "psnr_db"
};

// A checkpoint written with options other than the run's: not corrupt, so resume does not fall
// back to an older one (they share the options); the user must change one or the other.
class CheckpointMismatch : public Error {
  using Error::Error;
};

// DIR/step-<global_step>.safetensors.
std::string checkpoint_path(const std::string& dir, std::int64_t global_step);

// The checkpoints in `dir`, oldest (lowest global step) first.
std::vector<std::filesystem::path> list_checkpoints(const std::string& dir);

// Creates `dir` when missing, checks that files can be written in it (so a read-only folder fails
// at start, not after the first epoch) and removes the temporaries of killed saves; returns how
// many it removed.
std::size_t prepare_checkpoint_dir(const std::string& dir);

// Writes the checkpoint of `position` to `dir` atomically, then deletes all but the `keep`
// newest checkpoints there. `scaler`: the run's loss scaler (--precision f16), saved beside the
// optimizer so that a resumed run scales, skips and grows exactly as the uninterrupted one.
void save_checkpoint(const std::string& dir, int keep, const CheckpointSpec& spec,
                     const nn::Module& model, const optim::Optimizer& optimizer,
                     const TrainPosition& position, const amp::GradScaler* scaler = nullptr);

// Reads the checkpoint at `path`, validates every field against `spec`, then loads the model, the
// optimizer and the RNG states and returns its position. Throws CheckpointMismatch for other
// options, Error naming the file and the field for anything corrupt or invalid; the model and the
// optimizer may then hold part of the checkpoint (resume loads an older one in full, or fails).
// With a `scaler` the checkpoint must hold its state (scaler.*) and it is loaded too; without one
// it must hold none.
TrainPosition load_checkpoint(const std::string& path, const CheckpointSpec& spec,
                              nn::Module& model, optim::Optimizer& optimizer,
                              amp::GradScaler* scaler = nullptr);

// Loads the newest checkpoint of `dir` that load_checkpoint accepts, warning on `warnings` about
// each newer one it skips and why; nullopt when `dir` has none. Throws CheckpointMismatch as
// load_checkpoint, and Error when there are checkpoints but none is intact (nothing is silently
// started over).
struct Resumed {
  std::string path;
  TrainPosition position;
};
std::optional<Resumed> resume(const std::string& dir, const CheckpointSpec& spec, nn::Module& model,
                              optim::Optimizer& optimizer, std::ostream& warnings,
                              amp::GradScaler* scaler = nullptr);

}  // namespace leangrad::tools
