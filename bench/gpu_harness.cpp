// The GPU benchmark harness (bench/gpu_harness.h): the device-limit table, the CPU check, the
// L2-flushed event timing and the one table format, console and markdown. Uses only leangrad's
// public API (core/cuda.h device properties, events and streams, tensors for the flush buffer).
//
// Note [Device limits]
//   The fractions in every table are of these numbers (dense: no 2:4 sparsity), looked up by the
//   words of the runtime's device name:
//     device      HBM TB/s   f32   tf32  bf16  f16  TFLOP/s   source
//     H100 SXM    3.35       67    495   989   989            vendor datasheet (H100)
//     H100 PCIe   2.0        51    378   756   756            vendor datasheet (H100), 114 SMs
//     H100 NVL    3.9        60    418   835   835            vendor datasheet (H100)
//     H200 SXM    4.8        67    495   989   989            vendor datasheet (H200)
//     H200 NVL    4.8        60    418   835   835            vendor datasheet (H200)
//   The datasheets quote tensor-core rates "with sparsity"; the dense rates above are half of
//   those (H100 SXM bf16: 1979 / 2 = 989). f32 is the CUDA-core (non-tensor) rate.
//   Any other device: HBM bandwidth = 2 (double data rate) x memory clock x bus width, from
//   cudaDevAttrMemoryClockRate (still exposed by CUDA 13's cudaDeviceGetAttribute, though
//   cudaDeviceProp lost its memoryClockRate field) and cudaDevAttrGlobalMemoryBusWidth, or
//   "unknown" when the clock reads 0; TFLOP/s unknown (fraction printed as "-"). For a known
//   device the computed bandwidth is printed beside the table's, as a sanity check.
#include "bench/gpu_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>

namespace leangrad::bench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// ---- Note [Device limits] --------------------------------------------------------------------

struct KnownDevice {
  const char* model;    // a word of the device name ("H100")
  const char* variant;  // another word that must be present ("PCIe"), or "" for any
  int sm_count;         // the SM count that must match, or 0 for any
  const char* label;
  double hbm_tb_per_s;
  double tflops_f32, tflops_tf32, tflops_bf16, tflops_f16;  // dense
};

// Most specific first: the first entry whose words (and SM count) match is taken.
constexpr KnownDevice kKnownDevices[] = {
    {"H100", "PCIe", 0, "H100 PCIe", 2.0, 51, 378, 756, 756},
    {"H100", "NVL", 0, "H100 NVL", 3.9, 60, 418, 835, 835},
    {"H100", "", 114, "H100 PCIe", 2.0, 51, 378, 756, 756},  // a PCIe board named otherwise
    {"H100", "", 0, "H100 SXM", 3.35, 67, 495, 989, 989},
    {"H200", "NVL", 0, "H200 NVL", 4.8, 60, 418, 835, 835},
    {"H200", "", 0, "H200 SXM", 4.8, 67, 495, 989, 989},
};

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  std::string w;
  while (words >> w)
    if (w == word) return true;
  return false;
}

const KnownDevice* find_known_device(const DeviceProperties& p) {
  for (const KnownDevice& d : kKnownDevices) {
    if (!has_word(p.name, d.model)) continue;
    if (*d.variant != '\0' && !has_word(p.name, d.variant)) continue;
    if (d.sm_count != 0 && d.sm_count != p.sm_count) continue;
    return &d;
  }
  return nullptr;
}

// 2 transfers per clock (double data rate) x clock x bus width; 0 when the clock is unknown.
double bandwidth_from_clock(const DeviceProperties& p) {
  return 2.0 * static_cast<double>(p.memory_clock_khz) * 1e3 * p.memory_bus_bits / 8.0;
}

// ---- Table cells -----------------------------------------------------------------------------

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The cells of a row, shared by the console and the markdown table.
struct Cells {
  std::string median_us, min_us, achieved, fraction, max_abs_diff, relative_diff, check;
};

