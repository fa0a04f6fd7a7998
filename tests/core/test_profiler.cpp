// The profiler (core/profiler.h) on a known model: a two-layer MLP's forward, loss, backward and
// SGD step under a profiler::Profile.
// - The Chrome trace is valid JSON in the trace event format; on every track (pid, tid) the spans
//   nest properly and never partly overlap; the expected ops, backward nodes and optimizer step
//   are there (linear's matmuls inside it), each op with its input shapes.
// - Nothing is recorded outside a Profile, one Profile at a time, a span open when the Profile
//   stops is dropped; a span of any name (quotes, control characters, not UTF-8) gives valid
//   JSON; each thread gets its own track (DataLoader workers included); a Profile stopped while
//   workers record gathers only finished spans.
// - The table counts calls the way the spans do.
// - On CUDA, every op over CUDA tensors has a second span, its device time, on its stream's track
//   (pid 2), nested as the host spans are. SKIPPED without a GPU.
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include <leangrad/core/cuda.h>
#include <leangrad/core/profiler.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace leangrad;
using profiler::Category;

// One training step of a 4 -> 8 -> 3 MLP on a batch of 2.
void mlp_step() {
  manual_seed(3);
  nn::Sequential model(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  const Tensor x = randn({2, 4});
  const Tensor target = tensor(std::vector<std::int64_t>{0, 2});
  sgd.zero_grad();
  const Tensor loss = cross_entropy(model->forward(x), target);
  loss.backward();
  sgd.step();
}

struct TraceEvent {
  std::string name;
  std::string cat;
  double ts = 0;
  double dur = 0;
  int pid = 0;
  std::int64_t tid = 0;
  nlohmann::json args;
};

std::vector<TraceEvent> parse_trace(const std::string& text) {
  const nlohmann::json trace = nlohmann::json::parse(text);  // throws unless valid JSON
  EXPECT_TRUE(trace.contains("traceEvents"));
  std::vector<TraceEvent> events;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "M") << e.dump();
    if (ph != "X") continue;
    TraceEvent t;
    t.name = e.at("name");
    t.cat = e.at("cat");
    t.ts = e.at("ts");
    t.dur = e.at("dur");
    t.pid = e.at("pid");
    t.tid = e.at("tid");
    if (e.contains("args")) t.args = e.at("args");
    EXPECT_GE(t.dur, 0.0) << t.name;
    events.push_back(t);
  }
  return events;
}

