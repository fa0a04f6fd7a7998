// The memory-budget planner: for each block of a model (srnet's residual blocks, a transformer's
// layers) it chooses whether backward finds the block's activations kept on the device,
// recomputed, or parked in host memory, and whether the parameters and optimizer state are
// offloaded, so that a training step fits a budget of peak allocated bytes in the least time.
//   offload::StepProfile profile = offload::profile_step(model, blocks, step);  // one real step
//   offload::MemoryPlan plan = offload::plan_memory(profile, budget_bytes);     // pure search
//   offload::AppliedPlan applied = offload::apply_plan(plan, blocks);           // until it dies
// Cost model, search and what leangrad-train prints: docs/memory.md, "The memory planner".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/core/device.h>
#include <leangrad/nn/module.h>
#include <leangrad/offload/parameter_offload.h>

namespace leangrad::offload {

// What a block's forward leaves for its backward:
//   Keep       the activations it saves stay on the device (the plain forward);
//   Recompute  only its input is kept; backward reruns its forward (autograd::checkpoint);
//   SaveOnCpu  its saved activations go to pinned host memory and come back for backward
//              (offload::SaveOnCpu; CUDA only: on the CPU it frees nothing).
enum class BlockPolicy { Keep, Recompute, SaveOnCpu };
// "keep", "recompute", "save-on-cpu".
const char* policy_name(BlockPolicy policy);

// One block, measured by profile_step. Bytes are what the allocator counts (memory::
// allocated_size of each storage); times are per step (summed over the block's calls in it).
struct BlockProfile {
  std::string name;               // its dotted path in the model ("blocks.3")
  std::int64_t input_bytes = 0;   // its input: what Recompute keeps
  std::int64_t output_bytes = 0;  // its output
  // The distinct storages its forward saves for backward, parameters excluded: what Keep keeps
  // (the input included, when an op saves it).
  std::int64_t saved_bytes = 0;
  // The peak allocated during its forward with a graph, above the level when it started.
  std::int64_t forward_rise_bytes = 0;
  // Its input's bytes when one of its ops saves the input (the input's storage is among the
  // saved ones), else 0.
  std::int64_t saved_input_bytes = 0;
  // Its input's bytes when code outside the block still holds the input after the block returned
  // (a variable of the model's forward, or a C++ temporary that lives to the end of the full
  // expression that called the block), whatever the block's policy: through the rest of the
  // model's forward (input_held_forward), and after the forward returned, until backward reaches
  // the block (input_held_after_forward); else 0. See Note [Inputs the caller holds] in
  // offload/memory_profiler.cpp.
  std::int64_t input_held_forward_bytes = 0;
  std::int64_t input_held_after_forward_bytes = 0;
  double forward_ms = 0;         // its forward recording a graph
  double nograd_forward_ms = 0;  // its forward without a graph: the time Recompute adds
  double backward_ms = 0;        // its backward, without the recompute
  std::int64_t parameter_bytes = 0;
  std::int64_t gradient_bytes = 0;
};

// A stretch of the profiled step between two block events, and the peak allocated in it.
//   Between    outside the blocks (the model's head and tail, the loss, the optimizer step)
//   Forward    block `block`'s forward (profiled without a graph: recomputed blocks run so)
//   Recompute  block `block`'s forward rerun at the start of its backward
//   Backward   block `block`'s backward through the recomputed graph
// Blocks 0 .. held_blocks-1 hold what their policy keeps during the window (they ran forward and
// not yet backward); for the three block windows held_blocks == block.
enum class WindowKind { Between, Forward, Recompute, Backward };
const char* window_kind_name(WindowKind kind);

struct MemoryWindow {
  WindowKind kind = WindowKind::Between;
  int block = -1;
  int held_blocks = 0;
  // After the model's forward returned: the loss, backward (Recompute, Backward and the Between
  // windows in it) and the optimizer step. The held blocks' inputs are then held from outside
  // only as far as BlockProfile::input_held_after_forward_bytes says.
  bool after_forward = false;
  std::int64_t peak_bytes = 0;      // measured with every block recomputed
  std::int64_t start_bytes = 0;     // allocated when the window began
  std::int64_t gradient_bytes = 0;  // parameter gradients allocated when the window began
};

// One profiled training step: every block recomputed (the smallest footprint on any device, so
// the profile fits wherever a plan can), each boundary between blocks timed and its peak read.
struct StepProfile {
  Device device;
  std::vector<BlockProfile> blocks;
  std::vector<MemoryWindow> windows;         // in the order they happened
  double step_ms = 0;                        // the whole step, every block recomputed
  std::int64_t parameter_bytes = 0;          // all of the model's, blocks and the rest
  std::int64_t outside_parameter_bytes = 0;  // of parameters outside the blocks
  // The optimizer's per-parameter state on the device. profile_step cannot see the optimizer:
  // the caller sets it (leangrad-train does), and only parameter offload reads it.
  std::int64_t optimizer_state_bytes = 0;
  // Pinned host <-> device copies (CUDA; 0 on the CPU, where nothing is moved).
  double copy_bytes_per_ms = 0;
  // A host (CPU) Adam step over parameters + gradients + state bytes: what parameter offload
  // costs at the end of a step (measured on CUDA only).
  double host_optimizer_bytes_per_ms = 0;
  // Several processes (DistributedDataParallel; distributed::plan_memory sets these): how many,
  // and the time one all-reduce of every gradient takes where DDP's buckets would hold them:
  // device memory (the parameters on the device) and pinned host memory (offloaded parameters,
  // reduced by Gloo; 0: the group cannot reduce host tensors, and no plan offloads them). DDP
  // reduces buckets of at most gradient_bucket_bytes while backward runs; see Note [Step-time
  // model] in offload/memory_planner.cpp.
  int processes = 1;
  double gradient_sync_ms = 0;
  double host_gradient_sync_ms = 0;
  std::int64_t gradient_bucket_bytes = std::int64_t{25} << 20;  // DDPOptions' bucket_cap_mb
};

// The profile's measurements (every byte count, time and bandwidth, blocks' and windows'
// included) as one vector, each oriented so that larger is worse (bandwidths negated): the
// element-wise maximum over several processes' profiles is then the profile of the slowest, most
// memory-hungry rank. set_profile_measurements writes such a vector back into a profile of the
// same shape (the same blocks and windows; Error otherwise). distributed::plan_memory reduces
// it over the ranks, so that every rank plans on the same numbers.
std::vector<double> profile_measurements(const StepProfile& profile);
void set_profile_measurements(StepProfile& profile, const std::vector<double>& measurements);

struct ProfileOptions {
  int warmup_steps = 1;    // unmeasured steps first (the optimizer creates its state, caches fill)
  int measured_steps = 1;  // windows: the largest peak of each; times: the mean
};

// Runs `step` (one whole training step: zero_grad, forward, backward, optimizer step) warmup +
// measured times with every block recomputed and instrumented through its forward wrapper, and
// returns what was measured. The model trains during those steps: snapshot it first if the run
// must not see them. `blocks` must be distinct submodules of `model` that `step` calls in this
// order, each once per forward (several forwards per step, as with gradient accumulation, are
// fine), with no forward wrapper of their own; their outputs must require grad. Resets the device's
// peak statistics. See Note [Profiling a step] in offload/memory_profiler.cpp.
StepProfile profile_step(nn::Module& model, const std::vector<std::shared_ptr<nn::Module>>& blocks,
                         const std::function<void()>& step, const ProfileOptions& options = {});

// The pinned host <-> device copy bandwidth that StepProfile::copy_bytes_per_ms holds, in bytes
// per ms: the best of kTimings timings, alternating directions, each of kCopiesPerTiming copies
// of kBytes back to back. profile_step measures it alone; distributed::plan_memory measures it
// again with every rank copying at once (a barrier before each timing), since ranks that share a
// machine share its links during the step too. A timing of several copies (4 x 32 MiB, a few
// ms) keeps the ranks' copies overlapping though they leave a barrier a little apart. The
// buffers are allocated first, so that ranks can agree that all of them are ready() before any
// waits on a barrier. Not ready (measure() gives 0, and no plan saves on the CPU): a CPU
// device, or no memory for the buffers.
class CopyBandwidthProbe {
 public:
  static constexpr std::int64_t kBytes = std::int64_t{32} << 20;
  static constexpr int kTimings = 6;
  static constexpr int kCopiesPerTiming = 4;

