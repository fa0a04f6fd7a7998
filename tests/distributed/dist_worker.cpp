// dist_worker: one rank of a multi-process test. The GoogleTest cases of tests/distributed/
// start several of these (launch.h) with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set, each
// running the scenario named on its command line (the DistributedDataParallel ones, ddp_*, are
// in ddp_scenarios.cpp, the ZeroRedundancyOptimizer ones, zero_*, in zero_scenarios.cpp):
//   dist_worker <scenario>
// It prints what it saw and exits 0 when every check passed, 1 when a check failed, 2 when a
// leangrad::Error escaped (its message on the last line, and recorded for the other ranks with
// distributed::record_error). Every rank computes the expected
// results itself, from the inputs every rank would have (value() below), with plain loops.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/distributed/memory_plan.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/offload/memory_planner.h>
#include "distributed/ddp_scenarios.h"
#include "testing/tensor_testing.h"

namespace dist = leangrad::distributed;
using leangrad::DType;
using leangrad::Shape;
using leangrad::Tensor;

namespace {

int g_checks = 0;

struct CheckFailed {
  std::string what;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// All-reduces t until a collective fails, as after a peer's failure it must, and prints
// "CAUGHT after <s> s: <the Error>" for the test to read (caught_after_s in the tests).
void all_reduce_until_it_fails(Tensor& t) {
  const auto start = std::chrono::steady_clock::now();
  try {
    for (;;)
      dist::all_reduce(t);
  } catch (const leangrad::Error& e) {
    std::printf("CAUGHT after %.2f s: %s\n", seconds_since(start), e.what());
  }
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

// The input of `rank` at flat index i, for variant `k` (different tensors of one scenario):
// multiples of 1/4 in [-2, 2] for floating dtypes, so every sum, average, maximum and minimum of
// up to 4 ranks is exact in float16 and bfloat16 too; integers with bits above 2^32 for int64.
double value(DType dtype, int rank, std::int64_t i, int k = 0) {
  const std::int64_t small = (rank * 7 + i * 13 + k * 5) % 17 - 8;
  if (dtype == DType::Int64) return static_cast<double>(small + ((i + rank) % 3) * (1LL << 40));
  return static_cast<double>(small) / 4.0;
}

std::int64_t numel_of(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

Tensor input(DType dtype, const Shape& shape, int rank, int k = 0) {
  std::vector<double> values;
  for (std::int64_t i = 0; i < numel_of(shape); ++i)
    values.push_back(value(dtype, rank, i, k));
  return leangrad::test::make_tensor(values, shape, dtype);
}

// Where the collectives scenario's tensors live: the CPU, or the GPU for collectives_cuda (the
// Gloo group stages CUDA tensors through pinned host buffers).
leangrad::Device g_device = leangrad::Device::cpu();

Tensor on_device(const Tensor& t) {
  return g_device.is_cuda() ? t.to(g_device) : t;
}

void expect_equal(const std::string& what, const Tensor& t_on_device, const Shape& shape,
                  const std::vector<double>& expected) {
  ++g_checks;
  if (t_on_device.device() != g_device) {
    throw CheckFailed{
        leangrad::detail::str_cat(what, ": on ", t_on_device.device(), ", expected ", g_device)};
  }
  const Tensor t = t_on_device.cpu();
  if (t.shape() != shape) {
    throw CheckFailed{leangrad::detail::str_cat(what, ": shape ", t.shape(), ", expected ", shape)};
  }
  const std::vector<double> actual = leangrad::test::to_vector(t);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (actual[i] != expected[i]) {
      throw CheckFailed{leangrad::detail::str_cat(what, ": element ", i, " is ", actual[i],
                                                  ", expected ", expected[i])};
    }
  }
}

double reduce_reference(dist::ReduceOp op, const std::vector<double>& xs) {
  double r = xs[0];
  for (std::size_t j = 1; j < xs.size(); ++j) {
    switch (op) {
      case dist::ReduceOp::Sum:
      case dist::ReduceOp::Avg:
        r += xs[j];
        break;
      case dist::ReduceOp::Max:
        r = std::max(r, xs[j]);
        break;
      case dist::ReduceOp::Min:
        r = std::min(r, xs[j]);
        break;
    }
  }
  return op == dist::ReduceOp::Avg ? r / static_cast<double>(xs.size()) : r;
}

const std::vector<DType> kDtypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                    DType::Int64};
const std::vector<Shape> kShapes = {{0}, {}, {1}, {7}, {4099}, {3, 5}};
const std::vector<dist::ReduceOp> kOps = {dist::ReduceOp::Sum, dist::ReduceOp::Avg,
                                          dist::ReduceOp::Max, dist::ReduceOp::Min};

std::string label(const char* op, DType dtype, const Shape& shape) {
  return leangrad::detail::str_cat(op, " ", dtype, " ", shape);
}

// Every collective, dtype, size and reduction against the reference.
void scenario_collectives() {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  for (DType dtype : kDtypes) {
    for (const Shape& shape : kShapes) {
      const std::int64_t n = numel_of(shape);
      for (dist::ReduceOp op : kOps) {
        if (!dist::reduce_op_supports(op, dtype)) continue;
        Tensor t = on_device(input(dtype, shape, rank));
        dist::all_reduce(t, op);
        std::vector<double> expected;
        for (std::int64_t i = 0; i < n; ++i) {
          std::vector<double> xs;
          for (int r = 0; r < size; ++r)
            xs.push_back(value(dtype, r, i));
          expected.push_back(reduce_reference(op, xs));
        }
        expect_equal(label("all_reduce", dtype, shape) + " " + dist::reduce_op_name(op), t, shape,
                     expected);

        // reduce_scatter: rank r's inputs[j] is input(r, k = j); rank j gets the reduction of
        // every rank's inputs[j].
        std::vector<Tensor> inputs;
        for (int j = 0; j < size; ++j)
          inputs.push_back(on_device(input(dtype, shape, rank, j)));
        Tensor out = leangrad::empty(shape, leangrad::TensorOptions(dtype).device(g_device));
        dist::reduce_scatter(out, inputs, op);
        expected.clear();
        for (std::int64_t i = 0; i < n; ++i) {
          std::vector<double> xs;
          for (int r = 0; r < size; ++r)
            xs.push_back(value(dtype, r, i, rank));
          expected.push_back(reduce_reference(op, xs));
        }
        expect_equal(label("reduce_scatter", dtype, shape) + " " + dist::reduce_op_name(op), out,
                     shape, expected);
      }
      for (int root = 0; root < size; ++root) {
        Tensor t = on_device(input(dtype, shape, rank));
        dist::broadcast(t, root);
        std::vector<double> expected;
        for (std::int64_t i = 0; i < n; ++i)
          expected.push_back(value(dtype, root, i));
        expect_equal(label("broadcast", dtype, shape) + " root " + std::to_string(root), t, shape,
                     expected);
      }
      const std::vector<Tensor> gathered = dist::all_gather(on_device(input(dtype, shape, rank)));
      ++g_checks;
      if (static_cast<int>(gathered.size()) != size) {
        throw CheckFailed{"all_gather returned " + std::to_string(gathered.size()) + " tensors"};
      }
      for (int r = 0; r < size; ++r) {
        std::vector<double> expected;
        for (std::int64_t i = 0; i < n; ++i)
          expected.push_back(value(dtype, r, i));
        expect_equal(label("all_gather", dtype, shape) + " from rank " + std::to_string(r),
                     gathered[static_cast<std::size_t>(r)], shape, expected);
      }
    }
  }
  dist::barrier();
}

// Non-contiguous tensors are copied in and written back; async work runs in call order.
void scenario_layouts_and_async() {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  // all_reduce of a transposed view: the base tensor sees the sums.
  Tensor base = input(DType::Float32, {5, 3}, rank);
  Tensor view = base.transpose(0, 1);  // (3, 5), strides (1, 3)
  dist::all_reduce(view);
  std::vector<double> expected;
  for (std::int64_t i = 0; i < 15; ++i) {
    double sum = 0;
    for (int r = 0; r < size; ++r)
      sum += value(DType::Float32, r, i);
    expected.push_back(sum);
  }
  expect_equal("all_reduce of a transposed view (base)", base, {5, 3}, expected);

  // broadcast into every other element of a vector: the elements between keep their values.
  Tensor vec = input(DType::Float64, {10}, rank);
  dist::broadcast(vec.slice(0, 0, 10, 2), 0);
  expected.clear();
  for (std::int64_t i = 0; i < 10; ++i)
    expected.push_back(value(DType::Float64, i % 2 ? rank : 0, i));
  expect_equal("broadcast into a strided slice", vec, {10}, expected);

  // all_gather of a strided input.
  Tensor strided = input(DType::Int64, {4, 2}, rank).transpose(0, 1);  // (2, 4)
  const std::vector<Tensor> gathered = dist::all_gather(strided);
  for (int r = 0; r < size; ++r) {
    expected = leangrad::test::to_vector(input(DType::Int64, {4, 2}, r).transpose(0, 1));
    expect_equal("all_gather of a transposed input from rank " + std::to_string(r),
                 gathered[static_cast<std::size_t>(r)], {2, 4}, expected);
  }

  // Four async collectives queued, waited for in reverse order.
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<dist::Work>> works;
  for (int k = 0; k < 3; ++k) {
    tensors.push_back(input(DType::Float32, {33}, rank, k));
    works.push_back(dist::all_reduce_async(tensors.back(), dist::ReduceOp::Max));
  }
  auto gather_work = dist::all_gather_async(input(DType::Float32, {2}, rank, 9));
  const std::vector<Tensor> late = gather_work->result();
  ++g_checks;
  if (!gather_work->is_completed() || !gather_work->is_success() ||
      late.size() != std::size_t(size)) {
    throw CheckFailed{"all_gather_async: not completed after result()"};
  }
  for (int k = 2; k >= 0; --k) {
    works[static_cast<std::size_t>(k)]->wait();
    ++g_checks;
    if (!works[static_cast<std::size_t>(k)]->is_completed()) {
      throw CheckFailed{"all_reduce_async: not completed after wait()"};
    }
    expected.clear();
    for (std::int64_t i = 0; i < 33; ++i) {
      std::vector<double> xs;
      for (int r = 0; r < size; ++r)
        xs.push_back(value(DType::Float32, r, i, k));
      expected.push_back(reduce_reference(dist::ReduceOp::Max, xs));
    }
    expect_equal("all_reduce_async #" + std::to_string(k), tensors[static_cast<std::size_t>(k)],
                 {33}, expected);
  }
  dist::barrier_async()->wait();
}

// One 64 MiB float32 all_reduce (16 Mi elements).
void scenario_big() {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const std::int64_t n = 16 << 20;
  Tensor t = leangrad::empty({n}, leangrad::TensorOptions(DType::Float32));
  float* p = t.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i)
    p[i] = static_cast<float>((i % 1000) + rank);
  dist::barrier();
  const auto start = std::chrono::steady_clock::now();
  dist::all_reduce(t);
  const double took = seconds_since(start);
  ++g_checks;
  const float rank_sum = static_cast<float>(size * (size - 1) / 2);
  for (std::int64_t i = 0; i < n; ++i) {
    const float expected = static_cast<float>(size * (i % 1000)) + rank_sum;
    if (p[i] != expected) {
      throw CheckFailed{leangrad::detail::str_cat("64 MiB all_reduce: element ", i, " is ", p[i],
                                                  ", expected ", expected)};
    }
  }
  std::printf("64 MiB all_reduce on %d ranks: %.3f s (bus bandwidth %.2f GB/s)\n", size, took,
              2.0 * (size - 1) / size * 64.0 * 1048576.0 / took / 1e9);
}

// A 64 MiB broadcast from rank DIST_ROOT as the last collective, rank DIST_LATE entering it a
// second late; every rank checks the data and returns, so main() destroys the group and exits.
// The root and the ranks it feeds finish and exit while the ranks downstream of the late one
// still move the data: those must complete (Note [A rank that exits after its last
// collective] in progress.cpp). Run with LEANGRAD_DIST_SIGNATURES=0, or the signature
// exchange would hold everyone until the late rank came.
void scenario_exit_after_broadcast() {
  const int rank = dist::get_rank();
  const int root = env_int("DIST_ROOT", 1);
  const std::int64_t n = 16 << 20;
  Tensor t = leangrad::empty({n}, leangrad::TensorOptions(DType::Float32));
  float* p = t.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i)
    p[i] = rank == root ? static_cast<float>(i % 4099) : -1.0f;
  dist::barrier();
  if (rank == env_int("DIST_LATE", 0)) std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto start = std::chrono::steady_clock::now();
  dist::broadcast(t, root);
  const double took = seconds_since(start);
  ++g_checks;
  for (std::int64_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<float>(i % 4099)) {
      throw CheckFailed{leangrad::detail::str_cat("64 MiB broadcast: element ", i, " is ", p[i],
                                                  ", expected ", i % 4099)};
    }
  }
  std::printf("broadcast done in %.3f s\n", took);
}

