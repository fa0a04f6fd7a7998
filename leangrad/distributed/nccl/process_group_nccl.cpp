// The NCCL process group: ProcessGroup's collectives on CUDA tensors of one GPU per process.
// Declared in process_group_nccl.h; made by make_nccl_process_group.
//
// Policy
// - One communicator per group, on this process's GPU (cuda:LOCAL_RANK, else the current
//   device). Rank 0 makes NCCL's unique id and posts it in the group's store; every rank reads it
//   and joins in NCCL's non-blocking mode, so joining, like every collective, is bounded by the
//   group's timeout and can be aborted.
// - Collectives are launched by the caller's thread, in call order (a mutex), on the group's own
//   stream, ordered after the caller's stream and before whoever consumes the result by events:
//   Note [Stream order]. No host synchronisation: an async collective returns once launched.
// - A tensor in flight is kept from reuse by the caching allocator's record_stream on the group's
//   stream. Non-contiguous tensors are staged through a contiguous copy and written back after.
// - Work::wait() blocks the host until the collective's event completes (polling it, so it
//   returns microseconds after the GPU finishes) or the group breaks.
// - A watchdog thread polls the works in flight and ncclCommGetAsyncError: on a timeout or an
//   NCCL error it marks the group broken, fails every work in flight with an Error naming the
//   collective, the group size and the ranks missing (the progress board, as with Gloo), posts
//   it as this rank's reason (Note [Why a rank failed] in progress.cpp), then aborts the
//   communicator, which makes NCCL's kernels waiting on a dead peer return. Later
//   collectives throw at once. Note [Watchdog].
// - Signatures are not exchanged (unlike Gloo): comparing them would need a host round trip per
//   collective. Arguments are checked on each rank; a mismatch across ranks ends as a timeout.
#include <leangrad/distributed/nccl/process_group_nccl.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda/cuda_check.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/distributed/store_keys.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// How often the watchdog looks at the works in flight and at NCCL's asynchronous errors.
constexpr auto kWatchdogPeriod = std::chrono::milliseconds(100);

std::string nccl_error_text(ncclResult_t status, ncclComm_t comm) {
  std::string text = detail::str_cat(ncclGetErrorString(status));
  const char* last = comm != nullptr ? ncclGetLastError(comm) : nullptr;
  if (last != nullptr && *last != '\0') text += detail::str_cat(" (", last, ")");
  return text;
}

ncclDataType_t nccl_dtype(DType dtype, const char* what) {
  switch (dtype) {
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
    case DType::Float16:
      return ncclFloat16;
    case DType::BFloat16:
      return ncclBfloat16;
    case DType::Int64:
      return ncclInt64;
    case DType::Int32:
      return ncclInt32;
    case DType::UInt8:
    case DType::Bool:  // moved, never reduced (check_arguments refuses reducing bool)
      return ncclUint8;
  }
  LG_THROW(DTypeError, what, ": NCCL has no type for ", dtype);
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Avg:
      return ncclAvg;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
  }
  LG_INTERNAL_ASSERT(false, "reduce op ", static_cast<int>(op));
}

// cuda:local_rank when the launcher said which, else the device this thread has current.
Device choose_device(int local_rank) {
  int count = 0;
  LG_CUDA_CHECK(cudaGetDeviceCount(&count));
  LG_CHECK_DEVICE(count > 0, "init_process_group(Backend::NCCL): no CUDA device is visible");
  if (local_rank >= 0) {
    LG_CHECK_DEVICE(local_rank < count, "init_process_group(Backend::NCCL): LOCAL_RANK ",
                    local_rank, " has no GPU of its own: ", count,
                    " visible (CUDA_VISIBLE_DEVICES); start at most ", count,
                    " processes per machine");
    return Device::cuda(local_rank);
  }
  return Device::cuda(cuda::current_device());
}

// The contiguous tensor NCCL reads and writes: `t` itself, or a contiguous copy of it.
Tensor staged(const Tensor& t) {
  return t.is_contiguous() ? t : ops::contiguous(t);
}

}  // namespace

// ---- NcclWork ----------------------------------------------------------------------------

NcclWork::NcclWork(std::string description, ProcessGroupNccl* group, Collective collective,
                   Clock::time_point deadline)
    : Work(std::move(description)),
      group_(group),
      collective_(std::move(collective)),
      deadline_(deadline) {}