// On each track, every two spans are either disjoint or one inside the other: walking the spans by
// start (the longer first on a tie) with a stack of the open ones, a span must end within the
// innermost span still open when it starts. Times are microseconds with nanosecond decimals.
void expect_properly_nested(const std::vector<TraceEvent>& events) {
  constexpr double kEpsilonUs = 1e-6;
  std::map<std::pair<int, std::int64_t>, std::vector<TraceEvent>> tracks;
  for (const TraceEvent& e : events)
    tracks[{e.pid, e.tid}].push_back(e);
  for (auto& [track, spans] : tracks) {
    std::stable_sort(spans.begin(), spans.end(), [](const TraceEvent& a, const TraceEvent& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    std::vector<const TraceEvent*> open;
    for (const TraceEvent& e : spans) {
      while (!open.empty() && open.back()->ts + open.back()->dur <= e.ts + kEpsilonUs)
        open.pop_back();
      if (!open.empty()) {
        const TraceEvent& parent = *open.back();
        EXPECT_LE(e.ts + e.dur, parent.ts + parent.dur + kEpsilonUs)
            << e.name << " [" << e.ts << ", +" << e.dur << "] overlaps " << parent.name << " ["
            << parent.ts << ", +" << parent.dur << "] on track " << track.second;
      }
      open.push_back(&e);
    }
  }
}

TEST(Profiler, MlpStepTraceIsValidNestedAndNamed) {
  profiler::Profile profile;
  mlp_step();
  profile.stop();
  const std::vector<TraceEvent> events = parse_trace(profile.chrome_trace());
  ASSERT_FALSE(events.empty());
  expect_properly_nested(events);

  std::multiset<std::string> ops, backward, optimizer;
  for (const TraceEvent& e : events) {
    EXPECT_EQ(e.pid, 1) << "no CUDA track on the CPU";
    if (e.cat == "op") ops.insert(e.name);
    if (e.cat == "backward") backward.insert(e.name);
    if (e.cat == "optimizer") optimizer.insert(e.name);
  }
  EXPECT_EQ(ops.count("linear"), 2u);
  EXPECT_EQ(ops.count("relu"), 1u);
  EXPECT_EQ(ops.count("cross_entropy"), 1u);
  EXPECT_EQ(optimizer.count("optimizer.step"), 1u);
  // linear is matmul(x, transpose(W)) + b (nn_functions.cpp): its nodes are those three ops'.
  EXPECT_EQ(backward.count("MatmulBackward"), 2u);
  EXPECT_EQ(backward.count("TransposeBackward"), 2u);
  EXPECT_EQ(backward.count("AddBackward"), 2u);
  EXPECT_EQ(backward.count("ReluBackward"), 1u);
  EXPECT_EQ(backward.count("CrossEntropyBackward"), 1u);
  EXPECT_EQ(backward.count("AccumulateGrad"), 4u);  // two weights, two biases
  // ... and its ops nest inside it: both forward matmuls lie within a linear span.
  int nested_matmuls = 0;
  for (const TraceEvent& m : events) {
    if (m.name != "matmul") continue;
    for (const TraceEvent& l : events) {
      if (l.name == "linear" && l.tid == m.tid && l.ts <= m.ts && m.ts + m.dur <= l.ts + l.dur)
        ++nested_matmuls;
    }
  }
  EXPECT_EQ(nested_matmuls, 2);

  // The first linear's inputs, in the order of the call: x, weight, bias.
  const auto first_linear = std::find_if(events.begin(), events.end(),
                                         [](const TraceEvent& e) { return e.name == "linear"; });
  ASSERT_NE(first_linear, events.end());
  EXPECT_EQ(first_linear->args.at("input_shapes"), "[2, 4], [8, 4], [8]");

  // The backward nodes ran inside the loss's backward(), after the forward's ops: the first
  // backward node starts after cross_entropy, the forward's last op, ended.
  double cross_entropy_end = -1, first_backward = 1e300;
  for (const TraceEvent& e : events) {
    if (e.name == "cross_entropy") cross_entropy_end = e.ts + e.dur;
    if (e.cat == "backward") first_backward = std::min(first_backward, e.ts);
  }
  ASSERT_GE(cross_entropy_end, 0) << "no cross_entropy span";
  ASSERT_LT(first_backward, 1e300) << "no backward span";
  EXPECT_GT(first_backward, cross_entropy_end);
}

TEST(Profiler, RecordsOnlyWhileAProfileRuns) {
  EXPECT_FALSE(profiler::is_recording());
  mlp_step();  // nothing to record into
  profiler::Profile profile;
  EXPECT_TRUE(profiler::is_recording());
  EXPECT_THROW(profiler::Profile second, Error);
  // On the heap, to end it at will (a std::optional<Span> drew a false -Wmaybe-uninitialized).
  auto left_open = std::make_unique<profiler::Span>("left open", Category::User);
  { const profiler::Span closed("closed", Category::User); }
  profile.stop();
  EXPECT_FALSE(profiler::is_recording());
  left_open.reset();  // ends after the stop: dropped
  { const profiler::Span after("after", Category::User); }
  const std::vector<profiler::SpanRecord>& spans = profile.spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].name, "closed");
  EXPECT_EQ(spans[0].category, Category::User);
  EXPECT_LE(spans[0].start_ns, spans[0].end_ns);

  // The next Profile starts empty and numbers its threads afresh.
  profiler::Profile next(profiler::ProfileOptions().record_shapes(false));
  add(ones({3}), ones({3}));
  const std::vector<profiler::SpanRecord>& again = next.spans();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].name, "add");
  EXPECT_EQ(again[0].thread, 0u);
  EXPECT_EQ(again[0].input_shapes, "");  // record_shapes(false)
  EXPECT_EQ(again[0].stream, -1);
}