Cells cells_of(const Row& row, const DeviceDescription& device) {
  Cells c{"-", "-", "-", "-", "-", "-", "-"};
  if (row.check.checked) {
    c.max_abs_diff = format("%.2e", row.check.max_abs_diff);
    c.relative_diff = format("%.2e", row.check.relative_diff());
    c.check = row.check.passed() ? "ok" : format("FAILED (tol %.0e)", row.check.tolerance);
  }
  if (row.timing.runs == 0) return c;
  c.median_us = format("%.2f", row.timing.median_us);
  c.min_us = format("%.2f", row.timing.min_us);
  if (row.work.limit == Limit::None || row.work.amount <= 0) return c;
  const double per_second = row.work.amount / (row.timing.median_us * 1e-6);
  c.achieved = row.work.is_bytes() ? format("%.1f GB/s", per_second * 1e-9)
                                   : format("%.1f TFLOP/s", per_second * 1e-12);
  const double limit = device.limit(row.work.limit);
  if (limit > 0)
    c.fraction = format("%.1f%% %s", 100.0 * per_second / limit, limit_name(row.work.limit));
  return c;
}

constexpr const char* kConsoleRowFormat = "%-48s %10s %10s %15s %11s %10s %10s  %s%s%s\n";

}  // namespace

// ---- The device ------------------------------------------------------------------------------

const char* limit_name(Limit limit) {
  switch (limit) {
    case Limit::None:
      return "";
    case Limit::HbmBandwidth:
      return "HBM";
    case Limit::F32:
      return "f32";
    case Limit::TF32:
      return "tf32";
    case Limit::BF16:
      return "bf16";
    case Limit::F16:
      return "f16";
  }
  return "?";
}

double DeviceDescription::limit(Limit which) const {
  switch (which) {
    case Limit::None:
      return 0;
    case Limit::HbmBandwidth:
      return hbm_bytes_per_second;
    case Limit::F32:
      return dense_tflops_f32 * 1e12;
    case Limit::TF32:
      return dense_tflops_tf32 * 1e12;
    case Limit::BF16:
      return dense_tflops_bf16 * 1e12;
    case Limit::F16:
      return dense_tflops_f16 * 1e12;
  }
  return 0;
}

std::vector<std::string> DeviceDescription::summary() const {
  const DeviceProperties& p = properties;
  std::vector<std::string> lines;
  lines.push_back(format("device: %s (sm_%d%d), %d SMs, L2 %.1f MiB, %d-bit memory bus, %.1f GiB",
                         p.name.c_str(), p.compute_capability_major, p.compute_capability_minor,
                         p.sm_count, static_cast<double>(p.l2_bytes) / kMiB, p.memory_bus_bits,
                         static_cast<double>(p.global_memory_bytes) / kGiB));
  lines.push_back(hbm_bytes_per_second > 0
                      ? format("HBM bandwidth: %.2f TB/s (%s)", hbm_bytes_per_second * 1e-12,
                               hbm_source.c_str())
                      : "HBM bandwidth: unknown (" + hbm_source + ")");
  lines.push_back(dense_tflops_f32 > 0
                      ? format("dense TFLOP/s: f32 %.0f, tf32 %.0f, bf16 %.0f, f16 %.0f (%s)",
                               dense_tflops_f32, dense_tflops_tf32, dense_tflops_bf16,
                               dense_tflops_f16, tflops_source.c_str())
                      : "dense TFLOP/s: unknown (" + tflops_source + ")");
  return lines;
}

DeviceDescription describe_device() {
  DeviceDescription d;
  d.properties = cuda::get_device_properties();
  const double from_clock = bandwidth_from_clock(d.properties);
  const KnownDevice* known = find_known_device(d.properties);
  if (known != nullptr) {
    d.hbm_bytes_per_second = known->hbm_tb_per_s * 1e12;
    d.hbm_source = std::string("vendor datasheet, ") + known->label;
    if (from_clock > 0)
      d.hbm_source += format("; memory clock x bus width gives %.2f TB/s", from_clock * 1e-12);
    d.dense_tflops_f32 = known->tflops_f32;
    d.dense_tflops_tf32 = known->tflops_tf32;
    d.dense_tflops_bf16 = known->tflops_bf16;
    d.dense_tflops_f16 = known->tflops_f16;
    d.tflops_source = std::string("vendor datasheet, ") + known->label;
  } else {
    d.hbm_bytes_per_second = from_clock;
    d.hbm_source = from_clock > 0 ? "2 x memory clock x bus width"
                                  : "not in bench/gpu_harness.cpp's table, no memory clock";
    d.tflops_source = "not in bench/gpu_harness.cpp's table";
  }
  return d;
}

// ---- Checks ----------------------------------------------------------------------------------

double Check::relative_diff() const {
  if (max_abs_diff == 0) return 0;
  return max_abs_diff / std::max(max_abs_ref, 1e-30);
}

