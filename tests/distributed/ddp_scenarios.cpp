// DistributedDataParallel scenarios run by every rank of a multi-process test (dist_worker ddp_*).
// Each rank builds the single-process reference itself: the same model from the seed rank 0
// uses, trained on the whole global batch, while the DDP replica (built from a seed of its own,
// so only the construction broadcast can make it equal) trains on this rank's share. Parameters
// are compared after the steps with the norm-wise relative difference
// max |a - b| / max |b| per tensor; docs/distributed.md derives the tolerances.
#include "distributed/ddp_scenarios.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/distributed/ddp.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/offload/parameter_offload.h>
#include <leangrad/optim/adam.h>
#include "testing/tensor_testing.h"

namespace dist = leangrad::distributed;

namespace leangrad::test {

int& scenario_checks() {
  static int checks = 0;
  return checks;
}

void check(bool ok, const std::string& what) {
  ++scenario_checks();
  if (!ok) throw ScenarioCheckFailed{what};
}

namespace {

constexpr std::int64_t kBatchPerRank = 32;
constexpr std::uint64_t kModelSeed = 1000;
constexpr double kLr = 0.05;

// Small buckets, so that even these small models have several (launched in order).
dist::DDPOptions small_buckets() {
  return dist::DDPOptions().first_bucket_mb(0.001).bucket_cap_mb(0.004);
}

// ---- Models ---------------------------------------------------------------------------------

std::shared_ptr<nn::Module> make_mlp() {  // (N, 20) -> (N, 10)
  return nn::Sequential(nn::Linear(20, 32), nn::ReLU(), nn::Linear(32, 32), nn::ReLU(),
                        nn::Linear(32, 10));
}

std::shared_ptr<nn::Module> make_cnn() {  // (N, 1, 8, 8) -> (N, 10)
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)),  // (N, 4, 8, 8)
                        nn::ReLU(), nn::MaxPool2d(2),                       // (N, 4, 4, 4)
                        nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(1)),  // (N, 8, 4, 4)
                        nn::ReLU(), nn::MaxPool2d(2),                       // (N, 8, 2, 2)
                        nn::Flatten(),                                      // (N, 32)
                        nn::Linear(32, 10));
}

// a(x) [+ b(x) * mask]; c is never used. The reference passes a (N, 1) mask selecting the rows
// whose rank uses b; a DDP replica uses b on all its rows or on none.
struct Branches : nn::Module {
  Branches() : Module("Branches") {
    a = register_module("a", nn::Linear(20, 10));
    b = register_module("b", nn::Linear(20, 10));
    c = register_module("c", nn::Linear(20, 10));
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = a->forward(x);
    if (use_b) y = y + (mask.defined() ? b->forward(x) * mask : b->forward(x));
    return y;
  }
  nn::Linear a{nullptr}, b{nullptr}, c{nullptr};
  bool use_b = true;
  Tensor mask;
};

// first(x) then second(x), with an optional hook on the activation between them: it runs in
// the middle of backward, after second's gradients and before first's.
struct TwoStages : nn::Module {
  TwoStages() : Module("TwoStages") {
    first = register_module("first", nn::Linear(20, 256));
    second = register_module("second", nn::Linear(256, 10));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu(first->forward(x));
    if (on_middle_of_backward) h.register_hook(on_middle_of_backward);
    return second->forward(h);
  }
  nn::Linear first{nullptr}, second{nullptr};
  std::function<void(const Tensor&)> on_middle_of_backward;
};

std::shared_ptr<nn::Module> seeded(const std::function<std::shared_ptr<nn::Module>()>& make,
                                   std::uint64_t seed, DType dtype) {
  manual_seed(seed);
  std::shared_ptr<nn::Module> m = make();
  m->to(dtype);
  return m;
}

// ---- Data and steps -------------------------------------------------------------------------

struct Batch {
  Tensor x, y;
  Batch rows(std::int64_t begin, std::int64_t end) const {
    return {x.slice(0, begin, end).contiguous(), y.slice(0, begin, end).contiguous()};
  }
};

