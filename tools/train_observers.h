// leangrad-train's --profile and --memory-timeline: each watches a window of optimizer steps that
// begins after a few warm-up steps (the allocator's cache and first-step costs behind), then
// writes its file and says so. The Trainer (tools/leangrad_train.cpp) calls begin_step before the
// first micro-batch of each optimizer step and end_step after its optimizer step, with the number
// of optimizer steps finished before that step (TrainPosition::global_step).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <leangrad/core/profiler.h>
#include <leangrad/leangrad.h>

#include "memory_timeline.h"

namespace leangrad::tools {

// Steps run before either window begins.
inline constexpr std::int64_t kObserverWarmupSteps = 3;

// The per-parameter state tensors of an optimizer ("state.<i>.<name>" of its state_dict), not the
// 0-d step counts and group hyperparameters that state_dict() builds on the CPU.
std::vector<Tensor> optimizer_state_tensors(const optim::Optimizer& optimizer);

// --profile: a profiler::Profile over `steps` optimizer steps from `first_step` on.
class StepProfiler {
 public:
  StepProfiler() = default;  // off
  StepProfiler(std::string path, std::int64_t first_step, std::int64_t steps);

  void begin_step(std::int64_t step);
  // True once the window's last step has ended (then call finish).
  bool done_after(std::int64_t step) const;
  // Writes the trace (atomically) and prints the top spans to `out`, saying how many steps it
  // holds. Also called when a run ends (or Ctrl-C stops it) inside the window, and when it ends
  // before the window began: then it says that nothing was recorded. Nothing when off or done.
  void finish(std::ostream& out);

 private:
  std::string path_;
  std::int64_t first_step_ = -1;  // -1: off, or the trace is written
  std::int64_t steps_ = 0;
  std::int64_t recorded_steps_ = 0;  // begun under profile_
  std::unique_ptr<profiler::Profile> profile_;
};

// --memory-timeline: the allocator's history over optimizer step `step`.
class StepMemoryTimeline {
 public:
  StepMemoryTimeline() = default;  // off
  StepMemoryTimeline(std::string path, std::int64_t step, Device device);

  void begin_step(std::int64_t step, const nn::Module& model, const optim::Optimizer& optimizer);
  bool recording() const { return recording_; }
  // After the recorded step's optimizer step: writes memory_timeline()'s JSON with `info` merged
  // in (model, batch size, ...) and prints one line to `out`.
  void end_step(const nn::Module& model, const optim::Optimizer& optimizer,
                const nlohmann::json& info, std::ostream& out);
  // At the end of the run (or at Ctrl-C): when it ended before the step to record, says that
  // nothing was written.
  void finish(std::ostream& out);

 private:
  std::string path_;
  std::int64_t step_ = -1;  // -1: off, or the timeline is written
  Device device_;
  bool recording_ = false;
  TimelineBlocks blocks_;
};

}  // namespace leangrad::tools
