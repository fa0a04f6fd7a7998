// The Gloo process group: ProcessGroup's collectives on CPU tensors over Gloo's TCP transport
// (Debian's libgloo-dev). Declared in process_group_gloo.h; made by make_gloo_process_group.
//
// Policy
// - One Gloo context per group, connected by Gloo's own rendezvous through the group's Store
//   (GlooStore), with the group's timeout: pairs that do not connect in time and every
//   collective fail after it.
// - One worker thread (WorkQueue) runs the collectives in call order; callers get a Work, and
//   the blocking forms wait for theirs. See Note [One collective, step by step].
// - Gloo sees bytes: the tensor itself when it is contiguous, else a contiguous copy written back
//   afterwards. Reductions use reduce_op.h's loops, which also do float16 and bfloat16 (Gloo's
//   own functions have no bfloat16).
// - CUDA tensors are staged through pinned host buffers: Note [CUDA tensors on Gloo].
// - all_reduce is Gloo's ring all-reduce (avg: sum, then divide by the group size); broadcast
//   Gloo's binomial tree; all_gather Gloo's ring all-gather into one (size, ...) buffer;
//   reduce_scatter Gloo's all-to-all, after which each rank reduces the pieces it received in
//   rank order (what a ring reduce-scatter sends, and a fixed order of sums); barrier is the
//   signature exchange alone (Note [Signatures] in collective.cpp).
// - A failure of Gloo (a peer gone, a timeout) or of the store breaks the group: the Error names
//   the ranks that did not arrive or exited (Note [Naming the missing ranks] in progress.cpp)
//   and every later collective repeats it. A signature mismatch does not break it: no data
//   moved, and every rank raised the same error.
// - A rank that exits ends the collectives waiting on it within milliseconds: Gloo wakes most
//   waits itself, and a watchdog the one kind it misses (Note [Waking Gloo] in
//   gloo_watchdog.cpp).
// - SIGPIPE never kills the process: Note [SIGPIPE].
#include <leangrad/distributed/gloo/process_group_gloo.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/distributed/gloo/gloo_store.h>
#include <leangrad/distributed/gloo/gloo_tags.h>
#include <leangrad/distributed/store_keys.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::distributed {
namespace {

// Note [SIGPIPE]
// Writing to a socket whose peer has closed raises SIGPIPE, which kills a process by default,
// and Gloo's TCP transport writes with writev, which cannot ask not to. Rather than change the
// whole program's signal disposition, every thread that runs Gloo's I/O blocks SIGPIPE, and a
// write to a dead peer fails with EPIPE, which Gloo reports as an exception. The worker thread
// blocks it itself (WorkQueue::run); Gloo's event-loop thread is created with the device and
// inherits the signal mask of the thread creating it, so the constructor holds this guard while
// it creates the device and connects. The guard discards a SIGPIPE raised meanwhile (pending on
// this thread) before it restores the mask.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlocked() {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &no_wait) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
};

// Calls f.template operator()<T>() with an unsigned type T of `element_size` bytes: Gloo's
// options take typed pointers and count elements in sizeof(T).
template <typename F>
void with_element_type(std::size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      return f.template operator()<std::uint8_t>();
    case 2:
      return f.template operator()<std::uint16_t>();
    case 4:
      return f.template operator()<std::uint32_t>();
    case 8:
      return f.template operator()<std::uint64_t>();
  }
  LG_INTERNAL_ASSERT(false, "element size ", element_size);
}

// Note [CUDA tensors on Gloo]
// Gloo moves host memory, so a CUDA tensor goes through a pinned host buffer (how a build without
// NCCL, or two processes sharing one GPU, which NCCL refuses, can still run CUDA collectives):
// 1. the caller's thread records an event on its current stream when it queues the collective
//    (enqueue), and the worker waits for that event before it reads the tensor, so the copy sees
//    every kernel the caller queued before the collective;
// 2. the worker copies the tensor into a pinned buffer and waits for the copy (staged), runs
//    Gloo's collective on the buffer, copies the result back and waits for that copy too
//    (write_back, to_device), all on its own thread with the tensor's device current;
// 3. so when Work::wait() returns the tensor holds the result, and kernels the caller queues
//    after it read it. As with CPU tensors, the caller must not write the tensor while the
//    collective is in flight.

