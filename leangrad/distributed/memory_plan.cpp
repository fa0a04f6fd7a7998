// distributed::plan_memory (distributed/memory_plan.h): the memory planner's numbers made the
// same on every rank, and the gradient all-reduce the planner's step-time model adds with
// several processes.
//
// Note [One plan for every rank]
// Each rank profiles its own step (offload::profile_step). The ranks run the same model on
// batches of the same size, so the bytes agree up to the allocator's history, but the times do
// not: a rank shares its machine with others, a GPU runs warmer. Planning each rank on its own
// numbers could give different plans, and a plan that offloads the parameters on one rank and
// not on another runs different collectives there (DistributedDataParallel's buckets move to
// host memory). So before planning:
// 1. the ranks check that they profiled the same step (as many blocks and windows, the same
//    parameter bytes, the same kind of device) and plan with the same budget and options, through
//    one all-reduce (Max) of those numbers and their negations;
// 2. each times an all-reduce of the gradients' bytes where DDP would hold them: one bucket
//    (DDPOptions' default bucket_cap_mb) timed (the least of seven) and scaled to all the
//    gradients, on the profile's device and, when a Gloo group could reduce offloaded parameters,
//    in pinned host memory;
// 3. on CUDA, each measures the host <-> device copy bandwidth again, all ranks copying at once
//    (Note [Copy bandwidth shared by the ranks]);
// 4. every measurement becomes its maximum over the ranks (offload::profile_measurements
//    orients them so): the plan is the slowest rank's, which is the one a synchronous step
//    waits for, and its peaks the largest any rank measured;
// 5. the plan is a pure function of those numbers, so every rank computes the same one; one more
//    all-reduce checks it (a rank built differently would otherwise train a different model).
// The same steps make a budget no plan fits fail on every rank with the same message.
#include <leangrad/distributed/memory_plan.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/ddp.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::distributed {