// The global batch of step `step`, the same on every rank.
Batch global_batch(const Shape& sample_shape, std::int64_t n, int step, DType dtype) {
  manual_seed(5000 + static_cast<std::uint64_t>(step));
  Shape shape = {n};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  std::vector<double> labels;
  for (std::int64_t i = 0; i < n; ++i)
    labels.push_back(static_cast<double>((i * 7 + step * 3) % 10));
  return {randn(shape, TensorOptions(dtype)), make_tensor(labels, {n}, kInt64)};
}

// Plain SGD by hand (written when optim/ took float32 only; these models run in float64 too, which
// optim::SGD now takes as well).
// Parameters without a gradient are skipped, as every optimizer does.
void sgd_step(nn::Module& m, double lr, double weight_decay = 0) {
  NoGradGuard no_grad;
  for (Tensor& p : m.parameters()) {
    if (!p.grad().defined()) continue;
    if (weight_decay != 0) p.add_(p, -lr * weight_decay);
    p.add_(p.grad(), -lr);
  }
}

double relative_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = to_vector(a), y = to_vector(b);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// Compares every parameter and buffer of the DDP replica ("module." + name) with the
// reference's; returns the largest relative difference.
double compare_with_reference(const dist::DistributedDataParallel& ddp, const nn::Module& reference,
                              double tolerance, const std::string& when) {
  const NamedTensors ours = ddp.state_dict();
  const NamedTensors theirs = reference.state_dict();
  check(ours.size() == theirs.size(), when + ": the state dicts differ in size");
  double worst = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    check(ours[i].first == "module." + theirs[i].first,
          when + ": name " + ours[i].first + " vs " + theirs[i].first);
    const double d = relative_difference(ours[i].second, theirs[i].second);
    check(d <= tolerance,
          detail::str_cat(when, ": ", ours[i].first, " differs from the reference by ", d,
                          " (relative), above ", tolerance));
    worst = std::max(worst, d);
  }
  return worst;
}

// Every gradient a view of one of the reducer's bucket tensors (the same storage).
void check_grads_are_bucket_views(const dist::DistributedDataParallel& ddp,
                                  const std::string& when) {
  for (const auto& [name, p] : ddp.named_parameters()) {
    if (!p.grad().defined()) continue;
    bool found = false;
    for (std::size_t b = 0; b < ddp.buckets().size(); ++b)
      found = found || p.grad().storage() == ddp.reducer().bucket_tensor(b).storage();
    check(found, when + ": the gradient of " + name + " is not a view of a bucket");
  }
}

double tolerance_of(DType dtype) {
  return dtype == kFloat64 ? 1e-12 : 1e-6;  // docs/distributed.md, "Tests"
}

// ---- Scenarios ------------------------------------------------------------------------------

// N ranks x batch 32 for 5 steps give the parameters of one process x batch 32 N.
void equal_to_one_process(const std::string& kind, DType dtype) {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const auto make = kind == "mlp" ? make_mlp : make_cnn;
  const Shape sample = kind == "mlp" ? Shape{20} : Shape{1, 8, 8};
  std::shared_ptr<nn::Module> reference = seeded(make, kModelSeed, dtype);
  dist::DistributedDataParallel ddp(seeded(make, kModelSeed + rank, dtype), small_buckets());
  compare_with_reference(ddp, *reference, 0.0, "after construction");
  check(ddp.buckets().size() >= 2, "expected several buckets");
  double worst = 0;
  for (int step = 0; step < 5; ++step) {
    const Batch all = global_batch(sample, kBatchPerRank * size, step, dtype);
    reference->zero_grad();
    cross_entropy(reference->forward(all.x), all.y).backward();
    sgd_step(*reference, kLr);

    ddp.zero_grad(/*set_to_none=*/step % 2 == 0);  // both paths (Note [Gradients are views])
    const Batch mine = all.rows(rank * kBatchPerRank, (rank + 1) * kBatchPerRank);
    cross_entropy(ddp.forward(mine.x), mine.y).backward();
    check_grads_are_bucket_views(ddp, "step " + std::to_string(step));
    sgd_step(ddp, kLr);
    worst = compare_with_reference(ddp, *reference, tolerance_of(dtype),
                                   "after step " + std::to_string(step));
  }
  std::printf("%s %s: %zu buckets, largest relative difference after 5 steps %.3g\n", kind.c_str(),
              dtype_name(dtype), ddp.buckets().size(), worst);
}

