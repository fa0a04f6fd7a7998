// leangrad-train's checkpoints (tools/train_checkpoint.h) read as hostile input.
// - A checkpoint round-trips the model, the optimizer, the RNG and the position exactly, a diverged
//   run's non-finite loss sum and null epoch loss included, and an epoch's null step time.
// - Every field that a damaged or hand-edited file can get wrong is refused with an Error naming
//   the file and the field (issue 14's reproducers among them: step_in_epoch = INT64_MAX,
//   epoch = INT_MIN, global_step = -7, loss_sum = "hello", an RNG offset of -5, epochs_log = "[{"
//   or 5, a NaN step, a learning rate of -1), before the model is touched when the metadata is
//   at fault.
// - resume falls back to the newest intact checkpoint and says so, refuses to start over when none
//   is intact, and does not fall back past a checkpoint of other options.
// - The f16 loss scaler's state round-trips too, and is required exactly when the run has one.
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "testing/temporary_names.h"
#include "train_checkpoint.h"

namespace {

using namespace leangrad;
namespace fs = std::filesystem;

constexpr std::uint64_t kSeed = 7;
constexpr double kLr = 0.01;
constexpr std::int64_t kStepsPerEpoch = 5;

tools::CheckpointSpec spec() {
  tools::CheckpointSpec s;
  s.options = {{"model", "linear"}, {"seed", std::to_string(kSeed)}};
  s.seed = kSeed;
  s.lr = kLr;
  s.steps_per_epoch = kStepsPerEpoch;
  s.score_name = "accuracy";
  return s;
}

// A model and its optimizer, initialised from `seed`, after `steps` Adam steps.
struct Training {
  explicit Training(std::uint64_t seed, int steps = 0) {
    manual_seed(seed);
    model = nn::Linear(3, 2);
    optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(kLr));
    for (int i = 0; i < steps; ++i) {
      optimizer->zero_grad();
      const Tensor y = model->forward(randn({4, 3}));
      (y * y).sum().backward();
      optimizer->step();
    }
    manual_seed(kSeed);  // the run's seed: its RNG streams all carry it
  }
  nn::Linear model{nullptr};
  std::unique_ptr<optim::Adam> optimizer;
};

