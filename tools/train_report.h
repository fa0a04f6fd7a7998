// What leangrad-train reports beside the scores: step-time statistics and where the training
// memory went (MemoryReport: the device allocator's peak split by category, printed at the end of
// a run and written to --log-json).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/leangrad.h>

namespace leangrad::tools {

// Nearest-rank percentile (0 < q <= 1) of unsorted values.
double percentile(std::vector<double> values, double q);

// The mean of values[from, end); 0 when that is empty.
double mean(const std::vector<double>& values, std::size_t from = 0);

// "   247.23 MiB" in a column `width` characters wide (0: no padding).
std::string format_mib(std::int64_t bytes, int width = 9);

// Where the training memory went: the peak of the device's allocator, split into what the model
// and optimizer hold, the activations saved for backward, the other temporaries and the cache's
// slack. `resident` is what was allocated before the first step beside the parameters (on the
// CPU: the datasets themselves). The parts are measured at different moments (the gradients
// after the last step, the saved activations at the end of the largest forward), so "other" is
// what the peak holds beyond them. A run that trains no step (resumed at --max-steps) has no peak:
// steps == 0, and the report says that nothing was measured.
struct MemoryReport {
  std::int64_t steps = 0;  // the optimizer steps this run trained
  std::int64_t peak_allocated = 0;
  std::int64_t peak_reserved = 0;
  std::int64_t parameters = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer_state = 0;
  std::int64_t resident = 0;
  std::int64_t saved_activations = 0;  // the largest MicroBatch::forward_bytes
  std::int64_t pinned_peak = 0;  // the pinned host pool's peak (offloaded activations, batches)
  std::int64_t other() const {
    return peak_allocated - parameters - gradients - optimizer_state - resident - saved_activations;
  }
};

// Bytes of `t` held by `device`'s allocator (not the pinned pool: --offload-params keeps the
// parameters, gradients and optimizer state there, off the device).
std::int64_t device_bytes(const Tensor& t, Device device);

// Bytes of the optimizer's state tensors held by `device`'s allocator.
std::int64_t optimizer_state_bytes(const optim::Optimizer& optimizer, Device device);

// The report on stdout, one line per category.
void print_memory_report(const MemoryReport& m, Device device, const std::string& precision);

}  // namespace leangrad::tools