// Two micro-batches of 16 per rank, the first under no_sync: the same parameters as one process
// with the global batch; the no_sync backward leaves purely local gradients.
void no_sync_accumulation() {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const DType dtype = kFloat64;
  std::shared_ptr<nn::Module> reference = seeded(make_mlp, kModelSeed, dtype);
  dist::DistributedDataParallel ddp(seeded(make_mlp, kModelSeed + rank, dtype), small_buckets());
  std::shared_ptr<nn::Module> local = seeded(make_mlp, kModelSeed, dtype);  // a plain replica
  double worst = 0;
  for (int step = 0; step < 3; ++step) {
    const Batch all = global_batch({20}, kBatchPerRank * size, step, dtype);
    reference->zero_grad();
    cross_entropy(reference->forward(all.x), all.y).backward();
    sgd_step(*reference, kLr);

    const Batch mine = all.rows(rank * kBatchPerRank, (rank + 1) * kBatchPerRank);
    const Batch half1 = mine.rows(0, kBatchPerRank / 2),
                half2 = mine.rows(kBatchPerRank / 2, kBatchPerRank);
    ddp.zero_grad(/*set_to_none=*/step % 2 == 0);
    {
      auto no_sync = ddp.no_sync();
      (cross_entropy(ddp.forward(half1.x), half1.y) * 0.5).backward();
    }
    // Local only: bitwise the gradient of a plain replica holding the same parameters.
    local->load_state_dict(ddp.module()->state_dict());
    local->zero_grad();
    (cross_entropy(local->forward(half1.x), half1.y) * 0.5).backward();
    const auto ours = ddp.module()->named_parameters();
    const auto plain = local->named_parameters();
    for (std::size_t i = 0; i < ours.size(); ++i) {
      check(to_vector(ours[i].second.grad()) == to_vector(plain[i].second.grad()),
            "step " + std::to_string(step) + ": the no_sync gradient of " + ours[i].first +
                " is not the local one");
    }
    (cross_entropy(ddp.forward(half2.x), half2.y) * 0.5).backward();  // reduces both halves
    check_grads_are_bucket_views(ddp, "after the synchronised micro-batch");
    sgd_step(ddp, kLr);
    worst = compare_with_reference(ddp, *reference, tolerance_of(dtype),
                                   "after step " + std::to_string(step));
  }
  std::printf("no_sync: largest relative difference after 3 steps %.3g\n", worst);
}

// DDP over a module whose parameters offload::ParameterOffload keeps in host memory (Note
// [Offloaded parameters] in reducer.cpp): 5 Adam steps on each rank's share give the parameters
// of the same DDP training without the offload, every step; the buckets and the gradients are in
// host memory; the optimizer steps through ParameterOffload::step on even steps and through its
// own step() on odd ones.
//   - `device` the CPU: the parameters visit the CPU allocator one layer at a time, the copies
//     are synchronous, and the result is bitwise the resident one's.
//   - `device` CUDA (both ranks on cuda:0, over Gloo): each gradient reaches the host by an
//     asynchronous copy that the reducer's bucket copy must wait for. The resident model steps
//     Adam on the GPU, the offloaded one on the host: the same formula in another kernel, so
//     within `kCudaTolerance` (relative), far below what a stale gradient in a bucket would do.
constexpr double kCudaTolerance = 1e-5;

