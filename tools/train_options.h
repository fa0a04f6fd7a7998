// leangrad-train's command line: every option in TrainOptions, their CLI11 definitions with the
// checks between them (add_options), and what the options choose: the optimizer and the device.
// docs/training.md lists the options.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <leangrad/leangrad.h>

namespace leangrad::tools {

struct TrainOptions {
  std::string model = "mlp";
  std::int64_t width = 16;  // srnet
  std::int64_t blocks = 2;  // srnet
  bool save_on_cpu = false;
  bool offload_params = false;
  bool zero = false;  // several processes: the optimizer state sharded (ZeroRedundancyOptimizer)
  bool recompute = false;
  double memory_budget_mb = 0;  // 0: no memory planner
  std::string device;           // empty: cuda when available, else cpu
  int epochs = 10;
  std::int64_t batch_size = 64;
  double lr = 0.0;  // 0: the optimizer's default (default_lr)
  std::string optimizer = "sgd";
  int workers = 0;
  bool pin_memory = false;
  int prefetch = 2;  // batches each worker prepares ahead
  std::uint64_t seed = 0;
  int threads = 0;  // 0: leave the library's default
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::int64_t limit_train = 0;  // 0: the whole training set
  std::int64_t limit_test = 0;   // 0: the whole test set
  std::string log_json;
  std::string log_jsonl;  // one JSON line per optimizer step and per epoch
  std::string profile;    // Chrome trace of --profile-steps steps after the warm-up
  std::int64_t profile_steps = 5;
  std::string memory_timeline;        // one step's memory by category, as JSON
  int accumulate = 1;                 // micro-batches per optimizer step
  std::string checkpoint_dir;         // empty: no checkpoints
  std::int64_t checkpoint_every = 0;  // optimizer steps; 0: at the end of each epoch
  int keep = 3;                       // checkpoints kept in checkpoint_dir
  std::int64_t max_steps = 0;         // 0: no limit
  std::string save_model;             // empty: the final model is not saved
  std::string backend;                // several processes: gloo or nccl (empty: by device)
  std::string precision = "f32";      // f32, bf16 or f16 (tools::Precision)
  std::optional<double> init_scale;   // f16: the loss scaler's first scale (default 2^16)
};

// Defines every option on `app`, writing into `o` when it parses.
void add_options(CLI::App& app, TrainOptions& o);

// The optimizer --optimizer names, with learning rate `lr` and PyTorch's other defaults, as a
// factory (what distributed::ZeroRedundancyOptimizer wraps for --zero).
distributed::OptimizerFactory optimizer_factory(const std::string& name, double lr);

// The learning rate when --lr is not given: the classic recipe's for SGD, Adam's for the others.
double default_lr(const std::string& optimizer);

// The optimizer --optimizer names (sgd, adam, adamw, radam, adam8bit) over `params`.
std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name,
                                                 std::vector<Tensor> params, double lr);

// The memory options in force, as given on the command line ("--recompute --save-on-cpu",
// "--memory-budget 900"), or "plain": the --memory-timeline file's `memory_setting`.
std::string memory_setting_text(const TrainOptions& o);

// "" when the files the options write (--save-model, --log-json, --log-jsonl, --profile,
// --memory-timeline) are distinct files, else what is wrong: "--log-jsonl: 'a.json' is the file of
// --log-json too: ..." (two outputs in one file: the later writer would silently replace the
// other's contents). Paths naming one file through symbolic or hard links are the same file.
std::string conflicting_outputs(const TrainOptions& o);

// --device: cuda when empty and a GPU is there, else cpu; "cuda" without one is an Error.
Device choose_device(const std::string& requested);

}  // namespace leangrad::tools
