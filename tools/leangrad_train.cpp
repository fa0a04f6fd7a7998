// leangrad-train: trains a model on Fashion-MNIST end to end with leangrad's public API
// (data::DataLoader, nn modules, a loss, backward, an optimizer) and reports the test accuracy
// (or PSNR) per epoch, step times and where the memory went. docs/training.md shows every option.
//   leangrad-train --model mlp --epochs 1
//   leangrad-train --model cnn --optimizer adam --lr 1e-3 --log-json cnn.json
//   leangrad-train --model srnet --width 64 --blocks 4 --optimizer adam --recompute
//   leangrad-train --model srnet --width 64 --blocks 8 --memory-budget 900  (the memory planner)
//   leangrad-train --checkpoint-dir ckpt --checkpoint-every 500   (resumes from ckpt when rerun)
//   leangrad-train --batch-size 32 --accumulate 2                 (the update of batch 64)
//   leangrad-run --nproc-per-node 2 leangrad-train --batch-size 32  (DDP: the update of batch 64)
//   leangrad-train --profile trace.json --memory-timeline step.svg --log-jsonl steps.jsonl
//                                                                 (docs/profiling.md)
// Exit codes: 0 success, 1 runtime error (missing data, no CUDA device...), 2 bad command line,
// 130 stopped by Ctrl-C, 143 by SIGTERM (after saving a checkpoint).
// Layout: Checkpoints (save, resume); One training run (set_up, the memory plan, Trainer: the
// epochs, then the report) and train(); main. The options: train_options.h; step-time statistics
// and the memory report: train_report.h; several processes: train_distributed.h; the progress
// bar, option suggestions, --log-jsonl, Ctrl-C and SIGTERM: train_console.h; --profile and
// --memory-timeline: train_observers.h.
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/leangrad.h>
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "train_checkpoint.h"
#include "train_console.h"
#include "train_distributed.h"
#include "train_models.h"
#include "train_observers.h"
#include "train_options.h"
#include "train_report.h"

