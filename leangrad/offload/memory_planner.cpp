// The memory planner's cost model, its search and apply_plan (offload/memory_planner.h). The
// profile it reads is measured in offload/memory_profiler.cpp.
//
// Policy
// - The profile is one step with every block recomputed. A plan's peak is predicted window by
//   window from what was measured there, corrected for what the plan holds differently: each
//   block that ran forward and not yet backward holds its input (Recompute), its saved
//   activations (Keep) or nothing on the device (SaveOnCpu); a block's own forward and backward
//   windows change with its policy. See Note [Peak model].
// - A plan's step time is the profiled step minus the forwards without a graph that kept blocks
//   do not run, plus the copies SaveOnCpu and parameter offload cannot hide behind compute. See
//   Note [Step-time model].
// - The search is exact: a dynamic programme over the blocks in order whose state is the bytes
//   the blocks so far hold; only Pareto-optimal (held bytes, time) states survive. See Note
//   [Planner search].
// - With several processes the step also pays the part of DistributedDataParallel's gradient
//   all-reduce that backward does not hide, which depends on where the buckets are (device or
//   host memory): distributed::plan_memory measures both and makes the ranks agree on one plan.
// - A profile's numbers are checked first: byte counts >= 0 and small enough that no sum
//   overflows, times finite. See Note [Checking a profile's numbers].
// - SaveOnCpu and parameter offload are considered only on CUDA profiles (on the CPU they move
//   nothing), parameter offload only when PlanOptions allows it.
// - apply_policies installs forward wrappers (nn::Module::set_forward_wrapper); the returned
//   AppliedPlan takes them off again.
#include <leangrad/offload/memory_planner.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/core/error.h>
#include <leangrad/offload/save_on_cpu.h>

