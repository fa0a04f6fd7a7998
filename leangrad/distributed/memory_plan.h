// The memory planner (offload/memory_planner.h) in several processes. Each rank profiles its own
// step, and the ranks must still install one plan: parameter offload moves
// DistributedDataParallel's buckets to host memory, so ranks that chose differently would run
// different collectives, and a plan that fits one rank's measured peak may not fit another's.
//   offload::StepProfile profile = offload::profile_step(model, blocks, step);  // every rank
//   offload::MemoryPlan plan = distributed::plan_memory(profile, budget_bytes);  // collective
//   offload::AppliedPlan applied = offload::apply_plan(plan, blocks, model, offload_options);
//   distributed::DistributedDataParallel ddp(model);  // after the plan: see docs/memory.md
// See Note [One plan for every rank] in distributed/memory_plan.cpp.
#pragma once

#include <cstdint>

#include <leangrad/offload/memory_planner.h>

namespace leangrad::distributed {

// offload::plan_memory on numbers every rank shares. Collective over the default process group:
// every rank calls it with a profile of the same blocks. It
// - times an all-reduce of as many bytes as the gradients, on the profile's device, and in
//   pinned host memory when the group is Gloo's and the profile is a CUDA one (where offloaded
//   parameters would be reduced), and writes them into `profile` with the world size;
// - replaces every measurement of `profile` by its maximum over the ranks (the slowest rank's
//   times, the largest peaks, the lowest bandwidths: offload::profile_measurements);
// - plans on that, and checks that every rank planned the same plan.
// On return `profile` holds the numbers the plan was made from (for offload::describe_plan).
// Throws Error when the ranks profiled different blocks, and the same Error on every rank when
// no plan fits. Without a process group, or with one process, it is offload::plan_memory.
offload::MemoryPlan plan_memory(offload::StepProfile& profile, std::int64_t budget_bytes,
                                const offload::PlanOptions& options = {});

}  // namespace leangrad::distributed
