#include "train_options.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "train_models.h"

namespace leangrad::tools {

namespace {

// A finite number > 0. (CLI::PositiveNumber's message spells out the whole range of a double.)
std::string check_positive(std::string& value) {
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(number > 0) || !std::isfinite(number))
    return "expected a number > 0, got '" + value + "'";
  return "";
}

// A whole number from 0 to 2^64 - 1, digits only. (CLI's conversion to uint64 takes "-1" as
// 2^64 - 1 and clamps what overflows.)
std::string check_unsigned(std::string& value) {
  std::uint64_t number = 0;
  const char* last = value.data() + value.size();
  const auto [end, error] = std::from_chars(value.data(), last, number);
  if (value.empty() || error != std::errc() || end != last)
    return "expected a whole number from 0 to 18446744073709551615, got '" + value + "'";
  return "";
}

}  // namespace

// The learning rate when --lr is not given: the classic recipe's for SGD, Adam's for the others.
double default_lr(const std::string& optimizer) {
  return optimizer == "sgd" ? 0.1 : 1e-3;
}

void add_options(CLI::App& app, TrainOptions& o) {
  const CLI::Validator positive(check_positive, "POSITIVE");
  const std::vector<std::string> optimizers = {"sgd", "adam", "adamw", "radam", "adam8bit"};
  app.add_option("--model", o.model, "mlp, cnn or srnet (super-resolution, docs/training.md)")
      ->check(CLI::IsMember(tools::model_names()))
      ->capture_default_str();
  app.add_option("--width", o.width, "srnet: channels of the residual blocks")
      ->check(positive)
      ->capture_default_str();
  app.add_option("--blocks", o.blocks, "srnet: residual blocks")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI::Option* save_on_cpu =
      app.add_flag("--save-on-cpu", o.save_on_cpu,
                   "keep the activations saved for backward in pinned host memory (CUDA)");
  CLI::Option* offload_params = app.add_flag(
      "--offload-params", o.offload_params,
      "keep the parameters, gradients and optimizer state in pinned host memory and copy each "
      "layer's parameters to the device only while it computes (offload::ParameterOffload); "
      "the optimizer steps on the host");
  app.add_flag("--zero", o.zero,
               "under leangrad-run: shard the optimizer state over the processes "
               "(distributed::ZeroRedundancyOptimizer: each keeps the state of 1/N of the "
               "parameters, updates those and broadcasts them)");
  CLI::Option* recompute = app.add_flag(
      "--recompute", o.recompute,
      "srnet: recompute each residual block in backward instead of saving its activations");
  app.add_option("--memory-budget", o.memory_budget_mb,
                 "srnet: profile one step, then keep, recompute or (CUDA) offload each residual "
                 "block's activations so the peak allocated memory fits this many MiB")
      ->check(positive)
      ->check(CLI::Validator(
          [](std::string& value) {  // a petabyte's bytes fit in int64; 2^43 MiB's would not
            return std::strtod(value.c_str(), nullptr) <= 1e9
                       ? std::string()
                       : "expected at most 1e9 MiB (a petabyte), got '" + value + "'";
          },
          "<= 1e9"))
      ->excludes(recompute)
      ->excludes(save_on_cpu)
      ->excludes(offload_params);
  app.add_option("--device", o.device, "cpu or cuda (default: cuda when available, else cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--epochs", o.epochs, "passes over the training set")
      ->check(positive)
      ->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "training examples per step")
      ->check(positive)
      ->capture_default_str();
  app.add_option("--lr", o.lr, "learning rate (default: 0.1 for sgd, 1e-3 for the others)")
      ->check(positive);
  app.add_option("--optimizer", o.optimizer, "sgd, adam, adamw, radam or adam8bit")
      ->check(CLI::IsMember(optimizers))
      ->capture_default_str();
  app.add_option("--workers", o.workers, "DataLoader worker threads (0: the training thread)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_flag("--pin-memory", o.pin_memory, "assemble batches in pinned host memory");
  app.add_option("--prefetch", o.prefetch, "batches each loader worker prepares ahead")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seeds the initialisation and the shuffle")
      ->check(CLI::Validator(check_unsigned, "UINT64"))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads for the kernels (default: all cores)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--data", o.data, "folder with the Fashion-MNIST IDX files (gzipped or not)")
      ->capture_default_str();
  app.add_option("--limit-train", o.limit_train, "train on the first N training images only")
      ->check(positive);
  app.add_option("--limit-test", o.limit_test, "evaluate on the first N test images only")
      ->check(positive);
  app.add_option("--log-json", o.log_json, "write per-epoch records to this JSON file");
  app.add_option("--log-jsonl", o.log_jsonl,
                 "write one JSON line per optimizer step (step, loss, lr, step time, samples/s, "
                 "memory) and per epoch to this file (tools/plot_training.py draws it)");
  CLI::Option* profile = app.add_option(
      "--profile", o.profile,
      "profile --profile-steps optimizer steps after 3 warm-up steps: write a Chrome trace JSON "
      "to this file (Perfetto, chrome://tracing) and print the top ops (docs/profiling.md)");
  app.add_option("--profile-steps", o.profile_steps, "optimizer steps --profile records")
      ->check(positive)
      ->capture_default_str()
      ->needs(profile);
  app.add_option(
      "--memory-timeline", o.memory_timeline,
      "record the allocations of one optimizer step after 3 warm-up steps and write "
      "memory over time by category: a picture if FILE ends in .svg (any case), else JSON "
      "(tools/plot_memory_timeline.py draws that as a PNG)");
  app.add_option("--precision", o.precision,
                 "f32, bf16 (autocast) or f16 (autocast and a GradScaler); parameters stay f32")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  app.add_option("--init-scale", o.init_scale,
                 "with --precision f16: the loss scaler's first scale (default 65536 = 2^16); it "
                 "halves on every overflow and doubles after 2000 clean steps")
      ->check(positive);
  app.add_option("--accumulate", o.accumulate,
                 "micro-batches of --batch-size per optimizer step (gradient accumulation)")
      ->check(positive)
      ->capture_default_str();
  CLI::Option* dir =
      app.add_option("--checkpoint-dir", o.checkpoint_dir,
                     "save checkpoints here, and resume from the newest one found here at start");
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "optimizer steps between checkpoints (default: at the end of each epoch)")
      ->check(positive)
      ->needs(dir);
  app.add_option("--keep", o.keep, "checkpoints to keep (older ones are deleted)")
      ->check(positive)
      ->capture_default_str()
      ->needs(dir);
  app.add_option("--max-steps", o.max_steps,
                 "stop after this many optimizer steps in all (after saving a checkpoint)")
      ->check(positive);
  app.add_option("--save-model", o.save_model,
                 "write the final model's state_dict to this safetensors file");
  app.add_option("--backend", o.backend,
                 "under leangrad-run (several processes): gloo or nccl (default: nccl on CUDA, "
                 "gloo on the CPU and with --offload-params)")
      ->check(CLI::IsMember({"gloo", "nccl"}));
}