bool NcclWork::poll() {
  if (Work::is_completed()) return true;
  if (!done_.query()) return false;
  // The group marks itself broken before it aborts the communicator (after which the kernels
  // return and the event completes with garbage in the buffers): a work whose event completed
  // in a group that is not broken has its result.
  if (group_->is_broken()) return Work::is_completed();
  finish(result_, nullptr);
  return true;
}

void NcclWork::wait() {
  // Spin for the first microseconds (a small collective is done by then), then back off to
  // 1 ms sleeps; the watchdog ends the wait on timeout by failing the work.
  auto pause = std::chrono::microseconds(0);
  while (!poll()) {
    if (pause.count() == 0) {
      std::this_thread::yield();
      pause = std::chrono::microseconds(1);
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
  Work::wait();  // rethrows the error the watchdog failed it with, if any
}

bool NcclWork::is_completed() const {
  return const_cast<NcclWork*>(this)->poll();
}

// ---- The group ---------------------------------------------------------------------------

ProcessGroupNccl::ProcessGroupNccl(const ProcessGroupSetup& setup)
    : ProcessGroup(setup.rank, setup.size, setup.timeout),
      device_(choose_device(setup.local_rank)),
      store_(setup.store),
      progress_(setup.store, setup.prefix, setup.rank, setup.size) {
  cuda::DeviceGuard guard(device_);
  stream_ = cuda::Stream::create(device_.index);
  const auto deadline = Clock::now() + timeout();

  ncclUniqueId id;
  const std::string key = store_keys::nccl_unique_id(setup.prefix);
  if (rank() == 0) {
    const ncclResult_t status = ncclGetUniqueId(&id);
    LG_CHECK(status == ncclSuccess, "init_process_group(Backend::NCCL): ncclGetUniqueId failed: ",
             nccl_error_text(status, nullptr));
    store_->set(key, std::string(id.internal, sizeof(id.internal)));
  }
  const std::string bytes = store_->get(key);  // Error naming the key after the timeout
  LG_CHECK(bytes.size() == sizeof(id.internal), "init_process_group(Backend::NCCL): the unique id ",
           "in the store has ", bytes.size(), " bytes, expected ", sizeof(id.internal),
           " (ranks built with different NCCL versions?)");
  std::memcpy(id.internal, bytes.data(), sizeof(id.internal));

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so that joining can time out: see settle()
  const ncclResult_t status = ncclCommInitRankConfig(&comm_, size(), id, rank(), &config);
  try {
    settle(comm_, status, "init_process_group(Backend::NCCL): ncclCommInitRankConfig", deadline);
  } catch (...) {
    if (comm_ != nullptr) ncclCommAbort(comm_);
    comm_ = nullptr;
    throw;
  }
  watchdog_ = std::thread([this] { watchdog(); });
}

ProcessGroupNccl::~ProcessGroupNccl() {
  shutdown();
}

void ProcessGroupNccl::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  watchdog_wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  // Works still in flight finish normally if their kernels can; a group that is broken or
  // whose peers are gone cannot wait for them, and aborts instead.
  std::deque<std::shared_ptr<NcclWork>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(in_flight_);
  }
  if (!is_broken()) {
    for (auto& work : left) {
      while (!work->poll() && Clock::now() < work->deadline())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  for (auto& work : left) {
    work->finish({},
                 std::make_exception_ptr(Error(detail::str_cat(work->description(),
                                                               ": destroy_process_group was called "
                                                               "before it completed"),
                                               __FILE__, __LINE__)));
  }
  // Taken under the mutex: a launch that failed on another thread may be aborting it
  // (break_group), which takes it the same way.
  ncclComm_t comm = nullptr;
  {
    std::lock_guard lock(mutex_);
    comm = std::exchange(comm_, nullptr);
  }
  if (comm != nullptr) {
    // The communicator is non-blocking: ncclCommFinalize returns ncclInProgress while NCCL
    // flushes its operations, and ncclCommDestroy may free the communicator only once that has
    // completed (ncclCommGetAsyncError says ncclSuccess); destroying it earlier frees memory
    // NCCL's proxy thread still uses. A finalize that fails or outlasts the timeout aborts.
    bool finalized = false;
    if (!is_broken()) {
      try {
        settle(comm, ncclCommFinalize(comm), "destroy_process_group: ncclCommFinalize",
               Clock::now() + timeout());
        finalized = true;
      } catch (const Error&) {
        // not finalized: aborted below
      }
    }
    if (finalized) {
      ncclCommDestroy(comm);
    } else {
      ncclCommAbort(comm);
    }
  }
}

bool ProcessGroupNccl::is_broken() const {
  std::lock_guard lock(broken_mutex_);
  return !broken_.empty();
}

std::string ProcessGroupNccl::broken_message() const {
  std::lock_guard lock(broken_mutex_);
  return broken_;
}

void ProcessGroupNccl::settle(ncclComm_t comm, ncclResult_t status, const char* what,
                              Clock::time_point deadline) {
  while (status == ncclInProgress) {
    LG_CHECK(Clock::now() < deadline, what, ": did not complete within ",
             format_duration(timeout()), " on rank ", rank(), " of ", size(),
             " (a rank that never joined, or a network NCCL cannot use: NCCL_DEBUG=INFO says)");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    const ncclResult_t query = ncclCommGetAsyncError(comm, &status);
    if (query != ncclSuccess) status = query;
  }
  LG_CHECK(status == ncclSuccess, what, " failed on rank ", rank(), " of ", size(), ": ",
           nccl_error_text(status, comm));
}

// Note [Stream order]
// The caller queued the kernels that produce the tensor on its current stream, and will queue
// the ones that read the result there too. A collective therefore
// 1. records an event on the caller's stream and makes the group's stream wait for it, so NCCL
//    reads the tensor only after it is written (no host wait);
// 2. launches the NCCL call on the group's stream, then records the work's event there;
// 3. tells the caching allocator (record_stream) that the buffers are in use on the group's
//    stream, so memory the caller frees meanwhile is not handed out before NCCL is done;
// 4. makes the caller's stream wait for the work's event, so kernels the caller queues next
//    (including the write-back of a staged tensor) see the result — as if the collective had
//    run on the caller's stream, while the group's own stream lets it overlap with compute the
//    caller queued before.
std::shared_ptr<Work> ProcessGroupNccl::launch(
    Collective c, const Tensor& tensor, const std::vector<Tensor>& buffers,
    std::vector<Tensor> result, const std::vector<std::pair<Tensor, Tensor>>& write_backs,
    const Launch& call) {
  cuda::DeviceGuard guard(device_);
  std::unique_lock lock(mutex_);
  LG_CHECK(!stopping_, c.describe(), ": the process group was shut down");
  {
    std::lock_guard broken_lock(broken_mutex_);
    LG_CHECK(broken_.empty(), c.describe(),
             ": the process group is unusable after an earlier failure: ", broken_);
  }
  c.seq = next_seq_++;
  progress_.enter(c.seq, c.describe());
  auto work =
      std::make_shared<NcclWork>(c.describe() + " (collective #" + std::to_string(c.seq) + ")",
                                 this, c, Clock::now() + timeout());
  work->result_ = std::move(result);

  const cuda::Stream caller = cuda::current_stream(device_.index);
  cuda::Event ready(/*enable_timing=*/false);
  ready.record(caller);
  stream_.wait(ready);
  try {
    // A profiler span for the collective, its device time taken on the NCCL stream.
    const cuda::StreamGuard on_nccl_stream(stream_);
    const profiler::Span span(profiler::is_recording() ? c.describe().c_str() : "",
                              profiler::Category::Collective, tensor);
    settle(comm_, call(static_cast<cudaStream_t>(stream_.handle())), "NCCL", work->deadline());
  } catch (const Error& e) {
    const std::string message = detail::str_cat(work->description(), ": ", e.message());
    lock.unlock();  // break_group takes the mutex
    break_group(message);
    throw Error(message, __FILE__, __LINE__);
  }
  work->start();  // enqueued: NCCL runs it once the caller's earlier work is done
  work->done_.record(stream_);
  for (const Tensor& b : buffers)
    b.record_stream(stream_);
  caller.wait(work->done_);
  for (const auto& [target, buffer] : write_backs)
    ops::copy_(target, buffer);  // on the caller's stream, after the collective
  if (c.kind != CollectiveKind::AllGather && c.kind != CollectiveKind::Barrier)
    tensor.bump_version();  // written in place: autograd's saved-tensor checks see it
  in_flight_.push_back(work);
  watchdog_wake_.notify_all();
  return work;
}

std::shared_ptr<Work> ProcessGroupNccl::all_reduce_async(const Tensor& tensor, ReduceOp op) {
  Collective c;
  c.kind = CollectiveKind::AllReduce;
  c.op = op;
  check_arguments(c, tensor, {}, size(), "nccl", device_);
  c.dtype = tensor.dtype();
  c.shape = tensor.shape();
  const Tensor buffer = staged(tensor);
  const ncclDataType_t type = nccl_dtype(c.dtype, "all_reduce");
  std::vector<std::pair<Tensor, Tensor>> write_backs;
  if (!buffer.is_same(tensor)) write_backs.emplace_back(tensor, buffer);
  return launch(c, tensor, {buffer}, {}, write_backs, [&](cudaStream_t stream) {
    return ncclAllReduce(buffer.data_ptr(), buffer.data_ptr(),
                         static_cast<std::size_t>(buffer.numel()), type, nccl_op(op), comm_,
                         stream);
  });
}

std::shared_ptr<Work> ProcessGroupNccl::broadcast_async(const Tensor& tensor, int root) {
  Collective c;
  c.kind = CollectiveKind::Broadcast;
  c.root = root;
  check_arguments(c, tensor, {}, size(), "nccl", device_);
  c.dtype = tensor.dtype();
  c.shape = tensor.shape();
  const Tensor buffer = staged(tensor);
  const ncclDataType_t type = nccl_dtype(c.dtype, "broadcast");
  std::vector<std::pair<Tensor, Tensor>> write_backs;
  if (!buffer.is_same(tensor) && rank() != root) write_backs.emplace_back(tensor, buffer);
  return launch(c, tensor, {buffer}, {}, write_backs, [&](cudaStream_t stream) {
    return ncclBroadcast(buffer.data_ptr(), buffer.data_ptr(),
                         static_cast<std::size_t>(buffer.numel()), type, root, comm_, stream);
  });
}

std::shared_ptr<Work> ProcessGroupNccl::all_gather_async(const Tensor& tensor) {
  Collective c;
  c.kind = CollectiveKind::AllGather;
  check_arguments(c, tensor, {}, size(), "nccl", device_);
  c.dtype = tensor.dtype();
  c.shape = tensor.shape();
  const Tensor input = staged(tensor);
  Shape gathered_shape{static_cast<std::int64_t>(size())};
  gathered_shape.insert(gathered_shape.end(), c.shape.begin(), c.shape.end());
  const Tensor gathered = empty(gathered_shape, TensorOptions(c.dtype).device(device_));
  std::vector<Tensor> result;
  for (int r = 0; r < size(); ++r)
    result.push_back(gathered.select(0, r));
  const ncclDataType_t type = nccl_dtype(c.dtype, "all_gather");
  return launch(c, tensor, {input, gathered}, std::move(result), {}, [&](cudaStream_t stream) {
    return ncclAllGather(input.data_ptr(), gathered.data_ptr(),
                         static_cast<std::size_t>(input.numel()), type, comm_, stream);
  });
}

std::shared_ptr<Work> ProcessGroupNccl::reduce_scatter_async(const Tensor& output,
                                                             const std::vector<Tensor>& inputs,
                                                             ReduceOp op) {
  Collective c;
  c.kind = CollectiveKind::ReduceScatter;
  c.op = op;
  check_arguments(c, output, inputs, size(), "nccl", device_);
  c.dtype = output.dtype();
  c.shape = output.shape();
  // NCCL reads the inputs as one (size, ...) buffer: rank r's piece at r·numel.
  Shape packed_shape{static_cast<std::int64_t>(size())};
  packed_shape.insert(packed_shape.end(), c.shape.begin(), c.shape.end());
  const Tensor packed = empty(packed_shape, TensorOptions(c.dtype).device(device_));
  for (int r = 0; r < size(); ++r)
    ops::copy_(packed.select(0, r), inputs[static_cast<std::size_t>(r)]);
  const Tensor buffer = staged(output);
  std::vector<std::pair<Tensor, Tensor>> write_backs;
  if (!buffer.is_same(output)) write_backs.emplace_back(output, buffer);
  const ncclDataType_t type = nccl_dtype(c.dtype, "reduce_scatter");
  return launch(c, output, {packed, buffer}, {}, write_backs, [&](cudaStream_t stream) {
    return ncclReduceScatter(packed.data_ptr(), buffer.data_ptr(),
                             static_cast<std::size_t>(buffer.numel()), type, nccl_op(op), comm_,
                             stream);
  });
}

// A barrier is an all-reduce of one element that the host waits for (as PyTorch's NCCL group
// does): every rank has launched it, and the GPU work queued before it on the caller's stream
// has run.
std::shared_ptr<Work> ProcessGroupNccl::barrier_async() {
  Collective c;
  c.kind = CollectiveKind::Barrier;
  const Tensor token = zeros({1}, TensorOptions(DType::Float32).device(device_));
  return launch(c, token, {token}, {}, {}, [&](cudaStream_t stream) {
    return ncclAllReduce(token.data_ptr(), token.data_ptr(), 1, ncclFloat32, ncclSum, comm_,
                         stream);
  });
}

// Note [Watchdog]
// NCCL's kernels wait on their peers on the GPU: a rank that died or never launched its side
// leaves them spinning forever, and with them everything queued after on the caller's stream
// (a .cpu() of any later result would hang the host). Every kWatchdogPeriod the watchdog
// 1. retires the works whose events completed;
// 2. asks ncclCommGetAsyncError whether NCCL saw an error (a peer's connection closed);
// 3. compares the oldest work's deadline with the clock.
// On an error or a timeout it calls break_group: the group is marked broken *first*, every work
// in flight fails with the Error (naming the collective, the group size and, from the progress
// board, the ranks that did not arrive or exited), and only then the communicator is aborted,
// which ends the spinning kernels. Waiters see the failure, never the garbage the aborted
// kernels leave in the buffers.
void ProcessGroupNccl::watchdog() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    watchdog_wake_.wait_for(lock, kWatchdogPeriod);
    if (stopping_ || is_broken()) continue;
    while (!in_flight_.empty() && in_flight_.front()->poll())
      in_flight_.pop_front();
    if (in_flight_.empty()) continue;
    const std::shared_ptr<NcclWork> oldest = in_flight_.front();
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    const bool failed = async != ncclSuccess && async != ncclInProgress;
    const bool timed_out = Clock::now() >= oldest->deadline();
    if (!failed && !timed_out) continue;
    // Read while the mutex keeps comm_ from being aborted (break_group, shutdown).
    const std::string cause =
        failed ? detail::str_cat("NCCL reported ", nccl_error_text(async, comm_))
               : detail::str_cat("did not complete within ", format_duration(timeout()));
    lock.unlock();  // the board reads the store, and break_group takes the mutex
    break_group(detail::str_cat(
        oldest->description(), " on rank ", rank(), " of a group of ", size(), ": ", cause, "; ",
        progress_.diagnose(oldest->collective().seq, timed_out && !failed)));
    lock.lock();
  }
}

void ProcessGroupNccl::break_group(const std::string& error) {
  {
    std::lock_guard lock(broken_mutex_);
    if (!broken_.empty()) return;
    broken_ = error;
  }
  progress_.report(error);  // for the other ranks' diagnoses (Note [Why a rank failed])
  std::deque<std::shared_ptr<NcclWork>> failed;
  ncclComm_t comm = nullptr;
  {
    // comm_ is read and written under the mutex (launch, the watchdog, shutdown), so no other
    // thread uses or aborts it once it is taken here.
    std::lock_guard lock(mutex_);
    failed.swap(in_flight_);
    comm = std::exchange(comm_, nullptr);
  }
  for (auto& work : failed)
    work->finish({}, std::make_exception_ptr(Error(error, __FILE__, __LINE__)));
  if (comm != nullptr) ncclCommAbort(comm);
}

std::shared_ptr<ProcessGroup> make_nccl_process_group(const ProcessGroupSetup& setup) {
  return std::make_shared<ProcessGroupNccl>(setup);
}

bool is_nccl_available() {
  return true;
}

}  // namespace leangrad::distributed