void offloaded_parameters(Device device) {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  std::shared_ptr<nn::Module> resident_model = seeded(make_cnn, kModelSeed + rank, kFloat32);
  resident_model->to(device);
  auto resident = std::make_shared<dist::DistributedDataParallel>(resident_model, small_buckets());
  std::shared_ptr<nn::Module> model = seeded(make_cnn, kModelSeed + 7 * rank, kFloat32);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(device));
  auto offloaded = std::make_shared<dist::DistributedDataParallel>(model, small_buckets());
  for (const auto& [name, p] : offloaded->named_parameters())
    check(p.is_pinned(), "parameter " + name + " is not in the pinned pool after the offload");
  check(offloaded->buckets().size() == resident->buckets().size(),
        "the offloaded model has other buckets than the resident one");
  for (const dist::BucketInfo& bucket : offloaded->buckets())
    check(bucket.device.is_cpu(), "a bucket of the offloaded model is not on the host");
  optim::Adam resident_adam(resident->parameters(), optim::AdamOptions(1e-2));
  optim::Adam offloaded_adam(offloaded->parameters(), optim::AdamOptions(1e-2));
  for (int step = 0; step < 5; ++step) {
    const Batch all = global_batch({1, 8, 8}, kBatchPerRank * size, step, kFloat32);
    const Batch host = all.rows(rank * kBatchPerRank, (rank + 1) * kBatchPerRank);
    const Batch mine = {host.x.to(device), host.y.to(device)};
    const std::string when = "step " + std::to_string(step);
    resident->zero_grad(/*set_to_none=*/step % 2 == 0);
    cross_entropy(resident->forward(mine.x), mine.y).backward();
    resident_adam.step();
    offloaded->zero_grad(/*set_to_none=*/step % 2 == 0);
    cross_entropy(offloaded->forward(mine.x), mine.y).backward();
    check_grads_are_bucket_views(*offloaded, when);
    if (step % 2 == 0) {
      offload.step(offloaded_adam);
    } else {
      offloaded_adam.step();
    }
    compare_with_reference(*offloaded, *resident->module(), device.is_cpu() ? 0.0 : kCudaTolerance,
                           when);
  }
  check(offload.stats().to_host_bytes > 0, "no gradient went to the host");
  if (device.is_cpu()) {
    std::printf("offloaded parameters: %zu host buckets, bitwise the resident DDP after 5 steps\n",
                offloaded->buckets().size());
  } else {
    std::printf(
        "offloaded parameters on %s: %zu host buckets, the resident DDP within %g after 5 "
        "steps\n",
        device.str().c_str(), offloaded->buckets().size(), kCudaTolerance);
  }
}

// broadcast_buffers (Note [Buffers at every forward] in ddp.cpp): BatchNorm2d's running mean after
// a training forward is (1 - momentum) r + momentum * (the batch's channel means), r the running
// mean the forward started from. With the broadcast, r is rank 0's after the step before, on every
// rank; without it, each rank's own. The channel means are computed here from the convolution's
// output; float64, so the only differences are the order of sums.
void buffers_at_every_forward(bool broadcast) {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const DType dtype = kFloat64;
  constexpr double kMomentum = 0.1;
  manual_seed(kModelSeed + rank);
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4),
                       nn::ReLU(), nn::Flatten(), nn::Linear(256, 10));
  model->to(dtype);
  auto conv = model->ptr<nn::Conv2d>(0);
  auto bn = model->ptr<nn::BatchNorm2d>(1);
  dist::DistributedDataParallel ddp(model, small_buckets().broadcast_buffers(broadcast));
  double worst = 0, drift = 0;
  for (int step = 0; step < 4; ++step) {
    const Batch all = global_batch({1, 8, 8}, kBatchPerRank * size, step, dtype);
    const Batch mine = all.rows(rank * kBatchPerRank, (rank + 1) * kBatchPerRank);
    const Tensor own = bn->running_mean.clone();
    Tensor rank0 = bn->running_mean.clone();
    dist::broadcast(rank0, 0);
    drift = std::max(drift, relative_difference(own, rank0));
    std::vector<double> channel_mean(4, 0.0);
    {
      NoGradGuard no_grad;
      const std::vector<double> h = to_vector(conv->forward(mine.x));  // (32, 4, 8, 8)
      for (std::size_t i = 0; i < h.size(); ++i)
        channel_mean[(i / 64) % 4] += h[i] / (kBatchPerRank * 64.0);
    }
    const std::vector<double> start = to_vector(broadcast ? rank0 : own);
    std::vector<double> expected(4);
    for (std::size_t c = 0; c < 4; ++c)
      expected[c] = (1 - kMomentum) * start[c] + kMomentum * channel_mean[c];
    ddp.zero_grad();
    cross_entropy(ddp.forward(mine.x), mine.y).backward();
    sgd_step(ddp, kLr);
    const double d = relative_difference(bn->running_mean, make_tensor(expected, {4}, dtype));
    check(d <= 1e-12, detail::str_cat("step ", step, ": the running mean differs by ", d,
                                      " (relative) from the update of ",
                                      broadcast ? "rank 0's" : "this rank's own", " statistics"));
    check(bn->num_batches_tracked.item<std::int64_t>() == step + 1,
          "num_batches_tracked is not the number of forwards");
    worst = std::max(worst, d);
  }
  // Each forward updates the statistics from the rank's own batch, so before the next forward
  // (and its broadcast) they differ from rank 0's; that is what makes the check above tell
  // rank 0's start from the rank's own.
  if (rank != 0) {
    check(drift > 0,
          "the ranks' running means never differed before a forward: the check "
          "cannot tell rank 0's statistics from this rank's own");
  }
  std::printf(
      "buffers (broadcast %s): running mean within %.3g of the expected update; the ranks "
      "differed by up to %.3g before a forward\n",
      broadcast ? "on" : "off", worst, drift);
}

