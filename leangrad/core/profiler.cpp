// The profiler (core/profiler.h): per-thread span buffers, the Profile that starts and gathers
// them, and its two outputs, Chrome trace JSON and the table of top spans.
//
// Note [Profiler cost]
// Off, Span's constructor reads one atomic bool (relaxed: a span that races with a Profile's start
// or stop is simply not recorded) and its destructor tests an integer; nothing is allocated. On,
// begin_span takes its thread's buffer mutex (only Profile::stop contends for it), copies the name
// and the shapes and reads the steady clock; end_span reads the clock again. Each slot carries the
// Profile's generation in its upper 32 bits, so a span begun under one Profile and ended under the
// next is dropped rather than written into the wrong buffer. docs/profiling.md gives the measured
// cost of both.
#include <leangrad/core/profiler.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/nvtx.h>

namespace leangrad::profiler {

const char* category_name(Category category) {
  switch (category) {
    case Category::Op:
      return "op";
    case Category::Backward:
      return "backward";
    case Category::Optimizer:
      return "optimizer";
    case Category::DataLoader:
      return "dataloader";
    case Category::Copy:
      return "copy";
    case Category::Collective:
      return "collective";
    case Category::User:
      return "user";
  }
  return "?";
}

namespace detail {

std::atomic<bool> g_recording{false};

void SpanInputs::add(const Tensor& t) {
  if (!t.defined()) return;
  on_cuda = on_cuda || t.device().is_cuda();
  std::ostringstream text;
  text << (shapes.empty() ? "" : ", ") << t.shape();
  shapes += text.str();
}

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;

// A span while its thread's buffer holds it; the events are made only for CUDA spans.
struct PendingSpan {
  SpanRecord record;
  bool finished = false;
  cuda::Stream stream;  // CUDA spans: where both events are recorded
  std::unique_ptr<cuda::Event> device_start;
  std::unique_ptr<cuda::Event> device_end;
};

struct ThreadBuffer {
  std::mutex mutex;
  std::uint32_t generation = 0;  // of the Profile the spans belong to
  std::uint32_t thread = 0;
  std::vector<PendingSpan> spans;
};

// What the running Profile shares with the recording threads.
struct Session {
  std::mutex mutex;  // guards buffers and next_thread
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::atomic<std::uint32_t> generation{0};
  std::uint32_t next_thread = 0;
  Clock::time_point start;
  bool record_shapes = true;
  bool cuda_events = false;
  bool active = false;                         // a Profile exists (one at a time)
  std::unique_ptr<cuda::Event> device_origin;  // recorded when the Profile started
};

Session& session() {
  static Session* s = new Session();  // never destroyed: threads may record during exit
  return *s;
}

ThreadBuffer& this_thread_buffer() {
  thread_local std::shared_ptr<ThreadBuffer> buffer = [] {
    auto made = std::make_shared<ThreadBuffer>();
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.buffers.push_back(made);
    return made;
  }();
  return *buffer;
}

std::int64_t since_start_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - session().start).count();
}

}  // namespace

namespace detail {

std::int64_t begin_span(const char* name, Category category, SpanInputs* inputs) {
  Session& s = session();
  ThreadBuffer& buffer = this_thread_buffer();
  std::lock_guard<std::mutex> lock(buffer.mutex);
  // Acquire: the Profile's settings and generation, written before it set the flag, are visible.
  if (!g_recording.load(std::memory_order_acquire)) return -1;
  const std::uint32_t generation = s.generation.load(std::memory_order_acquire);
  if (buffer.generation != generation) {  // this thread's first span of this Profile
    buffer.spans.clear();
    buffer.generation = generation;
    std::lock_guard<std::mutex> session_lock(s.mutex);
    buffer.thread = s.next_thread++;
  }
  PendingSpan& span = buffer.spans.emplace_back();
  span.record.name = name;
  span.record.category = category;
  span.record.thread = buffer.thread;
  if (inputs != nullptr && s.record_shapes) span.record.input_shapes = std::move(inputs->shapes);
  if (inputs != nullptr && inputs->on_cuda && s.cuda_events) {
    span.stream = cuda::current_stream();
    span.record.stream = static_cast<std::int64_t>(span.stream.id());
    span.device_start = std::make_unique<cuda::Event>();
    span.device_start->record(span.stream);
  }
  nvtx::range_push(name);
  span.record.start_ns = since_start_ns(Clock::now());
  return (static_cast<std::int64_t>(generation) << 32) |
         static_cast<std::int64_t>(buffer.spans.size() - 1);
}

void end_span(std::int64_t slot) noexcept {
  const Clock::time_point now = Clock::now();
  nvtx::range_pop();
  ThreadBuffer& buffer = this_thread_buffer();
  std::lock_guard<std::mutex> lock(buffer.mutex);
  const auto generation = static_cast<std::uint32_t>(slot >> 32);
  const auto index = static_cast<std::size_t>(slot & 0xffffffff);
  if (buffer.generation != generation || index >= buffer.spans.size()) return;
  PendingSpan& span = buffer.spans[index];
  span.record.end_ns = since_start_ns(now);
  span.finished = true;
  if (span.device_start) {
    try {
      span.device_end = std::make_unique<cuda::Event>();
      span.device_end->record(span.stream);
    } catch (...) {  // a span's end must not throw: its device time is then unknown
      span.device_end.reset();
    }
  }
}

}  // namespace detail