namespace leangrad::offload {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::int64_t kNoLevel = std::numeric_limits<std::int64_t>::min();
constexpr BlockPolicy kPolicies[] = {BlockPolicy::Keep, BlockPolicy::Recompute,
                                     BlockPolicy::SaveOnCpu};

bool save_on_cpu_possible(const StepProfile& profile) {
  return profile.device.is_cuda() && profile.copy_bytes_per_ms > 0;
}

bool parameter_offload_possible(const StepProfile& profile) {
  return save_on_cpu_possible(profile) && profile.host_optimizer_bytes_per_ms > 0 &&
         (profile.processes <= 1 || profile.host_gradient_sync_ms > 0);
}

// Note [Checking a profile's numbers]
// A profile may come from elsewhere than profile_step: built by hand, or reduced over ranks
// (set_profile_measurements). The model adds and subtracts its byte counts in std::int64_t, so
// counts near INT64_MAX would overflow (a plan holding three blocks of 2^62 saved bytes came out
// with a negative peak and "fitted" any budget), and a negative count or a NaN time would make
// a plan look better than it is. So every byte count must be >= 0 (outside_parameter_bytes may
// be negative: blocks sharing a parameter count it twice) and their magnitudes add up to at most
// kMaxProfileBytes, which bounds every sum the model forms (each count enters it a few times at
// most); every time and bandwidth must be finite and >= 0. Otherwise the Error names the field.
constexpr double kMaxProfileBytes = 0x1p60;  // 1 EiB: far beyond any device

void check_profile_numbers(const StepProfile& profile) {
  double total_bytes = std::abs(static_cast<double>(profile.outside_parameter_bytes));
  auto bytes = [&](std::int64_t value, const std::string& where, const char* field) {
    LG_CHECK(value >= 0, "memory planner: ", where, field, " is ", value,
             "; a profile's byte counts must be >= 0");
    total_bytes += static_cast<double>(value);
  };
  auto number = [](double value, const std::string& where, const char* field) {
    LG_CHECK(std::isfinite(value) && value >= 0, "memory planner: ", where, field, " is ", value,
             "; a profile's times and bandwidths must be finite and >= 0");
  };
  const std::string step = "the profile's ";
  bytes(profile.parameter_bytes, step, "parameter_bytes");
  bytes(profile.optimizer_state_bytes, step, "optimizer_state_bytes");
  bytes(profile.gradient_bucket_bytes, step, "gradient_bucket_bytes");
  number(profile.step_ms, step, "step_ms");
  number(profile.copy_bytes_per_ms, step, "copy_bytes_per_ms");
  number(profile.host_optimizer_bytes_per_ms, step, "host_optimizer_bytes_per_ms");
  number(profile.gradient_sync_ms, step, "gradient_sync_ms");
  number(profile.host_gradient_sync_ms, step, "host_gradient_sync_ms");
  for (std::size_t i = 0; i < profile.blocks.size(); ++i) {
    const BlockProfile& b = profile.blocks[i];
    const std::string where = "block " + std::to_string(i) + " (" + printable(b.name) + ")'s ";
    bytes(b.input_bytes, where, "input_bytes");
    bytes(b.output_bytes, where, "output_bytes");
    bytes(b.saved_bytes, where, "saved_bytes");
    bytes(b.forward_rise_bytes, where, "forward_rise_bytes");
    bytes(b.saved_input_bytes, where, "saved_input_bytes");
    bytes(b.input_held_forward_bytes, where, "input_held_forward_bytes");
    bytes(b.input_held_after_forward_bytes, where, "input_held_after_forward_bytes");
    bytes(b.parameter_bytes, where, "parameter_bytes");
    bytes(b.gradient_bytes, where, "gradient_bytes");
    number(b.forward_ms, where, "forward_ms");
    number(b.nograd_forward_ms, where, "nograd_forward_ms");
    number(b.backward_ms, where, "backward_ms");
  }
  for (std::size_t i = 0; i < profile.windows.size(); ++i) {
    const MemoryWindow& w = profile.windows[i];
    const std::string where = "window " + std::to_string(i) + "'s ";
    bytes(w.peak_bytes, where, "peak_bytes");
    bytes(w.start_bytes, where, "start_bytes");
    bytes(w.gradient_bytes, where, "gradient_bytes");
  }
  LG_CHECK(total_bytes <= kMaxProfileBytes, "memory planner: the profile's byte counts add up to ",
           total_bytes, " bytes, more than 2^60 (1 EiB): the peak arithmetic would overflow");
}

void check_profile(const StepProfile& profile) {
  check_profile_numbers(profile);  // Note [Checking a profile's numbers]
  const int blocks = static_cast<int>(profile.blocks.size());
  for (const MemoryWindow& w : profile.windows) {
    LG_CHECK(w.held_blocks >= 0 && w.held_blocks <= blocks, "memory planner: a ",
             window_kind_name(w.kind), " window holds ", w.held_blocks, " blocks of ", blocks);
    if (w.kind == WindowKind::Between) continue;
    LG_CHECK(w.block >= 0 && w.block < blocks && w.held_blocks == w.block, "memory planner: a ",
             window_kind_name(w.kind), " window of block ", w.block, " holds ", w.held_blocks,
             " blocks (expected as many as the blocks before it, of ", blocks, ")");
  }
}

void check_policies(const StepProfile& profile, const std::vector<BlockPolicy>& policies) {
  LG_CHECK(policies.size() == profile.blocks.size(), "memory planner: ", policies.size(),
           " policies for ", profile.blocks.size(), " profiled blocks");
}

// Note [Peak model]
// Every window of the profile was measured with every block recomputed. Under a plan:
// - block j < held_blocks holds, instead of its input, its saved activations (Keep) or nothing
//   (SaveOnCpu: its saved tensors, the input included, live in host memory): held_delta. Its
//   input stays on the device all the same while code outside the block holds it (Note [Inputs
//   the caller holds] in offload/memory_profiler.cpp): in the forward's windows as far as
//   input_held_forward_bytes says, in those after the forward (after_forward) as far as
//   input_held_after_forward_bytes says. So a plan holds two prefix sums, one for each kind of
//   window;
// - a block's Forward window (measured without a graph) becomes, for Keep and for SaveOnCpu, its
//   start plus the rise of its forward with a graph (measured during its recompute). SaveOnCpu
//   moves each saved tensor to the host, but the device block is freed only when the block's
//   code drops the tensor too, and C++ keeps the temporaries of a full expression such as
//   `x + norm2(conv2(act(norm1(conv1(x)))))` until the expression ends, that is until the
//   block returns: its forward rises as high as Keep's. (srnet's memory timeline on an H100
//   shows it: docs/memory.md, "Where the peak goes under a plan on CUDA".)
// - its Recompute window does not exist unless it is recomputed;
// - its Backward window is the same graph's backward, except that a recompute holds the
//   recomputed output (CheckpointNode keeps it while it backpropagates) and its input, and a
//   kept block holds neither, its input only when one of its ops saved it or the caller still
//   holds it. SaveOnCpu is counted like Keep: its tensors come back one node ahead, so this is
//   an upper bound.
// - parameter offload removes every parameter, the optimizer state and the gradients present
//   when the window began, and adds what is in flight: two blocks' parameters (the one running
//   and the one prefetched) and one block's gradients. No storage is assumed to be saved by two
//   blocks (true of residual chains).
std::int64_t held_delta(const BlockProfile& block, BlockPolicy policy, bool after_forward) {
  const std::int64_t by_caller =
      after_forward ? block.input_held_after_forward_bytes : block.input_held_forward_bytes;
  switch (policy) {
    case BlockPolicy::Keep:  // the input is among the saved bytes, or the caller keeps it
      return block.saved_bytes - block.input_bytes +
             std::max<std::int64_t>(0, by_caller - block.saved_input_bytes);
    case BlockPolicy::Recompute:
      return 0;
    case BlockPolicy::SaveOnCpu:
      return by_caller - block.input_bytes;
  }
  return 0;
}

// The bytes blocks 0 .. k-1 hold in a window of either kind, relative to the profile.
struct Held {
  std::int64_t forward = 0;   // in the forward's windows
  std::int64_t backward = 0;  // in backward's (MemoryWindow::after_forward)
  std::int64_t in(const MemoryWindow& w) const { return w.after_forward ? backward : forward; }
  Held plus(const BlockProfile& block, BlockPolicy policy) const {
    return {forward + held_delta(block, policy, false), backward + held_delta(block, policy, true)};
  }
};

std::int64_t parameters_in_flight(const StepProfile& profile) {
  std::int64_t largest_parameters = profile.outside_parameter_bytes;
  std::int64_t largest_gradients = profile.outside_parameter_bytes;
  for (const BlockProfile& b : profile.blocks) {
    largest_parameters = std::max(largest_parameters, b.parameter_bytes);
    largest_gradients = std::max(largest_gradients, b.gradient_bytes);
  }
  return 2 * largest_parameters + largest_gradients;
}

// The window's level under `policy` for its block (ignored for Between windows), without the
// blocks held below it; kNoLevel when the window does not happen under that policy.
std::int64_t own_level(const StepProfile& profile, const MemoryWindow& w, BlockPolicy policy,
                       bool offload_parameters) {
  std::int64_t level = w.peak_bytes;
  if (w.kind != WindowKind::Between) {
    const BlockProfile& b = profile.blocks[static_cast<std::size_t>(w.block)];
    switch (w.kind) {
      case WindowKind::Forward:
        if (policy != BlockPolicy::Recompute)
          level = std::max(level, w.start_bytes + b.forward_rise_bytes);
        break;
      case WindowKind::Recompute:
        if (policy != BlockPolicy::Recompute) return kNoLevel;
        break;
      case WindowKind::Backward:
        if (policy != BlockPolicy::Recompute) {
          level -= b.output_bytes + b.input_bytes -
                   std::max(b.saved_input_bytes, b.input_held_after_forward_bytes);
        }
        break;
      case WindowKind::Between:
        break;
    }
  }
  if (offload_parameters) {
    level += parameters_in_flight(profile) - profile.parameter_bytes -
             profile.optimizer_state_bytes - w.gradient_bytes;
  }
  return level;
}

// Note [Step-time model]
// The profiled step ran every block's forward twice: without a graph, then again with one at
// the start of its backward. A block that is not recomputed runs only the second kind:
//   step = profiled step - sum over blocks not recomputed of nograd_forward_ms.
// SaveOnCpu copies the saved bytes to the host during the forward and back during the backward,
// on a copy stream: each direction costs what it takes beyond the compute it overlaps,
//   max(0, saved / bandwidth - forward_ms) + max(0, saved / bandwidth - backward_ms).
// Parameter offload copies every parameter to the device twice (forward, backward) and every
// gradient back once, overlapped with all blocks' compute, then runs the optimizer on the host:
//   max(0, (2 P + G) / bandwidth - compute) + (P + G + state) / host optimizer throughput.
// The device's own optimizer step is not subtracted (it is not measured apart): an upper bound.
// With several processes DistributedDataParallel all-reduces the gradients in buckets, each as
// soon as backward has made its last gradient, while backward goes on; the bucket holding the
// first parameters is made last, at backward's end, and nothing hides it. Of the all-reduce of
// every gradient (S: gradient_sync_ms, or host_gradient_sync_ms when the parameters are
// offloaded and the buckets are in host memory) the step pays what the blocks' backward cannot
// cover, and at least that last bucket's share:
//   max(S - sum of backward_ms, S * min(1, gradient_bucket_bytes / parameter bytes)).
double policy_ms(const StepProfile& profile, const BlockProfile& b, BlockPolicy policy) {
  switch (policy) {
    case BlockPolicy::Keep:
      return -b.nograd_forward_ms;
    case BlockPolicy::Recompute:
      return 0;
    case BlockPolicy::SaveOnCpu: {
      if (profile.copy_bytes_per_ms <= 0) return std::numeric_limits<double>::infinity();
      const double copy_ms = static_cast<double>(b.saved_bytes) / profile.copy_bytes_per_ms;
      return -b.nograd_forward_ms + std::max(0.0, copy_ms - b.forward_ms) +
             std::max(0.0, copy_ms - b.backward_ms);
    }
  }
  return 0;
}

double parameter_offload_ms(const StepProfile& profile) {
  if (!parameter_offload_possible(profile)) return std::numeric_limits<double>::infinity();
  double compute_ms = 0;
  for (const BlockProfile& b : profile.blocks)
    compute_ms += b.forward_ms + b.backward_ms;
  const auto parameters = static_cast<double>(profile.parameter_bytes);
  const double copy_ms = 3.0 * parameters / profile.copy_bytes_per_ms;
  const double host_step_ms =
      (2.0 * parameters + static_cast<double>(profile.optimizer_state_bytes)) /
      profile.host_optimizer_bytes_per_ms;
  return std::max(0.0, copy_ms - compute_ms) + host_step_ms;
}

double gradient_sync_exposed_ms(const StepProfile& profile, bool offload_parameters) {
  if (profile.processes <= 1) return 0;
  const double sync_ms =
      offload_parameters ? profile.host_gradient_sync_ms : profile.gradient_sync_ms;
  double backward_ms = 0;
  for (const BlockProfile& b : profile.blocks)
    backward_ms += b.backward_ms;
  const double last_bucket_share =
      std::min(1.0, static_cast<double>(profile.gradient_bucket_bytes) /
                        static_cast<double>(std::max<std::int64_t>(1, profile.parameter_bytes)));
  return std::max(sync_ms - backward_ms, sync_ms * last_bucket_share);
}

// The windows regrouped for the search, apart for the forward's windows (phase 0) and
// backward's (phase 1): the levels of the Between windows holding k blocks (between[phase][k]),
// and of block i's own windows under each policy (own[phase][i][policy]).
struct WindowLevels {
  std::array<std::vector<std::int64_t>, 2> between;
  std::array<std::vector<std::array<std::int64_t, 3>>, 2> own;
};

WindowLevels window_levels(const StepProfile& profile, bool offload_parameters) {
  const std::size_t n = profile.blocks.size();
  WindowLevels levels;
  for (int phase = 0; phase < 2; ++phase) {
    levels.between[phase].assign(n + 1, kNoLevel);
    levels.own[phase].assign(n, {kNoLevel, kNoLevel, kNoLevel});
  }
  for (const MemoryWindow& w : profile.windows) {
    const int phase = w.after_forward ? 1 : 0;
    if (w.kind == WindowKind::Between) {
      std::int64_t& level = levels.between[phase][static_cast<std::size_t>(w.held_blocks)];
      level = std::max(level, own_level(profile, w, BlockPolicy::Recompute, offload_parameters));
      continue;
    }
    for (std::size_t p = 0; p < 3; ++p) {
      std::int64_t& level = levels.own[phase][static_cast<std::size_t>(w.block)][p];
      level = std::max(level, own_level(profile, w, kPolicies[p], offload_parameters));
    }
  }
  return levels;
}

std::int64_t add_level(std::int64_t held, std::int64_t level) {
  return level == kNoLevel ? kNoLevel : held + level;
}

}  // namespace

