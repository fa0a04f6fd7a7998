#include "train_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "train_observers.h"

namespace leangrad::tools {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

double mean(const std::vector<double>& values, std::size_t from) {
  if (values.size() <= from) return 0.0;
  double sum = 0;
  for (std::size_t i = from; i < values.size(); ++i)
    sum += values[i];
  return sum / static_cast<double>(values.size() - from);
}

std::string format_mib(std::int64_t bytes, int width) {
  char text[40];
  std::snprintf(text, sizeof(text), "%*.2f MiB", width, static_cast<double>(bytes) / (1 << 20));
  return text;
}

std::int64_t device_bytes(const Tensor& t, Device device) {
  const bool on_device = t.defined() && t.device() == device && !t.is_pinned();
  return on_device ? static_cast<std::int64_t>(t.nbytes()) : 0;
}

std::int64_t optimizer_state_bytes(const optim::Optimizer& optimizer, Device device) {
  std::int64_t bytes = 0;
  for (const Tensor& state : optimizer_state_tensors(optimizer))
    bytes += device_bytes(state, device);
  return bytes;
}

namespace {

// The "other" line: what the peak holds beyond the parts above it. The parts are measured at
// different moments, and may not all be held at the peak (zero_grad() frees the gradients before
// the forward whose saved activations make the peak; Adam's state appears at the first step):
// then they add up to more than the peak, and no remainder is printed.
std::string other_line(const MemoryReport& m) {
  const std::int64_t other = m.other();
  if (other >= 0) {
    return "  other                     " + format_mib(other) +
           "  (temporaries of forward and backward: the peak allocated " +
           format_mib(m.peak_allocated, 0) + " minus the above)\n";
  }
  return "  other                             -  (the lines above, measured at different moments, "
         "add up to " +
         format_mib(-other, 0) + " more than the peak allocated " +
         format_mib(m.peak_allocated, 0) +
         ": the peak did not hold them all at once; --memory-timeline splits the peak itself)\n";
}

}  // namespace

void print_memory_report(const MemoryReport& m, Device device, const std::string& precision) {
  if (m.steps == 0) {
    std::cout << "memory on " << device
              << ": no step was trained in this run, so no training peak was measured\n";
    return;
  }
  std::cout << "memory on " << device << " at the training peak (precision " << precision << "):\n"
            << "  peak reserved             " << format_mib(m.peak_reserved)
            << "  (what the allocator held: the lines below)\n"
            << "  parameters                " << format_mib(m.parameters) << "\n"
            << "  gradients                 " << format_mib(m.gradients) << "\n"
            << "  optimizer state           " << format_mib(m.optimizer_state) << "\n"
            << "  resident data             " << format_mib(m.resident)
            << "  (allocated before the first step: datasets on this device)\n"
            << "  saved activations         " << format_mib(m.saved_activations)
            << "  (held from the end of a forward to its backward; the largest)\n"
            << other_line(m) << "  allocator slack           "
            << format_mib(m.peak_reserved - m.peak_allocated)
            << "  (reserved but not allocated: cached free blocks, rounding)\n"
            << "pinned host memory: peak  " << format_mib(m.pinned_peak)
            << "  (--save-on-cpu activations, --offload-params parameters, gradients and "
               "optimizer state, --pin-memory batches)\n";
}

}  // namespace leangrad::tools