// The contiguous host tensor Gloo reads and writes: `t` itself, a contiguous copy of it, or, for
// a CUDA tensor, a pinned host copy (Note [CUDA tensors on Gloo]).
Tensor staged(const Tensor& t) {
  if (!t.device().is_cuda()) return ops::contiguous(t);
  Tensor host = empty(t.shape(), TensorOptions(t.dtype()).pinned_memory(true));
  ops::copy_(host, t);
  cuda::current_stream(t.device().index).synchronize();
  return host;
}

// `host` on `device`, the copy finished (a CPU `device` returns `host`).
Tensor to_device(const Tensor& host, const Device& device) {
  if (!device.is_cuda()) return host;
  Tensor moved = host.to(device);
  cuda::current_stream(device.index).synchronize();
  return moved;
}

// Writes a collective's result back into the caller's tensor and bumps its version, since the
// data changed in place (autograd's saved-tensor checks see it).
void write_back(const Tensor& t, const Tensor& buffer) {
  if (!buffer.is_same(t)) {
    ops::copy_(t, buffer);
    if (t.device().is_cuda()) cuda::current_stream(t.device().index).synchronize();
  }
  t.bump_version();
}

// The bytes a collective's payload moves per rank: the tensor's (reduce_scatter: the output's).
std::uint64_t payload_bytes(const Collective& c) {
  if (c.kind == CollectiveKind::Barrier) return 0;
  std::uint64_t n = element_size(c.dtype);
  for (const std::int64_t d : c.shape)
    n *= static_cast<std::uint64_t>(d);
  return n;
}

bool mentions_timeout(const std::string& text) {
  std::string lower(text);
  for (char& ch : lower)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower.find("timed out") != std::string::npos || lower.find("timeout") != std::string::npos;
}

}  // namespace

ProcessGroupGloo::ProcessGroupGloo(const ProcessGroupSetup& setup)
    : ProcessGroup(setup.rank, setup.size, setup.timeout),
      store_(setup.store),
      check_signatures_(setup.check_signatures),
      progress_(setup.store, setup.prefix, setup.rank, setup.size) {
  SigpipeBlocked guard;  // Note [SIGPIPE]
  gloo::transport::tcp::attr attr;
  // GLOO_SOCKET_IFNAME (as in PyTorch) picks the interface; otherwise the address this process
  // reaches the store from, which the other ranks can reach it through too.
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface != nullptr && *iface) {
    attr.iface = iface;
  } else {
    attr.hostname = setup.local_address;
  }
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank(), size());
    context->setTimeout(timeout());
    GlooStore gloo_store(*store_, store_keys::gloo(setup.prefix));
    context->connectFullMesh(gloo_store, device);
    context_ = std::move(context);
  } catch (const Error&) {
    throw;  // the store's own errors name what they waited for
  } catch (const std::exception& e) {
    LG_THROW(Error, "init_process_group: Gloo could not connect rank ", rank(), " to the other ",
             size() - 1, " rank(s) within ", format_duration(timeout()), " (address '",
             attr.iface.empty() ? attr.hostname : "interface " + attr.iface, "'): ", e.what());
  }
  watchdog_ = std::make_unique<GlooWatchdog>(progress_);
  queue_ = std::make_unique<WorkQueue>();
}

ProcessGroupGloo::~ProcessGroupGloo() {
  shutdown();
}

void ProcessGroupGloo::shutdown() {
  // The collectives queued before run first (WorkQueue::stop), on a context still connected.
  if (queue_) queue_->stop("the process group was destroyed (destroy_process_group)");
  SigpipeBlocked guard;
  context_.reset();  // closes the connections to the other ranks
}

bool ProcessGroupGloo::is_broken() const {
  std::lock_guard lock(broken_mutex_);
  return !broken_.empty();
}