distributed::OptimizerFactory optimizer_factory(const std::string& name, double lr) {
  if (name == "sgd") return distributed::optimizer_class<optim::SGD>(optim::SGDOptions(lr));
  if (name == "adam") return distributed::optimizer_class<optim::Adam>(optim::AdamOptions(lr));
  if (name == "adamw") return distributed::optimizer_class<optim::AdamW>(optim::AdamWOptions(lr));
  if (name == "radam") return distributed::optimizer_class<optim::RAdam>(optim::RAdamOptions(lr));
  if (name == "adam8bit")
    return distributed::optimizer_class<optim::Adam8bit>(optim::Adam8bitOptions(lr));
  LG_THROW(Error, "unknown optimizer '", name, "'");
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name,
                                                 std::vector<Tensor> params, double lr) {
  return optimizer_factory(name, lr)({optim::ParamGroup(std::move(params))});
}

std::string memory_setting_text(const TrainOptions& o) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : " ") + part; };
  if (o.recompute) add("--recompute");
  if (o.save_on_cpu) add("--save-on-cpu");
  if (o.offload_params) add("--offload-params");
  if (o.memory_budget_mb > 0) {
    char budget[48];
    std::snprintf(budget, sizeof(budget), "--memory-budget %g", o.memory_budget_mb);
    add(budget);
  }
  return text.empty() ? "plain" : text;
}

std::string conflicting_outputs(const TrainOptions& o) {
  namespace fs = std::filesystem;
  const std::vector<std::pair<const char*, const std::string*>> outputs = {
      {"--save-model", &o.save_model},
      {"--log-json", &o.log_json},
      {"--log-jsonl", &o.log_jsonl},
      {"--profile", &o.profile},
      {"--memory-timeline", &o.memory_timeline}};
  // The file a path names: its folders' links resolved (and its own, when it is one).
  auto resolved = [](const std::string& path) {
    std::error_code error;
    const fs::path absolute = fs::absolute(path, error);
    const fs::path canonical = fs::weakly_canonical(absolute, error);
    return error ? absolute.lexically_normal() : canonical;
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path->empty()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      const auto& [earlier_option, earlier_path] = outputs[j];
      if (earlier_path->empty()) continue;
      std::error_code error;
      const bool same = resolved(*path) == resolved(*earlier_path) ||
                        fs::equivalent(*path, *earlier_path, error);  // hard links
      if (same) {
        return std::string(option) + ": '" + *path + "' is the file of " + earlier_option +
               " too: each output needs a file of its own";
      }
    }
  }
  return "";
}

Device choose_device(const std::string& requested) {
  if (requested.empty()) return cuda::is_available() ? Device::cuda() : Device::cpu();
  if (requested == "cpu") return Device::cpu();
  LG_CHECK(cuda::is_available(), "--device cuda: no CUDA device is available (",
           LEANGRAD_WITH_CUDA ? "no GPU visible" : "leangrad was built without CUDA",
           "); use --device cpu");
  return Device::cuda();
}

}  // namespace leangrad::tools