const char* policy_name(BlockPolicy policy) {
  switch (policy) {
    case BlockPolicy::Keep:
      return "keep";
    case BlockPolicy::Recompute:
      return "recompute";
    case BlockPolicy::SaveOnCpu:
      return "save-on-cpu";
  }
  return "?";
}

const char* window_kind_name(WindowKind kind) {
  switch (kind) {
    case WindowKind::Between:
      return "between";
    case WindowKind::Forward:
      return "forward";
    case WindowKind::Recompute:
      return "recompute";
    case WindowKind::Backward:
      return "backward";
  }
  return "?";
}

std::int64_t predict_peak_bytes(const StepProfile& profile,
                                const std::vector<BlockPolicy>& policies, bool offload_parameters) {
  check_profile(profile);
  check_policies(profile, policies);
  std::vector<Held> held(profile.blocks.size() + 1);  // held[k]: blocks 0..k-1
  for (std::size_t j = 0; j < profile.blocks.size(); ++j)
    held[j + 1] = held[j].plus(profile.blocks[j], policies[j]);
  std::int64_t peak = 0;
  for (const MemoryWindow& w : profile.windows) {
    const BlockPolicy policy = w.kind == WindowKind::Between
                                   ? BlockPolicy::Recompute
                                   : policies[static_cast<std::size_t>(w.block)];
    const std::int64_t level = own_level(profile, w, policy, offload_parameters);
    if (level != kNoLevel)
      peak = std::max(peak, held[static_cast<std::size_t>(w.held_blocks)].in(w) + level);
  }
  return peak;
}