// Epoch 2, step `step` of 5: global step 5 + step.
tools::TrainPosition position(std::int64_t step) {
  tools::TrainPosition p;
  p.epoch = 2;
  p.step_in_epoch = step;
  p.global_step = kStepsPerEpoch + step;
  p.loss_sum = 1.25 * static_cast<double>(step);
  p.epochs_log = nlohmann::json::array(
      {{{"epoch", 1}, {"loss", 0.5}, {"accuracy", 0.8}, {"ms_per_step", 1.5}, {"seconds", 2.0}}});
  return p;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "leangrad_ckpt_test.XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The checkpoint of `position` written by a 3-step training run into `dir`; returns its path.
std::string write_checkpoint(const std::string& dir, std::int64_t step = 3) {
  const Training training(1, 3);
  tools::save_checkpoint(dir, 10, spec(), *training.model, *training.optimizer, position(step));
  return tools::checkpoint_path(dir, kStepsPerEpoch + step);
}

// Rewrites the checkpoint at `path` with metadata `key` set to `value` (erased when nullopt).
void set_field(const std::string& path, const std::string& key,
               const std::optional<std::string>& value) {
  SafetensorsMetadata metadata = load_safetensors_metadata(path);
  if (value) {
    metadata[key] = *value;
  } else {
    metadata.erase(key);
  }
  save_safetensors(path, load_safetensors(path), metadata);
}

// Rewrites the checkpoint at `path` with tensor `name` replaced by (or added as) `value`.
void set_tensor(const std::string& path, const std::string& name, const Tensor& value) {
  NamedTensors tensors = load_safetensors(path);
  bool found = false;
  for (auto& [n, t] : tensors) {
    if (n == name) t = value, found = true;
  }
  if (!found) tensors.emplace_back(name, value);
  save_safetensors(path, tensors, load_safetensors_metadata(path));
}

std::vector<float> values(const Tensor& t) {
  const Tensor c = t.contiguous().to(kFloat32);
  const auto* p = static_cast<const float*>(c.data_ptr());
  return std::vector<float>(p, p + c.numel());
}

std::vector<std::vector<float>> parameters_of(const Training& training) {
  std::vector<std::vector<float>> out;
  for (const Tensor& p : training.model->parameters())
    out.push_back(values(p));
  return out;
}

// load_checkpoint must refuse `path` with an Error containing the path and each of `words`; when
// `model_untouched`, the model must still hold its own parameters.
void expect_refused(const std::string& path, const std::vector<std::string>& words,
                    bool model_untouched = true) {
  Training training(2);
  const auto before = parameters_of(training);
  try {
    tools::load_checkpoint(path, spec(), *training.model, *training.optimizer);
    ADD_FAILURE() << "accepted; expected an error mentioning '" << words.front() << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
    for (const std::string& word : words)
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
  if (model_untouched) {
    EXPECT_EQ(parameters_of(training), before);
  }
}

TEST(TrainCheckpoint, RoundTripsModelOptimizerRngAndPosition) {
  TempDir dir;
  const Training original(1, 3);
  tools::save_checkpoint(dir.path(), 3, spec(), *original.model, *original.optimizer, position(3));
  const std::vector<float> next_draw = values(randn({5}));  // what the run draws after saving

  Training resumed(2);
  manual_seed(99);
  const tools::TrainPosition p = tools::load_checkpoint(tools::checkpoint_path(dir.path(), 8),
                                                        spec(), *resumed.model, *resumed.optimizer);
  EXPECT_EQ(values(randn({5})), next_draw);
  EXPECT_EQ(parameters_of(resumed), parameters_of(original));
  const NamedTensors a = original.optimizer->state_dict(), b = resumed.optimizer->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(values(a[i].second), values(b[i].second)) << a[i].first;
  }
  const tools::TrainPosition expected = position(3);
  EXPECT_EQ(p.epoch, expected.epoch);
  EXPECT_EQ(p.step_in_epoch, expected.step_in_epoch);
  EXPECT_EQ(p.global_step, expected.global_step);
  EXPECT_EQ(p.loss_sum, expected.loss_sum);
  EXPECT_EQ(p.epochs_log, expected.epochs_log);
}

// A run whose loss is no longer finite (diverged, or an overflowing f16 step) writes its epoch's
// loss sum as nan or inf and a finished epoch's loss as null (JSON has no NaN); its checkpoints are
// its own, not damage, and load back as written.
TEST(TrainCheckpoint, RoundTripsANonFiniteLoss) {
  const double kInfinity = std::numeric_limits<double>::infinity();
  for (const double loss : {std::nan(""), -std::nan(""), kInfinity}) {
    SCOPED_TRACE(loss);
    TempDir dir;
    const Training original(1, 3);
    tools::TrainPosition diverged = position(3);
    diverged.loss_sum = loss;
    diverged.epochs_log[0]["loss"] = loss;  // written as null
    diverged.epochs_log[0]["accuracy"] = loss;
    tools::save_checkpoint(dir.path(), 3, spec(), *original.model, *original.optimizer, diverged);
    Training resumed(2);
    const tools::TrainPosition p = tools::load_checkpoint(
        tools::checkpoint_path(dir.path(), 8), spec(), *resumed.model, *resumed.optimizer);
    if (std::isnan(loss)) {
      EXPECT_TRUE(std::isnan(p.loss_sum)) << p.loss_sum;
    } else {
      EXPECT_EQ(p.loss_sum, loss);
    }
    EXPECT_TRUE(p.epochs_log[0]["loss"].is_null());
    EXPECT_TRUE(p.epochs_log[0]["accuracy"].is_null());
    EXPECT_EQ(parameters_of(resumed), parameters_of(original));
  }
}

// An epoch that a resumed run evaluated without running any of its steps (the checkpoint was
// taken after its last one) has no step time: its record's ms_per_step is null, and a later
// checkpoint holding that record loads.
TEST(TrainCheckpoint, RoundTripsAnEpochWithoutAStepTime) {
  TempDir dir;
  const Training original(1, 3);
  tools::TrainPosition later = position(3);
  later.epochs_log[0]["ms_per_step"] = nullptr;
  tools::save_checkpoint(dir.path(), 3, spec(), *original.model, *original.optimizer, later);
  Training resumed(2);
  const tools::TrainPosition p = tools::load_checkpoint(tools::checkpoint_path(dir.path(), 8),
                                                        spec(), *resumed.model, *resumed.optimizer);
  EXPECT_EQ(p.epochs_log, later.epochs_log);
  EXPECT_EQ(parameters_of(resumed), parameters_of(original));
}

TEST(TrainCheckpoint, RefusesOutOfRangeAndMalformedNumbers) {
  TempDir dir;
  const std::string path = write_checkpoint(dir.path());
  const std::string original = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  struct Case {
    std::string key;
    std::optional<std::string> value;
    std::string words;
  };
  const std::vector<Case> cases = {
      {"step_in_epoch", std::to_string(INT64_MAX),
       "field 'step_in_epoch' must be an integer in [0, 5]"},
      {"step_in_epoch", "99999999999999999999999", "field 'step_in_epoch' must be an integer"},
      {"epoch", std::to_string(INT_MIN), "field 'epoch' must be an integer in [1, "},
      {"epoch", "0", "field 'epoch' must be an integer in [1, "},
      {"epoch", " 2", "field 'epoch'"},
      {"epoch", "+2", "field 'epoch'"},
      {"epoch", "2abc", "field 'epoch'"},
      {"epoch", "3", "which is not (epoch - 1) * 5"},  // consistent with global_step
      {"epoch", std::nullopt, "no field 'epoch'"},
      {"global_step", "-7", "field 'global_step' must be an integer in [0, "},
      {"global_step", "9", "field 'global_step' is 9, which is not (epoch - 1) * 5"},
      {"loss_sum", "hello",
       "field 'loss_sum' must be a number >= 0 (or nan, inf: a diverged run's), got 'hello'"},
      {"loss_sum", "-inf", "field 'loss_sum'"},  // only what the writer writes: nan, -nan, inf
      {"loss_sum", "NaN", "field 'loss_sum'"},
      {"loss_sum", "infinity", "field 'loss_sum'"},
      {"loss_sum", "-0x1p+0", "field 'loss_sum'"},
      {"loss_sum", "1e999", "field 'loss_sum'"},
      {"dataloader_epoch", "0", "field 'dataloader_epoch' must be epoch - 1 = 1"},
      {"rng.cpu.offset", "-5", "field 'rng.cpu.offset' must be an integer in [0, 2^64), got '-5'"},
      {"rng.cpu.offset", "18446744073709551616", "field 'rng.cpu.offset'"},
      {"rng.cpu.seed", "8", "field 'rng.cpu.seed' must be the run's --seed 7"},
      {"rng_devices", "", "field 'rng_devices'"},
      {"rng_devices", "cpu,cpu", "distinct devices"},
      {"rng_devices", "cpu,cuda:x", "field 'rng_devices'"},
      {"rng_devices", "cpu,cuda:-1", "field 'rng_devices'"},
      {"rng_devices", "cuda:0", "no field 'rng.cuda:0.seed'"},
      {"epochs_log", "[{", "field 'epochs_log' must be valid JSON"},
      {"epochs_log", "5", "field 'epochs_log' must be an array of 1 epoch records"},
      {"epochs_log", "[]", "an array of 1 epoch records"},
      {"epochs_log", std::string(100000, '[') + std::string(100000, ']'), "field 'epochs_log'"},
      {"epochs_log", R"([{"epoch":2,"loss":0.5,"accuracy":0.8,"ms_per_step":1,"seconds":2}])",
       "record 0"},
      {"epochs_log", R"([{"epoch":1,"loss":"x","accuracy":0.8,"ms_per_step":1,"seconds":2}])",
       "record 0"},
      {"epochs_log", R"([{"epoch":1,"loss":0.5,"accuracy":0.8,"ms_per_step":1,"seconds":null}])",
       "record 0"},
      {"epochs_log", R"([{"epoch":1,"loss":0.5,"psnr_db":20,"ms_per_step":1,"seconds":2}])",
       "record 0"},
      {"format", "leangrad-train checkpoint 0", "is not a leangrad-train checkpoint"},
      {"format", std::nullopt, "no field 'format'"},
      {"model", std::nullopt, "no field 'model'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key + " = " + c.value.value_or("(none)").substr(0, 40));
    set_field(path, c.key, c.value);
    expect_refused(path, {c.words});
    std::ofstream(path, std::ios::binary | std::ios::trunc) << original;
  }
}

TEST(TrainCheckpoint, RefusesBadOptimizerAndModelTensors) {
  TempDir dir;
  const std::string path = write_checkpoint(dir.path());
  const std::string moved = path + ".orig";
  fs::copy_file(path, moved);
  struct Case {
    std::string name;
    Tensor value;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {"optim.state.0.step", full({}, NAN, kFloat64), {"step"}},
      {"optim.state.0.step",
       full({}, 100.0, kInt64),
       {"state.0.step is 100, more than the 8 steps"}},
      {"optim.param_groups.0.lr", full({}, -1.0, kFloat64), {"lr"}},
      {"optim.param_groups.0.lr",
       full({}, 0.5, kFloat64),
       {"param_groups.0 has lr 0.5", "the run has lr 0.01"}},
      {"optim.param_groups.0.weight_decay",
       full({}, 0.25, kFloat64),
       {"param_groups.0 has lr 0.01 and weight_decay 0.25"}},
      {"model.weight", zeros({3, 3}), {"weight"}},
      {"junk", zeros({1}), {"unexpected tensor 'junk'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    set_tensor(path, c.name, c.value);
    expect_refused(path, c.words, /*model_untouched=*/false);
    fs::copy_file(moved, path, fs::copy_options::overwrite_existing);
  }
}

// A loss scaler after one overflowing and three clean steps: scale 2^15, growth tracker 3.
std::unique_ptr<amp::GradScaler> stepped_scaler(Training& training) {
  auto scaler = std::make_unique<amp::GradScaler>(amp::GradScalerOptions().growth_interval(10));
  for (int i = 0; i < 4; ++i) {
    training.optimizer->zero_grad();
    const Tensor loss = training.model->forward(randn({4, 3})).sum() * (i == 0 ? INFINITY : 1.0);
    scaler->scale(loss).backward();
    scaler->step(*training.optimizer);
    scaler->update();
  }
  return scaler;
}

TEST(TrainCheckpoint, RoundTripsTheLossScaler) {
  TempDir dir;
  Training original(1);
  const std::unique_ptr<amp::GradScaler> scaler = stepped_scaler(original);
  ASSERT_EQ(scaler->get_scale(), 32768.0);
  tools::save_checkpoint(dir.path(), 3, spec(), *original.model, *original.optimizer, position(3),
                         scaler.get());
  const std::string path = tools::checkpoint_path(dir.path(), 8);

  Training resumed(2);
  amp::GradScaler fresh(amp::GradScalerOptions().growth_interval(10));
  tools::load_checkpoint(path, spec(), *resumed.model, *resumed.optimizer, &fresh);
  const NamedTensors a = scaler->state_dict(), b = fresh.state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(values(a[i].second), values(b[i].second)) << a[i].first;
  }
  EXPECT_EQ(fresh.get_scale(), 32768.0);

  // A run without a scaler refuses the scaler's state; a run with one needs it.
  expect_refused(path, {"unexpected tensor 'scaler.scale'", "only with --precision f16"},
                 /*model_untouched=*/false);
  const std::string plain = write_checkpoint(dir.path(), 4);
  Training training(2);
  amp::GradScaler needs_state;
  try {
    tools::load_checkpoint(plain, spec(), *training.model, *training.optimizer, &needs_state);
    ADD_FAILURE() << "an f16 run resumed without the scaler's state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no loss-scaler state (scaler.*)"), std::string::npos)
        << e.what();
  }
  set_tensor(path, "scaler._growth_tracker", full({}, 10.0, kInt32));
  try {
    tools::load_checkpoint(path, spec(), *training.model, *training.optimizer, &needs_state);
    ADD_FAILURE() << "accepted a growth tracker outside [0, growth_interval)";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
  }
}

// Checkpoints written before --precision existed lack the option; they were float32 runs.
TEST(TrainCheckpoint, AMissingPrecisionMeansFloat32) {
  TempDir dir;
  tools::CheckpointSpec with_precision = spec();
  with_precision.options["precision"] = "f32";
  const Training original(1, 3);
  tools::save_checkpoint(dir.path(), 3, with_precision, *original.model, *original.optimizer,
                         position(3));
  const std::string path = tools::checkpoint_path(dir.path(), 8);
  set_field(path, "precision", std::nullopt);
  Training resumed(2);
  tools::load_checkpoint(path, with_precision, *resumed.model, *resumed.optimizer);
  EXPECT_EQ(parameters_of(resumed), parameters_of(original));

  with_precision.options["precision"] = "bf16";
  EXPECT_THROW(tools::load_checkpoint(path, with_precision, *resumed.model, *resumed.optimizer),
               tools::CheckpointMismatch);
}

// The number of processes is an option of the run (WORLD_SIZE under leangrad-run): a checkpoint
// of two processes does not resume in one, and the message names WORLD_SIZE, not a flag.
// Checkpoints written before it was recorded lack it; they count as one process.
TEST(TrainCheckpoint, AnotherWorldSizeIsAMismatch) {
  TempDir dir;
  tools::CheckpointSpec two = spec();
  two.options["world-size"] = "2";
  const Training original(1, 3);
  tools::save_checkpoint(dir.path(), 3, two, *original.model, *original.optimizer, position(3));
  const std::string path = tools::checkpoint_path(dir.path(), 8);
  tools::CheckpointSpec one = spec();
  one.options["world-size"] = "1";
  Training resumed(2);
  try {
    tools::load_checkpoint(path, one, *resumed.model, *resumed.optimizer);
    ADD_FAILURE() << "a checkpoint of two processes resumed in one";
  } catch (const tools::CheckpointMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("written with WORLD_SIZE=2, this run has WORLD_SIZE=1"),
              std::string::npos)
        << e.what();
  }
  tools::load_checkpoint(path, two, *resumed.model, *resumed.optimizer);
  EXPECT_EQ(parameters_of(resumed), parameters_of(original));

  set_field(path, "world-size", std::nullopt);
  Training older(2);
  tools::load_checkpoint(path, one, *older.model, *older.optimizer);
  EXPECT_EQ(parameters_of(older), parameters_of(original));
  EXPECT_THROW(tools::load_checkpoint(path, two, *older.model, *older.optimizer),
               tools::CheckpointMismatch);
}