// Two groups one after the other in the same processes: rank 0 destroys its first group a
// second after the others, who start the second group at once and so find rank 0 still serving
// the first group's store (Note [A store of an earlier group] in tcp_store_server.cpp). Both
// groups must work, and the second must not wait for the timeout.
void scenario_reinit() {
  for (int group = 1; group <= 2; ++group) {
    if (group == 2) {
      if (dist::get_rank() == 0) std::this_thread::sleep_for(std::chrono::seconds(1));
      dist::destroy_process_group();
      const auto start = std::chrono::steady_clock::now();
      dist::init_process_group(dist::Backend::Gloo);
      std::printf("second group joined in %.3f s\n", seconds_since(start));
    }
    const int size = dist::get_world_size();
    Tensor t = input(DType::Float32, {5}, dist::get_rank(), group);
    dist::all_reduce(t);
    std::vector<double> expected;
    for (std::int64_t i = 0; i < 5; ++i) {
      std::vector<double> xs;
      for (int r = 0; r < size; ++r)
        xs.push_back(value(DType::Float32, r, i, group));
      expected.push_back(reduce_reference(dist::ReduceOp::Sum, xs));
    }
    expect_equal(leangrad::detail::str_cat("all_reduce of group ", group), t, {5}, expected);
  }
}