double predict_step_ms(const StepProfile& profile, const std::vector<BlockPolicy>& policies,
                       bool offload_parameters) {
  check_profile_numbers(profile);
  check_policies(profile, policies);
  double ms = profile.step_ms;
  for (std::size_t i = 0; i < policies.size(); ++i)
    ms += policy_ms(profile, profile.blocks[i], policies[i]);
  if (offload_parameters) ms += parameter_offload_ms(profile);
  return ms + gradient_sync_exposed_ms(profile, offload_parameters);
}

// The order of the measurements: the profile's own, then each block's, then each window's.
// Byte counts are exact in a double (below 2^53).
std::vector<double> profile_measurements(const StepProfile& profile) {
  std::vector<double> m = {profile.step_ms,
                           static_cast<double>(profile.parameter_bytes),
                           static_cast<double>(profile.outside_parameter_bytes),
                           static_cast<double>(profile.optimizer_state_bytes),
                           -profile.copy_bytes_per_ms,
                           -profile.host_optimizer_bytes_per_ms,
                           profile.gradient_sync_ms,
                           profile.host_gradient_sync_ms};
  for (const BlockProfile& b : profile.blocks) {
    m.insert(
        m.end(),
        {static_cast<double>(b.input_bytes), static_cast<double>(b.output_bytes),
         static_cast<double>(b.saved_bytes), static_cast<double>(b.forward_rise_bytes),
         static_cast<double>(b.saved_input_bytes), static_cast<double>(b.input_held_forward_bytes),
         static_cast<double>(b.input_held_after_forward_bytes), b.forward_ms, b.nograd_forward_ms,
         b.backward_ms, static_cast<double>(b.parameter_bytes),
         static_cast<double>(b.gradient_bytes)});
  }
  for (const MemoryWindow& w : profile.windows) {
    m.insert(m.end(), {static_cast<double>(w.peak_bytes), static_cast<double>(w.start_bytes),
                       static_cast<double>(w.gradient_bytes)});
  }
  return m;
}