// c is never used: an Error naming its parameters, on every rank.
void unused_parameter_error() {
  auto model = std::make_shared<Branches>();
  dist::DistributedDataParallel ddp(model, small_buckets());
  const Batch batch = global_batch({20}, kBatchPerRank, 0, kFloat32);
  try {
    cross_entropy(ddp.forward(batch.x), batch.y).backward();
    check(false, "a backward leaving module.c without a gradient did not throw");
  } catch (const Error& e) {
    std::printf("CAUGHT: %s\n", e.what());
  }
  dist::barrier();  // the group still works
}

// Only rank 1 leaves b unused, without find_unused_parameters: rank 1 raises at the end of its
// backward naming b, without launching b's bucket, which rank 0 launched and waits for. Then
// rank 1 either goes on to a barrier (DIST_THEN=barrier) or does nothing more until rank 0 is
// done (DIST_THEN=wait). Rank 0's backward must not wait past the timeout either way.
void unused_on_one_rank() {
  const int rank = dist::get_rank();
  auto model = std::make_shared<Branches>();
  model->use_b = rank != 1;
  model->c->weight.requires_grad_(false);  // c is unused everywhere: frozen, out of the buckets
  model->c->bias.requires_grad_(false);
  dist::DistributedDataParallel ddp(model, small_buckets());
  const Batch batch = global_batch({20}, kBatchPerRank, rank, kFloat32);
  const char* then = std::getenv("DIST_THEN");
  const bool barrier_after = then != nullptr && std::string(then) == "barrier";
  const auto start = dist::Work::Clock::now();
  try {
    cross_entropy(ddp.forward(batch.x), batch.y).backward();
    check(false, "the backward with b unused on rank 1 did not throw");
  } catch (const Error& e) {
    const double took = std::chrono::duration<double>(dist::Work::Clock::now() - start).count();
    std::printf("CAUGHT after %.2f s: %s\n", took, e.what());
  }
  if (rank == 1) {
    if (barrier_after) {
      try {
        dist::barrier();
        check(false, "the barrier after the failed backward did not throw");
      } catch (const Error& e) {
        std::printf("BARRIER: %s\n", e.what());
      }
    } else {
      std::this_thread::sleep_for(dist::default_process_group().timeout() +
                                  std::chrono::seconds(1));
    }
  }
}

