// One step's memory by category, from the allocator's history (memory_timeline.h).
#include "memory_timeline.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>

#include <leangrad/core/error.h>

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

// ---- The SVG picture ----------------------------------------------------------------------------

namespace leangrad::tools {
namespace {

// Plot geometry in SVG user units (pixels at 100%).
constexpr double kWidth = 1000, kHeight = 480;
constexpr double kLeft = 80, kRight = 980, kTop = 70, kBottom = 420;

// The categories drawn, bottom to top, with their colours and legend labels.
struct Drawn {
  const char* name;
  const char* label;
  const char* colour;
};
constexpr Drawn kDrawn[] = {{"parameters", "parameters", "#3b82b8"},
                            {"gradients", "gradients", "#f28e2b"},
                            {"optimizer_state", "optimizer state", "#4aa84a"},
                            {"saved_activations", "saved activations", "#d94040"},
                            {"other", "other temporaries", "#9d76c1"}};

// A tick spacing of 1, 2 or 5 times a power of ten giving at most `max_ticks` ticks over `span`.
double tick_step(double span, int max_ticks) {
  if (span <= 0) return 1;
  const double raw = span / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::string number(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, v);
  return text;
}

// Decimals that tell ticks `step` apart.
int decimals_for(double step) {
  return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string memory_timeline_svg(const nlohmann::json& t) {
  const std::vector<double> time = t.at("time_ms").get<std::vector<double>>();
  const std::size_t n = time.size();
  LG_CHECK(n > 0, "--memory-timeline: the step recorded no allocation or free");
  // The byte unit: MiB from 1 MiB on, KiB below (a small model's step).
  const double peak_bytes = t.at("peak").at("bytes").get<double>();
  const bool mib = peak_bytes >= (1 << 20);
  const double unit = mib ? (1 << 20) : 1024;
  const char* unit_name = mib ? "MiB" : "KiB";

  // Stack the drawn categories: top[k][i] is the top of category k after event i.
  const auto& bytes = t.at("bytes");
  std::vector<std::vector<double>> top;
  std::vector<double> below(n, 0.0);
  for (const Drawn& d : kDrawn) {
    const std::vector<double> values = bytes.at(d.name).get<std::vector<double>>();
    for (std::size_t i = 0; i < n; ++i)
      below[i] += values[i] / unit;
    top.push_back(below);
  }
  const double resident_at_peak =
      t.at("peak").at("by_category").at("resident_data").get<double>() / unit;
  const double drawn_peak = peak_bytes / unit - resident_at_peak;
  const double peak_ms = t.at("peak").at("time_ms").get<double>();

  const double t0 = time.front(), t1 = std::max(time.back(), t0 + 1e-3);
  const double y_step = tick_step(drawn_peak * 1.12, 8);
  const double y_max = std::ceil(drawn_peak * 1.12 / y_step) * y_step;
  auto x = [&](double ms) { return kLeft + (ms - t0) / (t1 - t0) * (kRight - kLeft); };
  auto y = [&](double v) { return kBottom - v / y_max * (kBottom - kTop); };
  auto point = [&](double ms, double v) { return number(x(ms), 2) + "," + number(y(v), 2) + " "; };

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(kWidth, 0) + "\" height=\"" +
       number(kHeight, 0) + "\" viewBox=\"0 0 " + number(kWidth, 0) + " " + number(kHeight, 0) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";

  // Title: what, where, and what is not drawn.
  std::string title = t.value("model", std::string()) + " on " + t.value("device", std::string());
  if (t.contains("batch_size")) title += ", batch " + t["batch_size"].dump();
  if (t.contains("memory_setting")) title += ", " + t["memory_setting"].get<std::string>();
  title += ": memory allocated during step " + (t.contains("step") ? t["step"].dump() : "?") +
           " (forward passes shaded)";
  s += "<text x=\"" + number(kWidth / 2, 0) +
       "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) + "</text>\n";
  s += "<text x=\"" + number(kWidth / 2, 0) +
       "\" y=\"44\" text-anchor=\"middle\">not drawn: " + "resident data (" +
       number(resident_at_peak, 2) + " " + unit_name +
       " at the peak, included in the peak's number)</text>\n";

  // Forward passes, shaded (NaN: no pass open; a plain double, as GCC 12 misreads an optional).
  double forward_start = std::nan("");
  for (const auto& mark : t.at("marks")) {
    const std::string label = mark.at("label").get<std::string>();
    const double ms = mark.at("time_ms").get<double>();
    if (label == "forward") forward_start = ms;
    if (label == "forward_end" && !std::isnan(forward_start)) {
      s += "<rect class=\"forward\" x=\"" + number(x(forward_start), 2) + "\" y=\"" +
           number(kTop, 0) + "\" width=\"" + number(x(ms) - x(forward_start), 2) + "\" height=\"" +
           number(kBottom - kTop, 0) + "\" fill=\"#000\" fill-opacity=\"0.07\"/>\n";
      forward_start = std::nan("");
    }
  }

  // Grid and axes.
  for (double v = 0; v <= y_max + y_step / 2; v += y_step) {
    s += "<line x1=\"" + number(kLeft, 0) + "\" x2=\"" + number(kRight, 0) + "\" y1=\"" +
         number(y(v), 2) + "\" y2=\"" + number(y(v), 2) + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + number(kLeft - 6, 0) + "\" y=\"" + number(y(v) + 4, 2) +
         "\" text-anchor=\"end\">" + number(v, decimals_for(y_step)) + "</text>\n";
  }
  const double x_step = tick_step(t1 - t0, 10);
  for (double ms = std::ceil(t0 / x_step) * x_step; ms <= t1 + x_step * 1e-6; ms += x_step) {
    s += "<line x1=\"" + number(x(ms), 2) + "\" x2=\"" + number(x(ms), 2) + "\" y1=\"" +
         number(kTop, 0) + "\" y2=\"" + number(kBottom, 0) + "\" stroke=\"#eee\"/>\n";
    s += "<text x=\"" + number(x(ms), 2) + "\" y=\"" + number(kBottom + 16, 0) +
         "\" text-anchor=\"middle\">" + number(ms, decimals_for(x_step)) + "</text>\n";
  }
  s += "<text x=\"" + number((kLeft + kRight) / 2, 0) + "\" y=\"" + number(kBottom + 38, 0) +
       "\" text-anchor=\"middle\">time since the step began (ms)</text>\n";
  s += "<text transform=\"translate(20," + number((kTop + kBottom) / 2, 0) +
       ") rotate(-90)\" text-anchor=\"middle\">allocated (" + unit_name + ")</text>\n";

  // The stacked areas: each category's top edge left to right as steps (memory changes at an
  // event and stays until the next), then the category below's top edge back.
  for (std::size_t k = 0; k < top.size(); ++k) {
    std::string path;
    for (std::size_t i = 0; i < n; ++i) {
      const double end = i + 1 < n ? time[i + 1] : t1;
      path += point(time[i], top[k][i]) + point(end, top[k][i]);
    }
    for (std::size_t i = n; i-- > 0;) {
      const double end = i + 1 < n ? time[i + 1] : t1;
      const double base = k == 0 ? 0.0 : top[k - 1][i];
      path += point(end, base) + point(time[i], base);
    }
    s += std::string("<polygon class=\"area\" data-category=\"") + kDrawn[k].name + "\" fill=\"" +
         kDrawn[k].colour + "\" fill-opacity=\"0.85\" points=\"" + path + "\"/>\n";
  }
  // The total's outline.
  std::string outline;
  for (std::size_t i = 0; i < n; ++i) {
    const double end = i + 1 < n ? time[i + 1] : t1;
    outline += point(time[i], top.back()[i]) + point(end, top.back()[i]);
  }
  s += "<polyline id=\"total\" fill=\"none\" stroke=\"black\" stroke-width=\"0.7\" points=\"" +
       outline + "\"/>\n";
  s += "<rect x=\"" + number(kLeft, 0) + "\" y=\"" + number(kTop, 0) + "\" width=\"" +
       number(kRight - kLeft, 0) + "\" height=\"" + number(kBottom - kTop, 0) +
       "\" fill=\"none\" stroke=\"black\"/>\n";

  // The peak.
  s += "<line x1=\"" + number(x(peak_ms), 2) + "\" x2=\"" + number(x(peak_ms), 2) + "\" y1=\"" +
       number(kTop, 0) + "\" y2=\"" + number(kBottom, 0) +
       "\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n";
  s += "<circle id=\"peak\" cx=\"" + number(x(peak_ms), 2) + "\" cy=\"" + number(y(drawn_peak), 2) +
       "\" r=\"3.5\"/>\n";
  s += "<text x=\"" + number(x(peak_ms) + 8, 2) + "\" y=\"" + number(y(drawn_peak) + 16, 2) +
       "\">peak " + number(peak_bytes / unit, 2) + " " + unit_name + " at " + number(peak_ms, 1) +
       " ms</text>\n";

  // Legend, top category first as the stack reads.
  double legend_y = kTop + 12;
  for (std::size_t k = std::size(kDrawn); k-- > 0;) {
    s += "<rect x=\"" + number(kLeft + 10, 0) + "\" y=\"" + number(legend_y - 9, 0) +
         "\" width=\"14\" height=\"10\" fill=\"" + kDrawn[k].colour + "\"/>\n";
    s += "<text x=\"" + number(kLeft + 30, 0) + "\" y=\"" + number(legend_y, 0) + "\">" +
         kDrawn[k].label + "</text>\n";
    legend_y += 16;
  }
  s += "</svg>\n";
  return s;
}

bool names_an_svg(const std::string& path) {
  if (path.size() < 4) return false;
  std::string extension = path.substr(path.size() - 4);
  for (char& c : extension)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".svg";
}

}  // namespace leangrad::tools