void set_profile_measurements(StepProfile& profile, const std::vector<double>& measurements) {
  const std::size_t expected = 8 + 12 * profile.blocks.size() + 3 * profile.windows.size();
  LG_CHECK(measurements.size() == expected, "set_profile_measurements: ", measurements.size(),
           " measurements for a profile of ", profile.blocks.size(), " blocks and ",
           profile.windows.size(), " windows (expected ", expected, ")");
  const double* m = measurements.data();
  // A count outside std::int64_t (or NaN) cannot be converted: refused before the cast.
  auto bytes = [&m] {
    const double value = *m++;
    LG_CHECK(std::isfinite(value) && std::abs(value) <= kMaxProfileBytes,
             "set_profile_measurements: a byte count of ", value,
             " (expected a finite count of at most 2^60 bytes)");
    return static_cast<std::int64_t>(value);
  };
  profile.step_ms = *m++;
  profile.parameter_bytes = bytes();
  profile.outside_parameter_bytes = bytes();
  profile.optimizer_state_bytes = bytes();
  profile.copy_bytes_per_ms = -*m++;
  profile.host_optimizer_bytes_per_ms = -*m++;
  profile.gradient_sync_ms = *m++;
  profile.host_gradient_sync_ms = *m++;
  for (BlockProfile& b : profile.blocks) {
    b.input_bytes = bytes();
    b.output_bytes = bytes();
    b.saved_bytes = bytes();
    b.forward_rise_bytes = bytes();
    b.saved_input_bytes = bytes();
    b.input_held_forward_bytes = bytes();
    b.input_held_after_forward_bytes = bytes();
    b.forward_ms = *m++;
    b.nograd_forward_ms = *m++;
    b.backward_ms = *m++;
    b.parameter_bytes = bytes();
    b.gradient_bytes = bytes();
  }
  for (MemoryWindow& w : profile.windows) {
    w.peak_bytes = bytes();
    w.start_bytes = bytes();
    w.gradient_bytes = bytes();
  }
}