TEST(TrainCheckpoint, NameAndGlobalStepMustAgree) {
  TempDir dir;
  const std::string path = write_checkpoint(dir.path());
  const std::string renamed = tools::checkpoint_path(dir.path(), 9);
  fs::rename(path, renamed);
  expect_refused(renamed, {"its name says global step 9, its field 'global_step' says 8"});
}

TEST(TrainCheckpoint, OtherOptionsAreAMismatchNotDamage) {
  TempDir dir;
  const std::string path = write_checkpoint(dir.path());
  set_field(path, "seed", "8");
  Training training(2);
  EXPECT_THROW(tools::load_checkpoint(path, spec(), *training.model, *training.optimizer),
               tools::CheckpointMismatch);
  std::ostringstream warnings;
  try {
    tools::resume(dir.path(), spec(), *training.model, *training.optimizer, warnings);
    ADD_FAILURE() << "resumed from a checkpoint of another --seed";
  } catch (const tools::CheckpointMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("written with --seed 8, this run has --seed 7"),
              std::string::npos)
        << e.what();
  }
}

TEST(TrainCheckpoint, ResumeFallsBackToTheNewestIntactCheckpoint) {
  TempDir dir;
  for (const std::int64_t step : {1, 2, 3})
    write_checkpoint(dir.path(), step);
  const std::string newest = tools::checkpoint_path(dir.path(), 8);
  fs::resize_file(newest, fs::file_size(newest) / 2);

  Training training(2);
  std::ostringstream warnings;
  const std::optional<tools::Resumed> resumed =
      tools::resume(dir.path(), spec(), *training.model, *training.optimizer, warnings);
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(resumed->path, tools::checkpoint_path(dir.path(), 7));
  EXPECT_EQ(resumed->position.global_step, 7);
  EXPECT_NE(warnings.str().find("skipping a damaged checkpoint: load_safetensors: '" + newest),
            std::string::npos)
      << warnings.str();
  EXPECT_EQ(parameters_of(training), parameters_of(Training(1, 3)));

  // None intact: an error, never a silent fresh start.
  for (const fs::path& p : tools::list_checkpoints(dir.path()))
    fs::resize_file(p, 7);
  warnings.str("");
  try {
    tools::resume(dir.path(), spec(), *training.model, *training.optimizer, warnings);
    ADD_FAILURE() << "resumed with no intact checkpoint";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds 3 checkpoint(s) and none is intact"),
              std::string::npos)
        << e.what();
  }
  const std::string warned = warnings.str();
  EXPECT_EQ(std::count(warned.begin(), warned.end(), '\n'), 3) << warned;
}