// A program's own span may be named anything: quotes, backslashes and control characters are
// escaped, and bytes that are not UTF-8 (a Latin-1 name) become U+FFFD, so the trace stays JSON
// that a strict parser (Perfetto's) reads; the table prints the name as it was given.
TEST(Profiler, TraceOfAnyNameIsValidJson) {
  const std::string quoted = "say \"hi\" \\ tab\t bell\x07 newline\n";
  const std::string latin1 = "caf\xe9 na\xefve";
  profiler::Profile profile;
  { const profiler::Span span(quoted.c_str(), Category::User); }
  { const profiler::Span span(latin1.c_str(), Category::User); }
  profile.stop();
  std::string trace;
  ASSERT_NO_THROW(trace = profile.chrome_trace());
  std::vector<std::string> names;
  for (const TraceEvent& e : parse_trace(trace))
    names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{quoted, "caf\xef\xbf\xbd na\xef\xbf\xbdve"}));
  EXPECT_NE(profile.table(5).find("caf\xe9 na\xefve"), std::string::npos);
}

// The table's name column holds 28 bytes: a longer name is cut there, but not inside a UTF-8
// character (27 letters and a two-byte e-acute keep the 27 letters only).
TEST(Profiler, TableCutsLongNamesBetweenCharacters) {
  const std::string ascii(30, 'n');
  const std::string accented = std::string(27, 'a') + "\xc3\xa9xyz";
  profiler::Profile profile;
  { const profiler::Span span(ascii.c_str(), Category::User); }
  { const profiler::Span span(accented.c_str(), Category::User); }
  const std::string table = profile.table(5);
  EXPECT_NE(table.find("\n" + std::string(28, 'n') + " "), std::string::npos) << table;
  EXPECT_NE(table.find("\n" + std::string(27, 'a') + "  user"), std::string::npos) << table;
  EXPECT_EQ(table.find('\xc3'), std::string::npos) << "half a character: " << table;
}

TEST(Profiler, OneTrackPerThread) {
  profiler::Profile profile;
  { const profiler::Span main_span("main", Category::User); }
  std::thread worker([] { const profiler::Span span("worker", Category::User); });
  worker.join();
  // A DataLoader with two workers: the training thread waits (DataLoader.next), the workers
  // assemble the batches on their own threads.
  data::DataLoader loader(data::TensorDataset(randn({8, 1}), arange(8, kInt64)),
                          data::DataLoaderOptions().batch_size(2).num_workers(2));
  std::int64_t batches = 0;
  for (const data::Batch& batch : loader)
    batches += batch.data.size(0) > 0 ? 1 : 0;
  EXPECT_EQ(batches, 4);
  profile.stop();
  std::map<std::string, std::set<std::uint32_t>> threads_of;
  std::map<std::string, int> count;
  for (const profiler::SpanRecord& s : profile.spans()) {
    threads_of[s.name].insert(s.thread);
    ++count[s.name];
  }
  ASSERT_EQ(threads_of["main"].size(), 1u);
  ASSERT_EQ(threads_of["worker"].size(), 1u);
  EXPECT_NE(*threads_of["main"].begin(), *threads_of["worker"].begin());
  EXPECT_EQ(count["DataLoader.next"], 5);  // four batches, then the end
  EXPECT_EQ(count["DataLoader.assemble"], 4);
  EXPECT_EQ(threads_of["DataLoader.next"], threads_of["main"]);
  for (const std::uint32_t t : threads_of["DataLoader.assemble"])
    EXPECT_NE(t, *threads_of["main"].begin());
  expect_properly_nested(parse_trace(profile.chrome_trace()));
}