namespace {

// Note [Planner search]
// The blocks held below a window are always a prefix 0..k-1 (blocks run forward in order and
// backward in reverse), so a plan's peak is the largest of
//   held_phase(k) + between[phase][k]            for every k = 0..n and both phases, and
//   held_phase(i) + own[phase][i][policy_i]      for every block i and both phases,
// where held_phase(k) = sum over j < k of held_delta(block j, policy_j, phase), and its time is
// a sum of one term per block. Deciding the blocks in order, a partial plan's future depends on
// its past only through the pair (held_forward(k), held_backward(k)): smaller held bytes never
// make a later window larger. So of two partial plans at block k, one with no more held bytes
// in either phase and no more time (or, looking for the smallest peak, no higher peak so far)
// is at least as good, and the other is dropped. The two sums differ only by the inputs the
// caller holds in the forward and not in backward (Note [Peak model]), of a few blocks if any,
// so the states are grouped by that difference, and within a group the held bytes of one phase
// order them as those of the other: each group keeps the Pareto front of (held bytes,
// objective), at most one state per distinct held(k): for n identical blocks and 3 policies
// O(n^2) states, for any blocks at most 3^k. Past kMaxFrontStates a group's front is thinned to
// the best state per held-bytes bucket (never met at the sizes we plan for).
// The result equals enumerating every plan (tests/offload/test_memory_planner.cpp checks this
// against brute force on random profiles).
constexpr std::size_t kMaxFrontStates = 1 << 16;

enum class Objective { StepTime, Peak };

struct PartialPlan {
  Held held;              // held(k), in both phases
  double ms = 0;          // the time terms so far
  std::int64_t peak = 0;  // the largest window so far
  std::vector<BlockPolicy> policies;
};

double objective_of(const PartialPlan& s, Objective objective) {
  return objective == Objective::StepTime ? s.ms : static_cast<double>(s.peak);
}

// What tells the groups of Note [Planner search] apart. Within a group held.forward is
// held.backward plus this, so held.backward alone orders the group's states.
std::int64_t group_of(const PartialPlan& s) {
  return s.held.forward - s.held.backward;
}

// Thins a group's front (sorted by held bytes) to its first state per held-bytes bucket.
void thin(std::vector<PartialPlan>& front) {
  if (front.size() <= kMaxFrontStates) return;
  const std::int64_t first = front.front().held.backward;
  const std::int64_t span = front.back().held.backward - first;
  const std::int64_t bucket = std::max<std::int64_t>(1, span / (kMaxFrontStates / 2));
  std::vector<PartialPlan> thinned;
  for (PartialPlan& s : front) {
    if (!thinned.empty() &&
        (s.held.backward - first) / bucket == (thinned.back().held.backward - first) / bucket) {
      continue;  // the bucket's first state has the fewest held bytes and is kept
    }
    thinned.push_back(std::move(s));
  }
  front = std::move(thinned);
}

// Keeps, in each group, the states no other state dominates (no more held bytes and no worse
// objective).
void keep_pareto_front(std::vector<PartialPlan>& states, Objective objective) {
  std::sort(states.begin(), states.end(), [&](const PartialPlan& a, const PartialPlan& b) {
    if (group_of(a) != group_of(b)) return group_of(a) < group_of(b);
    if (a.held.backward != b.held.backward) return a.held.backward < b.held.backward;
    const double oa = objective_of(a, objective), ob = objective_of(b, objective);
    if (oa != ob) return oa < ob;
    return a.peak < b.peak;
  });
  std::vector<PartialPlan> kept;
  std::vector<PartialPlan> front;  // of the current group
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < states.size(); ++i) {
    PartialPlan& s = states[i];
    if (objective_of(s, objective) < best) {
      best = objective_of(s, objective);
      front.push_back(std::move(s));
    }
    if (i + 1 == states.size() || group_of(states[i + 1]) != group_of(front.back())) {
      thin(front);
      for (PartialPlan& f : front)
        kept.push_back(std::move(f));
      front.clear();
      best = std::numeric_limits<double>::infinity();
    }
  }
  states = std::move(kept);
}

// The best plan for `objective` (under `budget_bytes` for StepTime), or none.
std::optional<PartialPlan> search(const StepProfile& profile, const PlanOptions& options,
                                  bool offload_parameters, Objective objective,
                                  std::int64_t budget_bytes) {
  const WindowLevels levels = window_levels(profile, offload_parameters);
  std::vector<BlockPolicy> allowed = {BlockPolicy::Keep, BlockPolicy::Recompute};
  if (options.allow_save_on_cpu && save_on_cpu_possible(profile))
    allowed.push_back(BlockPolicy::SaveOnCpu);
  auto fits = [&](const PartialPlan& s) {
    return objective == Objective::Peak || s.peak <= budget_bytes;
  };

  PartialPlan start;
  start.peak = std::max({std::int64_t{0}, levels.between[0][0], levels.between[1][0]});
  if (!fits(start)) return std::nullopt;
  std::vector<PartialPlan> front = {start};
  for (std::size_t i = 0; i < profile.blocks.size(); ++i) {
    const BlockProfile& block = profile.blocks[i];
    std::vector<PartialPlan> next;
    for (const PartialPlan& s : front) {
      for (const BlockPolicy policy : allowed) {
        PartialPlan t;
        t.ms = s.ms + policy_ms(profile, block, policy);
        if (!std::isfinite(t.ms)) continue;
        t.held = s.held.plus(block, policy);
        const auto p = static_cast<std::size_t>(policy);
        t.peak = std::max({s.peak, add_level(s.held.forward, levels.own[0][i][p]),
                           add_level(s.held.backward, levels.own[1][i][p]),
                           add_level(t.held.forward, levels.between[0][i + 1]),
                           add_level(t.held.backward, levels.between[1][i + 1])});
        if (!fits(t)) continue;
        t.policies = s.policies;
        t.policies.push_back(policy);
        next.push_back(std::move(t));
      }
    }
    keep_pareto_front(next, objective);
    front = std::move(next);
    if (front.empty()) return std::nullopt;
  }
  return *std::min_element(front.begin(), front.end(), [&](const auto& a, const auto& b) {
    const double oa = objective_of(a, objective), ob = objective_of(b, objective);
    return oa != ob ? oa < ob : a.peak < b.peak;
  });
}

std::vector<bool> offload_choices(const StepProfile& profile, const PlanOptions& options) {
  std::vector<bool> choices = {false};
  if (options.allow_parameter_offload && parameter_offload_possible(profile))
    choices.push_back(true);
  return choices;
}