bool Check::passed() const {
  if (!checked) return true;
  const double r = relative_diff();
  return !std::isnan(r) && r <= tolerance;
}

Check check_close(const std::vector<Tensor>& results, const std::vector<Tensor>& references,
                  double tolerance) {
  LG_CHECK(results.size() == references.size(), "check_close: ", results.size(), " results but ",
           references.size(), " references");
  Check worst;
  worst.checked = true;
  worst.tolerance = tolerance;
  for (std::size_t k = 0; k < results.size(); ++k) {
    LG_CHECK(results[k].shape() == references[k].shape(), "check_close: result ", k, " has shape ",
             results[k].shape(), ", its reference ", references[k].shape());
    const Tensor a = results[k].cpu().to(kFloat64).contiguous();
    const Tensor b = references[k].cpu().to(kFloat64).contiguous();
    const double* pa = a.data_ptr<double>();
    const double* pb = b.data_ptr<double>();
    Check c;
    c.checked = true;
    c.tolerance = tolerance;
    for (std::int64_t i = 0; i < a.numel(); ++i) {
      // A NaN on one side only is an infinite difference; NaN on both sides agrees.
      const bool nan_a = std::isnan(pa[i]), nan_b = std::isnan(pb[i]);
      const double diff =
          nan_a || nan_b ? (nan_a == nan_b ? 0.0 : kInfinity) : std::fabs(pa[i] - pb[i]);
      c.max_abs_diff = std::max(c.max_abs_diff, diff);
      if (!nan_b) c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(pb[i]));
    }
    if (k == 0 || c.relative_diff() > worst.relative_diff()) {
      worst.max_abs_diff = c.max_abs_diff;
      worst.max_abs_ref = c.max_abs_ref;
    }
  }
  return worst;
}

Check check_close(const Tensor& result, const Tensor& reference, double tolerance) {
  return check_close(std::vector<Tensor>{result}, std::vector<Tensor>{reference}, tolerance);
}

// ---- Rows ------------------------------------------------------------------------------------