TEST(Profiler, StopsWhileWorkersRecord) {
  // Workers assemble batches ahead while the Profile stops and the next one starts: every span
  // gathered is finished and well formed, and spans of the first Profile do not leak into the
  // second (ThreadSanitizer runs this too: tools/sanitize.sh tsan).
  data::DataLoader loader(
      data::TensorDataset(randn({64, 4}), arange(64, kInt64)),
      data::DataLoaderOptions().batch_size(2).num_workers(3).prefetch_factor(4));
  std::optional<profiler::Profile> profile(std::in_place);
  std::int64_t batches = 0;
  std::size_t first_spans = 0;
  for (const data::Batch& batch : loader) {
    batches += batch.data.size(0) == 2 ? 1 : 0;
    if (batches == 4) {
      first_spans = profile->spans().size();  // stops with workers still assembling
      profile.reset();
      profile.emplace();
    }
  }
  EXPECT_EQ(batches, 32);
  EXPECT_GT(first_spans, 0u);
  const std::vector<profiler::SpanRecord>& spans = profile->spans();
  for (const profiler::SpanRecord& s : spans) {
    EXPECT_GE(s.start_ns, 0) << s.name;
    EXPECT_LE(s.start_ns, s.end_ns) << s.name;
  }
  EXPECT_GE(
      std::count_if(spans.begin(), spans.end(),
                    [](const profiler::SpanRecord& s) { return s.name == "DataLoader.next"; }),
      28);  // batches 5 to 32 and the end, all fetched under the second Profile
  expect_properly_nested(parse_trace(profile->chrome_trace()));
}

TEST(Profiler, CudaSpansHaveDeviceTimeOnTheirStreamTrack) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  manual_seed(3);
  nn::Sequential model(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
  model->to(Device::cuda());
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  const Tensor x = randn({2, 4}).to(Device::cuda());
  const Tensor target = tensor(std::vector<std::int64_t>{0, 2}).to(Device::cuda());
  auto step = [&] {  // only CUDA tensors: every op of the step runs kernels
    sgd.zero_grad();
    cross_entropy(model->forward(x), target).backward();
    sgd.step();
  };
  step();  // warm-up: the CUDA libraries open, the allocator fills
  profiler::Profile profile;
  step();
  profile.stop();
  const std::vector<TraceEvent> events = parse_trace(profile.chrome_trace());
  expect_properly_nested(events);  // the device tracks too
  // The ops that run kernels (views such as linear's transpose may take no device time).
  const std::set<std::string> kernel_ops{"linear", "matmul", "relu", "cross_entropy"};
  std::multiset<std::string> host_ops, device_spans;
  for (const TraceEvent& e : events) {
    if (e.pid == 1 && e.cat == "op") host_ops.insert(e.name);
    if (e.pid != 2) continue;
    EXPECT_EQ(e.cat, "cuda") << e.name;
    if (kernel_ops.count(e.name) != 0) {
      EXPECT_GT(e.dur, 0.0) << e.name << " took no device time";
    }
    device_spans.insert(e.name);
  }
  EXPECT_EQ(device_spans.count("linear"), 2u);
  EXPECT_EQ(device_spans.count("relu"), 1u);
  EXPECT_EQ(device_spans.count("cross_entropy"), 1u);
  for (const std::string& op : kernel_ops)
    EXPECT_EQ(device_spans.count(op), host_ops.count(op))
        << op << " ran on CUDA tensors: each call should have its device span";
}

TEST(Profiler, TableCountsCalls) {
  profiler::Profile profile;
  mlp_step();
  const std::string table = profile.table(50);
  // The row of linear: its name, category and 2 calls.
  const std::size_t row = table.find("\nlinear ");
  ASSERT_NE(row, std::string::npos) << table;
  const std::string line = table.substr(row + 1, table.find('\n', row + 1) - row - 1);
  std::istringstream fields(line);
  std::string name, category;
  long long calls = 0;
  fields >> name >> category >> calls;
  EXPECT_EQ(category, "op");
  EXPECT_EQ(calls, 2);
  EXPECT_NE(table.find("optimizer.step"), std::string::npos);
  // Only the top rows: the header, 3 rows and the footer.
  profiler::Profile small;
  mlp_step();
  const std::string top3 = small.table(3);
  EXPECT_EQ(std::count(top3.begin(), top3.end(), '\n'), 5);
}

}  // namespace