// Ranks that call different collectives: every rank raises the same error, and the group
// still works afterwards.
void scenario_mismatch(const std::string& kind) {
  const int rank = dist::get_rank();
  try {
    if (kind == "shape") {
      dist::all_reduce(input(DType::Float32, {rank == 0 ? 4 : 5}, rank));
    } else if (kind == "dtype") {
      dist::all_reduce(input(rank == 0 ? DType::Float32 : DType::Float64, {4}, rank));
    } else {  // the operation
      Tensor t = input(DType::Float32, {4}, rank);
      if (rank == 0) {
        dist::all_reduce(t);
      } else {
        dist::broadcast(t, 0);
      }
    }
    throw CheckFailed{"the mismatched collective did not throw"};
  } catch (const leangrad::ShapeError& e) {
    std::printf("CAUGHT ShapeError: %s\n", e.what());
  } catch (const leangrad::DTypeError& e) {
    std::printf("CAUGHT DTypeError: %s\n", e.what());
  } catch (const leangrad::Error& e) {
    std::printf("CAUGHT Error: %s\n", e.what());
  }
  Tensor t = input(DType::Float32, {3}, rank);
  dist::all_reduce(t, dist::ReduceOp::Max);
  std::printf("the group works after the mismatch\n");
}

// destroy_process_group with collectives in flight, then collectives after it. Rank 0 queues two
// 4 MiB all-reduces and destroys its group at once; rank 1 enters them half a second later. As
// in PyTorch (and the NCCL group), destroy_process_group first lets the collectives already
// queued run, so both complete with the sum on both ranks; nothing hangs past the timeout or
// crashes. Then on every rank: the free functions say there is no group, and a handle kept from
// before (what DistributedDataParallel keeps) names the destroyed group, call after call.
void scenario_destroy_in_flight() {
  const int rank = dist::get_rank();
  const std::int64_t n = 1 << 20;
  Tensor t = leangrad::full({n}, static_cast<double>(rank + 1));
  Tensor u = leangrad::full({n}, static_cast<double>(10 * (rank + 1)));
  dist::barrier();
  const std::shared_ptr<dist::ProcessGroup> kept = dist::default_process_group_handle();
  auto check_sum = [&](const Tensor& x, float expected, const char* what) {
    ++g_checks;
    const float* p = x.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) {
      if (p[i] != expected) {
        throw CheckFailed{leangrad::detail::str_cat(what, ": element ", i, " is ", p[i],
                                                    ", expected ", expected)};
      }
    }
  };
  if (rank == 0) {
    const std::shared_ptr<dist::Work> first = dist::all_reduce_async(t);
    const std::shared_ptr<dist::Work> second = dist::all_reduce_async(u);
    dist::destroy_process_group();
    ++g_checks;
    if (!first->is_completed() || !second->is_completed())
      throw CheckFailed{"destroy_process_group returned before its queued collectives ended"};
    first->wait();
    second->wait();
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    dist::all_reduce(t);
    dist::all_reduce(u);
    dist::destroy_process_group();
  }
  check_sum(t, 3.0f, "the first all-reduce");
  check_sum(u, 30.0f, "the second all-reduce");
  std::printf("the collectives in flight at destroy_process_group completed\n");
  auto expect_error = [&](const char* what, const std::function<void()>& f) {
    try {
      f();
    } catch (const leangrad::Error& e) {
      ++g_checks;
      std::printf("AFTER %s: %s\n", what, e.what());
      return;
    }
    throw CheckFailed{
        leangrad::detail::str_cat(what, " after destroy_process_group did not throw")};
  };
  expect_error("all_reduce", [&] { dist::all_reduce(t); });
  expect_error("kept handle", [&] { kept->all_reduce(t); });
  expect_error("kept handle again", [&] { kept->broadcast_async(t, 0)->wait(); });
  ++g_checks;
  if (dist::is_initialized()) throw CheckFailed{"is_initialized() after destroy_process_group"};
}

