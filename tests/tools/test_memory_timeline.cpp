// leangrad-train's memory timeline (tools/memory_timeline.h) over the allocator's history
// (core/memory_history.h):
// - on a hand-made history, each block lands in the category its rule gives, the series and the
//   peak are the sums worked out here;
// - on a real MLP step with Adam: the timeline's saved activations peak at the memory report's
//   saved activations (MicroBatch::forward_bytes), its parameters, gradients and optimizer state
//   are the blocks of those tensors, its total after the last event is the allocator's
//   `allocated` and its peak the allocator's peak_allocated.
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include <leangrad/core/memory_history.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "memory_timeline.h"
#include "train_models.h"

namespace {

using namespace leangrad;

memory::MemoryEvent event(std::int64_t ns, std::int64_t bytes, std::uintptr_t address) {
  memory::MemoryEvent e;
  e.time_ns = ns;
  e.bytes = bytes;
  e.address = address;
  return e;
}

memory::MemoryEvent mark(std::int64_t ns, const std::string& label) {
  memory::MemoryEvent e;
  e.time_ns = ns;
  e.mark = label;
  return e;
}

TEST(MemoryTimeline, HandMadeHistory) {
  // Before the step: a parameter (0x100, 512 B), its gradient (0x200, 512 B), 1024 B of data.
  tools::TimelineBlocks blocks;
  blocks.start_allocated = 2048;
  blocks.parameters = {{0x100, 512}};
  blocks.gradients_start = {{0x200, 512}};
  const std::vector<memory::MemoryEvent> events = {
      event(1000000, -512, 0x200),  // zero_grad frees the old gradient
      mark(2000000, "forward"),
      event(3000000, 4096, 0x300),  // an activation, kept for backward
      event(4000000, 1536, 0x400),  // a temporary of the forward
      event(5000000, -1536, 0x400),
      mark(6000000, "forward_end"),
      event(7000000, 512, 0x500),     // the new gradient
      event(8000000, 2048, 0x600),    // a temporary of the backward
      event(9000000, -2048, 0x600),   //
      event(10000000, -4096, 0x300),  // the activation, used
  };
  blocks.gradients_end = {{0x500, 512}};
  const nlohmann::json t = tools::memory_timeline(events, blocks);

  const std::vector<double> time_ms = t["time_ms"];
  // The start, then one point per allocation or free (marks are not points).
  EXPECT_EQ(time_ms, (std::vector<double>{0, 1, 3, 4, 5, 7, 8, 9, 10}));
  using Series = std::vector<std::int64_t>;
  EXPECT_EQ(t["bytes"]["parameters"].get<Series>(), Series(9, 512));
  EXPECT_EQ(t["bytes"]["gradients"].get<Series>(), (Series{512, 0, 0, 0, 0, 512, 512, 512, 512}));
  EXPECT_EQ(t["bytes"]["resident_data"].get<Series>(), Series(9, 1024));
  EXPECT_EQ(t["bytes"]["saved_activations"].get<Series>(),
            (Series{0, 0, 4096, 4096, 4096, 4096, 4096, 4096, 0}));
  EXPECT_EQ(t["bytes"]["other"].get<Series>(), (Series{0, 0, 0, 1536, 0, 0, 2048, 0, 0}));
  EXPECT_EQ(t["bytes"]["optimizer_state"].get<Series>(), Series(9, 0));
  // Peak: 512 + 512 + 1024 + 4096 + 2048 at 8 ms.
  EXPECT_EQ(t["peak"]["bytes"], 8192);
  EXPECT_EQ(t["peak"]["time_ms"], 8.0);
  EXPECT_EQ(t["peak"]["by_category"]["other"], 2048);
  EXPECT_EQ(t["peak_by_category"]["saved_activations"], 4096);
  EXPECT_EQ(t["peak_by_category"]["other"], 2048);
  ASSERT_EQ(t["marks"].size(), 2u);
  EXPECT_EQ(t["marks"][1]["label"], "forward_end");
  EXPECT_EQ(t["marks"][1]["time_ms"], 6.0);
}

// The points of the SVG element that starts with `element_start` ("x1,y1 x2,y2 ...").
std::vector<std::pair<double, double>> svg_points(const std::string& svg,
                                                  const std::string& element_start) {
  const std::size_t at = svg.find(element_start);
  EXPECT_NE(at, std::string::npos) << element_start;
  if (at == std::string::npos) return {};
  const std::size_t begin = svg.find("points=\"", at) + 8;
  std::istringstream in(svg.substr(begin, svg.find('"', begin) - begin));
  std::vector<std::pair<double, double>> points;
  double x = 0, y = 0;
  char comma = 0;
  while (in >> x >> comma >> y)
    points.emplace_back(x, y);
  return points;
}

double svg_attribute(const std::string& svg, const std::string& element_start,
                     const std::string& name) {
  const std::size_t at = svg.find(element_start);
  const std::size_t begin = svg.find(name + "=\"", at) + name.size() + 2;
  return std::stod(svg.substr(begin, svg.find('"', begin) - begin));
}

// --memory-timeline step.svg: the hand-made history drawn. The outline of the stack is, point by
// point, the step's total without resident data, on one scale with the areas (whose base is 0);
// the peak marker sits on the outline's highest point; the title and label give the JSON's
// numbers.
TEST(MemoryTimeline, SvgDrawsTheStackToScale) {
  tools::TimelineBlocks blocks;
  blocks.start_allocated = 2048;
  blocks.parameters = {{0x100, 512}};
  blocks.gradients_start = {{0x200, 512}};
  blocks.gradients_end = {{0x500, 512}};
  const std::vector<memory::MemoryEvent> events = {
      event(1000000, -512, 0x200),   mark(2000000, "forward"),     event(3000000, 4096, 0x300),
      event(4000000, 1536, 0x400),   event(5000000, -1536, 0x400), mark(6000000, "forward_end"),
      event(7000000, 512, 0x500),    event(8000000, 2048, 0x600),  event(9000000, -2048, 0x600),
      event(10000000, -4096, 0x300),
  };
  nlohmann::json t = tools::memory_timeline(events, blocks);
  t["step"] = 3;
  t["device"] = "cpu";
  t["model"] = "mlp";
  const std::string svg = tools::memory_timeline_svg(t);
  ASSERT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");

  // Drawn: everything but resident data, bottom to top.
  std::vector<double> drawn(t["time_ms"].size(), 0.0);
  for (const char* c :
       {"parameters", "gradients", "optimizer_state", "saved_activations", "other"}) {
    EXPECT_NE(svg.find(std::string("data-category=\"") + c + "\""), std::string::npos) << c;
    const auto values = t["bytes"][c].get<std::vector<double>>();
    for (std::size_t i = 0; i < drawn.size(); ++i)
      drawn[i] += values[i];
  }
  EXPECT_EQ(svg.find("data-category=\"resident_data\""), std::string::npos);

  // The zero line: the lowest points of the bottom area. The outline: two points per event (its
  // start and the next event's), at that event's drawn total.
  double zero_y = 0;
  for (const auto& [x, y] : svg_points(svg, "<polygon class=\"area\" data-category=\"parameters\""))
    zero_y = std::max(zero_y, y);
  const auto outline = svg_points(svg, "<polyline id=\"total\"");
  ASSERT_EQ(outline.size(), 2 * drawn.size());
  const double peak_y = svg_attribute(svg, "<circle id=\"peak\"", "cy");
  const double peak_drawn = 8192 - 1024;  // the peak less resident data
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    for (const std::size_t p : {2 * i, 2 * i + 1}) {
      // SVG coordinates carry two decimals: 0.005 units over a plot of 350.
      EXPECT_NEAR((zero_y - outline[p].second) / (zero_y - peak_y), drawn[i] / peak_drawn, 1e-4)
          << "event " << i;
    }
  }
  // The marker at the peak's time: the outline's point that starts the 8 ms event.
  EXPECT_DOUBLE_EQ(svg_attribute(svg, "<circle id=\"peak\"", "cx"), outline[2 * 6].first);
  EXPECT_NE(svg.find("peak 8.00 KiB at 8.0 ms"), std::string::npos);
  EXPECT_NE(svg.find("resident data (1.00 KiB at the peak"), std::string::npos);
  EXPECT_NE(svg.find("mlp on cpu: memory allocated during step 3"), std::string::npos);
  // One forward pass, shaded from 2 to 6 ms: 4/10 of the plot's width.
  const double shade = svg_attribute(svg, "<rect class=\"forward\"", "width");
  EXPECT_NEAR(shade / (outline.back().first - outline.front().first), 0.4, 1e-4);
}