// find_unused_parameters: rank 0 uses b, the others do not, nobody uses c. The reference uses
// b on rank 0's rows only. c keeps no gradient (weight decay would otherwise move it).
void find_unused_parameters() {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const DType dtype = kFloat64;
  const auto make = [] {
    return std::static_pointer_cast<nn::Module>(std::make_shared<Branches>());
  };
  auto reference = std::static_pointer_cast<Branches>(seeded(make, kModelSeed, dtype));
  auto replica = std::static_pointer_cast<Branches>(seeded(make, kModelSeed + rank, dtype));
  dist::DistributedDataParallel ddp(replica, small_buckets().find_unused_parameters(true));
  replica->use_b = rank == 0;
  std::vector<double> mask(static_cast<std::size_t>(kBatchPerRank * size), 0.0);
  std::fill(mask.begin(), mask.begin() + kBatchPerRank, 1.0);
  reference->mask = make_tensor(mask, {kBatchPerRank * size, 1}, dtype);
  const Tensor c_before = replica->c->weight.clone();
  double worst = 0;
  for (int step = 0; step < 5; ++step) {
    const Batch all = global_batch({20}, kBatchPerRank * size, step, dtype);
    reference->zero_grad();
    cross_entropy(reference->forward(all.x), all.y).backward();
    sgd_step(*reference, kLr, /*weight_decay=*/0.1);

    ddp.zero_grad(/*set_to_none=*/step % 2 == 0);
    const Batch mine = all.rows(rank * kBatchPerRank, (rank + 1) * kBatchPerRank);
    cross_entropy(ddp.forward(mine.x), mine.y).backward();
    check(!replica->c->weight.grad().defined() && !replica->c->bias.grad().defined(),
          "module.c has a gradient though no rank used it");
    check(replica->b->weight.grad().defined(), "module.b has no gradient though rank 0 used it");
    check_grads_are_bucket_views(ddp, "step " + std::to_string(step));
    sgd_step(ddp, kLr, /*weight_decay=*/0.1);
    worst = compare_with_reference(ddp, *reference, tolerance_of(dtype),
                                   "after step " + std::to_string(step));
  }
  check(to_vector(replica->c->weight) == to_vector(c_before), "module.c moved without a gradient");
  std::printf("find_unused_parameters: largest relative difference after 5 steps %.3g\n", worst);
}

// Replicas built from different seeds, with a buffer, are rank 0's after construction.
void construction_broadcast() {
  const int rank = dist::get_rank();
  const auto make = [] {
    auto m = make_cnn();
    m->register_buffer("running", randn({3}));
    return m;
  };
  std::shared_ptr<nn::Module> reference = seeded(make, kModelSeed, kFloat32);
  auto replica = seeded(make, kModelSeed + rank, kFloat32);
  if (rank != 0) {
    check(relative_difference(replica->parameters()[0], reference->parameters()[0]) > 0,
          "the replicas should start different");
  }
  // A gradient the replica already has moves into its bucket slot, values unchanged (Note
  // [Gradients are views]; a group of one has no buckets).
  const Batch batch = global_batch({1, 8, 8}, kBatchPerRank, rank, kFloat32);
  cross_entropy(replica->forward(batch.x), batch.y).backward();
  std::vector<std::vector<double>> before;
  for (const Tensor& p : replica->parameters())
    before.push_back(to_vector(p.grad()));
  dist::DistributedDataParallel ddp(replica);
  compare_with_reference(ddp, *reference, 0.0, "after construction");
  check_grads_are_bucket_views(ddp, "after construction");
  const std::vector<Tensor> params = replica->parameters();
  for (std::size_t i = 0; i < params.size(); ++i)
    check(to_vector(params[i].grad()) == before[i],
          "the gradient of parameter " + std::to_string(i) + " changed moving into its bucket");
  std::printf("after construction every parameter and buffer is rank 0's\n");
}

// Rank 1 wraps a model with one more layer: every rank raises, naming the counts.
void mismatched_models() {
  const int rank = dist::get_rank();
  auto model = make_mlp();
  if (rank == 1) model->register_module("extra", nn::Linear(2, 2));
  try {
    dist::DistributedDataParallel ddp(model);
    check(false, "wrapping different models did not throw");
  } catch (const Error& e) {
    std::printf("CAUGHT: %s\n", e.what());
  }
}

// Models of as many parameters as rank 0's that differ in one parameter: rank 1's `w` has the
// transposed shape (the same elements), or its first layer is frozen. PyTorch checks parameter
// shapes across ranks before its broadcast; here every rank must raise naming the parameter and
// what each rank has, also without the collectives' signatures (LEANGRAD_DIST_SIGNATURES=0,
// and NCCL never exchanges them), where the broadcast would move the bytes regardless.
struct OneMatrix : nn::Module {
  explicit OneMatrix(const Shape& shape) : Module("OneMatrix") {
    w = register_parameter("w", randn(shape));
    b = register_parameter("b", randn({4}));
  }
  Tensor forward(const Tensor& x) override { return x; }
  Tensor w, b;
};