// ---- distributed::plan_memory ------------------------------------------------------------------
// A two-block CPU profile (offload/memory_planner.h) that only fits a budget of 150 bytes with
// one block kept: the Between windows hold the blocks' inputs (10 bytes each) on 90, 95 and 100
// bytes; keeping a block holds its 50 saved bytes instead, and saves its nograd forward. Rank 0
// gains most by keeping block 0 (10 ms against 1), rank 1 by keeping block 1 (12 ms against 1):
// planned alone they disagree. On the ranks' maxima (10 and 12 ms) block 1 is kept.
leangrad::offload::StepProfile rank_profile(int rank, int blocks = 2) {
  namespace off = leangrad::offload;
  off::StepProfile p;
  p.device = leangrad::Device::cpu();
  for (int i = 0; i < blocks; ++i) {
    off::BlockProfile b;
    b.name = "blocks." + std::to_string(i);
    b.input_bytes = 10;
    b.output_bytes = 10;
    b.saved_bytes = 50;
    b.forward_ms = 4;
    b.backward_ms = 8;
    b.nograd_forward_ms = (rank == 0) == (i == 0) ? 10.0 + 2.0 * i : 1.0;
    p.blocks.push_back(b);
  }
  for (int held = 0; held <= blocks; ++held) {
    off::MemoryWindow w;
    w.held_blocks = held;
    w.peak_bytes = w.start_bytes = 90 + 5 * held;
    p.windows.push_back(w);
  }
  p.step_ms = 50.0 + rank;
  p.parameter_bytes = 4 << 20;  // what the gradient all-reduce is timed on
  return p;
}