MemoryPlan make_plan(const StepProfile& profile, std::vector<BlockPolicy> policies,
                     bool offload_parameters, std::int64_t budget_bytes) {
  MemoryPlan plan;
  plan.policies = std::move(policies);
  plan.offload_parameters = offload_parameters;
  plan.budget_bytes = budget_bytes;
  plan.predicted_peak_bytes = predict_peak_bytes(profile, plan.policies, offload_parameters);
  plan.predicted_step_ms = predict_step_ms(profile, plan.policies, offload_parameters);
  return plan;
}

std::string format_mib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f MiB", static_cast<double>(bytes) / kMiB);
  return text;
}

// "4 recompute, 2 keep; parameters on the device".
std::string summarize(const MemoryPlan& plan) {
  std::ostringstream out;
  bool first = true;
  for (const BlockPolicy policy : kPolicies) {
    const auto count = std::count(plan.policies.begin(), plan.policies.end(), policy);
    if (count == 0) continue;
    out << (first ? "" : ", ") << count << " " << policy_name(policy);
    first = false;
  }
  if (first) out << "no blocks";
  out << "; parameters " << (plan.offload_parameters ? "offloaded" : "on the device");
  return out.str();
}

}  // namespace

MemoryPlan smallest_peak_plan(const StepProfile& profile, const PlanOptions& options) {
  check_profile(profile);
  std::optional<MemoryPlan> best;
  for (const bool offload : offload_choices(profile, options)) {
    const std::optional<PartialPlan> found = search(profile, options, offload, Objective::Peak, 0);
    if (!found) continue;
    MemoryPlan plan = make_plan(profile, found->policies, offload, 0);
    if (!best || plan.predicted_peak_bytes < best->predicted_peak_bytes) best = std::move(plan);
  }
  LG_INTERNAL_ASSERT(best.has_value(), "memory planner: keep and recompute are always possible");
  return *best;
}

MemoryPlan plan_memory(const StepProfile& profile, std::int64_t budget_bytes,
                       const PlanOptions& options) {
  LG_CHECK(budget_bytes > 0, "memory planner: the budget must be > 0 bytes, got ", budget_bytes);
  check_profile(profile);
  std::optional<MemoryPlan> best;
  for (const bool offload : offload_choices(profile, options)) {
    const std::optional<PartialPlan> found =
        search(profile, options, offload, Objective::StepTime, budget_bytes);
    if (!found) continue;
    MemoryPlan plan = make_plan(profile, found->policies, offload, budget_bytes);
    if (!best || plan.predicted_step_ms < best->predicted_step_ms) best = std::move(plan);
  }
  if (!best) {
    const MemoryPlan smallest = smallest_peak_plan(profile, options);
    LG_THROW(Error, "memory planner: no plan fits the budget of ", format_mib(budget_bytes), " (",
             budget_bytes, " bytes) on ", profile.device.str(),
             ": the smallest peak a plan reaches is ", format_mib(smallest.predicted_peak_bytes),
             " (", summarize(smallest), ")");
  }
  return *best;
}

std::string describe_plan(const StepProfile& profile, const MemoryPlan& plan) {
  check_policies(profile, plan.policies);
  std::size_t name_width = 5;
  for (const BlockProfile& b : profile.blocks)
    name_width = std::max(name_width, b.name.size());
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line),
                "memory plan for a budget of %s on %s (%zu blocks; profiled step %.2f ms with "
                "every block recomputed)\n",
                format_mib(plan.budget_bytes).c_str(), profile.device.str().c_str(),
                profile.blocks.size(), profile.step_ms);
  out << line;
  // The name column is as wide as the longest name, which no line buffer bounds (a deep model's
  // dotted paths): the names go to the stream whole, padded, and the fixed columns after them
  // through the buffer.
  auto name_column = [&](const std::string& name) {
    out << "  " << name << std::string(name_width - name.size(), ' ');
  };
  name_column("block");
  std::snprintf(line, sizeof(line), "  %-11s  %9s  %8s  %8s\n", "policy", "saved MiB", "fwd ms",
                "bwd ms");
  out << line;
  for (std::size_t i = 0; i < profile.blocks.size(); ++i) {
    const BlockProfile& b = profile.blocks[i];
    name_column(b.name);
    std::snprintf(line, sizeof(line), "  %-11s  %9.2f  %8.2f  %8.2f\n",
                  policy_name(plan.policies[i]), static_cast<double>(b.saved_bytes) / kMiB,
                  b.forward_ms, b.backward_ms);
    out << line;
  }
  out << "  parameters and optimizer state: "
      << (plan.offload_parameters ? "offloaded to pinned host memory" : "on the device") << "\n";
  if (profile.copy_bytes_per_ms > 0) {
    std::snprintf(line, sizeof(line), "  pinned host <-> device copies: %.2f GB/s%s\n",
                  profile.copy_bytes_per_ms / 1e6,
                  profile.processes > 1 ? " (measured with every process copying at once)" : "");
    out << line;
  }
  if (profile.processes > 1) {
    char host[64] = "not possible";
    if (profile.host_gradient_sync_ms > 0)
      std::snprintf(host, sizeof(host), "%.2f ms", profile.host_gradient_sync_ms);
    std::snprintf(line, sizeof(line),
                  "  gradient all-reduce over %d processes: %.2f ms on %s, %s in host memory "
                  "(parameters offloaded); the plan's step pays %.2f ms of it\n",
                  profile.processes, profile.gradient_sync_ms, profile.device.str().c_str(), host,
                  gradient_sync_exposed_ms(profile, plan.offload_parameters));
    out << line;
  }
  std::snprintf(line, sizeof(line), "  predicted: peak allocated %s, step %.2f ms\n",
                format_mib(plan.predicted_peak_bytes).c_str(), plan.predicted_step_ms);
  out << line;
  return out.str();
}

