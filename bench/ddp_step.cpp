// ddp_step: what DistributedDataParallel costs per training step, and how much of its
// all-reduce time backward hides. One rank of a job (leangrad-run starts them):
//   build/tools/leangrad-run --nproc-per-node 2 build/bench/ddp_step [steps] [batch per rank]
//                                                                    [cpu|cuda] [gloo|nccl]
// On cuda each rank uses GPU LOCAL_RANK % device count (two ranks may share one GPU with gloo,
// which stages CUDA tensors through pinned host memory; NCCL wants one GPU per rank) and a step
// ends with cuda::synchronize(), so its time is the GPU's. The backend defaults to nccl on cuda,
// gloo on cpu.
// Each rank trains leangrad-train's `cnn` (tools/train_models.h) four ways, interleaved step by
// step so that drift in the machine's load hits all alike: the plain model, DDP with the
// optimizer's default zero_grad (set_to_none: every backward copies each gradient into its
// bucket once), DDP with zero_grad(false) (gradients accumulate straight into the buckets), and
// the same with the whole model in one bucket, reduced after backward (the no-overlap baseline).
// A step is forward + backward + SGD step. Rank 0 prints median and minimum step times and, from
// each DDP step's bucket timeline (Reducer::last_step): "engine", backward up to its last gradient
// (the compute that can hide the all-reduces); "all-reduce", the worker thread busy with the
// buckets' all-reduces (waiting for the other ranks included); "hidden", the part of it before the
// last gradient (the percentage is the median step's); "end wait", from the last gradient to every
// bucket reduced (what backward's end adds). Medians over the steps.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "train_models.h"

