// leangrad-train's --profile and --memory-timeline windows (train_observers.h).
#include "train_observers.h"

#include <cstdio>

#include <leangrad/core/memory_history.h>

namespace leangrad::tools {

std::vector<Tensor> optimizer_state_tensors(const optim::Optimizer& optimizer) {
  // Each parameter's state as this process holds it: with --zero, its own share only (the
  // state dict of a ZeroRedundancyOptimizer is whole on one rank, after a consolidation).
  std::vector<Tensor> state;
  for (std::size_t i = 0; i < optimizer.num_params(); ++i)
    for (const auto& [name, tensor] : optimizer.state(i).tensors)
      state.push_back(tensor);
  return state;
}

// ---- --profile ----------------------------------------------------------------------------------

StepProfiler::StepProfiler(std::string path, std::int64_t first_step, std::int64_t steps)
    : path_(std::move(path)), first_step_(first_step), steps_(steps) {}

void StepProfiler::begin_step(std::int64_t step) {
  if (step == first_step_ && !profile_) profile_ = std::make_unique<profiler::Profile>();
  if (profile_) ++recorded_steps_;
}

bool StepProfiler::done_after(std::int64_t step) const {
  // Counted from the window's start: first_step_ + steps_ overflows for --profile-steps near 2^63.
  return profile_ != nullptr && step - first_step_ >= steps_;
}

void StepProfiler::finish(std::ostream& out) {
  if (first_step_ < 0) return;
  if (!profile_) {
    out << "profile: the run ended before global step " << first_step_
        << ", where the profile was to begin (after " << kObserverWarmupSteps
        << " warm-up steps): nothing recorded, " << path_ << " not written" << std::endl;
    first_step_ = -1;
    return;
  }
  profile_->stop();
  write_file_atomically(path_, profile_->chrome_trace(), "--profile");
  out << "profile: " << recorded_steps_ << (recorded_steps_ == 1 ? " step" : " steps")
      << " from global step " << first_step_;
  if (recorded_steps_ < steps_) out << " (the run ended before the " << steps_ << " asked)";
  out << " written to " << path_ << " (open it in https://ui.perfetto.dev)\n"
      << profile_->table(15) << std::flush;
  profile_.reset();
  first_step_ = -1;
}

// ---- --memory-timeline --------------------------------------------------------------------------

namespace {

// The blocks (data pointer, allocated size) of the tensors held in `device`'s allocator (not the
// pinned pool: --offload-params keeps its tensors there).
std::vector<TimelineBlocks::Block> blocks_of(const std::vector<Tensor>& tensors, Device device) {
  std::vector<TimelineBlocks::Block> blocks;
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.device() != device || t.is_pinned()) continue;
    blocks.push_back({reinterpret_cast<std::uintptr_t>(t.storage()->data()),
                      memory::allocated_size(static_cast<std::int64_t>(t.storage()->nbytes()))});
  }
  return blocks;
}

std::vector<Tensor> gradients_of(const nn::Module& model) {
  std::vector<Tensor> grads;
  for (const Tensor& p : model.parameters())
    grads.push_back(p.grad());
  return grads;
}

}  // namespace

StepMemoryTimeline::StepMemoryTimeline(std::string path, std::int64_t step, Device device)
    : path_(std::move(path)), step_(step), device_(device) {}

void StepMemoryTimeline::begin_step(std::int64_t step, const nn::Module& model,
                                    const optim::Optimizer& optimizer) {
  if (step != step_ || recording_) return;
  blocks_.parameters = blocks_of(model.parameters(), device_);
  blocks_.gradients_start = blocks_of(gradients_of(model), device_);
  blocks_.state_start = blocks_of(optimizer_state_tensors(optimizer), device_);
  blocks_.start_allocated = memory::stats(device_).allocated;
  memory::start_history(device_);
  recording_ = true;
}

void StepMemoryTimeline::end_step(const nn::Module& model, const optim::Optimizer& optimizer,
                                  const nlohmann::json& info, std::ostream& out) {
  if (!recording_) return;
  recording_ = false;
  const std::vector<memory::MemoryEvent> events = memory::stop_history();
  blocks_.gradients_end = blocks_of(gradients_of(model), device_);
  blocks_.state_end = blocks_of(optimizer_state_tensors(optimizer), device_);
  nlohmann::json timeline = memory_timeline(events, blocks_);
  timeline["step"] = step_;
  timeline["device"] = device_.str();
  timeline.update(info);
  // step.svg: the picture; anything else: the JSON (tools/plot_memory_timeline.py draws a PNG).
  write_file_atomically(
      path_, names_an_svg(path_) ? memory_timeline_svg(timeline) : timeline.dump() + "\n",
      "--memory-timeline");
  char line[160];
  std::snprintf(line, sizeof(line),
                "memory timeline: global step %lld, %zu allocations and frees, peak %.2f MiB at "
                "%.2f ms, written to ",
                static_cast<long long>(step_), events.size(),
                static_cast<double>(timeline["peak"]["bytes"].get<std::int64_t>()) / (1 << 20),
                timeline["peak"]["time_ms"].get<double>());
  out << line << path_ << std::endl;
  step_ = -1;
}

void StepMemoryTimeline::finish(std::ostream& out) {
  if (step_ < 0) return;
  out << "memory timeline: the run ended before global step " << step_
      << ", the step to record (after " << kObserverWarmupSteps << " warm-up steps): " << path_
      << " not written" << std::endl;
  step_ = -1;
}

}  // namespace leangrad::tools