// Note [One collective, step by step]
// 1. The caller's thread checks the arguments (an error here is this rank's alone: nothing is
//    queued and no sequence number is used), numbers the collective and queues it.
// 2. The worker refuses it at once if the group is broken, then records on the progress board
//    that this rank has entered collective #seq.
// 3. The ranks all-gather their signatures (their own tag: Note [Gloo tags] in gloo_tags.h) and
//    compare them: on a mismatch every rank throws the same error, and the group stays usable.
// 4. The payload moves the data (its own tag): stage, Gloo's collective, write back.
// 5. The worker records on the board that this rank completed #seq, then completes the Work
//    (Note [A rank that exits after its last collective] in progress.cpp).
// 6. An exception from Gloo or the store in steps 2 to 4 goes through fail(): it closes this
//    rank's connections (so peers waiting on it fail at once instead of at their timeout), the
//    board names the missing ranks, the group is marked broken, and the message goes on the
//    board as this rank's reason (Note [Why a rank failed] in progress.cpp).
std::shared_ptr<Work> ProcessGroupGloo::enqueue(Collective c, const Tensor& tensor,
                                                const std::vector<Tensor>& inputs,
                                                Payload payload) {
  // CPU tensors, or CUDA tensors all on the first one's GPU (staged: Note [CUDA tensors on Gloo]).
  const Device device =
      tensor.defined() && tensor.device().is_cuda() ? tensor.device() : Device::cpu();
  check_arguments(c, tensor, inputs, size(), "gloo", device);
  if (c.kind != CollectiveKind::Barrier) {
    c.dtype = tensor.dtype();
    c.shape = tensor.shape();
  }
  std::shared_ptr<cuda::Event> ready;
  if (device.is_cuda()) {
    cuda::DeviceGuard guard(device);
    ready = std::make_shared<cuda::Event>(/*enable_timing=*/false);
    ready->record(cuda::current_stream(device.index));
  }
  std::lock_guard lock(mutex_);
  LG_CHECK(queue_ != nullptr, c.describe(), ": the process group was shut down");
  c.seq = next_seq_++;
  auto work = std::make_shared<Work>(c.describe() + " (collective #" + std::to_string(c.seq) + ")");
  queue_->push(work, [this, c, device, ready, payload = std::move(payload)] {
    if (!ready) return run(c, payload);
    cuda::DeviceGuard guard(device);
    ready->synchronize();
    return run(c, payload);
  });
  return work;
}