namespace dist = leangrad::distributed;
using leangrad::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double minimum(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

// The overlap of [a0, a1] with [b0, b1], in seconds.
double overlap(Clock::time_point a0, Clock::time_point a1, Clock::time_point b0,
               Clock::time_point b1) {
  const Clock::time_point lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? seconds(lo, hi) : 0.0;
}

struct Trainer {
  std::shared_ptr<leangrad::nn::Module> model;  // the plain model or the DDP wrapper
  std::shared_ptr<dist::DistributedDataParallel> ddp;
  std::unique_ptr<leangrad::optim::SGD> optimizer;
  bool set_to_none = true;
  std::vector<double> step_s;
  // DDP only, per step: all-reduce busy time, the part before the last gradient, the end wait.
  std::vector<double> reduce_s, hidden_s, hidden_fraction, wait_s, engine_s, backward_s;
};

Trainer make_trainer(bool ddp, bool set_to_none, const dist::DDPOptions& options,
                     leangrad::Device device) {
  leangrad::manual_seed(7);
  Trainer t;
  std::shared_ptr<leangrad::nn::Module> cnn =
      leangrad::tools::make_model(leangrad::tools::ModelOptions{"cnn"});
  cnn->to(device);
  if (ddp) {
    t.ddp = std::make_shared<dist::DistributedDataParallel>(cnn, options);
    t.model = t.ddp;
  } else {
    t.model = cnn;
  }
  t.optimizer = std::make_unique<leangrad::optim::SGD>(t.model->parameters(),
                                                       leangrad::optim::SGDOptions(0.01));
  t.set_to_none = set_to_none;
  return t;
}

void step(Trainer& t, const Tensor& images, const Tensor& labels, bool record) {
  const Clock::time_point start = Clock::now();
  t.optimizer->zero_grad(t.set_to_none);
  const Tensor loss = leangrad::cross_entropy(t.model->forward(images), labels);
  const Clock::time_point backward_start = Clock::now();
  loss.backward();
  const Clock::time_point backward_end = Clock::now();
  t.optimizer->step();
  if (images.is_cuda()) leangrad::cuda::synchronize();
  if (!record) return;
  t.step_s.push_back(seconds(start, Clock::now()));
  t.backward_s.push_back(seconds(backward_start, backward_end));
  if (!t.ddp) return;
  const dist::StepTimeline& line = t.ddp->reducer().last_step();
  double busy = 0, hidden = 0;
  for (const dist::BucketTimeline& b : line.buckets) {
    busy += seconds(b.started, b.finished);
    hidden += overlap(b.started, b.finished, backward_start, line.last_gradient);
  }
  t.reduce_s.push_back(busy);
  t.hidden_s.push_back(hidden);
  t.hidden_fraction.push_back(busy > 0 ? hidden / busy : 1.0);
  t.wait_s.push_back(seconds(line.last_gradient, line.reduced));
  t.engine_s.push_back(seconds(backward_start, line.last_gradient));
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 32;
  // A first bucket of 25 MiB holds the whole cnn: one all-reduce after backward, no overlap.
  const std::string device_name = argc > 3 ? argv[3] : "cpu";
  const std::string backend_name = argc > 4 ? argv[4] : (device_name == "cuda" ? "nccl" : "gloo");
  if ((device_name != "cpu" && device_name != "cuda") ||
      (backend_name != "gloo" && backend_name != "nccl")) {
    std::fprintf(stderr, "ddp_step: usage: ddp_step [steps] [batch] [cpu|cuda] [gloo|nccl]\n");
    return 2;
  }
  if (device_name == "cuda" && !leangrad::cuda::is_available()) {
    std::printf("ddp_step: no CUDA device: skipped\n");
    return 0;
  }
  // A first bucket of 25 MiB holds the whole cnn: one all-reduce after backward, no overlap.
  const dist::DDPOptions overlapped, one_bucket = dist::DDPOptions().first_bucket_mb(25);
  dist::init_process_group(backend_name == "nccl" ? dist::Backend::NCCL : dist::Backend::Gloo);
  const int rank = dist::get_rank();
  const char* local_rank = std::getenv("LOCAL_RANK");
  const leangrad::Device device =
      device_name == "cuda" ? leangrad::Device::cuda((local_rank ? std::atoi(local_rank) : 0) %
                                                     leangrad::cuda::device_count())
                            : leangrad::Device::cpu();

  leangrad::manual_seed(100 + static_cast<std::uint64_t>(rank));
  const Tensor images = leangrad::randn({batch, 1, 28, 28}).to(device);  // (N, 1, 28, 28)
  std::vector<std::int64_t> label_values;
  for (std::int64_t i = 0; i < batch; ++i)
    label_values.push_back((i * 7 + rank) % 10);
  const Tensor labels = leangrad::tensor(label_values).to(device);  // (N,) int64

  std::vector<Trainer> trainers;
  trainers.push_back(make_trainer(false, true, overlapped, device));
  trainers.push_back(make_trainer(true, true, overlapped, device));
  trainers.push_back(make_trainer(true, false, overlapped, device));
  trainers.push_back(make_trainer(true, false, one_bucket, device));
  const char* names[] = {"plain", "DDP, zero_grad()", "DDP, zero_grad(false)",
                         "DDP, 1 bucket (false)"};
  for (int i = 0; i < steps + 3; ++i)
    for (Trainer& t : trainers)
      step(t, images, labels, /*record=*/i >= 3);

  if (rank == 0) {
    const dist::DistributedDataParallel& ddp = *trainers[1].ddp;
    std::printf(
        "cnn on %s, %d rank(s) (%s), batch %lld per rank, %d steps (after 3 warm-up), OMP "
        "threads %s\n",
        device.str().c_str(), dist::get_world_size(), backend_name.c_str(),
        static_cast<long long>(batch), steps,
        std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "default");
    for (std::size_t b = 0; b < ddp.buckets().size(); ++b) {
      const dist::BucketInfo& info = ddp.buckets()[b];
      std::printf("bucket %zu: %lld elements (%.2f MB), %zu parameters, first %s\n", b,
                  static_cast<long long>(info.numel), info.numel * 4 / 1e6, info.parameters.size(),
                  info.parameters.front().c_str());
    }
    const double plain = median(trainers[0].step_s);
    std::printf("\n%-22s %12s %10s %12s %10s\n", "step", "median (ms)", "min (ms)", "backward (ms)",
                "overhead");
    for (std::size_t k = 0; k < trainers.size(); ++k) {
      const double m = median(trainers[k].step_s);
      std::printf("%-22s %12.2f %10.2f %12.2f %9.1f%%\n", names[k], m * 1e3,
                  minimum(trainers[k].step_s) * 1e3, median(trainers[k].backward_s) * 1e3,
                  (m - plain) / plain * 100);
    }
    std::printf("\n%-22s %12s %16s %12s %10s %14s\n", "bucket timeline", "engine (ms)",
                "all-reduce (ms)", "hidden (ms)", "hidden", "end wait (ms)");
    for (std::size_t k = 1; k < trainers.size(); ++k) {
      const Trainer& t = trainers[k];
      std::printf("%-22s %12.2f %16.2f %12.2f %9.0f%% %14.2f\n", names[k], median(t.engine_s) * 1e3,
                  median(t.reduce_s) * 1e3, median(t.hidden_s) * 1e3,
                  median(t.hidden_fraction) * 100, median(t.wait_s) * 1e3);
    }
    // One step's timeline, relative to the first gradient, for the docs.
    const dist::StepTimeline& line = ddp.reducer().last_step();
    std::printf("\nlast step of \"%s\" (ms from the first gradient):\n", names[1]);
    for (std::size_t b = 0; b < line.buckets.size(); ++b) {
      const dist::BucketTimeline& bt = line.buckets[b];
      std::printf("  bucket %zu: ready %.2f, all-reduce %.2f .. %.2f\n", b,
                  seconds(line.first_gradient, bt.ready) * 1e3,
                  seconds(line.first_gradient, bt.started) * 1e3,
                  seconds(line.first_gradient, bt.finished) * 1e3);
    }
    std::printf("  last gradient %.2f, backward's last node done %.2f, every bucket reduced %.2f\n",
                seconds(line.first_gradient, line.last_gradient) * 1e3,
                seconds(line.first_gradient, line.backward_done) * 1e3,
                seconds(line.first_gradient, line.reduced) * 1e3);
  }
  trainers.clear();
  dist::destroy_process_group();
  return 0;
}