// A damaged newest checkpoint whose learning rate loaded into the optimizer before it was
// refused must not make the intact one before it look wrong: both are checked against the
// groups the run built.
TEST(TrainCheckpoint, ADamagedLearningRateDoesNotSpoilTheFallback) {
  TempDir dir;
  write_checkpoint(dir.path(), 2);
  const std::string newest = write_checkpoint(dir.path(), 3);
  set_tensor(newest, "optim.param_groups.0.lr", full({}, 0.5, TensorOptions(kFloat64)));
  Training training(2);
  std::ostringstream warnings;
  const std::optional<tools::Resumed> resumed =
      tools::resume(dir.path(), spec(), *training.model, *training.optimizer, warnings);
  ASSERT_TRUE(resumed.has_value()) << warnings.str();
  EXPECT_EQ(resumed->position.global_step, 7);
  EXPECT_DOUBLE_EQ(training.optimizer->param_groups()[0].options().lr(), kLr);
  EXPECT_NE(warnings.str().find("skipping a damaged checkpoint"), std::string::npos);
}

// After a resume fell back past a damaged checkpoint, the next save renames it aside (a later
// step than the one saved) and never removes the checkpoint just written, whatever `keep` is.
TEST(TrainCheckpoint, SavingAfterAFallbackKeepsTheNewCheckpoint) {
  TempDir dir;
  write_checkpoint(dir.path(), 2);                              // step 7
  const std::string damaged = write_checkpoint(dir.path(), 4);  // step 9
  fs::resize_file(damaged, 100);
  Training training(2);
  std::ostringstream warnings;
  ASSERT_TRUE(tools::resume(dir.path(), spec(), *training.model, *training.optimizer, warnings));
  tools::save_checkpoint(dir.path(), 1, spec(), *training.model, *training.optimizer,
                         position(3));  // step 8
  const std::vector<fs::path> left = tools::list_checkpoints(dir.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0], fs::path(tools::checkpoint_path(dir.path(), 8)));
  EXPECT_TRUE(fs::exists(damaged + ".skipped"));
  Training again(3);
  const std::optional<tools::Resumed> resumed =
      tools::resume(dir.path(), spec(), *again.model, *again.optimizer, warnings);
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(resumed->position.global_step, 8);
}