// ---- apply_plan ------------------------------------------------------------------------------

AppliedPlan::~AppliedPlan() {
  remove();
}

AppliedPlan::AppliedPlan(AppliedPlan&& other) noexcept
    : blocks_(std::move(other.blocks_)), parameter_offload_(std::move(other.parameter_offload_)) {
  other.blocks_.clear();
}

AppliedPlan& AppliedPlan::operator=(AppliedPlan&& other) noexcept {
  if (this != &other) {
    remove();
    blocks_ = std::move(other.blocks_);
    parameter_offload_ = std::move(other.parameter_offload_);
    other.blocks_.clear();
  }
  return *this;
}

void AppliedPlan::remove() {
  parameter_offload_.reset();  // the parameters stay in host memory (ParameterOffload's destructor)
  for (const std::weak_ptr<nn::Module>& weak : blocks_) {
    if (const std::shared_ptr<nn::Module> block = weak.lock()) block->set_forward_wrapper(nullptr);
  }
  blocks_.clear();
}

AppliedPlan apply_policies(const std::vector<std::shared_ptr<nn::Module>>& blocks,
                           const std::vector<BlockPolicy>& policies) {
  LG_CHECK(blocks.size() == policies.size(), "apply_plan: ", policies.size(), " policies for ",
           blocks.size(), " blocks");
  detail::check_blocks(blocks, "apply_plan");
  AppliedPlan applied;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    nn::ForwardWrapper wrapper;
    switch (policies[i]) {
      case BlockPolicy::Keep:
        continue;
      case BlockPolicy::Recompute:
        // Only the input is saved; backward calls the block again (hooks included).
        wrapper = [](const Tensor& input, const nn::ForwardCall& call) {
          const autograd::CheckpointFn run = [call](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{call(in[0])};
          };
          return autograd::checkpoint(run, {input})[0];
        };
        break;
      case BlockPolicy::SaveOnCpu:
        // The block's parameters stay resident; only its activations cross the bus.
        wrapper = [parameters = blocks[i]->parameters()](const Tensor& input,
                                                         const nn::ForwardCall& call) {
          SaveOnCpu guard(/*pin_memory=*/true, parameters);
          return call(input);
        };
        break;
    }
    blocks[i]->set_forward_wrapper(std::move(wrapper));
    applied.blocks_.push_back(blocks[i]);
  }
  return applied;
}

AppliedPlan apply_plan(const MemoryPlan& plan,
                       const std::vector<std::shared_ptr<nn::Module>>& blocks) {
  LG_CHECK(!plan.offload_parameters,
           "apply_plan: the plan offloads the parameters: pass the model and the offload options "
           "(apply_plan(plan, blocks, model, ParameterOffloadOptions(device)))");
  return apply_policies(blocks, plan.policies);
}

AppliedPlan apply_plan(const MemoryPlan& plan,
                       const std::vector<std::shared_ptr<nn::Module>>& blocks,
                       const std::shared_ptr<nn::Module>& model,
                       const ParameterOffloadOptions& offload) {
  AppliedPlan applied = apply_policies(blocks, plan.policies);
  if (plan.offload_parameters)
    applied.parameter_offload_ = std::make_unique<ParameterOffload>(model, offload);
  return applied;
}

namespace detail {
void check_blocks(const std::vector<std::shared_ptr<nn::Module>>& blocks, const char* caller) {
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    LG_CHECK(blocks[i] != nullptr, caller, ": block ", i, " is null");
    const auto first =
        std::find(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(i), blocks[i]);
    LG_CHECK(first == blocks.begin() + static_cast<std::ptrdiff_t>(i), caller, ": block ", i, " (",
             blocks[i]->name(), ") is block ", first - blocks.begin(),
             " again: list each block once");
    LG_CHECK(!blocks[i]->has_forward_wrapper(), caller, ": block ", i, " (", blocks[i]->name(),
             ") already has a forward wrapper; remove it first");
  }
}
}  // namespace detail

}  // namespace leangrad::offload