Profile::Profile(ProfileOptions options) : options_(options) {
  Session& s = session();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    LG_CHECK(!s.active, "profiler::Profile: another Profile is recording (one at a time)");
    s.active = true;
    s.next_thread = 0;
    s.record_shapes = options_.record_shapes();
    s.cuda_events = options_.cuda_events() && cuda::is_available();
    s.device_origin.reset();
    if (s.cuda_events) {
      cuda::synchronize();  // the device idle: the origin event marks "now" on its clock
      s.device_origin = std::make_unique<cuda::Event>();
      s.device_origin->record(cuda::Stream::default_stream());
    }
    s.start = Clock::now();
  }
  s.generation.fetch_add(1, std::memory_order_release);
  detail::g_recording.store(true, std::memory_order_release);
}

Profile::~Profile() {
  try {
    stop();
  } catch (...) {  // destructors never throw; an explicit stop() reports the error
  }
}

void Profile::stop() {
  if (stopped_) return;
  stopped_ = true;
  detail::g_recording.store(false, std::memory_order_release);
  Session& s = session();
  // The session is free again however this ends: a failure below must not leave every later
  // Profile of the process refused as "another Profile is recording".
  struct Release {
    Session& s;
    ~Release() {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.device_origin.reset();
      s.active = false;
    }
  } release{s};
  if (s.cuda_events) cuda::synchronize();
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    buffers = s.buffers;
  }
  const std::uint32_t generation = s.generation.load();
  for (const std::shared_ptr<ThreadBuffer>& buffer : buffers) {
    std::lock_guard<std::mutex> lock(buffer->mutex);
    if (buffer->generation != generation) continue;
    for (PendingSpan& span : buffer->spans) {
      if (!span.finished) continue;  // still open when the Profile stopped
      if (span.device_start && span.device_end && s.device_origin) {
        try {
          const double start_ms = s.device_origin->elapsed_ms(*span.device_start);
          const double end_ms = s.device_origin->elapsed_ms(*span.device_end);
          span.record.device_start_ns = std::llround(1e6 * start_ms);
          span.record.device_end_ns = std::llround(1e6 * end_ms);
        } catch (const std::exception&) {
          // Events the origin cannot be timed against (another GPU's: the origin is on the
          // device current at the start): the span keeps its CPU time only.
        }
      }
      spans_.push_back(std::move(span.record));
    }
    buffer->spans.clear();
    buffer->generation = 0;  // a late end_span of this Profile finds nothing to write
  }
  std::stable_sort(spans_.begin(), spans_.end(), [](const SpanRecord& a, const SpanRecord& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;  // a parent before the child that starts with it
  });
}

const std::vector<SpanRecord>& Profile::spans() {
  stop();
  return spans_;
}

namespace {

// Nanoseconds as the trace's microseconds, exactly (three decimals).
nlohmann::json microseconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

}  // namespace