namespace {

// The element-wise maximum over the ranks of `values`.
std::vector<double> max_over_ranks(ProcessGroup& group, std::vector<double> values) {
  if (values.empty()) return values;
  Tensor t = tensor(values, {}, TensorOptions(group.device()));
  group.all_reduce(t, ReduceOp::Max);
  const Tensor host = t.cpu();
  std::copy_n(host.data_ptr<double>(), values.size(), values.begin());
  return values;
}

// Whether every rank holds the same `values` (one all-reduce of them and their negations).
// On return `lowest` and `highest` hold the smallest and largest value over the ranks.
bool same_on_every_rank(ProcessGroup& group, const std::vector<double>& values,
                        std::vector<double>& lowest, std::vector<double>& highest) {
  std::vector<double> both = values;
  for (const double v : values)
    both.push_back(-v);
  both = max_over_ranks(group, std::move(both));
  highest.assign(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(values.size()));
  lowest.clear();
  for (std::size_t i = 0; i < values.size(); ++i)
    lowest.push_back(-both[values.size() + i]);
  return lowest == highest;
}

void synchronize_device(const Device& device) {
  if (device.is_cuda()) cuda::synchronize(device.index);
}

// One all-reduce (the average, as DDP's) of `bytes` of float32 gradients held as `options` says,
// in ms: a buffer of one bucket (at most bucket_bytes) reduced once untimed (connections, staging
// buffers), then the least of seven timed reductions, scaled to `bytes`. The least, because on a
// loaded machine single timings come out up to 20 times longer when a rank's threads wait for a
// scheduler tick (2 ranks on 2 cores: 0.27-0.59 ms, and 2.5-8.1 ms in half the timings), which
// the all-reduces overlapped with backward in the training steps do not show. Collective.
double all_reduce_ms(ProcessGroup& group, std::int64_t bytes, std::int64_t bucket_bytes,
                     const TensorOptions& options) {
  if (bytes <= 0) return 0;
  const std::int64_t numel = std::max<std::int64_t>(1, std::min(bytes, bucket_bytes) / 4);
  Tensor buffer = zeros({numel}, options.dtype(kFloat32));
  group.all_reduce(buffer, ReduceOp::Avg);
  synchronize_device(buffer.device());
  std::vector<double> times;
  for (int i = 0; i < 7; ++i) {
    group.barrier();  // the ranks start together: the time is the collective's, not their skew
    const auto start = std::chrono::steady_clock::now();
    group.all_reduce(buffer, ReduceOp::Avg);
    synchronize_device(buffer.device());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  const double least = *std::min_element(times.begin(), times.end());
  return least * static_cast<double>(bytes) / (4.0 * static_cast<double>(numel));
}

// Note [Copy bandwidth shared by the ranks]
// profile_step measured the host <-> device copy bandwidth on each rank alone, but in the step
// every rank copies at once: the saved activations of SaveOnCpu blocks go to the host in the
// forward and come back in the backward, on every rank at the same time. Ranks on one machine
// share its links and its host memory, and a bandwidth measured alone under-prices SaveOnCpu and
// parameter offload (on 2026-11-25 two ranks on one H100 were predicted a step of 22.67 ms and
// took 36.31; docs/gpu-pass.md says what the next pass checks). Here every rank measures with a
// barrier before each timing, so the copies overlap as in a step; each timing is several copies
// long, so that ranks leaving the barrier a little apart still overlap for most of it. The
// buffers come first, and all ranks agree that they have them before the first barrier: a rank
// short of memory must not leave the others waiting. If one is, each keeps its own
// measurement, and the slowest rank's is planned on (step 4).
double shared_copy_bandwidth(ProcessGroup& group, const offload::StepProfile& profile) {
  offload::CopyBandwidthProbe probe(profile.device);
  const std::vector<double> missing = max_over_ranks(group, {probe.ready() ? 0.0 : 1.0});
  if (missing[0] != 0) return profile.copy_bytes_per_ms;
  return probe.measure([&group] { group.barrier(); });
}

// "4" or "from 2 to 3 over the ranks", for a count (exact in a double).
std::string range_text(const std::vector<double>& lowest, const std::vector<double>& highest,
                       std::size_t i) {
  const auto low = std::llround(lowest[i]), high = std::llround(highest[i]);
  return low == high ? detail::str_cat(high)
                     : detail::str_cat("from ", low, " to ", high, " over the ranks");
}

}  // namespace

offload::MemoryPlan plan_memory(offload::StepProfile& profile, std::int64_t budget_bytes,
                                const offload::PlanOptions& options) {
  if (!is_initialized() || get_world_size() == 1)
    return offload::plan_memory(profile, budget_bytes, options);
  ProcessGroup& group = default_process_group();
  LG_CHECK(!group.device().is_cuda() || group.device() == profile.device,
           "distributed::plan_memory: the ", group.backend_name(), " process group reduces ",
           "tensors on ", group.device(), " only, but the profile is of a step on ",
           profile.device);

  // 1. The same step, budget and options on every rank.
  const std::vector<double> setting = {
      static_cast<double>(profile.blocks.size()),   static_cast<double>(profile.windows.size()),
      static_cast<double>(profile.parameter_bytes), static_cast<double>(budget_bytes),
      options.allow_save_on_cpu ? 1.0 : 0.0,        options.allow_parameter_offload ? 1.0 : 0.0,
      profile.device.is_cuda() ? 1.0 : 0.0};
  std::vector<double> lowest, highest;
  if (!same_on_every_rank(group, setting, lowest, highest)) {
    LG_THROW(Error, "distributed::plan_memory: the ranks did not profile the same step or plan ",
             "with the same budget (blocks: ", range_text(lowest, highest, 0),
             "; windows: ", range_text(lowest, highest, 1),
             "; parameter bytes: ", range_text(lowest, highest, 2),
             "; budget bytes: ", range_text(lowest, highest, 3),
             "; save-on-cpu allowed: ", range_text(lowest, highest, 4),
             "; parameter offload allowed: ", range_text(lowest, highest, 5),
             "; profiled on CUDA: ", range_text(lowest, highest, 6),
             "). Every rank must profile the same model, blocks and batch size on the same kind "
             "of device, and plan with the same budget and options");
  }

  // 2. The gradient all-reduce, where DDP's buckets would be.
  profile.processes = group.size();
  profile.gradient_bucket_bytes =
      static_cast<std::int64_t>(std::llround(DDPOptions().bucket_cap_mb() * 1024.0 * 1024.0));
  profile.gradient_sync_ms = all_reduce_ms(
      group, profile.parameter_bytes, profile.gradient_bucket_bytes, TensorOptions(profile.device));
  profile.host_gradient_sync_ms = 0;
  if (profile.device.is_cuda() && group.device().is_cpu()) {
    profile.host_gradient_sync_ms =
        all_reduce_ms(group, profile.parameter_bytes, profile.gradient_bucket_bytes,
                      TensorOptions().pinned_memory(true));
  }

  // 3. The copy bandwidth with every rank copying (Note [Copy bandwidth shared by the ranks]).
  if (profile.device.is_cuda()) profile.copy_bytes_per_ms = shared_copy_bandwidth(group, profile);

  // 4. The slowest, largest measurements.
  offload::set_profile_measurements(profile,
                                    max_over_ranks(group, offload::profile_measurements(profile)));

  // 5. One plan, checked.
  const offload::MemoryPlan plan = offload::plan_memory(profile, budget_bytes, options);
  std::vector<double> choices;
  for (const offload::BlockPolicy policy : plan.policies)
    choices.push_back(static_cast<double>(policy));
  choices.push_back(plan.offload_parameters ? 1.0 : 0.0);
  LG_CHECK(same_on_every_rank(group, choices, lowest, highest),
           "distributed::plan_memory: the ranks planned different plans from the same "
           "measurements (are they running the same build of leangrad?)");
  return plan;
}

}  // namespace leangrad::distributed
