// leangrad-train --memory-timeline: one training step's allocations and frees (the allocator's
// history, core/memory_history.h) turned into memory over time by category, the categories of the
// memory report (parameters, gradients, optimizer state, resident data, saved activations, other
// temporaries), written as JSON for tools/plot_memory_timeline.py to draw, or drawn as SVG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/core/memory_history.h>
#include <nlohmann/json.hpp>

namespace leangrad::tools {

// What is known about the blocks a step starts and ends with.
struct TimelineBlocks {
  std::int64_t start_allocated = 0;  // the allocator's `allocated` when the history started
  // The blocks of the parameters, gradients and optimizer state (data pointers and allocated
  // sizes), at the start of the step and at its end.
  struct Block {
    std::uintptr_t address = 0;
    std::int64_t bytes = 0;
  };
  std::vector<Block> parameters, gradients_start, gradients_end, state_start, state_end;
};

// The categories, bottom to top of the plot.
const std::vector<std::string>& timeline_categories();

// Memory over the step. A block allocated during the step is, by its address at the step's end,
// a gradient or optimizer state; otherwise a saved activation if it was allocated between a
// "forward" mark and the next "forward_end" mark and still allocated at that mark (what the
// memory report counts as saved activations: held from the end of a forward to its backward);
// otherwise "other". Blocks from before the step are parameters, gradients or optimizer state by
// address, the rest resident data. Returns {"categories", "time_ms", "bytes": {category: [...]},
// "marks": [{"label", "time_ms"}], "peak": {"time_ms", "bytes", "by_category"},
// "peak_by_category"}: the totals after each event, in bytes.
nlohmann::json memory_timeline(const std::vector<memory::MemoryEvent>& events,
                               const TimelineBlocks& blocks);

// The timeline (memory_timeline's JSON, with "step", "device", "model", "batch_size" where set) as
// an SVG picture, for `--memory-timeline step.svg`: the categories stacked over time as steps
// (resident data left out and named in the title: it only sits under the step), the total as an
// outline (a temporary that lives for microseconds is a spike too thin to fill), the forward
// passes shaded and the peak marked (a circle, id "peak", at its time and the stack's height).
// tools/plot_memory_timeline.py draws the same from the JSON as a PNG with matplotlib.
std::string memory_timeline_svg(const nlohmann::json& timeline);

// Whether --memory-timeline's `path` asks for the picture: it ends in ".svg", in any case
// ("step.SVG" too); any other name gets the JSON.
bool names_an_svg(const std::string& path);

}  // namespace leangrad::tools
