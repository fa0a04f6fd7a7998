// The default process group and the free functions of distributed.h.
//
// Note [The default group's lifetime]
// init_process_group stores the group, its store and its settings in one process-wide state,
// guarded by a mutex. destroy_process_group shuts the group down and releases the store. A
// program that exits without destroy_process_group leaves the state alone on purpose: the
// state is never destroyed by a static destructor, which could run while the worker thread
// still used memory (the caching allocator's) that other static destructors had released; the
// operating system closes the sockets when the process ends.
//
// Note [Destroying outside the lock]
// destroy_process_group can take long: the queued collectives run first (each within the
// timeout), and rank 0 then waits for the other ranks to leave its store (up to the timeout,
// 10 minutes by default). Holding the mutex meanwhile would block every other thread's
// is_initialized(), get_rank() or record_error() for as long. So it takes the group and its
// store out of the state under the mutex, marks the state `destroying`, and shuts them down
// after releasing it: from its first moment the other threads see no group, at once.
// init_process_group waits while a destroy is in progress, so the next group's store does not
// find the port still served by the last one.
//
// Note [Reports while destroying]
// record_error posts through this process's connection to the store, which
// destroy_process_group keeps until its very end (rank 0, when it serves the store, waits there
// for the others). A report is most needed then: another thread failing while the main thread
// drains the queue or waits. So the state keeps where reports go (`report_to`: the store, the
// group's prefix, rank and size) from init_process_group until destroy_process_group closes the
// connection, separately from the group, which is gone from destroy's first moment; record_error
// during a destroy still posts, before the departure that closing the connection records. Once
// destroy_process_group has returned, this rank has left the store, and the others read its
// departure as final (Note [Why a rank failed] in progress.cpp): a later report would need a new
// connection, which the server would count as the rank joining again, and rank 0's store may be
// gone. So record_error does nothing after it, as without a group (a documented limit).
#include <leangrad/distributed/distributed.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/distributed/environment.h>
#include <leangrad/distributed/progress.h>
#include <leangrad/distributed/rendezvous.h>
#include <leangrad/distributed/store_keys.h>
#include <leangrad/distributed/tcp_store.h>

namespace leangrad::distributed {
namespace {

// Where record_error posts (Note [Reports while destroying]).
struct ReportTarget {
  std::shared_ptr<Store> store;
  std::string prefix;
  int rank = 0;
  int size = 0;
};

struct DefaultGroup {
  std::mutex mutex;
  ProcessGroupConfig config;
  Rendezvous rendezvous;
  std::shared_ptr<ProcessGroup> group;
  int generation = 0;       // how many groups this process has made (store_keys::group_prefix)
  bool destroying = false;  // Note [Destroying outside the lock]
  std::condition_variable destroyed;
  std::optional<ReportTarget> report_to;  // Note [Reports while destroying]
};

DefaultGroup& state() {
  static DefaultGroup* const instance = new DefaultGroup();  // Note [The default group's lifetime]
  return *instance;
}

std::shared_ptr<ProcessGroup> current_group(const char* what) {
  DefaultGroup& s = state();
  std::lock_guard lock(s.mutex);
  LG_CHECK(s.group != nullptr, "distributed::", what,
           ": no process group; call distributed::init_process_group first");
  return s.group;
}

}  // namespace

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::Gloo:
      return "gloo";
    case Backend::NCCL:
      return "nccl";
  }
  return "unknown";
}

void init_process_group(Backend backend) {
  init_process_group(InitOptions().backend(backend));
}

void init_process_group(const InitOptions& options) {
  DefaultGroup& s = state();
  std::unique_lock lock(s.mutex);
  s.destroyed.wait(lock, [&] { return !s.destroying; });  // Note [Destroying outside the lock]
  LG_CHECK(s.group == nullptr, "init_process_group: already initialized (rank ", s.group->rank(),
           " of ", s.group->size(), "); call destroy_process_group first");
  ProcessGroupConfig config = resolve_init_options(options, process_environment());
  if (config.backend == Backend::Gloo) {
    LG_CHECK(is_gloo_available(),
             "init_process_group(Backend::Gloo): leangrad was built without Gloo "
             "(LEANGRAD_WITH_GLOO=OFF); install libgloo-dev and configure again");
  } else {
    LG_CHECK(is_nccl_available(),
             "init_process_group(Backend::NCCL): leangrad was built without NCCL "
             "(LEANGRAD_WITH_NCCL=OFF, or without CUDA); use Backend::Gloo for CPU tensors");
  }
  const std::string prefix = store_keys::group_prefix(s.generation + 1);
  Rendezvous met = rendezvous(config, s.generation + 1);
  ProcessGroupSetup setup;
  setup.store = met.store;
  setup.prefix = prefix;
  setup.rank = config.rank;
  setup.size = config.world_size;
  setup.timeout = config.timeout;
  setup.local_address = met.local_address;
  setup.check_signatures = config.check_signatures;
  setup.local_rank = config.local_rank;
  s.group = config.backend == Backend::Gloo ? make_gloo_process_group(setup)
                                            : make_nccl_process_group(setup);
  s.generation += 1;
  s.config = config;
  s.report_to = ReportTarget{met.store, prefix, config.rank, config.world_size};
  s.rendezvous = std::move(met);
}

