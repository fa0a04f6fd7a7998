// The profiler: spans of work (an op, a backward node, an optimizer step, a DataLoader wait, an
// offload copy, a collective) recorded per thread while a profiler::Profile is alive, then written
// as Chrome trace JSON (Perfetto and chrome://tracing open it) or as a table of the top spans.
// It lives in core/ so every layer can mark its spans; docs/profiling.md shows it in use.
//
// Policy (see Note [Profiler cost] in core/profiler.cpp):
// - Off (no Profile alive), a span costs one relaxed atomic load and a not-taken branch.
// - On, a span appends one record to its thread's buffer: its name, category, start and end on
//   the steady clock, and for ops the input shapes. Spans nest per thread as the calls do.
// - On CUDA, a span over CUDA tensors also records two CUDA events on the current stream; against
//   an event recorded when the Profile started they give the device's time range of the span's
//   kernels, drawn on a track per stream. Built with CUDA, every span is an NVTX range as well.
// - One Profile at a time. Spans begun before it started are not recorded; spans still open when
//   it stops are dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>

namespace leangrad::profiler {

// What a span is; each is a row of the table and a colour in the trace.
enum class Category : std::uint8_t {
  Op,          // a public function (leangrad::add, conv2d, ...): LG_PROFILE_OP
  Backward,    // one autograd node run by the engine (MulBackward, ...)
  Optimizer,   // Optimizer::step
  DataLoader,  // the training thread waiting for the next batch
  Copy,        // an offload copy between the device and pinned host memory
  Collective,  // an all-reduce, broadcast, ... of a process group
  User,        // a program's own span (leangrad-train's "train_step")
};
const char* category_name(Category category);

namespace detail {

extern std::atomic<bool> g_recording;

// What a span's inputs say about it: their shapes ("[64, 784], [784, 128]") and the CUDA stream
// its kernels go to, when one of them is a CUDA tensor.
struct SpanInputs {
  std::string shapes;
  bool on_cuda = false;
  void add(const Tensor& t);
  void add(const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors)
      add(t);
  }
  template <typename T>
  void add(const T& /*not a tensor*/) {}
};

// The begin and end of a span; begin returns its slot in the thread's buffer (-1: not recorded).
std::int64_t begin_span(const char* name, Category category, SpanInputs* inputs);
void end_span(std::int64_t slot) noexcept;

}  // namespace detail

// True while a Profile records.
inline bool is_recording() noexcept {
  return detail::g_recording.load(std::memory_order_relaxed);
}

// One span, from construction to destruction.
class Span {
 public:
  Span(const char* name, Category category) {
    if (is_recording()) [[unlikely]]
      slot_ = detail::begin_span(name, category, nullptr);
  }
  // An op over `inputs` (tensors and vectors of tensors are described, other arguments skipped).
  template <typename... Inputs>
  Span(const char* name, Category category, const Inputs&... inputs) {
    if (is_recording()) [[unlikely]] {
      detail::SpanInputs described;
      (described.add(inputs), ...);
      slot_ = detail::begin_span(name, category, &described);
    }
  }
  ~Span() {
    if (slot_ >= 0) [[unlikely]]
      detail::end_span(slot_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  std::int64_t slot_ = -1;
};

// The first line of a public function: `LG_PROFILE_OP(a, b);` names the span after the function
// (__func__: "add", "conv2d") and records the shapes of its tensor arguments.
#define LG_PROFILE_OP(...)                                                                  \
  ::leangrad::profiler::Span lg_profile_span_(__func__, ::leangrad::profiler::Category::Op, \
                                              __VA_ARGS__)

// One recorded span. Times are nanoseconds since the Profile started.
struct SpanRecord {
  std::string name;
  Category category = Category::Op;
  std::uint32_t thread =
      0;  // 0: the first thread that recorded, then 1, 2, ... in order of arrival
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string input_shapes;  // ops: "[64, 784], [784, 128]"; empty otherwise
  // CUDA spans: the stream (Stream::id) and the device's time range of its work, against the
  // event recorded when the Profile started; -1 when the span ran no CUDA work.
  std::int64_t stream = -1;
  std::int64_t device_start_ns = -1;
  std::int64_t device_end_ns = -1;
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

class ProfileOptions {
 public:
  // Record the shapes of ops' input tensors (a string per op: the largest part of the cost).
  LG_ARG(bool, record_shapes) = true;
  // On CUDA: time each CUDA span's device work with a pair of CUDA events.
  LG_ARG(bool, cuda_events) = true;
};

// Records spans from construction until stop() or destruction (RAII, as a guard):
//   { profiler::Profile profile; run_steps(); profile.stop();
//     write_file(path, profile.chrome_trace()); std::cout << profile.table(20); }
class Profile {
 public:
  explicit Profile(ProfileOptions options = {});
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  // Stops recording and gathers every thread's spans (on CUDA, after waiting for the device).
  void stop();
  // The finished spans, sorted by thread then start (stops first if still recording).
  const std::vector<SpanRecord>& spans();
  // Chrome trace event format: one "X" event per span, a track per CPU thread (pid 1) and, on
  // CUDA, per stream (pid 2); each op's args hold its input shapes.
  std::string chrome_trace();
  // The `top` span names with the most total CPU time: calls, total, mean, share of the profiled
  // time (spans nest, so shares can add up to more than 100%) and, on CUDA, device time.
  std::string table(std::size_t top = 20);

 private:
  ProfileOptions options_;
  bool stopped_ = false;
  std::vector<SpanRecord> spans_;
};

}  // namespace leangrad::profiler
