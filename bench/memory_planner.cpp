// memory_planner: the memory planner's predictions (offload/memory_planner.h) against
// measurements on leangrad-train's srnet (tools/train_models.h) with Adam and random images.
//   build/bench/memory_planner [--device cpu|cuda] [--width N] [--blocks N] [--batch N]
//                              [--steps N] [--threads N] [--markdown PATH]
// First every plan of the blocks (keep/recompute; on CUDA save-on-cpu too) is run: its predicted
// and measured peak allocated and step time. The plans take turns step by step, so drift in the
// machine's load hits all alike; a plan's peak is the largest over its steps, its time the fastest
// step (on a shared machine the least disturbed one; the median is printed beside it).
// Then, for budgets spread from the smallest predicted peak to the plain plan's, the plan that
// plan_memory picks against the fastest plan whose measured peak fits the budget: the issue's
// target is a pick within 10% of that one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "train_models.h"

using namespace leangrad;
using offload::BlockPolicy;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct Options {
  std::string device = "cpu";
  std::int64_t width = 16, blocks = 4, batch = 64;
  int steps = 7;
  int threads = 0;
  std::string markdown;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--device") {
      o.device = value;
    } else if (key == "--width") {
      o.width = std::stoll(value);
    } else if (key == "--blocks") {
      o.blocks = std::stoll(value);
    } else if (key == "--batch") {
      o.batch = std::stoll(value);
    } else if (key == "--steps") {
      o.steps = std::stoi(value);
    } else if (key == "--threads") {
      o.threads = std::stoi(value);
    } else if (key == "--markdown") {
      o.markdown = value;
    } else {
      std::cerr << "memory_planner: unknown option " << key << " (see the head of the file)\n";
      std::exit(2);
    }
  }
  return o;
}

// "KRRS": one letter per block.
std::string letters(const std::vector<BlockPolicy>& policies) {
  std::string s;
  for (const BlockPolicy p : policies)
    s += p == BlockPolicy::Keep ? 'K' : p == BlockPolicy::Recompute ? 'R' : 'S';
  return s;
}