std::int64_t allocated_bytes(const std::vector<Tensor>& tensors) {
  std::int64_t sum = 0;
  for (const Tensor& t : tensors) {
    if (t.defined())
      sum += memory::allocated_size(static_cast<std::int64_t>(t.storage()->nbytes()));
  }
  return sum;
}

std::vector<tools::TimelineBlocks::Block> blocks_of(const std::vector<Tensor>& tensors) {
  std::vector<tools::TimelineBlocks::Block> blocks;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    blocks.push_back({reinterpret_cast<std::uintptr_t>(t.storage()->data()),
                      memory::allocated_size(static_cast<std::int64_t>(t.storage()->nbytes()))});
  }
  return blocks;
}

// --memory-timeline draws the picture for a name ending in .svg in any case, the JSON otherwise.
TEST(MemoryTimeline, TheNameChoosesThePicture) {
  for (const char* path : {"step.svg", "step.SVG", "out/step.Svg", ".svg"})
    EXPECT_TRUE(tools::names_an_svg(path)) << path;
  for (const char* path : {"step.json", "step", "svg", "step.svgz", "step.svg.json", ""})
    EXPECT_FALSE(tools::names_an_svg(path)) << path;
}

TEST(MemoryTimeline, MlpStepMatchesTheMemoryReport) {
  manual_seed(0);
  tools::ModelOptions options;
  options.name = "mlp";
  const std::shared_ptr<nn::Module> model = tools::make_model(options);
  optim::Adam adam(model->parameters(), optim::AdamOptions(1e-3));
  const Tensor images = rand({32, 1, 28, 28});
  const Tensor labels = randint(0, 10, {32}, TensorOptions(kInt64));
  auto state = [&] {
    std::vector<Tensor> tensors;
    for (const auto& [name, t] : adam.state_dict()) {
      if (name.rfind("param_groups.", 0) != 0 && name.size() > 5 &&
          name.compare(name.size() - 5, 5, ".step") != 0)
        tensors.push_back(t);
    }
    return tensors;
  };
  auto grads = [&] {
    std::vector<Tensor> tensors;
    for (const Tensor& p : model->parameters())
      tensors.push_back(p.grad());
    return tensors;
  };
  auto step = [&] {
    adam.zero_grad();
    const tools::MicroBatch micro = tools::accumulate_micro_batch("mlp", *model, images, labels, 1);
    adam.step();
    return micro;
  };
  step();  // the optimizer's state and the gradients exist from here on

  tools::TimelineBlocks blocks;
  blocks.parameters = blocks_of(model->parameters());
  blocks.gradients_start = blocks_of(grads());
  blocks.state_start = blocks_of(state());
  blocks.start_allocated = memory::stats(Device::cpu()).allocated;
  memory::reset_peak(Device::cpu());
  memory::start_history(Device::cpu());
  const tools::MicroBatch micro = step();
  const std::vector<memory::MemoryEvent> events = memory::stop_history();
  blocks.gradients_end = blocks_of(grads());
  blocks.state_end = blocks_of(state());
  const MemoryStats after = memory::stats(Device::cpu());
  const nlohmann::json t = tools::memory_timeline(events, blocks);

  EXPECT_EQ(t["peak_by_category"]["saved_activations"], micro.forward_bytes);
  EXPECT_GT(micro.forward_bytes, 0);
  EXPECT_EQ(t["peak_by_category"]["parameters"], allocated_bytes(model->parameters()));
  EXPECT_EQ(t["peak_by_category"]["gradients"], allocated_bytes(grads()));
  EXPECT_EQ(t["peak_by_category"]["optimizer_state"], allocated_bytes(state()));
  EXPECT_EQ(allocated_bytes(state()), 2 * allocated_bytes(model->parameters()));  // Adam: m, v
  std::int64_t last_total = 0;
  for (const std::string& category : tools::timeline_categories())
    last_total += t["bytes"][category].back().get<std::int64_t>();
  EXPECT_EQ(last_total, after.allocated);
  EXPECT_EQ(t["peak"]["bytes"], after.peak_allocated);
}

}  // namespace
