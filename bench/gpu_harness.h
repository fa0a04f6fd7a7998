// The one harness of the GPU benchmark programs (bench/gpu_*.cpp, offload_mlp.cpp and the kernel
// variants in bench/variants/): it describes the device and its limits, checks each row against
// the CPU before timing it, times with CUDA events after flushing the L2, and prints every row in
// one table format (optionally also as markdown, for bench/results/). Plain C++ against
// leangrad's public headers, with no CUDA runtime call of its own.
//
// A program is a body handed to gpu_main (gpu_tanhexp_group_norm.cpp in full):
//   int main(int argc, char** argv) {
//     return bench::gpu_main(argc, argv, "gpu_example", [](bench::GpuBench& bench) {
//       const Tensor x = leangrad::randn({n}, cuda_f32);
//       const Tensor y = ops::tanhexp(x);
//       bench.run("tanhexp fwd", bench::Work::bytes(8.0 * n),
//                 bench::check_close(y, ops::tanhexp(x.cpu()), 1e-5),
//                 [&] { ops::tanhexp(x); });
//     });
//   }
//
// Note [Row protocol]
//   - Check first: the caller computes the result on the GPU and the reference on the CPU (or
//     takes a reference implementation), check_close() reports max |diff| and
//     max |diff| / max |ref| and passes when the latter is within the caller's tolerance.
//     A failed row prints FAILED and is not timed; gpu_main then returns 1.
//   - Timing: warm-up runs, then each timed run between two CUDA events on the current stream,
//     preceded (outside the events) by a write of 2 x L2 bytes, so no run finds its operands in
//     L2 (llm.c dev/cuda does the same). Median and minimum of the runs are reported; the
//     achieved rate and its fraction of the device limit use the median.
//   - Work: the bytes the op must move at least (a fraction of HBM bandwidth) or the FLOPs it
//     must compute at a precision (a fraction of that precision's dense tensor/CUDA-core rate).
//     The limits come from DeviceDescription (Note [Device limits] in gpu_harness.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/core/tensor.h>

namespace leangrad::bench {

// ---- The device ------------------------------------------------------------------------------

// What the runtime reports about the current device: leangrad's own query, since libleangrad
// holds the CUDA runtime (a build without CUDA throws, after the GPU programs have said "skipped").
using DeviceProperties = cuda::DeviceProperties;

// The hardware limit a row is quoted against.
enum class Limit { None, HbmBandwidth, F32, TF32, BF16, F16 };
const char* limit_name(Limit limit);  // "HBM", "f32", "tf32", "bf16", "f16", ""

// The device and the limits to quote fractions of. A limit of 0 is unknown.
struct DeviceDescription {
  DeviceProperties properties;
  double hbm_bytes_per_second = 0;
  std::string hbm_source;  // where the bandwidth comes from
  double dense_tflops_f32 = 0;
  double dense_tflops_tf32 = 0;
  double dense_tflops_bf16 = 0;
  double dense_tflops_f16 = 0;
  std::string tflops_source;

  // The limit in bytes/s (HbmBandwidth) or FLOP/s; 0 when unknown or Limit::None.
  double limit(Limit which) const;
  // Three lines: name and sizes, HBM bandwidth, dense TFLOP/s (each with its source).
  std::vector<std::string> summary() const;
};
DeviceDescription describe_device();  // the current CUDA device

// ---- Checks ----------------------------------------------------------------------------------

// The comparison of a GPU result with its CPU reference (Note [Row protocol]).
struct Check {
  bool checked = false;  // false: the row has no reference (printed "-")
  double max_abs_diff = 0;
  double max_abs_ref = 0;
  double tolerance = 0;  // on max_abs_diff / max_abs_ref