const char* policy_list(const std::vector<leangrad::offload::BlockPolicy>& policies) {
  static std::string text;
  text.clear();
  for (const auto policy : policies)
    text += std::string(text.empty() ? "" : ", ") + leangrad::offload::policy_name(policy);
  return text.c_str();
}

void scenario_plan_memory() {
  namespace off = leangrad::offload;
  const int rank = dist::get_rank();
  off::StepProfile profile = rank_profile(rank);
  const off::MemoryPlan own = off::plan_memory(profile, 150);
  const off::MemoryPlan plan = dist::plan_memory(profile, 150);

  // The reference: both ranks' profiles merged by hand, field by field, planned in one process.
  off::StepProfile merged = rank_profile(0);
  const off::StepProfile other = rank_profile(1);
  merged.step_ms = std::max(merged.step_ms, other.step_ms);
  for (std::size_t i = 0; i < merged.blocks.size(); ++i) {
    merged.blocks[i].nograd_forward_ms =
        std::max(merged.blocks[i].nograd_forward_ms, other.blocks[i].nograd_forward_ms);
  }
  const off::MemoryPlan reference = off::plan_memory(merged, 150);
  ++g_checks;
  if (plan.policies != reference.policies || plan.offload_parameters) {
    throw CheckFailed{leangrad::detail::str_cat("agreed plan ", policy_list(plan.policies),
                                                ", expected ", policy_list(reference.policies))};
  }
  ++g_checks;
  if (profile.processes != 2 || !(profile.gradient_sync_ms > 0) ||
      profile.blocks[0].nograd_forward_ms != 10 || profile.blocks[1].nograd_forward_ms != 12 ||
      profile.step_ms != 51) {
    throw CheckFailed{leangrad::detail::str_cat(
        "the profile planned on: ", profile.processes, " processes, gradient all-reduce ",
        profile.gradient_sync_ms, " ms, nograd forwards ", profile.blocks[0].nograd_forward_ms,
        " and ", profile.blocks[1].nograd_forward_ms, " ms, step ", profile.step_ms, " ms")};
  }
  std::printf("alone: %s\n", policy_list(own.policies));
  std::printf("agreed plan: %s (predicted step %.3f ms, gradient all-reduce %.3f ms)\n",
              policy_list(plan.policies), plan.predicted_step_ms, profile.gradient_sync_ms);
}