  explicit CopyBandwidthProbe(Device device);
  bool ready() const { return on_device_.defined(); }
  // before_each_timing, when given, runs before each timing, once the device is idle, untimed.
  double measure(const std::function<void()>& before_each_timing = {});

 private:
  Device device_;
  Tensor on_device_;
  Tensor on_host_;
};

struct PlanOptions {
  bool allow_save_on_cpu = true;  // only on CUDA profiles: on the CPU SaveOnCpu frees nothing
  // Parameters, gradients and optimizer state in pinned host memory, streamed to the device per
  // block (offload::ParameterOffload, the optimizer step on the host). CUDA profiles only.
  bool allow_parameter_offload = false;
};

struct MemoryPlan {
  std::vector<BlockPolicy> policies;  // one per profiled block
  bool offload_parameters = false;
  std::int64_t budget_bytes = 0;
  std::int64_t predicted_peak_bytes = 0;
  double predicted_step_ms = 0;
};

// The cost model (docs/memory.md): the peak allocated and the step time `profile` predicts for
// these policies. Pure functions of their arguments.
std::int64_t predict_peak_bytes(const StepProfile& profile,
                                const std::vector<BlockPolicy>& policies, bool offload_parameters);
double predict_step_ms(const StepProfile& profile, const std::vector<BlockPolicy>& policies,
                       bool offload_parameters);

// The fastest plan whose predicted peak fits `budget_bytes` (exact: a dynamic programme over the
// blocks, see Note [Planner search] in offload/memory_planner.cpp). Throws Error when none fits,
// saying the smallest peak a plan reaches. Pure: no device work.
MemoryPlan plan_memory(const StepProfile& profile, std::int64_t budget_bytes,
                       const PlanOptions& options = {});
// The smallest predicted peak any plan reaches, and that plan.
MemoryPlan smallest_peak_plan(const StepProfile& profile, const PlanOptions& options = {});

// The plan as a table, one line per block (policy, saved MiB, forward and backward ms), then
// the parameters' place and the predicted peak and step.
std::string describe_plan(const StepProfile& profile, const MemoryPlan& plan);

// The policies installed on blocks (forward wrappers) while it lives; remove() or the
// destructor takes them off again.
class AppliedPlan {
 public:
  AppliedPlan() = default;
  ~AppliedPlan();
  AppliedPlan(AppliedPlan&& other) noexcept;
  AppliedPlan& operator=(AppliedPlan&& other) noexcept;
  AppliedPlan(const AppliedPlan&) = delete;
  AppliedPlan& operator=(const AppliedPlan&) = delete;