  double relative_diff() const;
  bool passed() const;  // an unchecked row passes; NaN fails
};

// result and reference: same shape, any device or dtype (compared in float64 on the CPU).
Check check_close(const Tensor& result, const Tensor& reference, double tolerance);
// Several outputs (a gradient list, grad_input and grad_weight): every pair compared, the worst
// max |diff| / max |ref| reported.
Check check_close(const std::vector<Tensor>& results, const std::vector<Tensor>& references,
                  double tolerance);
// For rows timed without a reference.
inline Check unchecked() {
  return Check{};
}

// ---- Rows ------------------------------------------------------------------------------------

// printf into a std::string (notes, row names with numbers).
[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);

// "(16, 128, 64, 64)", "(768,)": a shape as Python prints a tuple, so that row names match the
// bench/compare/*_torch.py scripts' (f"... {shape}").
std::string shape_tuple(const Shape& shape);

// What one call of a row moves or computes, and the limit to quote it against.
struct Work {
  double amount = 0;  // bytes or FLOPs
  Limit limit = Limit::None;

  static Work bytes(double n) { return {n, Limit::HbmBandwidth}; }
  static Work flops(double n, Limit precision) { return {n, precision}; }
  static Work none() { return {}; }
  bool is_bytes() const { return limit == Limit::HbmBandwidth; }
};

struct TimingOptions {
  int warmup_runs = 3;
  int timed_runs = 20;
  bool flush_l2 = true;  // off for end-to-end steps, whose working set dwarfs L2 anyway
};

struct Timing {
  double median_us = 0;
  double min_us = 0;
  int runs = 0;
};

struct Row {
  std::string name;
  Timing timing;  // runs == 0: not timed (a failed check)
  Work work;
  Check check;
  std::string note;  // free text after the check column (a ratio, memory figures)
};

// ---- The harness -----------------------------------------------------------------------------

struct BenchOptions {
  TimingOptions timing;
  std::string markdown_path;           // --markdown PATH: append the table there as markdown
  std::vector<std::string> arguments;  // what is left (a variant number, a size)
};

// Parses --warmup N, --runs N, --markdown PATH; throws leangrad::Error on a bad flag.
BenchOptions parse_bench_options(int argc, char** argv);

class GpuBench {
 public:
  GpuBench(std::string program, BenchOptions options);

  const DeviceDescription& device() const { return device_; }
  const BenchOptions& options() const { return options_; }

  // A line before the table (shapes, settings); also written to the markdown section.
  void note(const std::string& line);

  // Note [Row protocol]: prints FAILED when the check fails, else times fn and prints the row.
  // fn launches the work on the current stream (its host-side waits, if any, are timed too).
  void run(const std::string& name, const Work& work, const Check& check,
           const std::function<void()>& fn, std::string note = "");
  void run(const std::string& name, const Work& work, const Check& check,
           const std::function<void()>& fn, const TimingOptions& timing, std::string note = "");

  // run() without the printing: the row, timed when its check passed (for programs that print
  // rows in another order than they measure them, or add a note that needs a later row).
  Row measure(const std::string& name, const Work& work, const Check& check,
              const std::function<void()>& fn, const TimingOptions& timing);
  Row measure(const std::string& name, const Work& work, const Check& check,
              const std::function<void()>& fn) {
    return measure(name, work, check, fn, options_.timing);
  }
  // Times fn (warm-up, then each run between events, L2 flushed before each when asked).
  Timing time(const std::function<void()>& fn, const TimingOptions& timing);
  // Prints a row (the header first, once) and keeps it for the markdown table.
  void add_row(Row row);

  bool any_failed() const { return failed_; }
  // Appends the markdown section when --markdown was given.
  void write_markdown() const;

 private:
  std::int64_t flush_bytes() const;
  void flush_l2();

  std::string program_;
  BenchOptions options_;
  DeviceDescription device_;
  std::vector<std::string> notes_;
  std::vector<Row> rows_;
  Tensor flush_buffer_;  // flush_bytes() on the device, allocated by the first flush
  bool header_printed_ = false;
  bool failed_ = false;
};

// The main() of every GPU program: parses the options (bad ones: usage on stderr, returns 2),
// prints "no CUDA device: skipped" and returns 0 without a GPU, else prints the device, runs
// body, writes the markdown, and returns 1 when a row failed its check or body threw.
int gpu_main(int argc, char** argv, const std::string& program,
             const std::function<void(GpuBench&)>& body);

}  // namespace leangrad::bench