// The profile of a step on cuda:0 (both ranks share the one GPU; the Gloo group reduces on the
// CPU), with copy bandwidths of 1000 and 1001 bytes per ms, far below any real link's:
// plan_memory measures the bandwidth again with both ranks copying, unless a rank has no memory
// for the probe's buffers (the test caps one), and then plans on the slower rank's own.
void scenario_plan_memory_cuda() {
  namespace off = leangrad::offload;
  const int rank = dist::get_rank();
  off::StepProfile profile = rank_profile(rank);
  profile.device = leangrad::Device::cuda(0);
  profile.copy_bytes_per_ms = 1000.0 + rank;
  const off::MemoryPlan plan = dist::plan_memory(profile, 150);
  std::printf("copy bandwidth: %.0f bytes/ms; plan %s\n", profile.copy_bytes_per_ms,
              policy_list(plan.policies));
}

// Rank 1 profiled a model of three blocks: every rank refuses, and the group still works.
void scenario_plan_memory_mismatch() {
  const int rank = dist::get_rank();
  leangrad::offload::StepProfile profile = rank_profile(rank, rank == 1 ? 3 : 2);
  try {
    (void)dist::plan_memory(profile, 150);
    throw CheckFailed{"plan_memory over mismatched profiles did not throw"};
  } catch (const leangrad::Error& e) {
    std::printf("CAUGHT: %s\n", e.what());
  }
  Tensor t = input(DType::Float32, {3}, rank);
  dist::all_reduce(t, dist::ReduceOp::Max);
  std::printf("the group works after the refusal\n");
}