struct Measured {
  std::vector<BlockPolicy> policies;
  std::int64_t predicted_peak = 0, measured_peak = 0;
  double predicted_ms = 0;
  std::vector<double> step_ms;
  double median_ms() const {
    std::vector<double> v = step_ms;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  double min_ms() const { return *std::min_element(step_ms.begin(), step_ms.end()); }
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.threads > 0) set_num_threads(o.threads);
  const Device device = o.device == "cuda" ? Device::cuda() : Device::cpu();
  if (device.is_cuda() && !cuda::is_available()) {
    std::cout << "no CUDA device: skipped\n";
    return 0;
  }
  manual_seed(4);
  tools::ModelOptions model_options;
  model_options.name = "srnet";
  model_options.width = o.width;
  model_options.blocks = o.blocks;
  const std::shared_ptr<nn::Module> model = tools::make_model(model_options);
  model->to(device);
  const std::vector<std::shared_ptr<nn::Module>> blocks =
      tools::memory_blocks("srnet", *model, "memory_planner");
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-3));
  const Tensor images = rand({o.batch, 1, 28, 28}).to(device);
  const Tensor labels = zeros({o.batch}, TensorOptions(kInt64).device(device));
  auto step = [&] {
    optimizer.zero_grad();
    tools::accumulate_micro_batch("srnet", *model, images, labels, 1.0);
    optimizer.step();
    if (device.is_cuda()) cuda::synchronize();
  };

  const offload::StepProfile profile = offload::profile_step(*model, blocks, step);
  std::vector<BlockPolicy> allowed = {BlockPolicy::Keep, BlockPolicy::Recompute};
  if (device.is_cuda()) allowed.push_back(BlockPolicy::SaveOnCpu);
  std::vector<Measured> plans;
  std::size_t count = 1;
  for (std::int64_t i = 0; i < o.blocks; ++i)
    count *= allowed.size();
  for (std::size_t code = 0; code < count; ++code) {
    Measured m;
    for (std::size_t rest = code, i = 0; i < static_cast<std::size_t>(o.blocks); ++i) {
      m.policies.push_back(allowed[rest % allowed.size()]);
      rest /= allowed.size();
    }
    m.predicted_peak = offload::predict_peak_bytes(profile, m.policies, false);
    m.predicted_ms = offload::predict_step_ms(profile, m.policies, false);
    plans.push_back(m);
  }
  for (int s = 0; s < o.steps + 1; ++s) {  // the first round warms up every plan
    for (Measured& m : plans) {
      const offload::AppliedPlan applied = offload::apply_policies(blocks, m.policies);
      memory::reset_peak(device);
      const Clock::time_point start = Clock::now();
      step();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (s == 0) continue;
      m.step_ms.push_back(ms);
      m.measured_peak = std::max(m.measured_peak, memory::stats(device).peak_allocated);
    }
  }

  std::ostringstream out;
  char line[320];
  std::snprintf(line, sizeof(line),
                "## srnet width %lld, %lld blocks, batch %lld, Adam, on %s (%d threads): %zu "
                "plans, %d steps each\n\n",
                static_cast<long long>(o.width), static_cast<long long>(o.blocks),
                static_cast<long long>(o.batch), device.str().c_str(), get_num_threads(),
                plans.size(), o.steps);
  std::int64_t largest = 0;
  for (const Measured& m : plans)
    largest = std::max(largest, m.predicted_peak);
  out << line << offload::describe_plan(profile, offload::plan_memory(profile, largest))
      << "\n| plan | predicted peak MiB | measured peak MiB | error | predicted ms | measured ms "
         "(fastest) | error | median ms |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  double worst_peak_error = 0;
  for (const Measured& m : plans) {
    const double peak_error = static_cast<double>(m.predicted_peak - m.measured_peak) /
                              static_cast<double>(m.measured_peak);
    worst_peak_error = std::max(worst_peak_error, std::abs(peak_error));
    std::snprintf(line, sizeof(line),
                  "| %s | %.2f | %.2f | %+.1f%% | %.2f | %.2f | %+.1f%% | %.2f |\n",
                  letters(m.policies).c_str(), static_cast<double>(m.predicted_peak) / kMiB,
                  static_cast<double>(m.measured_peak) / kMiB, 100 * peak_error, m.predicted_ms,
                  m.min_ms(), 100 * (m.predicted_ms - m.min_ms()) / m.min_ms(), m.median_ms());
    out << line;
  }

  const std::int64_t smallest = offload::smallest_peak_plan(profile).predicted_peak_bytes;
  out << "\n| budget MiB | picked | its measured peak fits | predicted ms | measured ms | fastest "
         "that fits (measured) | its ms | picked / fastest |\n| --- | --- | --- | --- | --- | --- "
         "| --- | --- |\n";
  double worst_ratio = 0;
  bool all_fit = true;
  constexpr int kBudgets = 6;
  for (int b = 0; b <= kBudgets; ++b) {
    const std::int64_t budget = smallest + (largest - smallest) * b / kBudgets;
    const offload::MemoryPlan plan = offload::plan_memory(profile, budget);
    const Measured* picked = nullptr;
    const Measured* fastest = nullptr;
    for (const Measured& m : plans) {
      if (m.policies == plan.policies) picked = &m;
      if (m.measured_peak <= budget && (!fastest || m.min_ms() < fastest->min_ms())) fastest = &m;
    }
    if (picked == nullptr || fastest == nullptr) continue;
    const double ratio = picked->min_ms() / fastest->min_ms();
    worst_ratio = std::max(worst_ratio, ratio);
    all_fit = all_fit && picked->measured_peak <= budget;
    std::snprintf(line, sizeof(line), "| %.2f | %s | %s | %.2f | %.2f | %s | %.2f | %.3f |\n",
                  static_cast<double>(budget) / kMiB, letters(plan.policies).c_str(),
                  picked->measured_peak <= budget ? "yes" : "NO", plan.predicted_step_ms,
                  picked->min_ms(), letters(fastest->policies).c_str(), fastest->min_ms(), ratio);
    out << line;
  }
  std::snprintf(line, sizeof(line),
                "\npredicted peaks within %.1f%% of the measured ones (target 10%%); the planner's "
                "pick at most %.1f%% slower than the fastest plan that fits (target 10%%); %s\n",
                100 * worst_peak_error, 100 * (worst_ratio - 1),
                all_fit ? "every pick fits its budget" : "a pick did NOT fit its budget");
  out << line;
  std::cout << out.str();
  if (!o.markdown.empty()) std::ofstream(o.markdown, std::ios::app) << out.str() << "\n";
  return 0;
}