std::vector<Tensor> ProcessGroupGloo::run(const Collective& c, const Payload& payload) {
  // On the worker thread: the profiler's track of the collectives as Gloo runs them.
  const profiler::Span span(profiler::is_recording() ? c.describe().c_str() : "",
                            profiler::Category::Collective);
  {
    std::lock_guard lock(broken_mutex_);
    LG_CHECK(broken_.empty(), c.describe(), " (collective #", c.seq,
             "): the process group is unusable after an earlier failure: ", broken_);
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  running_seq_ = c.seq;
  try {
    progress_.enter(c.seq, c.describe());
  } catch (const Error& e) {
    fail(c, e.message(), false, elapsed_s());
  }
  try {
    exchange_signatures(c);
  } catch (const Error&) {
    throw;  // a mismatch: every rank saw it, the group stays usable
  } catch (const std::exception& e) {
    fail(c, e.what(), mentions_timeout(e.what()), elapsed_s());
  }
  std::vector<Tensor> result;
  try {
    result = payload(gloo_tags::payload_tag(c.seq, payload_bytes(c)));  // Note [Gloo tags]
  } catch (const Error& e) {
    fail(c, e.message(), false, elapsed_s());
  } catch (const std::exception& e) {
    fail(c, e.what(), mentions_timeout(e.what()), elapsed_s());
  }
  if (size() > 1) {
    try {
      progress_.finish(c.seq);
    } catch (const Error&) {
      // The data moved: this collective succeeded. A store that is gone fails the next one.
    }
  }
  return result;
}

void ProcessGroupGloo::exchange_signatures(const Collective& c) {
  // Without the checks only barrier, which is this exchange, still runs it.
  if (size() == 1 || (!check_signatures_ && c.kind != CollectiveKind::Barrier)) return;
  Signature mine = encode_signature(c);
  std::vector<std::int64_t> all(kSignatureWords * static_cast<std::size_t>(size()));
  auto in = unbound(mine.data(), sizeof(mine));
  auto out = unbound(all.data(), all.size() * sizeof(std::int64_t));
  const std::vector<gloo::transport::UnboundBuffer*> buffers = {in.get(), out.get()};
  gloo::AllgatherOptions opts(context_);
  opts.setInput<std::int64_t>(std::move(in));
  opts.setOutput<std::int64_t>(std::move(out));
  opts.setTag(gloo_tags::signature_tag(c.seq));  // Note [Gloo tags] in gloo_tags.h
  opts.setTimeout(timeout());
  watched(buffers, [&] { gloo::allgather(opts); });
  check_signatures(c, all, size());
}

void ProcessGroupGloo::fail(const Collective& c, const std::string& cause, bool timed_out,
                            double elapsed_s) {
  // Close every connection first, so the ranks still waiting on this one fail now rather than
  // at their own timeout: one failure ends the collective on every rank within milliseconds.
  try {
    context_->closeConnections();
  } catch (const std::exception&) {  // already closed by the failure itself
  }
  const std::string missing = progress_.diagnose(c.seq, timed_out);
  char elapsed[32];
  std::snprintf(elapsed, sizeof(elapsed), "%.2f s", elapsed_s);
  const std::string message =
      detail::str_cat(c.describe(), " (collective #", c.seq, ") failed on rank ", rank(),
                      " of a group of ", size(), " after ", elapsed, " (timeout ",
                      format_duration(timeout()), "): ", missing, ". Gloo: ", cause);
  {
    std::lock_guard lock(broken_mutex_);
    if (broken_.empty()) broken_ = message;
  }
  progress_.report(message);  // for the other ranks' diagnoses (Note [Why a rank failed])
  LG_THROW(Error, message);
}

std::unique_ptr<gloo::transport::UnboundBuffer> ProcessGroupGloo::unbound(void* data,
                                                                          std::size_t bytes) {
  return context_->createUnboundBuffer(data, bytes);
}

void ProcessGroupGloo::watched(const std::vector<gloo::transport::UnboundBuffer*>& buffers,
                               const std::function<void()>& gloo_call) {
  GlooWatchdog::Call call(*watchdog_, running_seq_, buffers);
  try {
    gloo_call();
  } catch (...) {
    call.check();  // the watchdog's reason says more than the error of an aborted wait
    throw;
  }
  call.check();
}

// ---- The collectives: each checks, queues, and gives the worker its payload ----------------

std::shared_ptr<Work> ProcessGroupGloo::all_reduce_async(const Tensor& tensor, ReduceOp op) {
  Collective c;
  c.kind = CollectiveKind::AllReduce;
  c.op = op;
  return enqueue(c, tensor, {}, [this, tensor, op](std::uint32_t tag) {
    Tensor buffer = staged(tensor);
    const std::size_t n = static_cast<std::size_t>(buffer.numel());
    const DType dtype = buffer.dtype();
    if (n > 0 && size() > 1) {
      auto out = unbound(buffer.data_ptr(), buffer.nbytes());
      const std::vector<gloo::transport::UnboundBuffer*> buffers = {out.get()};
      gloo::AllreduceOptions opts(context_);
      with_element_type(buffer.element_size(),
                        [&]<typename T>() { opts.setOutput<T>(std::move(out)); });
      const ReduceOp combine = op == ReduceOp::Avg ? ReduceOp::Sum : op;
      opts.setReduceFunction(
          [combine, dtype](void* out, const void* a, const void* b, std::size_t count) {
            reduce_buffers(combine, dtype, out, a, b, count);
          });
      opts.setTag(tag);
      opts.setTimeout(timeout());
      watched(buffers, [&] { gloo::allreduce(opts); });
    }
    if (op == ReduceOp::Avg) divide_buffer(dtype, buffer.data_ptr(), n, size());
    write_back(tensor, buffer);
    return std::vector<Tensor>{};
  });
}

std::shared_ptr<Work> ProcessGroupGloo::broadcast_async(const Tensor& tensor, int root) {
  Collective c;
  c.kind = CollectiveKind::Broadcast;
  c.root = root;
  return enqueue(c, tensor, {}, [this, tensor, root](std::uint32_t tag) {
    Tensor buffer = staged(tensor);
    if (buffer.nbytes() > 0 && size() > 1) {
      auto out = unbound(buffer.data_ptr(), buffer.nbytes());
      const std::vector<gloo::transport::UnboundBuffer*> buffers = {out.get()};
      gloo::BroadcastOptions opts(context_);
      opts.setOutput<std::uint8_t>(std::move(out));
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout());
      watched(buffers, [&] { gloo::broadcast(opts); });
    }
    if (rank() != root) write_back(tensor, buffer);
    return std::vector<Tensor>{};
  });
}