// Rank DIST_VICTIM kills itself (SIGKILL) while its peers are inside a stream of 4 MiB
// all-reduces; or, with `hang`, stops calling collectives and sleeps past the timeout. The
// others must raise an Error naming the collective and the victim.
void scenario_fault(bool hang) {
  const int rank = dist::get_rank();
  const int victim = env_int("DIST_VICTIM", 1);
  Tensor t = leangrad::empty({1 << 20}, leangrad::TensorOptions(DType::Float32));
  for (int i = 0; i < 3; ++i)
    dist::all_reduce(t);  // everyone is connected and warm
  if (rank == victim) {
    if (hang) {
      // Past the others' timeout and their report, then gone.
      std::this_thread::sleep_for(dist::default_process_group().timeout() +
                                  std::chrono::seconds(1));
      std::_Exit(0);
    }
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      ::raise(SIGKILL);
    }).detach();
  }
  all_reduce_until_it_fails(t);
  try {
    dist::all_reduce(t);
    throw CheckFailed{"a collective after the failure did not throw"};
  } catch (const leangrad::Error& e) {
    std::printf("NEXT: %s\n", e.what());
  }
}

// Rank DIST_VICTIM fails in its own code, not in a collective: a leangrad::Error that main's
// catch records (distributed::record_error) before the rank exits with 2. The others' next
// collective fails, and their Error must quote the victim's reason, on one line.
void scenario_raise() {
  const int rank = dist::get_rank();
  const int victim = env_int("DIST_VICTIM", 1);
  Tensor t = leangrad::empty({1 << 20}, leangrad::TensorOptions(DType::Float32));
  for (int i = 0; i < 3; ++i)
    dist::all_reduce(t);
  if (rank == victim) {
    LG_THROW(leangrad::Error, "the training data of rank ", rank,
             " is corrupt:\n  record 17 of shard 3 has 5 fields, expected 6");
  }
  all_reduce_until_it_fails(t);
}

