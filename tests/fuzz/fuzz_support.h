// What the fuzz targets of tests/fuzz share: a scratch folder in memory (tmpfs) for the files
// they hand to the readers, the one outcome allowed besides success (a leangrad::Error: anything
// else escapes LLVMFuzzerTestOneInput and libFuzzer reports it as a crash), and the small training
// run whose checkpoints the checkpoint targets read.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <leangrad/leangrad.h>

#include "train_checkpoint.h"

namespace leangrad::fuzz {

// A private folder, in /dev/shm when it is there (a file per input costs no disk I/O), removed at
// exit.
class ScratchDir {
 public:
  ScratchDir() {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                           ? "/dev/shm"
                                           : std::filesystem::temp_directory_path();
    std::string pattern = (base / "leangrad_fuzz.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) ::abort();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

  // Replaces file `name` with `size` bytes of `data`; returns its path.
  std::string write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    const std::string path = file(name);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) ::abort();
    while (size > 0) {
      const ssize_t n = ::write(fd, data, size);
      if (n <= 0) ::abort();
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    return path;
  }

 private:
  std::string path_;
};

// Runs `read`; a leangrad::Error is the reader refusing the input, which is fine. Any other
// exception propagates: libFuzzer then reports the input as a crash.
template <typename F>
void refused_or_read(const F& read) {
  try {
    read();
  } catch (const Error&) {
  }
}

// The run whose checkpoints the checkpoint targets read: Linear(3, 2) and Adam, 5 steps an epoch.
inline constexpr std::uint64_t kSeed = 7;
inline constexpr double kLr = 0.01;
inline constexpr std::int64_t kStepsPerEpoch = 5;

inline tools::CheckpointSpec checkpoint_spec() {
  tools::CheckpointSpec spec;
  spec.options = {{"model", "linear"}, {"seed", std::to_string(kSeed)}};
  spec.seed = kSeed;
  spec.lr = kLr;
  spec.steps_per_epoch = kStepsPerEpoch;
  spec.score_name = "accuracy";
  return spec;
}

struct Training {
  nn::Linear model{nullptr};
  std::unique_ptr<optim::Adam> optimizer;
};

// A fresh model and optimizer after `steps` Adam steps on random inputs.
inline Training make_training(int steps) {
  manual_seed(kSeed);
  Training t{nn::Linear(3, 2), nullptr};
  t.optimizer = std::make_unique<optim::Adam>(t.model->parameters(), optim::AdamOptions(kLr));
  for (int i = 0; i < steps; ++i) {
    t.optimizer->zero_grad();
    const Tensor y = t.model->forward(randn({4, 3}));
    (y * y).sum().backward();
    t.optimizer->step();
  }
  return t;
}

// The checkpoint such a run saves at epoch 2, step 3 (global step 8), in `dir`; returns its path.
inline std::string write_valid_checkpoint(const std::string& dir) {
  const Training t = make_training(3);
  tools::TrainPosition position;
  position.epoch = 2;
  position.step_in_epoch = 3;
  position.global_step = 8;
  position.loss_sum = 3.75;
  position.epochs_log = nlohmann::json::array(
      {{{"epoch", 1}, {"loss", 0.5}, {"accuracy", 0.8}, {"ms_per_step", 1.5}, {"seconds", 2.0}}});
  tools::save_checkpoint(dir, 1, checkpoint_spec(), *t.model, *t.optimizer, position);
  return tools::checkpoint_path(dir, 8);
}

}  // namespace leangrad::fuzz