void differing_parameters(const std::string& how) {
  const int rank = dist::get_rank();
  std::shared_ptr<nn::Module> model;
  if (how == "shape") {
    model = std::make_shared<OneMatrix>(rank == 1 ? Shape{6, 4} : Shape{4, 6});
  } else {  // "frozen"
    model = make_mlp();
    if (rank == 1) model->parameters()[0].requires_grad_(false);
  }
  try {
    dist::DistributedDataParallel ddp(model);
    check(false, "wrapping models with differing parameters did not throw");
  } catch (const Error& e) {
    std::printf("CAUGHT: %s\n", e.what());
  }
  Tensor t = ones({3});
  dist::all_reduce(t);  // the group still works
  check(to_vector(t) == std::vector<double>(3, dist::get_world_size()),
        "the all-reduce after the refusal is wrong");
}

// Rank DIST_VICTIM is killed (SIGKILL) in the middle of the backward of step 3, after its first
// bucket was launched; the others must raise from backward within the timeout.
void killed_in_backward() {
  const int rank = dist::get_rank();
  const char* victim_text = std::getenv("DIST_VICTIM");
  const int victim = victim_text != nullptr ? std::atoi(victim_text) : 1;
  auto model = std::make_shared<TwoStages>();
  // second's 2570 float32 (10 KB) fill the first bucket: it is launched before the hook runs.
  dist::DistributedDataParallel ddp(model, dist::DDPOptions().first_bucket_mb(0.001));
  check(ddp.buckets().size() == 2 && ddp.buckets()[0].parameters[0] == "module.second.bias",
        "expected second's parameters in bucket 0");
  for (int step = 0; step < 5; ++step) {
    const Batch batch = global_batch({20}, kBatchPerRank, step, kFloat32);
    if (step == 3 && rank == victim) {
      model->on_middle_of_backward = [](const Tensor&) { ::raise(SIGKILL); };
    }
    const Tensor loss = cross_entropy(ddp.forward(batch.x), batch.y);
    const auto start = dist::Work::Clock::now();
    try {
      loss.backward();
    } catch (const Error& e) {
      const double took = std::chrono::duration<double>(dist::Work::Clock::now() - start).count();
      std::printf("CAUGHT after %.2f s in step %d: %s\n", took, step, e.what());
      return;
    }
  }
  check(false, "no backward raised");
}

}  // namespace

int run_ddp_scenario(const std::string& name) {
  scenario_checks() = 0;
  if (name == "ddp_equal_mlp_f32") {
    equal_to_one_process("mlp", kFloat32);
  } else if (name == "ddp_equal_mlp_f64") {
    equal_to_one_process("mlp", kFloat64);
  } else if (name == "ddp_equal_cnn_f32") {
    equal_to_one_process("cnn", kFloat32);
  } else if (name == "ddp_equal_cnn_f64") {
    equal_to_one_process("cnn", kFloat64);
  } else if (name == "ddp_offload") {
    offloaded_parameters(Device::cpu());
  } else if (name == "ddp_offload_cuda") {
    offloaded_parameters(Device::cuda(0));
  } else if (name == "ddp_buffers") {
    buffers_at_every_forward(true);
  } else if (name == "ddp_buffers_off") {
    buffers_at_every_forward(false);
  } else if (name == "ddp_no_sync") {
    no_sync_accumulation();
  } else if (name == "ddp_unused_error") {
    unused_parameter_error();
  } else if (name == "ddp_unused_on_one_rank") {
    unused_on_one_rank();
  } else if (name == "ddp_find_unused") {
    find_unused_parameters();
  } else if (name == "ddp_broadcast") {
    construction_broadcast();
  } else if (name == "ddp_mismatched_models") {
    mismatched_models();
  } else if (name == "ddp_differing_shape") {
    differing_parameters("shape");
  } else if (name == "ddp_differing_frozen") {
    differing_parameters("frozen");
  } else if (name == "ddp_die") {
    killed_in_backward();
  } else {
    LG_THROW(Error, "unknown DDP scenario ", name);
  }
  return scenario_checks();
}

}  // namespace leangrad::test