// destroy_process_group on rank 0 while another thread asks is_initialized() and get_rank().
// Rank 0's destroy waits for rank 1 to leave its store, and rank 1 leaves only once rank 0's
// querying thread has its answers (it creates the file DIST_SIGNAL_FILE; the ranks share the
// file system): so the queries complete while destroy is still waiting, or never. With a
// timeout of minutes (the test's), a destroy that held the queries up would wait that long.
void scenario_destroy_while_querying() {
  const int rank = dist::get_rank();
  const char* signal_file = std::getenv("DIST_SIGNAL_FILE");
  if (signal_file == nullptr) throw CheckFailed{"DIST_SIGNAL_FILE is not set"};
  dist::barrier();
  if (rank != 0) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (::access(signal_file, F_OK) != 0) {
      if (std::chrono::steady_clock::now() > give_up)
        throw CheckFailed{"rank 0's queries did not complete while its destroy waited"};
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    dist::destroy_process_group();
    return;
  }
  std::atomic<bool> destroy_returned = false;
  std::string answers;
  std::thread querying([&] {
    // Once destroy_process_group has taken the group, the queries say so.
    while (dist::is_initialized()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::string rank_answer = "get_rank() did not throw";
    try {
      dist::get_rank();
    } catch (const leangrad::Error& e) {
      rank_answer = e.message();
    }
    answers = leangrad::detail::str_cat("is_initialized() false; get_rank(): ", rank_answer,
                                        "; destroy_process_group had ",
                                        destroy_returned ? "returned" : "not returned yet");
    std::FILE* f = std::fopen(signal_file, "w");
    if (f != nullptr) std::fclose(f);
  });
  dist::destroy_process_group();
  destroy_returned = true;
  querying.join();
  ++g_checks;
  std::printf("QUERIES: %s\n", answers.c_str());
}

// distributed::record_error on another thread of rank 0 while its main thread is inside
// destroy_process_group (Note [Reports while destroying] in distributed.cpp). Rank 0's destroy
// waits for rank 1 to leave its store, and rank 1 leaves only after the report was made (the
// reporting thread then creates DIST_SIGNAL_FILE) and its next collective, which rank 0 never
// enters, failed: so the report is made during the destroy, and rank 1's error must quote it.
void scenario_report_while_destroying() {
  const int rank = dist::get_rank();
  const char* signal_file = std::getenv("DIST_SIGNAL_FILE");
  if (signal_file == nullptr) throw CheckFailed{"DIST_SIGNAL_FILE is not set"};
  dist::barrier();
  if (rank != 0) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (::access(signal_file, F_OK) != 0) {
      if (std::chrono::steady_clock::now() > give_up)
        throw CheckFailed{"rank 0 did not report while its destroy waited"};
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Tensor t = leangrad::ones({4}, leangrad::TensorOptions(DType::Float32));
    all_reduce_until_it_fails(t);
    return;
  }
  std::atomic<bool> destroy_returned = false;
  bool reported_during_destroy = false;
  std::thread reporting([&] {
    while (dist::is_initialized()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    dist::record_error("rank 0 failed while destroy_process_group ran");
    reported_during_destroy = !destroy_returned;
    std::FILE* f = std::fopen(signal_file, "w");
    if (f != nullptr) std::fclose(f);
  });
  dist::destroy_process_group();
  destroy_returned = true;
  reporting.join();
  ++g_checks;
  if (!reported_during_destroy) throw CheckFailed{"the report was made after the destroy"};
  dist::record_error("after destroy_process_group: nothing, and no throw");
  std::printf("REPORTED during destroy_process_group\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dist_worker <scenario>\n");
    return 3;
  }
  const std::string scenario = argv[1];
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    const auto start = std::chrono::steady_clock::now();
    dist::init_process_group(dist::Backend::Gloo);
    std::printf("rank %d of %d joined in %.3f s\n", dist::get_rank(), dist::get_world_size(),
                seconds_since(start));
    if (scenario == "init_only") {
      dist::barrier();
    } else if (scenario == "collectives") {
      scenario_collectives();
    } else if (scenario == "collectives_cuda") {
      g_device = leangrad::Device::cuda(0);
      scenario_collectives();
    } else if (scenario == "layouts_async") {
      scenario_layouts_and_async();
    } else if (scenario == "big") {
      scenario_big();
    } else if (scenario == "exit_after_broadcast") {
      scenario_exit_after_broadcast();
    } else if (scenario == "destroy_in_flight") {
      scenario_destroy_in_flight();
    } else if (scenario == "reinit") {
      scenario_reinit();
    } else if (scenario.rfind("mismatch_", 0) == 0) {
      scenario_mismatch(scenario.substr(9));
    } else if (scenario == "raise") {
      scenario_raise();
    } else if (scenario == "destroy_while_querying") {
      scenario_destroy_while_querying();
    } else if (scenario == "report_while_destroying") {
      scenario_report_while_destroying();
    } else if (scenario == "die" || scenario == "hang") {
      scenario_fault(scenario == "hang");
    } else if (scenario == "plan_memory") {
      scenario_plan_memory();
    } else if (scenario == "plan_memory_cuda") {
      scenario_plan_memory_cuda();
    } else if (scenario == "plan_memory_mismatch") {
      scenario_plan_memory_mismatch();
    } else if (scenario.rfind("ddp_", 0) == 0) {
      g_checks += leangrad::test::run_ddp_scenario(scenario);
    } else if (scenario.rfind("zero_", 0) == 0) {
      g_checks += leangrad::test::run_zero_scenario(scenario);
    } else {
      std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
      return 3;
    }
    if (dist::is_initialized()) dist::destroy_process_group();  // some scenarios destroy it
    std::printf("OK %s: %d checks\n", scenario.c_str(), g_checks);
    return 0;
  } catch (const CheckFailed& f) {
    std::printf("CHECK FAILED: %s\n", f.what.c_str());
    return 1;
  } catch (const leangrad::test::ScenarioCheckFailed& f) {
    std::printf("CHECK FAILED: %s\n", f.what.c_str());
    return 1;
  } catch (const leangrad::Error& e) {
    std::printf("ERROR: %s\n", e.what());
    dist::record_error(e.what());  // for the other ranks' errors (Note [Why a rank failed])
    return 2;
  }
}