std::shared_ptr<Work> ProcessGroupGloo::all_gather_async(const Tensor& tensor) {
  Collective c;
  c.kind = CollectiveKind::AllGather;
  return enqueue(c, tensor, {}, [this, tensor](std::uint32_t tag) {
    Tensor input = staged(tensor);
    Shape gathered_shape = tensor.shape();
    gathered_shape.insert(gathered_shape.begin(), size());
    Tensor gathered = empty(gathered_shape, TensorOptions(tensor.dtype()));  // (size, ...)
    const std::size_t nbytes = input.nbytes();
    if (nbytes > 0 && size() > 1) {
      auto in = unbound(input.data_ptr(), nbytes);
      auto out = unbound(gathered.data_ptr(), nbytes * size());
      const std::vector<gloo::transport::UnboundBuffer*> buffers = {in.get(), out.get()};
      gloo::AllgatherOptions opts(context_);
      opts.setInput<std::uint8_t>(std::move(in));
      opts.setOutput<std::uint8_t>(std::move(out));
      opts.setTag(tag);
      opts.setTimeout(timeout());
      watched(buffers, [&] { gloo::allgather(opts); });
    } else if (nbytes > 0) {
      std::memcpy(gathered.data_ptr(), input.data_ptr(), nbytes);
    }
    gathered = to_device(gathered, tensor.device());
    std::vector<Tensor> per_rank;
    for (int r = 0; r < size(); ++r)
      per_rank.push_back(gathered.select(0, r));
    return per_rank;
  });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter_async(const Tensor& output,
                                                             const std::vector<Tensor>& inputs,
                                                             ReduceOp op) {
  Collective c;
  c.kind = CollectiveKind::ReduceScatter;
  c.op = op;
  return enqueue(c, output, inputs, [this, output, inputs, op](std::uint32_t tag) {
    const std::size_t n = static_cast<std::size_t>(output.numel());
    const std::size_t nbytes = output.nbytes();
    const DType dtype = output.dtype();
    Tensor result = staged(output);
    if (n > 0) {
      // send holds inputs[0], inputs[1], ... back to back: piece r goes to rank r. After the
      // all-to-all, received holds piece `rank()` of every rank, in rank order.
      const Shape whole = {static_cast<std::int64_t>(n) * size()};
      Tensor send = empty(whole, TensorOptions(dtype));
      Tensor received = empty(whole, TensorOptions(dtype));
      auto* send_bytes = static_cast<std::uint8_t*>(send.data_ptr());
      auto* received_bytes = static_cast<std::uint8_t*>(received.data_ptr());
      for (int r = 0; r < size(); ++r) {
        Tensor piece = staged(inputs[static_cast<std::size_t>(r)]);
        std::memcpy(send_bytes + r * nbytes, piece.data_ptr(), nbytes);
      }
      if (size() > 1) {
        auto in = unbound(send_bytes, nbytes * size());
        auto out = unbound(received_bytes, nbytes * size());
        const std::vector<gloo::transport::UnboundBuffer*> buffers = {in.get(), out.get()};
        gloo::AlltoallOptions opts(context_);
        opts.setInput<std::uint8_t>(std::move(in));
        opts.setOutput<std::uint8_t>(std::move(out));
        opts.setTag(tag);
        opts.setTimeout(timeout());
        watched(buffers, [&] { gloo::alltoall(opts); });
      } else {
        std::memcpy(received_bytes, send_bytes, nbytes);
      }
      // ((piece of rank 0 + piece of rank 1) + piece of rank 2) + ...: the same order on every
      // rank and in every run.
      std::memcpy(result.data_ptr(), received_bytes, nbytes);
      const ReduceOp combine = op == ReduceOp::Avg ? ReduceOp::Sum : op;
      for (int r = 1; r < size(); ++r) {
        reduce_buffers(combine, dtype, result.data_ptr(), result.data_ptr(),
                       received_bytes + r * nbytes, n);
      }
      if (op == ReduceOp::Avg) divide_buffer(dtype, result.data_ptr(), n, size());
    }
    write_back(output, result);
    return std::vector<Tensor>{};
  });
}

std::shared_ptr<Work> ProcessGroupGloo::barrier_async() {
  return enqueue(Collective(), Tensor(), {}, [](std::uint32_t) { return std::vector<Tensor>{}; });
}

// ---- The factory (process_group.h) -----------------------------------------------------------

std::shared_ptr<ProcessGroup> make_gloo_process_group(const ProcessGroupSetup& setup) {
  return std::make_shared<ProcessGroupGloo>(setup);
}

bool is_gloo_available() {
  return true;
}

}  // namespace leangrad::distributed