std::string format(const char* fmt, ...) {
  std::va_list args;
  va_start(args, fmt);
  std::va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(static_cast<std::size_t>(std::max(n, 0)), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (std::size_t d = 0; d < shape.size(); ++d)
    s += (d > 0 ? ", " : "") + std::to_string(shape[d]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// ---- Options ---------------------------------------------------------------------------------

BenchOptions parse_bench_options(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool takes_value = arg == "--warmup" || arg == "--runs" || arg == "--markdown";
    LG_CHECK(!takes_value || i + 1 < argc, arg, " needs a value");
    if (arg == "--warmup" || arg == "--runs") {
      const int value = std::atoi(argv[++i]);
      const int least = arg == "--runs" ? 1 : 0;
      LG_CHECK(value >= least, arg, ": expected a count of at least ", least, ", got ", argv[i]);
      int& count = arg == "--runs" ? options.timing.timed_runs : options.timing.warmup_runs;
      count = value;
    } else if (arg == "--markdown") {
      options.markdown_path = argv[++i];
    } else {
      LG_CHECK(arg.rfind("--", 0) != 0, "unknown option ", arg);
      options.arguments.push_back(arg);
    }
  }
  return options;
}

// ---- The harness -----------------------------------------------------------------------------

GpuBench::GpuBench(std::string program, BenchOptions options)
    : program_(std::move(program)), options_(std::move(options)), device_(describe_device()) {
  for (const std::string& line : device_.summary())
    std::printf("%s\n", line.c_str());
  const TimingOptions& t = options_.timing;
  notes_.push_back(
      format("timing: %d warm-up + %d timed runs per row (median and min; rates from "
             "the median), L2 flushed before each run (%.0f MiB written) unless noted",
             t.warmup_runs, t.timed_runs, static_cast<double>(flush_bytes()) / kMiB));
  std::printf("%s\n", notes_.back().c_str());
}

void GpuBench::note(const std::string& line) {
  notes_.push_back(line);
  std::printf("%s\n", line.c_str());
}

// Note [Row protocol]: 2 x L2 of writes evicts whatever a run left in L2.
std::int64_t GpuBench::flush_bytes() const {
  return std::max<std::int64_t>(2 * device_.properties.l2_bytes, 1);
}

void GpuBench::flush_l2() {
  if (!flush_buffer_.defined())
    flush_buffer_ = empty({flush_bytes()}, TensorOptions(kUInt8).device(Device::cuda()));
  flush_buffer_.zero_();
}

Timing GpuBench::time(const std::function<void()>& fn, const TimingOptions& timing) {
  for (int i = 0; i < timing.warmup_runs; ++i)
    fn();
  std::vector<cuda::Event> starts(static_cast<std::size_t>(timing.timed_runs));
  std::vector<cuda::Event> ends(static_cast<std::size_t>(timing.timed_runs));
  for (int i = 0; i < timing.timed_runs; ++i) {
    if (timing.flush_l2) flush_l2();
    starts[i].record();
    fn();
    ends[i].record();
  }
  std::vector<double> us;
  for (int i = 0; i < timing.timed_runs; ++i) {
    ends[i].synchronize();
    us.push_back(1e3 * starts[i].elapsed_ms(ends[i]));
  }
  return Timing{median_of(us), *std::min_element(us.begin(), us.end()), timing.timed_runs};
}

void GpuBench::run(const std::string& name, const Work& work, const Check& check,
                   const std::function<void()>& fn, std::string note) {
  run(name, work, check, fn, options_.timing, std::move(note));
}

void GpuBench::run(const std::string& name, const Work& work, const Check& check,
                   const std::function<void()>& fn, const TimingOptions& timing, std::string note) {
  Row row = measure(name, work, check, fn, timing);
  row.note = std::move(note);
  add_row(std::move(row));
}

Row GpuBench::measure(const std::string& name, const Work& work, const Check& check,
                      const std::function<void()>& fn, const TimingOptions& timing) {
  Row row{name, Timing{}, work, check, ""};
  if (check.passed()) row.timing = time(fn, timing);
  return row;
}

void GpuBench::add_row(Row row) {
  if (!header_printed_) {
    std::printf(kConsoleRowFormat, "kernel", "median us", "min us", "achieved", "of limit",
                "max|diff|", "/max|ref|", "check", "", "");
    header_printed_ = true;
  }
  const Cells c = cells_of(row, device_);
  std::printf(kConsoleRowFormat, row.name.c_str(), c.median_us.c_str(), c.min_us.c_str(),
              c.achieved.c_str(), c.fraction.c_str(), c.max_abs_diff.c_str(),
              c.relative_diff.c_str(), c.check.c_str(), row.note.empty() ? "" : "  ",
              row.note.c_str());
  std::fflush(stdout);
  failed_ = failed_ || !row.check.passed();
  rows_.push_back(std::move(row));
}

void GpuBench::write_markdown() const {
  if (options_.markdown_path.empty()) return;
  std::ofstream out(options_.markdown_path, std::ios::app);
  LG_CHECK(out.good(), program_, ": cannot open ", options_.markdown_path, " for appending");
  out << "\n## " << program_ << "\n\n";
  for (const std::string& line : device_.summary())
    out << "- " << line << "\n";
  for (const std::string& line : notes_)
    out << "- " << line << "\n";
  out << "\n| kernel | median µs | min µs | achieved | of limit | max\\|diff\\| | /max\\|ref\\| "
         "| check | note |\n";
  out << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n";
  for (const Row& row : rows_) {
    const Cells c = cells_of(row, device_);
    out << "| " << row.name << " | " << c.median_us << " | " << c.min_us << " | " << c.achieved
        << " | " << c.fraction << " | " << c.max_abs_diff << " | " << c.relative_diff << " | "
        << c.check << " | " << row.note << " |\n";
  }
  std::printf("appended the table to %s\n", options_.markdown_path.c_str());
}

int gpu_main(int argc, char** argv, const std::string& program,
             const std::function<void(GpuBench&)>& body) {
  BenchOptions options;
  try {
    options = parse_bench_options(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\nusage: %s [--warmup N] [--runs N] [--markdown PATH] [args]\n",
                 program.c_str(), e.what(), program.c_str());
    return 2;
  }
  if (!cuda::is_available()) {
    std::printf("no CUDA device: skipped\n");
    return 0;
  }
  try {
    GpuBench bench(program, std::move(options));
    body(bench);
    bench.write_markdown();
    if (bench.any_failed()) std::printf("%s: some rows FAILED their check\n", program.c_str());
    return bench.any_failed() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return 1;
  }
}

}  // namespace leangrad::bench