namespace {

using namespace leangrad;
using Clock = std::chrono::steady_clock;
using tools::add_options;
using tools::choose_device;
using tools::default_lr;
using tools::device_bytes;
using tools::format_mib;
using tools::make_optimizer;
using tools::mean;
using tools::MemoryReport;
using tools::optimizer_state_bytes;
using tools::percentile;
using tools::print_memory_report;
using tools::TrainOptions;

constexpr std::int64_t kLogEverySteps = 100;
constexpr std::int64_t kEvalBatchSize = 1000;

// Writes `log` to `path` atomically: a reader sees the previous version or this one, never half.
void write_json_atomically(const std::string& path, const nlohmann::json& log) {
  write_file_atomically(path, log.dump(2) + "\n", "--log-json");
}

// ---- Checkpoints (train_checkpoint.h) --------------------------------------------------------

using tools::TrainPosition;

// The options a checkpoint must have been written with to be resumed (the data order, the
// model and the update rule depend on them; --epochs may change), and what bounds its position.
tools::CheckpointSpec checkpoint_spec(const TrainOptions& o, int world_size, double lr,
                                      std::int64_t steps_per_epoch) {
  char lr_text[40];
  std::snprintf(lr_text, sizeof(lr_text), "%.17g", lr);
  const bool srnet = tools::is_super_resolution(o.model);
  tools::CheckpointSpec spec;
  spec.options = {{"model", o.model},
                  {"optimizer", o.optimizer},
                  {"batch-size", std::to_string(o.batch_size)},
                  {"accumulate", std::to_string(o.accumulate)},
                  {"precision", o.precision},
                  {"lr", lr_text},
                  {"seed", std::to_string(o.seed)},
                  {"limit-train", std::to_string(o.limit_train)},
                  {"width", srnet ? std::to_string(o.width) : "-"},
                  {"blocks", srnet ? std::to_string(o.blocks) : "-"},
                  // The processes (leangrad-run's WORLD_SIZE): each rank's share of the order, and
                  // the steps of an epoch, depend on it.
                  {"world-size", std::to_string(world_size)}};
  spec.seed = o.seed;
  spec.lr = lr;
  spec.steps_per_epoch = steps_per_epoch;
  spec.score_name = srnet ? "psnr_db" : "accuracy";
  return spec;
}

// "test accuracy 87.06%" or "test PSNR 27.41 dB".
std::string format_score(const std::string& model_name, double score) {
  char text[48];
  if (tools::is_super_resolution(model_name)) {
    std::snprintf(text, sizeof(text), "test PSNR %.2f dB", score);
  } else {
    std::snprintf(text, sizeof(text), "test accuracy %.2f%%", 100.0 * score);
  }
  return text;
}

// ---- One training run ------------------------------------------------------------------------
// train() runs the phases below in order: set_up (threads, device, seed, model, optimizer, data),
// print_run and the srnet baseline, resume, the epochs (Trainer: the optimizer steps of each
// epoch, then its evaluation and log record), saving the model, and the final report.

// What set_up builds for a run.
struct Run {
  tools::World world;
  Device device;
  double lr = 0;
  bool srnet = false;
  std::shared_ptr<nn::Module> model;                             // what is checkpointed and saved
  std::unique_ptr<offload::ParameterOffload> parameter_offload;  // --offload-params
  // With several processes, model wrapped to average the gradients (wrap_for_training).
  std::shared_ptr<distributed::DistributedDataParallel> ddp;
  std::unique_ptr<optim::Optimizer> optimizer;
  tools::Precision precision = tools::Precision::F32;
  std::unique_ptr<amp::GradScaler> scaler;  // f16 only
  std::int64_t num_parameters = 0;
  std::shared_ptr<const data::Dataset> train_set;
  std::int64_t test_size = 0;
  std::unique_ptr<data::DataLoader> train_loader;
  std::unique_ptr<data::DataLoader> test_loader;
  std::int64_t steps_per_epoch = 0;  // optimizer steps: --accumulate batches each
  tools::CheckpointSpec checkpoint;
  // --recompute and --memory-budget: srnet's residual blocks and the policies installed on them.
  std::vector<std::shared_ptr<nn::Module>> blocks;
  offload::AppliedPlan applied_plan;
  std::optional<offload::MemoryPlan> memory_plan;  // --memory-budget's, for the final report
};

// The training set: Fashion-MNIST's, or its first --limit-train images.
std::shared_ptr<const data::Dataset> make_train_set(const TrainOptions& o) {
  const data::FashionMNIST full_train(o.data, data::Split::Train);
  if (o.limit_train > 0 && o.limit_train < full_train.size()) {
    return std::make_shared<data::TensorDataset>(full_train.images().slice(0, 0, o.limit_train),
                                                 full_train.targets().slice(0, 0, o.limit_train));
  }
  return std::make_shared<data::FashionMNIST>(full_train);
}

// --precision f16's loss scaler, from --init-scale.
std::unique_ptr<amp::GradScaler> make_scaler(const TrainOptions& o) {
  amp::GradScalerOptions options;
  if (o.init_scale) options.init_scale(*o.init_scale);
  return std::make_unique<amp::GradScaler>(options);
}

// --optimizer over the model's parameters; with --zero, its state sharded over the processes.
std::unique_ptr<optim::Optimizer> make_run_optimizer(const TrainOptions& o, const Run& run) {
  if (!o.zero) return make_optimizer(o.optimizer, run.model->parameters(), run.lr);
  LG_CHECK(run.world.size > 1,
           "--zero shards the optimizer state over the processes of "
           "leangrad-run; this run has one process");
  return std::make_unique<distributed::ZeroRedundancyOptimizer>(
      run.model->parameters(), tools::optimizer_factory(o.optimizer, run.lr));
}

// Threads, device, seed, then the model and its optimizer, then the data.
Run set_up(const TrainOptions& o, const tools::World& world, Device device) {
  if (o.threads > 0) set_num_threads(o.threads);
  Run run;
  run.device = device;
  run.world = world;
  run.lr = o.lr > 0 ? o.lr : default_lr(o.optimizer);
  run.srnet = tools::is_super_resolution(o.model);
  manual_seed(o.seed);

  tools::ModelOptions model_options;
  model_options.name = o.model;
  model_options.width = o.width;
  model_options.blocks = o.blocks;
  run.model = tools::make_model(model_options);
  run.model->to(run.device);
  if (o.recompute || o.memory_budget_mb > 0) {
    run.blocks =
        tools::memory_blocks(o.model, *run.model, o.recompute ? "--recompute" : "--memory-budget");
  }
  if (o.recompute) {  // one policy for every block; --memory-budget chooses per block
    run.applied_plan = offload::apply_policies(
        run.blocks,
        std::vector<offload::BlockPolicy>(run.blocks.size(), offload::BlockPolicy::Recompute));
  }
  if (o.offload_params) {
    // Before the optimizer is built: its state is then made where the parameters are, the host.
    run.parameter_offload = std::make_unique<offload::ParameterOffload>(
        run.model, offload::ParameterOffloadOptions(run.device));
  }
  run.optimizer = make_run_optimizer(o, run);
  run.precision = tools::parse_precision(o.precision);
  LG_CHECK(!o.init_scale || run.precision == tools::Precision::F16,
           "--init-scale: only --precision f16 scales the loss (this run has --precision ",
           o.precision, ")");
  if (run.precision == tools::Precision::F16) run.scaler = make_scaler(o);
  for (const Tensor& p : run.model->parameters())
    run.num_parameters += p.numel();

  run.train_set = make_train_set(o);
  const data::FashionMNIST test(o.data, data::Split::Test);
  // The test images scored: all of them, or the first --limit-test.
  const std::int64_t test_size =
      o.limit_test > 0 ? std::min(o.limit_test, test.size()) : test.size();
  run.test_size = test_size;
  // An empty split has no loss to report, nor a score (0 / 0): refused rather than made up.
  LG_CHECK(run.train_set->size() > 0, "--data '", o.data,
           "': the training split has no images, so there is nothing to train on");
  LG_CHECK(test_size > 0, "--data '", o.data,
           "': the test split has no images, so there is nothing to score the model on");
  data::DataLoaderOptions train_options = data::DataLoaderOptions()
                                              .batch_size(o.batch_size)
                                              .shuffle(true)
                                              .seed(o.seed)
                                              .num_workers(o.workers)
                                              .prefetch_factor(o.prefetch)
                                              .pin_memory(o.pin_memory)
                                              .device(run.device);
  if (run.world.size > 1) {  // this rank's share of each epoch's order
    train_options.shuffle(false).sampler(data::DistributedSampler(
        run.train_set->size(), run.world.rank, run.world.size, /*shuffle=*/true, o.seed));
  }
  run.train_loader = std::make_unique<data::DataLoader>(run.train_set, train_options);
  // srnet's activations grow with its width: evaluate it in training-sized batches.
  const std::int64_t eval_batch = run.srnet ? o.batch_size : kEvalBatchSize;
  const data::DataLoaderOptions test_options =
      data::DataLoaderOptions().batch_size(eval_batch).pin_memory(o.pin_memory).device(run.device);
  if (run.world.size > 1 || test_size < test.size()) {
    // Images rank, rank + W, ... of the first test_size: every image once over the ranks.
    const std::int64_t n = test_size, r = run.world.rank, w = run.world.size;
    run.test_loader = std::make_unique<data::DataLoader>(
        data::TensorDataset(test.images().slice(0, r, n, w).contiguous(),
                            test.targets().slice(0, r, n, w).contiguous()),
        test_options);
  } else {
    run.test_loader = std::make_unique<data::DataLoader>(test, test_options);
  }
  run.steps_per_epoch = (run.train_loader->size() + o.accumulate - 1) / o.accumulate;
  run.checkpoint = checkpoint_spec(o, run.world.size, run.lr, run.steps_per_epoch);
  return run;
}

// The run's header: model, optimizer, device and data.
void print_run(const TrainOptions& o, const Run& run) {
  std::cout << "leangrad-train: model " << o.model;
  if (run.srnet) {
    std::cout << " (width " << o.width << ", " << o.blocks << " blocks"
              << (o.recompute ? ", recomputed" : "");
    if (o.memory_budget_mb > 0) std::cout << ", memory budget " << o.memory_budget_mb << " MiB";
    std::cout << ")";
  }
  std::cout << ", " << run.num_parameters << " parameters, " << o.optimizer << " lr " << run.lr
            << ", batch " << o.batch_size << ", " << o.epochs << " epochs on " << run.device << " ("
            << get_num_threads() << " CPU threads, " << o.workers << " loader workers)\n";
  if (run.precision != tools::Precision::F32) {
    std::cout << "precision: " << o.precision << " (autocast to "
              << (run.precision == tools::Precision::BF16 ? "bfloat16" : "float16")
              << (run.scaler ? ", dynamic loss scaling" : "")
              << "; parameters, gradients and optimizer state float32)\n";
  }
  if (run.world.size > 1) {
    std::cout << "distributed: " << run.world.size << " processes ("
              << distributed::default_process_group().backend_name()
              << "), DistributedDataParallel, "
              << (o.zero ? "optimizer state sharded (ZeroRedundancyOptimizer), " : "")
              << "global batch " << o.batch_size * run.world.size << "\n";
  }
  std::cout << "data: " << run.train_set->size() << " training / " << run.test_size
            << " test images from " << o.data << "\n";
  if (o.save_on_cpu) {
    std::cout << (run.device.is_cuda() ? "saved activations: offloaded to pinned host memory\n"
                                       : "saved activations: --save-on-cpu has nothing to move on "
                                         "the CPU (the activations are in host memory already)\n");
  }
  if (run.parameter_offload) {
    std::cout << "parameters: in pinned host memory, " << run.parameter_offload->unit_names().size()
              << " layers copied to " << run.device << " one at a time (largest "
              << format_mib(run.parameter_offload->largest_unit_bytes(), 0)
              << "), the optimizer steps on the host\n";
  }
  std::cout << std::flush;
}

// srnet's yardstick, printed: nearest-neighbour upsampling's test PSNR.
double print_baseline_psnr(Run& run) {
  const double psnr = tools::nearest_upsampling_psnr(*run.test_loader);
  char line[96];
  std::snprintf(line, sizeof(line), "baseline: nearest-neighbour upsampling, test PSNR %.2f dB",
                psnr);
  std::cout << line << std::endl;
  return psnr;
}

// ---- The memory plan (--memory-budget) ---------------------------------------------------------
// One step on the first training batch is profiled (offload::profile_step: every block
// recomputed, the smallest footprint, so the profile fits wherever a plan does); then the model
// is put back and the optimizer started afresh, so the run trains exactly as it would have
// without the profile. The fastest plan that fits the budget is printed and installed on the
// blocks; the final report sets its predictions beside what training measured.

// The model's parameters and buffers, copied to pinned host memory: a pool of its own (on the
// CPU too), so the copy counts against neither the budget nor a memory cap.
NamedTensors host_snapshot(const nn::Module& model) {
  NamedTensors snapshot;
  for (const auto& [name, t] : model.state_dict()) {
    Tensor copy = empty(t.shape(), TensorOptions(t.dtype()).pinned_memory(true));
    copy.copy_(t);
    snapshot.emplace_back(name, copy);
  }
  return snapshot;
}

// What the run's optimizer moves per millisecond stepping host tensors (parameters, gradients
// and its state), for the planner's parameter-offload cost: one step over host copies of up to
// 16M parameters, timed after a first step that makes the state.
double host_optimizer_bytes_per_ms(const TrainOptions& o, const Run& run) {
  std::int64_t numel = 0;
  for (const Tensor& p : run.model->parameters())
    numel += p.numel();
  numel = std::clamp<std::int64_t>(numel, 1, std::int64_t{1} << 24);
  const TensorOptions host = TensorOptions(kFloat32).pinned_memory(true);
  Tensor p = zeros({numel}, host).requires_grad_(true);
  p.set_grad(full({numel}, 1e-3, host));
  const std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(o.optimizer, {p}, run.lr);
  optimizer->step();
  const auto start = std::chrono::steady_clock::now();
  optimizer->step();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const double bytes = 2.0 * static_cast<double>(p.nbytes()) +
                       static_cast<double>(optimizer_state_bytes(*optimizer, Device::cpu()));
  return bytes / std::max(ms, 1e-3);
}

void plan_memory_budget(const TrainOptions& o, Run& run) {
  if (o.memory_budget_mb <= 0) return;
  const auto budget_bytes = static_cast<std::int64_t>(std::llround(o.memory_budget_mb * (1 << 20)));
  const NamedTensors snapshot = host_snapshot(*run.model);
  offload::StepProfile profile;
  {
    data::DataLoader first(run.train_set, data::DataLoaderOptions()
                                              .batch_size(o.batch_size)
                                              .pin_memory(o.pin_memory)
                                              .device(run.device));
    const data::Batch batch = *first.begin();
    const double scale = 1.0 / o.accumulate;
    auto step = [&] {  // one optimizer step, as Trainer::train_steps runs it
      run.optimizer->zero_grad();
      for (int i = 0; i < o.accumulate; ++i) {
        tools::accumulate_micro_batch(o.model, *run.model, batch.data, batch.target, scale,
                                      /*save_on_cpu=*/false, run.precision, run.scaler.get());
      }
      if (run.scaler) {
        run.scaler->step(*run.optimizer);
        run.scaler->update();
      } else {
        run.optimizer->step();
      }
    };
    offload::ProfileOptions options;
    options.measured_steps = 2;
    try {
      profile = offload::profile_step(*run.model, run.blocks, step, options);
    } catch (const OutOfMemoryError& e) {
      LG_THROW(Error,
               "--memory-budget: the profiling step ran out of memory with every block "
               "recomputed, the smallest footprint a plan has: ",
               e.message());
    }
    profile.optimizer_state_bytes = optimizer_state_bytes(*run.optimizer, run.device);
  }
  run.model->load_state_dict(snapshot);
  run.model->zero_grad();

  // On CUDA the planner may also move the parameters and the optimizer to the host
  // (offload::ParameterOffload), at the cost of the host step it is given here. With several
  // processes every rank plans on the ranks' largest numbers and gets the same plan, which
  // also weighs the gradient all-reduce; offloaded parameters need --backend gloo there (their
  // buckets are in host memory). Note [One plan for every rank] in distributed/memory_plan.cpp.
  offload::PlanOptions plan_options;
  if (run.device.is_cuda()) {
    profile.host_optimizer_bytes_per_ms = host_optimizer_bytes_per_ms(o, run);
    plan_options.allow_parameter_offload = true;
  }
  const offload::MemoryPlan plan = distributed::plan_memory(profile, budget_bytes, plan_options);
  std::cout << offload::describe_plan(profile, plan) << std::flush;
  run.applied_plan = offload::apply_plan(plan, run.blocks, run.model,
                                         offload::ParameterOffloadOptions(run.device));
  // Built after the plan: with offloaded parameters its state is then made on the host.
  run.optimizer = make_run_optimizer(o, run);
  if (run.scaler) run.scaler = make_scaler(o);
  run.memory_plan = plan;
}

// The --log-json record of the run, with the epochs logged so far.
nlohmann::json make_log(const TrainOptions& o, const Run& run, const TrainPosition& position,
                        double baseline_psnr) {
  nlohmann::json log = {{"model", o.model},
                        {"optimizer", o.optimizer},
                        {"lr", run.lr},
                        {"batch_size", o.batch_size},
                        {"device", run.device.str()},
                        {"threads", get_num_threads()},
                        {"train_examples", run.train_set->size()},
                        {"test_examples", run.test_size},
                        {"parameters", run.num_parameters},
                        {"seed", o.seed},
                        {"accumulate", o.accumulate},
                        {"precision", o.precision},
                        {"save_on_cpu", o.save_on_cpu},
                        {"offload_params", o.offload_params},
                        {"zero", o.zero},
                        {"recompute", o.recompute},
                        {"epochs", position.epochs_log}};
  if (run.srnet) {
    log["width"] = o.width;
    log["blocks"] = o.blocks;
    log["baseline_psnr_db"] = baseline_psnr;
  }
  return log;
}

// Where an epoch stands: its optimizer steps and their losses, the times of the steps this
// process ran, and the window of steps since the last progress line.
struct EpochProgress {
  int epoch = 1;
  std::int64_t step = 0;
  double loss_sum = 0;
  std::vector<double> step_ms;
  double window_loss_sum = 0;
  std::int64_t window_steps = 0;
  Clock::time_point start;
  Clock::time_point last_step_end;
};

// The epochs of a run: training steps (with accumulation, progress, timing and checkpoints),
// then evaluation and the epoch's log record; then the memory and step-time report.
class Trainer {
 public:
  Trainer(const TrainOptions& o, Run& run, TrainPosition position, nlohmann::json& log);