bool is_initialized() {
  DefaultGroup& s = state();
  std::lock_guard lock(s.mutex);
  return s.group != nullptr;
}

void destroy_process_group() {
  DefaultGroup& s = state();
  std::shared_ptr<ProcessGroup> group;
  Rendezvous met;
  std::chrono::milliseconds timeout{0};
  {
    std::lock_guard lock(s.mutex);
    LG_CHECK(s.group != nullptr, "destroy_process_group: no process group to destroy");
    group = std::exchange(s.group, nullptr);
    met = std::exchange(s.rendezvous, Rendezvous());
    timeout = s.config.timeout;
    s.destroying = true;
  }
  // The rest runs without the mutex (Note [Destroying outside the lock]).
  struct Done {
    DefaultGroup& s;
    ~Done() {
      {
        std::lock_guard lock(s.mutex);
        s.report_to.reset();  // also when something threw, before `met` closes the store
        s.destroying = false;
      }
      s.destroyed.notify_all();
    }
  } done{s};
  const bool healthy = !group->is_broken();
  group->shutdown();
  group.reset();
  // Rank 0 serves the store (not under leangrad-run, whose launcher does: Note [The launcher's
  // store] in tcp_store_server.cpp): keep it up until the others are done with it (they leave
  // when they destroy their group or exit). After a failure the others are reading the store to
  // name the missing ranks; dead ranks have left already, so this is short unless a rank hangs, and
  // then it is bounded by a few seconds.
  if (met.tcp_store) {
    const auto bound =
        healthy ? timeout : std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(5));
    met.tcp_store->wait_for_ranks_to_leave(std::chrono::steady_clock::now() + bound);
  }
  {
    // Reports go through the store until it closes (Note [Reports while destroying]).
    std::lock_guard lock(s.mutex);
    s.report_to.reset();
  }
  met = Rendezvous();  // closes this rank's connection (rank 0: then stops the server)
}

void record_error(const std::string& message) noexcept {
  try {
    ReportTarget target;
    {
      DefaultGroup& s = state();
      std::lock_guard lock(s.mutex);
      if (!s.report_to) return;  // Note [Reports while destroying]
      target = *s.report_to;
    }
    ProgressBoard(std::move(target.store), std::move(target.prefix), target.rank, target.size)
        .report(message);
  } catch (...) {  // never in the way of the error the program is exiting with
  }
}

int get_rank() {
  return current_group("get_rank")->rank();
}
int get_world_size() {
  return current_group("get_world_size")->size();
}

int get_local_rank() {
  DefaultGroup& s = state();
  std::lock_guard lock(s.mutex);
  LG_CHECK(s.group != nullptr,
           "distributed::get_local_rank: no process group; call init_process_group first");
  return s.config.local_rank;
}

ProcessGroup& default_process_group() {
  // The state keeps the group alive until destroy_process_group.
  return *current_group("default_process_group");
}

std::shared_ptr<ProcessGroup> default_process_group_handle() {
  return current_group("default_process_group_handle");
}

void all_reduce(const Tensor& tensor, ReduceOp op) {
  current_group("all_reduce")->all_reduce(tensor, op);
}
void broadcast(const Tensor& tensor, int root) {
  current_group("broadcast")->broadcast(tensor, root);
}
std::vector<Tensor> all_gather(const Tensor& tensor) {
  return current_group("all_gather")->all_gather(tensor);
}
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  current_group("reduce_scatter")->reduce_scatter(output, inputs, op);
}
void barrier() {
  current_group("barrier")->barrier();
}

std::shared_ptr<Work> all_reduce_async(const Tensor& tensor, ReduceOp op) {
  return current_group("all_reduce_async")->all_reduce_async(tensor, op);
}
std::shared_ptr<Work> broadcast_async(const Tensor& tensor, int root) {
  return current_group("broadcast_async")->broadcast_async(tensor, root);
}
std::shared_ptr<Work> all_gather_async(const Tensor& tensor) {
  return current_group("all_gather_async")->all_gather_async(tensor);
}
std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const std::vector<Tensor>& inputs,
                                           ReduceOp op) {
  return current_group("reduce_scatter_async")->reduce_scatter_async(output, inputs, op);
}
std::shared_ptr<Work> barrier_async() {
  return current_group("barrier_async")->barrier_async();
}

}  // namespace leangrad::distributed