  void remove();
  // The parameter offload the plan installed (null when the parameters stay on the device).
  const ParameterOffload* parameter_offload() const { return parameter_offload_.get(); }

 private:
  friend AppliedPlan apply_policies(const std::vector<std::shared_ptr<nn::Module>>&,
                                    const std::vector<BlockPolicy>&);
  friend AppliedPlan apply_plan(const MemoryPlan&, const std::vector<std::shared_ptr<nn::Module>>&,
                                const std::shared_ptr<nn::Module>&, const ParameterOffloadOptions&);
  std::vector<std::weak_ptr<nn::Module>> blocks_;
  std::unique_ptr<ParameterOffload> parameter_offload_;
};

// Installs policies[i] on blocks[i] with nn::Module::set_forward_wrapper: Recompute wraps the
// call in autograd::checkpoint, SaveOnCpu in an offload::SaveOnCpu guard that keeps the block's
// parameters on the device, Keep installs nothing. Blocks must have no wrapper yet.
AppliedPlan apply_policies(const std::vector<std::shared_ptr<nn::Module>>& blocks,
                           const std::vector<BlockPolicy>& policies);
// apply_policies(blocks, plan.policies). A plan that offloads parameters needs the model: it is
// refused here (Error), use the overload below.
AppliedPlan apply_plan(const MemoryPlan& plan,
                       const std::vector<std::shared_ptr<nn::Module>>& blocks);
// The same, and when the plan offloads parameters an offload::ParameterOffload of `model` (the
// module the blocks belong to) with `offload` options, held by the AppliedPlan. Build the
// optimizer after this call (its state is then made on the host) and profile before it.
AppliedPlan apply_plan(const MemoryPlan& plan,
                       const std::vector<std::shared_ptr<nn::Module>>& blocks,
                       const std::shared_ptr<nn::Module>& model,
                       const ParameterOffloadOptions& offload);

namespace detail {
// Throws Error naming `caller` unless each block is non-null, listed once and without a forward
// wrapper: profile_step and apply_policies install one wrapper on each, and a block listed twice
// would keep only its last listing's.
void check_blocks(const std::vector<std::shared_ptr<nn::Module>>& blocks, const char* caller);
}  // namespace detail

}  // namespace leangrad::offload
