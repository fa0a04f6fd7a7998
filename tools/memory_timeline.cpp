// One step's memory by category, from the allocator's history (memory_timeline.h).
#include "memory_timeline.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>

namespace leangrad::tools {
namespace {

enum Category : std::size_t {
  kParameters,
  kGradients,
  kOptimizerState,
  kResident,
  kSavedActivations,
  kOther,
  kCategories
};

// A block allocated during the step: the events of its allocation and free (none: still
// allocated at the end).
struct Interval {
  std::size_t alloc = 0;
  std::optional<std::size_t> free;
  std::uintptr_t address = 0;
  std::int64_t bytes = 0;
  Category category = kOther;
};

bool contains(const std::vector<TimelineBlocks::Block>& blocks, std::uintptr_t address) {
  return std::any_of(blocks.begin(), blocks.end(),
                     [&](const TimelineBlocks::Block& b) { return b.address == address; });
}

std::int64_t total(const std::vector<TimelineBlocks::Block>& blocks) {
  std::int64_t sum = 0;
  for (const TimelineBlocks::Block& b : blocks)
    sum += b.bytes;
  return sum;
}

}  // namespace

const std::vector<std::string>& timeline_categories() {
  static const std::vector<std::string> names = {
      "parameters", "gradients", "optimizer_state", "resident_data", "saved_activations", "other"};
  return names;
}

nlohmann::json memory_timeline(const std::vector<memory::MemoryEvent>& events,
                               const TimelineBlocks& blocks) {
  // The blocks allocated during the step, and which event frees each.
  std::vector<Interval> intervals;
  std::vector<std::optional<std::size_t>> interval_of(events.size());  // an event's interval
  std::unordered_map<std::uintptr_t, std::size_t> open;
  // For each event, the "forward" mark before it and the "forward_end" mark after that one.
  std::vector<std::optional<std::size_t>> forward_end_of(events.size());
  {
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t forward = kNone;  // the open "forward" mark
    for (std::size_t i = 0; i < events.size(); ++i) {
      const memory::MemoryEvent& e = events[i];
      if (e.mark == "forward") forward = i;
      if (e.mark == "forward_end" && forward != kNone) {
        for (std::size_t j = forward; j < i; ++j)
          forward_end_of[j] = i;
        forward = kNone;
      }
      if (e.bytes > 0) {
        open[e.address] = intervals.size();
        interval_of[i] = intervals.size();
        intervals.push_back({i, std::nullopt, e.address, e.bytes, kOther});
      } else if (e.bytes < 0) {
        if (const auto it = open.find(e.address); it != open.end()) {
          intervals[it->second].free = i;
          interval_of[i] = it->second;
          open.erase(it);
        }
      }
    }
  }
  for (Interval& b : intervals) {
    const std::optional<std::size_t> forward_end = forward_end_of[b.alloc];
    if (forward_end && (!b.free || *b.free > *forward_end)) {
      b.category = kSavedActivations;
    } else if (!b.free && contains(blocks.gradients_end, b.address)) {
      b.category = kGradients;
    } else if (!b.free && contains(blocks.state_end, b.address)) {
      b.category = kOptimizerState;
    } else if (!b.free && contains(blocks.parameters, b.address)) {
      b.category = kParameters;
    }
  }

  // The blocks from before the step, by address.
  std::unordered_map<std::uintptr_t, Category> before;
  for (const auto& b : blocks.parameters)
    before[b.address] = kParameters;
  for (const auto& b : blocks.gradients_start)
    before[b.address] = kGradients;
  for (const auto& b : blocks.state_start)
    before[b.address] = kOptimizerState;
  std::array<std::int64_t, kCategories> bytes{};
  bytes[kParameters] = total(blocks.parameters);
  bytes[kGradients] = total(blocks.gradients_start);
  bytes[kOptimizerState] = total(blocks.state_start);
  bytes[kResident] =
      blocks.start_allocated - bytes[kParameters] - bytes[kGradients] - bytes[kOptimizerState];

  nlohmann::json time_ms = nlohmann::json::array(), marks = nlohmann::json::array();
  std::array<nlohmann::json, kCategories> series;
  for (nlohmann::json& s : series)
    s = nlohmann::json::array();
  std::array<std::int64_t, kCategories> peak_by_category = bytes, at_peak = bytes;
  std::int64_t peak = -1;
  double peak_ms = 0;
  auto add_point = [&](double ms) {
    time_ms.push_back(ms);
    std::int64_t sum = 0;
    for (std::size_t c = 0; c < kCategories; ++c) {
      series[c].push_back(bytes[c]);
      sum += bytes[c];
      peak_by_category[c] = std::max(peak_by_category[c], bytes[c]);
    }
    if (sum > peak) {
      peak = sum;
      peak_ms = ms;
      at_peak = bytes;
    }
  };
  add_point(0.0);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const memory::MemoryEvent& e = events[i];
    const double ms = static_cast<double>(e.time_ns) / 1e6;
    if (!e.mark.empty()) {
      marks.push_back({{"label", e.mark}, {"time_ms", ms}});
      continue;
    }
    if (interval_of[i]) {
      bytes[intervals[*interval_of[i]].category] += e.bytes;
    } else if (e.bytes < 0) {  // a block from before the step
      const auto it = before.find(e.address);
      bytes[it != before.end() ? it->second : kResident] += e.bytes;
    }
    add_point(ms);
  }

  nlohmann::json by_category, peaks, at_peak_json;
  for (std::size_t c = 0; c < kCategories; ++c) {
    const std::string& name = timeline_categories()[c];
    by_category[name] = series[c];
    peaks[name] = peak_by_category[c];
    at_peak_json[name] = at_peak[c];
  }
  return {{"categories", timeline_categories()},
          {"time_ms", time_ms},
          {"bytes", by_category},
          {"marks", marks},
          {"peak", {{"time_ms", peak_ms}, {"bytes", peak}, {"by_category", at_peak_json}}},
          {"peak_by_category", peaks}};
}

}  // namespace leangrad::tools