TEST(TrainCheckpoint, ResumeWithoutCheckpointsStartsFresh) {
  TempDir dir;
  Training training(2);
  std::ostringstream warnings;
  EXPECT_FALSE(tools::resume(dir.path(), spec(), *training.model, *training.optimizer, warnings));
  EXPECT_FALSE(tools::resume(dir.path() + "/missing", spec(), *training.model, *training.optimizer,
                             warnings));
  EXPECT_TRUE(warnings.str().empty());
}

TEST(TrainCheckpoint, ListingIgnoresOtherNames) {
  TempDir dir;
  for (const char* name : {"step-99999999999999999999.safetensors", "step-00000001.safetensors.bak",
                           "step-x.safetensors", ".step-00000002.safetensors.tmp.1.0"})
    std::ofstream(dir.path() + "/" + name) << "x";
  fs::create_directory(dir.path() + "/step-00000003.safetensors");
  std::ofstream(dir.path() + "/step-00000010.safetensors") << "x";
  std::ofstream(dir.path() + "/step-00000002.safetensors") << "x";
  const std::vector<fs::path> found = tools::list_checkpoints(dir.path());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].filename(), "step-00000002.safetensors");
  EXPECT_EQ(found[1].filename(), "step-00000010.safetensors");
}

TEST(TrainCheckpoint, PrepareDirCreatesChecksAndCleans) {
  TempDir dir;
  const std::string ckpt = dir.path() + "/a/b";
  EXPECT_EQ(tools::prepare_checkpoint_dir(ckpt), 0u);
  EXPECT_TRUE(fs::is_directory(ckpt));
  // pid 999999999 is above every Linux pid_max (at most 2^22): a writer of this host that no
  // longer runs.
  std::ofstream(ckpt + "/" +
                test::temporary_name("step-00000009.safetensors", test::host_in_temporary_names(),
                                     999999999, 0))
      << "partial";
  EXPECT_EQ(tools::prepare_checkpoint_dir(ckpt), 1u);
  EXPECT_TRUE(fs::is_empty(ckpt));

  std::ofstream(dir.path() + "/file") << "x";
  try {
    tools::prepare_checkpoint_dir(dir.path() + "/file");
    ADD_FAILURE() << "a file was accepted as --checkpoint-dir";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--checkpoint-dir"), std::string::npos) << e.what();
  }
}

}  // namespace