std::string Profile::chrome_trace() {
  stop();
  constexpr int kCpuPid = 1, kCudaPid = 2;
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", kCpuPid},
                    {"args", {{"name", "CPU threads"}}}});
  std::map<std::uint32_t, bool> threads;
  std::map<std::int64_t, bool> streams;
  for (const SpanRecord& span : spans_) {
    threads[span.thread] = true;
    nlohmann::json event = {{"name", span.name},
                            {"cat", category_name(span.category)},
                            {"ph", "X"},
                            {"ts", microseconds(span.start_ns)},
                            {"dur", microseconds(span.duration_ns())},
                            {"pid", kCpuPid},
                            {"tid", span.thread}};
    if (!span.input_shapes.empty()) event["args"] = {{"input_shapes", span.input_shapes}};
    events.push_back(std::move(event));
    if (span.device_start_ns >= 0) {
      streams[span.stream] = true;
      events.push_back({{"name", span.name},
                        {"cat", "cuda"},
                        {"ph", "X"},
                        {"ts", microseconds(span.device_start_ns)},
                        {"dur", microseconds(span.device_end_ns - span.device_start_ns)},
                        {"pid", kCudaPid},
                        {"tid", span.stream}});
    }
  }
  for (const auto& [thread, _] : threads) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", kCpuPid},
                      {"tid", thread},
                      {"args", {{"name", "CPU thread " + std::to_string(thread)}}}});
  }
  if (!streams.empty()) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", kCudaPid},
                      {"args", {{"name", "CUDA device time"}}}});
    for (const auto& [stream, _] : streams) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", kCudaPid},
                        {"tid", stream},
                        {"args", {{"name", "CUDA stream " + std::to_string(stream)}}}});
    }
  }
  // A span's name is the program's (any bytes): what is not UTF-8 becomes U+FFFD, as JSON must be
  // UTF-8 (dump() would throw on it and lose the whole trace).
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(
             -1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

namespace {

// At most the first `width` bytes of `name`, never ending inside a UTF-8 character (a cut there
// would print as a broken character in the table's name column).
std::string cut_to_width(const std::string& name, std::size_t width) {
  if (name.size() <= width) return name;
  std::size_t end = width;
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80)
    --end;  // name[end] continues a character that starts before it: leave that one out too
  return name.substr(0, end);
}

}  // namespace

std::string Profile::table(std::size_t top) {
  stop();
  struct Row {
    std::string name;
    Category category = Category::Op;
    std::int64_t calls = 0;
    std::int64_t total_ns = 0;
    std::int64_t device_ns = 0;
  };
  std::map<std::pair<std::string, Category>, Row> rows;
  std::int64_t first_ns = spans_.empty() ? 0 : spans_.front().start_ns, last_ns = first_ns;
  for (const SpanRecord& span : spans_) {
    Row& row = rows[{span.name, span.category}];
    row.name = span.name;
    row.category = span.category;
    ++row.calls;
    row.total_ns += span.duration_ns();
    if (span.device_start_ns >= 0) row.device_ns += span.device_end_ns - span.device_start_ns;
    first_ns = std::min(first_ns, span.start_ns);
    last_ns = std::max(last_ns, span.end_ns);
  }
  std::vector<Row> sorted;
  for (auto& [key, row] : rows)
    sorted.push_back(row);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Row& a, const Row& b) { return a.total_ns > b.total_ns; });
  if (sorted.size() > top) sorted.resize(top);
  const double wall_ns = static_cast<double>(std::max<std::int64_t>(last_ns - first_ns, 1));
  const bool device =
      std::any_of(sorted.begin(), sorted.end(), [](const Row& r) { return r.device_ns > 0; });
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-28s %-10s %8s %11s %10s %7s%s\n", "name", "category",
                "calls", "total ms", "mean us", "% time", device ? "  device ms" : "");
  out += line;
  for (const Row& r : sorted) {
    std::snprintf(line, sizeof(line), "%-28s %-10s %8lld %11.3f %10.2f %6.1f%%",
                  cut_to_width(r.name, 28).c_str(), category_name(r.category),
                  static_cast<long long>(r.calls), static_cast<double>(r.total_ns) / 1e6,
                  static_cast<double>(r.total_ns) / 1e3 / static_cast<double>(r.calls),
                  100.0 * static_cast<double>(r.total_ns) / wall_ns);
    out += line;
    if (device) {
      std::snprintf(line, sizeof(line), " %10.3f", static_cast<double>(r.device_ns) / 1e6);
      out += line;
    }
    out += "\n";
  }
  std::snprintf(line, sizeof(line),
                "(%zu spans over %.3f ms; nested spans count in their parents too)\n",
                spans_.size(), wall_ns / 1e6);
  out += line;
  return out;
}

}  // namespace leangrad::profiler
