// leangrad-train's memory report (tools/train_report.h): the "other" line is the peak less the
// parts above it, and when those parts, measured at different moments, add up to more than the
// peak, it says by how much instead of printing a negative size; a run that trained no step says
// that nothing was measured.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>

#include "train_report.h"

namespace leangrad::tools {
namespace {

std::string report_of(const MemoryReport& m) {
  std::ostringstream captured;
  std::streambuf* const previous = std::cout.rdbuf(captured.rdbuf());
  print_memory_report(m, Device::cpu(), "f32");
  std::cout.rdbuf(previous);
  return captured.str();
}

constexpr std::int64_t kMiB = 1 << 20;

TEST(MemoryReport, OtherIsThePeakLessTheParts) {
  MemoryReport m;
  m.peak_allocated = 100 * kMiB;
  m.peak_reserved = 120 * kMiB;
  m.parameters = 10 * kMiB;
  m.gradients = 10 * kMiB;
  m.saved_activations = 50 * kMiB;
  m.steps = 4;
  const std::string text = report_of(m);
  EXPECT_NE(text.find("  other                         30.00 MiB  (temporaries of forward and "
                      "backward: the peak allocated 100.00 MiB minus the above)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  allocator slack               20.00 MiB"), std::string::npos) << text;
}

TEST(MemoryReport, PartsAboveThePeakPrintNoNegativeOther) {
  MemoryReport m;
  m.peak_allocated = 100 * kMiB;
  m.peak_reserved = 100 * kMiB;
  m.parameters = 10 * kMiB;
  m.gradients = 10 * kMiB;  // freed by zero_grad() before the peak
  m.saved_activations = 85 * kMiB;
  m.steps = 4;
  const std::string text = report_of(m);
  EXPECT_NE(text.find("add up to 5.00 MiB more than the peak allocated 100.00 MiB"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("-5.00"), std::string::npos) << text;
}

// A run resumed at --max-steps trains no step: no peak was measured, and the parts held before
// training (parameters, the optimizer state a checkpoint restored) are not set against a peak of 0.
TEST(MemoryReport, NoStepTrainedSaysNothingWasMeasured) {
  MemoryReport m;
  m.parameters = 10 * kMiB;
  m.optimizer_state = 20 * kMiB;
  m.resident = 30 * kMiB;
  EXPECT_EQ(report_of(m),
            "memory on cpu: no step was trained in this run, so no training peak was measured\n");
}

}  // namespace
}  // namespace leangrad::tools