  void train_epochs();
  // --profile and --memory-timeline at the run's end (also when a signal stopped it): the trace of
  // a window the run ended inside, or the line saying the run ended before a window began.
  void finish_observers();
  void report();
  bool interrupted() const { return interrupted_; }
  // The signal that stopped the run: this process's own, or SIGINT when another rank's stopped
  // it (tools::catch_interrupt).
  int interrupt_signal() const {
    return tools::interrupt_signal() != 0 ? tools::interrupt_signal() : SIGINT;
  }

 private:
  void train_steps(EpochProgress& e);
  void end_step(EpochProgress& e, double step_loss, std::int64_t step_samples);
  void checkpoint(const EpochProgress& e, double loss_sum);
  void evaluate(const EpochProgress& e, double train_seconds);
  void report_memory_plan(const offload::MemoryPlan& plan, double median_ms) const;
  void print_stop(int epoch, std::int64_t step) const;
  void finish_profile();

  const TrainOptions& o_;
  Run& run_;
  TrainPosition position_;
  nlohmann::json& log_;
  MemoryReport memory_;
  tools::ProgressBar bar_;
  tools::JsonLines step_log_;           // --log-jsonl
  tools::StepProfiler profiler_;        // --profile
  tools::StepMemoryTimeline timeline_;  // --memory-timeline
  std::vector<double> step_ms_all_;
  const std::int64_t batches_per_epoch_;
  const std::int64_t steps_per_epoch_;  // run_.steps_per_epoch
  bool stopped_ = false;                // by --max-steps, Ctrl-C or SIGTERM
  bool interrupted_ = false;            // by Ctrl-C or SIGTERM
};

Trainer::Trainer(const TrainOptions& o, Run& run, TrainPosition position, nlohmann::json& log)
    : o_(o),
      run_(run),
      position_(std::move(position)),
      log_(log),
      bar_(isatty(STDOUT_FILENO) != 0, std::cout, STDOUT_FILENO,
           tools::terminal_erases_lines(std::getenv("TERM"))),
      batches_per_epoch_(run.train_loader->size()),
      steps_per_epoch_(run.steps_per_epoch) {
  // What is allocated now beside the parameters is resident data (MemoryReport).
  memory_.resident = memory::stats(run.device).allocated;
  for (const Tensor& p : run.model->parameters())
    memory_.parameters += device_bytes(p, run.device);
  memory_.resident -= memory_.parameters;
  memory::reset_peak(run.device);
  if (!o.log_jsonl.empty() && run.world.is_main()) {  // a resumed run goes on with the same file
    std::optional<tools::LogResumePoint> resumed;
    if (position_.global_step > 0) resumed = {position_.global_step, position_.epoch};
    step_log_ = tools::JsonLines(o.log_jsonl, resumed);
    if (step_log_.dropped_lines() > 0) {
      std::cout << "--log-jsonl: dropped " << step_log_.dropped_lines() << " line(s) of "
                << o.log_jsonl << " written after the checkpoint of global step "
                << position_.global_step << " (or cut short), which this run writes again"
                << std::endl;
    }
  }
  const std::int64_t first_observed = position_.global_step + tools::kObserverWarmupSteps;
  if (!o.profile.empty() && run.world.is_main())
    profiler_ = tools::StepProfiler(o.profile, first_observed, o.profile_steps);
  if (!o.memory_timeline.empty() && run.world.is_main())
    timeline_ = tools::StepMemoryTimeline(o.memory_timeline, first_observed, run.device);
}

void Trainer::train_epochs() {
  // --max-steps counts across resumes: a run resumed at or past it trains no further step.
  if (o_.max_steps > 0 && position_.global_step >= o_.max_steps) {
    std::cout << "stopped by --max-steps " << o_.max_steps << ": resumed at global step "
              << position_.global_step << ", nothing left to train" << std::endl;
    stopped_ = true;
    return;
  }
  for (int epoch = position_.epoch; epoch <= o_.epochs && !stopped_; ++epoch) {
    run_.model->train();
    EpochProgress e;
    e.epoch = epoch;
    const bool resumed_epoch = epoch == position_.epoch;
    e.step = resumed_epoch ? position_.step_in_epoch : 0;
    e.loss_sum = resumed_epoch ? position_.loss_sum : 0;
    train_steps(e);
    bar_.clear();
    const double train_seconds = std::chrono::duration<double>(Clock::now() - e.start).count();
    const MemoryStats after_training = memory::stats(run_.device);
    memory_.peak_allocated = std::max(memory_.peak_allocated, after_training.peak_allocated);
    memory_.peak_reserved = std::max(memory_.peak_reserved, after_training.peak_reserved);
    step_ms_all_.insert(step_ms_all_.end(), e.step_ms.begin(), e.step_ms.end());
    // --max-steps at the epoch's last step still evaluates the finished epoch; within it, or on
    // Ctrl-C, not.
    const bool finished_epoch = e.step >= steps_per_epoch_;
    if (stopped_ && (interrupted_ || !finished_epoch)) {
      print_stop(epoch, e.step);
      break;
    }
    evaluate(e, train_seconds);
    if (stopped_) {
      print_stop(epoch, e.step);
      break;
    }
  }
}

void Trainer::print_stop(int epoch, std::int64_t step) const {
  std::cout << (interrupted_
                    ? std::string("interrupted (") + tools::interrupt_name(interrupt_signal()) + ")"
                    : "stopped by --max-steps " + std::to_string(o_.max_steps))
            << " at epoch " << epoch << " step " << step << "/" << steps_per_epoch_ << std::endl;
}

// The optimizer steps of epoch e.epoch from step e.step on, each over --accumulate micro-batches
// (fewer for the last step of an epoch), until the epoch ends or --max-steps stops the run.
void Trainer::train_steps(EpochProgress& e) {
  // The order of an epoch depends only on (seed, epoch): a resumed run re-creates it and
  // skips the batches the checkpointed steps consumed.
  run_.train_loader->set_epoch(static_cast<std::uint64_t>(e.epoch - 1));
  const std::int64_t skip = std::min(e.step * o_.accumulate, batches_per_epoch_);
  std::int64_t batch_index = 0, group_size = 0, in_group = 0, step_samples = 0;
  double step_loss = 0;
  std::unique_ptr<profiler::Span> step_span;  // one optimizer step, in a --profile trace
  e.start = Clock::now();
  e.last_step_end = e.start;
  for (const auto& [images, labels] : *run_.train_loader) {  // (B, 1, 28, 28), (B,)
    if (batch_index++ < skip) continue;
    if (in_group == 0) {  // the first micro-batch of an optimizer step
      profiler_.begin_step(position_.global_step);
      if (profiler::is_recording())
        step_span = std::make_unique<profiler::Span>("train_step", profiler::Category::User);
      timeline_.begin_step(position_.global_step, *run_.model, *run_.optimizer);
      run_.optimizer->zero_grad();
      group_size = std::min<std::int64_t>(o_.accumulate, batches_per_epoch_ - (batch_index - 1));
      step_loss = 0;
      step_samples = 0;
    }
    const double scale = 1.0 / static_cast<double>(group_size);
    tools::MicroBatch micro;
    if (run_.ddp) {
      // Every micro-batch but the step's last accumulates locally: one all-reduce per step.
      std::optional<distributed::NoSyncGuard> no_sync;
      if (in_group + 1 < group_size) no_sync.emplace(*run_.ddp);
      micro = tools::accumulate_micro_batch(o_.model, *run_.ddp, images, labels, scale,
                                            o_.save_on_cpu, run_.precision, run_.scaler.get());
    } else {
      micro = tools::accumulate_micro_batch(o_.model, *run_.model, images, labels, scale,
                                            o_.save_on_cpu, run_.precision, run_.scaler.get());
    }
    step_loss += scale * static_cast<double>(micro.loss);
    step_samples += images.size(0);
    memory_.saved_activations = std::max(memory_.saved_activations, micro.forward_bytes);
    if (++in_group < group_size) continue;
    in_group = 0;
    if (run_.scaler) {  // f16: skips the update on the device when a gradient overflowed
      run_.scaler->step(*run_.optimizer);
      run_.scaler->update();
    } else if (run_.parameter_offload) {  // on the host, the next forward's first copies started
      run_.parameter_offload->step(*run_.optimizer);
    } else {
      run_.optimizer->step();
    }
    step_span.reset();
    if (timeline_.recording()) {
      bar_.clear();
      timeline_.end_step(*run_.model, *run_.optimizer,
                         {{"model", o_.model},
                          {"batch_size", o_.batch_size},
                          {"memory_setting", tools::memory_setting_text(o_)}},
                         std::cout);
    }
    end_step(e, step_loss, step_samples);
    if (stopped_) break;
  }
}

// After an optimizer step: its time and loss, the progress bar or line, a checkpoint when due.
void Trainer::end_step(EpochProgress& e, double step_loss, std::int64_t step_samples) {
  // Each step's loss.item() (after its backward, before the optimizer step) waits for the device,
  // and so for the previous step's optimizer kernels too: over several steps the step times are
  // the real time per step (data wait included), not the time to queue work.
  const Clock::time_point now = Clock::now();
  e.step_ms.push_back(std::chrono::duration<double, std::milli>(now - e.last_step_end).count());
  e.last_step_end = now;
  ++e.step;
  ++position_.global_step;
  ++e.window_steps;
  e.loss_sum += step_loss;
  e.window_loss_sum += step_loss;
  const double samples_per_second = 1000.0 * static_cast<double>(step_samples) / e.step_ms.back();
  if (bar_.enabled()) {
    const double ms = mean(e.step_ms);
    bar_.update({.epoch = e.epoch,
                 .epochs = o_.epochs,
                 .step = e.step,
                 .steps = steps_per_epoch_,
                 .loss = e.window_loss_sum / static_cast<double>(e.window_steps),
                 .samples_per_second = samples_per_second,
                 .eta_seconds = ms * static_cast<double>(steps_per_epoch_ - e.step) / 1000.0});
  }
  if (step_log_.is_open()) {
    const MemoryStats stats = memory::stats(run_.device);
    step_log_.write({{"event", "step"},
                     {"step", position_.global_step},
                     {"epoch", e.epoch},
                     {"loss", step_loss},
                     {"lr", run_.optimizer->param_groups()[0].lr.value_or(run_.lr)},
                     {"step_ms", e.step_ms.back()},
                     {"samples_per_s", samples_per_second},
                     {"allocated_bytes", stats.allocated},
                     {"peak_allocated_bytes", stats.peak_allocated},
                     {"reserved_bytes", stats.reserved}});
  }
  if (e.step % kLogEverySteps == 0 || e.step == steps_per_epoch_) {
    // Every rank reaches the same steps (DistributedSampler pads its shares to one length).
    e.window_loss_sum = tools::reduce_over_ranks(run_.world, {e.window_loss_sum}, run_.device)[0] /
                        static_cast<double>(run_.world.size);
    if (!bar_.enabled()) {
      char line[128];
      std::snprintf(line, sizeof(line), "epoch %d step %lld/%lld loss %.4f %.1f ms/step", e.epoch,
                    static_cast<long long>(e.step), static_cast<long long>(steps_per_epoch_),
                    e.window_loss_sum / static_cast<double>(e.window_steps),
                    mean(e.step_ms, e.step_ms.size() - static_cast<std::size_t>(e.window_steps)));
      std::cout << line << std::endl;
    }
    e.window_loss_sum = 0;
    e.window_steps = 0;
  }
  if (profiler_.done_after(position_.global_step)) finish_profile();
  stopped_ = o_.max_steps > 0 && position_.global_step >= o_.max_steps;
  // Ctrl-C or SIGTERM: every rank stops at the same step (the one where any of them saw it), so
  // the checkpoint below is taken by all at once.
  interrupted_ = tools::interrupt_requested();
  if (run_.world.size > 1) {
    interrupted_ = tools::reduce_over_ranks(run_.world, {interrupted_ ? 1.0 : 0.0}, run_.device,
                                            distributed::ReduceOp::Max)[0] > 0;
  }
  stopped_ = stopped_ || interrupted_;
  const bool checkpoint_now = o_.checkpoint_every > 0
                                  ? position_.global_step % o_.checkpoint_every == 0
                                  : e.step == steps_per_epoch_;
  if (!o_.checkpoint_dir.empty() && (checkpoint_now || stopped_)) {
    // The epoch's loss so far, averaged over the ranks: each rank resumes from this mean, and
    // the epoch's end averages the ranks' sums again (every rank takes this branch at once).
    const double loss_sum = tools::reduce_over_ranks(run_.world, {e.loss_sum}, run_.device)[0] /
                            static_cast<double>(run_.world.size);
    // --zero: every rank's share of the optimizer state to rank 0, which saves the whole.
    if (auto* zero = dynamic_cast<distributed::ZeroRedundancyOptimizer*>(run_.optimizer.get()))
      zero->consolidate_state_dict(0);
    if (run_.world.is_main()) checkpoint(e, loss_sum);
    e.last_step_end = Clock::now();  // the save is not part of the step times
  }
}

// Saves where training stands after e's latest step (see Checkpoints above); `loss_sum` is the
// epoch's loss so far (over the ranks).
void Trainer::checkpoint(const EpochProgress& e, double loss_sum) {
  position_.epoch = e.epoch;
  position_.step_in_epoch = e.step;
  position_.loss_sum = loss_sum;
  position_.epochs_log = log_["epochs"];
  bar_.clear();
  tools::save_checkpoint(o_.checkpoint_dir, o_.keep, run_.checkpoint, *run_.model, *run_.optimizer,
                         position_, run_.scaler.get());
  std::cout << "checkpoint: " << tools::checkpoint_path(o_.checkpoint_dir, position_.global_step)
            << std::endl;
}

// The end of a finished epoch: test score, the epoch's line and its --log-json record.
void Trainer::evaluate(const EpochProgress& e, double train_seconds) {
  // Each rank scores its share of the test set; the sums over the ranks give the whole set's.
  const auto share = static_cast<double>(run_.test_loader->dataset().size());
  const double local_score =
      tools::evaluate(o_.model, *run_.model, *run_.test_loader, run_.precision);
  const std::vector<double> sums =
      tools::reduce_over_ranks(run_.world, {local_score * share, share, e.loss_sum}, run_.device);
  const double score = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
  memory::reset_peak(run_.device);  // evaluation's batches are not part of the training peak
  const double epoch_loss =
      e.step > 0 ? sums[2] / static_cast<double>(run_.world.size) / static_cast<double>(e.step)
                 : 0.0;
  // The mean time of the epoch's steps this process ran. A run resumed from a checkpoint taken
  // after the epoch's last step ran none (it only evaluates the epoch): nothing was measured, so
  // the line says so and the logs have null, not a time of 0.
  const bool stepped = !e.step_ms.empty();
  char step_time[32];
  std::snprintf(step_time, sizeof(step_time), "%.2f ms/step", mean(e.step_ms));
  char line[192];
  std::snprintf(line, sizeof(line), "epoch %d/%d: train loss %.4f, %s, %s, %.1f s", e.epoch,
                o_.epochs, epoch_loss, format_score(o_.model, score).c_str(),
                stepped ? step_time : "no step in this run", train_seconds);
  std::cout << line << std::endl;

  const nlohmann::json ms_per_step = stepped ? nlohmann::json(mean(e.step_ms)) : nlohmann::json();
  log_["epochs"].push_back({{"epoch", e.epoch},
                            {"loss", epoch_loss},
                            {run_.srnet ? "psnr_db" : "accuracy", score},
                            {"ms_per_step", ms_per_step},
                            {"seconds", train_seconds}});
  if (step_log_.is_open()) {
    step_log_.write({{"event", "epoch"},
                     {"step", position_.global_step},
                     {"epoch", e.epoch},
                     {"loss", epoch_loss},
                     {run_.srnet ? "psnr_db" : "accuracy", score},
                     {"ms_per_step", ms_per_step},
                     {"seconds", train_seconds}});
  }
  if (!o_.log_json.empty() && run_.world.is_main()) write_json_atomically(o_.log_json, log_);
}

// --memory-budget's predictions beside what training measured.
void Trainer::report_memory_plan(const offload::MemoryPlan& plan, double median_ms) const {
  auto percent = [](double measured, double predicted) {
    return measured > 0 ? 100.0 * (predicted - measured) / measured : 0.0;
  };
  const auto measured_peak = static_cast<double>(memory_.peak_allocated);
  char line[256];
  std::snprintf(line, sizeof(line),
                "memory plan: predicted peak %.2f MiB, step %.2f ms; measured peak allocated "
                "%.2f MiB (prediction %+.1f%%), median step %.2f ms (prediction %+.1f%%)",
                static_cast<double>(plan.predicted_peak_bytes) / (1 << 20), plan.predicted_step_ms,
                measured_peak / (1 << 20),
                percent(measured_peak, static_cast<double>(plan.predicted_peak_bytes)), median_ms,
                percent(median_ms, plan.predicted_step_ms));
  std::cout << line << "\n";
  // The budget is what the user asked for: say so plainly when the run went over it (the cost
  // model predicted too little for this model), rather than leave it to the percentage.
  const std::int64_t over = memory_.peak_allocated - plan.budget_bytes;
  if (plan.budget_bytes > 0 && over > 0) {
    std::snprintf(line, sizeof(line),
                  "memory plan: warning: the measured peak went %.2f MiB over the budget of %.2f "
                  "MiB (the cost model predicted too little for this model, docs/memory.md); a "
                  "budget lower by that much leaves room for the error",
                  static_cast<double>(over) / (1 << 20),
                  static_cast<double>(plan.budget_bytes) / (1 << 20));
    std::cout << line << "\n";
  }
}

// --profile's window ended (or the run did first): the trace and the top ops.
void Trainer::finish_profile() {
  bar_.clear();
  profiler_.finish(std::cout);
}

void Trainer::finish_observers() {
  finish_profile();
  timeline_.finish(std::cout);
}

// Step times and where the memory went, printed and added to the --log-json record.
void Trainer::report() {
  finish_observers();
  for (const Tensor& p : run_.model->parameters())
    memory_.gradients += device_bytes(p.grad(), run_.device);
  memory_.optimizer_state = optimizer_state_bytes(*run_.optimizer, run_.device);
  memory_.pinned_peak = memory::pinned_stats().peak_allocated;
  // No step (a run resumed at --max-steps): no step time and no peak were measured, and neither
  // is printed as a number or logged.
  memory_.steps = static_cast<std::int64_t>(step_ms_all_.size());
  const bool trained = memory_.steps > 0;
  const double median_ms = percentile(step_ms_all_, 0.5), p90_ms = percentile(step_ms_all_, 0.9);
  char line[128];
  std::snprintf(line, sizeof(line), "step time: median %.2f ms, p90 %.2f ms over %zu steps",
                median_ms, p90_ms, step_ms_all_.size());
  std::cout << (trained ? line : "step time: no step was trained in this run") << "\n";
  print_memory_report(memory_, run_.device, o_.precision);
  if (trained && run_.memory_plan) report_memory_plan(*run_.memory_plan, median_ms);

  if (trained) {
    log_["step_ms"] = {{"median", median_ms}, {"p90", p90_ms}};
    log_["memory_bytes"] = {{"peak_allocated", memory_.peak_allocated},
                            {"peak_reserved", memory_.peak_reserved},
                            {"parameters", memory_.parameters},
                            {"gradients", memory_.gradients},
                            {"optimizer_state", memory_.optimizer_state},
                            {"resident_data", memory_.resident},
                            {"saved_activations", memory_.saved_activations},
                            {"other", memory_.other()},
                            {"allocator_slack", memory_.peak_reserved - memory_.peak_allocated},
                            {"pinned_peak", memory_.pinned_peak}};
  }
  if (run_.memory_plan) {
    const offload::MemoryPlan& plan = *run_.memory_plan;
    nlohmann::json policies = nlohmann::json::array();
    for (const offload::BlockPolicy policy : plan.policies)
      policies.push_back(offload::policy_name(policy));
    log_["memory_plan"] = {{"budget_bytes", plan.budget_bytes},
                           {"policies", policies},
                           {"offload_parameters", plan.offload_parameters},
                           {"predicted_peak_bytes", plan.predicted_peak_bytes},
                           {"predicted_step_ms", plan.predicted_step_ms}};
  }
  if (!o_.log_json.empty() && run_.world.is_main()) write_json_atomically(o_.log_json, log_);
}

// The files the run will write can be written: a long run must not learn at its end that it
// cannot save its model. Also clears the checkpoint folder of the temporaries of killed saves.
void check_outputs(const TrainOptions& o) {
  if (!o.save_model.empty()) check_writable(o.save_model, "--save-model");
  if (!o.log_json.empty()) check_writable(o.log_json, "--log-json");
  if (!o.log_jsonl.empty()) check_writable(o.log_jsonl, "--log-jsonl");
  if (!o.profile.empty()) check_writable(o.profile, "--profile");
  if (!o.memory_timeline.empty()) check_writable(o.memory_timeline, "--memory-timeline");
  if (o.checkpoint_dir.empty()) return;
  const std::size_t removed = tools::prepare_checkpoint_dir(o.checkpoint_dir);
  if (removed > 0) {
    std::cout << "removed " << removed << " temporary file(s) of interrupted checkpoint saves from "
              << o.checkpoint_dir << std::endl;
  }
}

// Where train() is: out of memory while setting up means the model or the data do not fit; while
// training, the activations and the optimizer's state are what can be made smaller.
enum class Phase { kSetUp, kTraining };

// With several processes: the ranks resumed at the same step (they read one checkpoint folder),
// then the model wrapped in DistributedDataParallel, which copies rank 0's weights to every rank.
void wrap_for_training(Run& run, const TrainPosition& position) {
  if (run.world.size == 1) return;
  const auto step = static_cast<double>(position.global_step);
  const std::vector<double> most =
      tools::reduce_over_ranks(run.world, {step, -step}, run.device, distributed::ReduceOp::Max);
  LG_CHECK(most[0] == -most[1], "rank ", run.world.rank, " resumed at global step ",
           position.global_step, ", but the ranks resumed at steps from ", -most[1], " to ",
           most[0], ": every rank must see the same --checkpoint-dir");
  run.ddp = std::make_shared<distributed::DistributedDataParallel>(run.model);
}

int train(const TrainOptions& o, Phase& phase) {
  Device device = choose_device(o.device);
  const tools::World world = tools::join_world(o.backend, device, o.offload_params);
  if (world.is_main()) check_outputs(o);
  Run run = set_up(o, world, device);
  print_run(o, run);
  const double baseline_psnr = run.srnet ? print_baseline_psnr(run) : 0.0;
  plan_memory_budget(o, run);
  TrainPosition position;
  if (!o.checkpoint_dir.empty()) {
    if (std::optional<tools::Resumed> resumed =
            tools::resume(o.checkpoint_dir, run.checkpoint, *run.model, *run.optimizer, std::cerr,
                          run.scaler.get())) {
      position = std::move(resumed->position);
      std::cout << "resuming from " << resumed->path << ": epoch " << position.epoch << ", step "
                << position.step_in_epoch << " of the epoch, global step " << position.global_step
                << std::endl;
    }
  }
  wrap_for_training(run, position);
  nlohmann::json log = make_log(o, run, position, baseline_psnr);
  if (run.world.size > 1) log["world_size"] = run.world.size;
  if (!o.log_json.empty() && run.world.is_main()) write_json_atomically(o.log_json, log);

  Trainer trainer(o, run, std::move(position), log);
  phase = Phase::kTraining;
  tools::catch_interrupt();
  trainer.train_epochs();
  if (trainer.interrupted()) {  // the checkpoint (if any) is saved: leave as a shell expects
    trainer.finish_observers();
    if (o.checkpoint_dir.empty() && run.world.is_main())
      std::cout << "no --checkpoint-dir: nothing was saved" << std::endl;
    if (run.world.size > 1) distributed::destroy_process_group();
    return tools::interrupted_exit_code(trainer.interrupt_signal());
  }
  if (!o.save_model.empty() && run.world.is_main()) {
    run.model->save(o.save_model);
    std::cout << "model saved to " << o.save_model << std::endl;
  }
  trainer.report();
  if (run.world.size > 1) distributed::destroy_process_group();
  return 0;
}

// train(), reporting an out-of-memory error with the allocator's state and what to try.
int train_reporting_oom(const TrainOptions& o) {
  Phase phase = Phase::kSetUp;
  try {
    return train(o, phase);
  } catch (const OutOfMemoryError& e) {  // a progress bar's line was ended as it was destroyed
    std::cerr << "leangrad-train: out of memory: " << e.message() << "\n";
    distributed::record_error("out of memory: " + e.message());  // as main() does
    for (const Device device : {Device::cpu(), Device::cuda()}) {
      if (device.is_cpu() || cuda::is_available()) std::cerr << memory::summary(device);
    }
    if (phase == Phase::kSetUp) {
      std::cerr << "The model and the datasets did not fit before training started. To fit: a "
                   "smaller model (srnet: --width, --blocks), fewer training images "
                   "(--limit-train), or more memory (LEANGRAD_ALLOC_CONF memory_cap_mb).\n";
    } else {
      std::cerr << "To fit: --save-on-cpu (activations in pinned host memory, CUDA), "
                << (tools::is_super_resolution(o.model) ? "--recompute, --memory-budget MiB, " : "")
                << "a smaller --batch-size with --accumulate, or --optimizer adam8bit.\n";
    }
    return 1;
  }
}

// "leangrad-train 0.1.0 (CUDA: built in)", the CPU's GEMM library and how OpenMP threads wait,
// then with CUDA one line per CUDA library as the loader finds it (they are opened at first use:
// this opens them, which needs no GPU) and the GPU count: what a bug report needs.
std::string version_text() {
  std::ostringstream out;
  out << "leangrad-train " << LEANGRAD_VERSION
      << (LEANGRAD_WITH_CUDA ? " (CUDA: built in)" : " (CUDA: not built in)");
  out << "\n  CPU matrix products: " << leangrad::ops::cpu_gemm_library();
  out << "\n  OpenMP threads wait: " << openmp_wait_setting();
  for (const leangrad::cuda::LibraryStatus& library : leangrad::cuda::library_statuses()) {
    out << "\n  " << library.name << ": ";
    if (library.ok()) {
      out << library.version << " (" << library.file << ")";
    } else {
      const std::string first_line = library.error.substr(0, library.error.find('\n'));
      out << "not available (" << first_line << ")";
    }
  }
  if (LEANGRAD_WITH_CUDA) out << "\n  GPUs: " << leangrad::cuda::device_count();
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  use_short_openmp_spin(argv);  // Note [OpenMP threads on a shared machine] (core/parallel.cpp)
  CLI::App app{"leangrad-train: trains a model on Fashion-MNIST with leangrad"};
  TrainOptions options;
  add_options(app, options);
  app.set_version_flag("--version", version_text);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "leangrad-train: error: " << e.what() << "\n";
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
      tools::suggest_options(app, "leangrad-train", std::cerr);
    std::cerr << "Run 'leangrad-train --help' for the options.\n";
    return 2;
  }
  if (const std::string conflict = tools::conflicting_outputs(options); !conflict.empty()) {
    std::cerr << "leangrad-train: error: " << conflict << "\n";
    return 2;
  }
  // Under leangrad-run, the reason also goes to the other ranks, whose collectives fail when
  // this one exits: their errors quote it (distributed::record_error; nothing without a group).
  try {
    return train_reporting_oom(options);
  } catch (const leangrad::Error& e) {
    std::cerr << "leangrad-train: error: " << e.message() << "\n";
    distributed::record_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "leangrad-train: error: " << e.what() << "\n";
    distributed::record_error(e.what());
  }
  return 1;
}
