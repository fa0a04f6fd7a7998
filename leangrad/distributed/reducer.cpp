// The reducer of DistributedDataParallel: bucketed gradient all-reduce overlapped with backward.
//
// Policy
// - The parameters that require grad are grouped into buckets (Note [Bucket assignment] in
//   bucket_assignment.cpp); each bucket is one flat tensor of one dtype and device. After a
//   parameter's first synchronised backward its .grad is a view of its slot in that tensor, and it
//   stays one: gradients are never copied out of the buckets. See Note [Gradients are views].
//   A group of one has no buckets and launches nothing (Note [A group of one]).
// - A forward with sync on arms the hooks for the backward that follows (Note [Armed by forward]).
//   In that backward each parameter's post-accumulate-grad hook (its .grad is final) marks its
//   slot ready; when a bucket's last slot is ready its all-reduce (Avg) is queued on the process
//   group's worker thread, and backward goes on computing while it runs.
// - Buckets are launched in bucket order on every rank, whatever order their gradients arrive
//   in, so the ranks' collectives always pair up. See Note [Launching in bucket order].
// - The first hook of a backward queues an end-of-backward callback (autograd::queue_callback):
//   it deals with parameters that got no gradient (an Error naming them, or with
//   find_unused_parameters their slots marked ready), launches what is left, and waits for every
//   bucket, so backward() returns only averaged gradients and the optimizer never sees a
//   half-reduced one. See Note [One step of the reducer].
// - The communication is one ProcessGroup::all_reduce_async per bucket: nothing here depends on
//   the backend. (CUDA buckets with NCCL need only the stream ordering inside that backend.)
// - A failed all-reduce (a rank died, a timeout) surfaces from backward() as an Error naming the
//   bucket, its parameters and the process group's reason (the missing ranks).
#include <leangrad/distributed/reducer.h>

#include <utility>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/bucket_assignment.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::distributed {

namespace {
constexpr std::size_t kNamesShown = 16;  // parameters named in one message, at most

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > kNamesShown)
    out += detail::str_cat(" and ", names.size() - kNamesShown, " more");
  return out;
}
}  // namespace

struct Reducer::Slot {
  std::string name;
  Tensor param;
  std::size_t bucket = 0;
  Tensor view;         // (param shape) view of the bucket's flat tensor
  bool ready = false;  // this backward: its gradient is in the bucket
  bool used = false;   // this backward: it contributed a gradient (find_unused_parameters)
};

struct Reducer::Bucket {
  Tensor flat;  // (numel) contiguous, one dtype
  std::vector<std::size_t> slots;
  std::size_t pending = 0;  // slots not ready yet in this backward
  std::shared_ptr<Work> work;
};

Reducer::Reducer(std::shared_ptr<ProcessGroup> group, bool find_unused_parameters)
    : group_(std::move(group)), find_unused_parameters_(find_unused_parameters) {}

Reducer::~Reducer() {
  drain();  // nothing may still write into the buckets once they are freed
}

// Waits for every all-reduce in flight, ignoring its error: the group reports a failure to
// whoever waits on it properly (backward), and a broken group fails every later collective.
void Reducer::drain() noexcept {
  for (Bucket& b : buckets_) {
    if (!b.work) continue;
    try {
      b.work->wait();
    } catch (...) {
    }
  }
}

std::shared_ptr<Reducer> Reducer::make(NamedTensors parameters, std::shared_ptr<ProcessGroup> group,
                                       const std::vector<std::int64_t>& limits_bytes,
                                       bool find_unused_parameters) {
  LG_CHECK(group != nullptr, "DistributedDataParallel: no process group");
  std::shared_ptr<Reducer> r(new Reducer(std::move(group), find_unused_parameters));
  std::vector<BucketCandidate> candidates;
  for (auto& [name, param] : parameters) {
    LG_CHECK_DTYPE(is_floating(param.dtype()), "DistributedDataParallel: parameter '", name,
                   "' has dtype ", param.dtype(),
                   "; gradients are averaged, which needs floating parameters");
    candidates.push_back(
        {param.dtype(), param.device(), static_cast<std::int64_t>(param.nbytes())});
    Slot slot;
    slot.name = name;
    slot.param = param;
    r->slots_.push_back(std::move(slot));
  }
  const std::vector<std::vector<std::size_t>> assignment = assign_buckets(candidates, limits_bytes);
  NoGradGuard no_grad;
  for (const std::vector<std::size_t>& members : assignment) {
    const std::size_t b = r->buckets_.size();
    const Tensor& first = r->slots_[members.front()].param;
    std::int64_t numel = 0;
    for (std::size_t s : members)
      numel += r->slots_[s].param.numel();
    Bucket bucket;
    // A group of one reduces nothing, so it holds no bucket memory (Note [A group of one]).
    if (r->group_->size() > 1) bucket.flat = zeros({numel}, first.options());
    bucket.slots = members;
    BucketInfo info{first.dtype(), first.device(), numel, {}};
    std::int64_t offset = 0;
    for (std::size_t s : members) {
      Slot& slot = r->slots_[s];
      const std::int64_t n = slot.param.numel();
      slot.bucket = b;
      if (bucket.flat.defined())
        slot.view = bucket.flat.slice(0, offset, offset + n).view(slot.param.shape());
      offset += n;
      info.parameters.push_back(slot.name);
      // A gradient the parameter already has moves into its slot.
      if (slot.param.grad().defined()) r->make_grad_a_view(slot);
    }
    r->buckets_.push_back(std::move(bucket));
    r->infos_.push_back(std::move(info));
  }
  r->reset_step();
  r->install_hooks();
  return r;
}

const Tensor& Reducer::bucket_tensor(std::size_t b) const {
  LG_CHECK(b < buckets_.size(), "DistributedDataParallel: bucket ", b, " does not exist (",
           buckets_.size(), " buckets)");
  return buckets_[b].flat;
}

// Two hooks per parameter, holding the reducer weakly (a parameter outliving its
// DistributedDataParallel keeps hooks that do nothing): the gradient hook, which runs before
// accumulation, refuses a second gradient in one backward before it is added into a bucket
// that may be in flight; the post-accumulate-grad hook marks the slot ready.
void Reducer::install_hooks() {
  const std::weak_ptr<Reducer> weak = weak_from_this();
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    slots_[s].param.register_hook([weak, s](const Tensor&) {
      if (auto reducer = weak.lock()) reducer->refuse_second_gradient(s);
    });
    slots_[s].param.register_post_accumulate_grad_hook([weak, s](const Tensor&) {
      if (auto reducer = weak.lock()) reducer->mark_ready(s);
    });
  }
}

void Reducer::refuse_second_gradient(std::size_t s) {
  LG_CHECK(!armed_ || !slots_[s].ready, "DistributedDataParallel: parameter '", slots_[s].name,
           "' received its gradient twice in one backward (its accumulator ran twice: is it used "
           "both inside and outside an autograd::checkpoint segment?). Each bucket is reduced "
           "once per backward, so every parameter must get its whole gradient at once");
}

// Note [Armed by forward]
// As in PyTorch, whether a backward is synchronised is decided by the forward that built its
// graph: DistributedDataParallel::forward arms the reducer when sync is on (outside no_sync) and
// grad mode is on, and disarms it otherwise. A disarmed reducer's hooks do nothing: gradients
// accumulate in .grad locally (into the bucket views when they already are views). The
// end-of-backward callback disarms again, so a second backward through the same graph
// (retain_graph) accumulates locally too.
void Reducer::prepare_for_backward() {
  // An armed backward that threw before its end may have left all-reduces in flight.
  if (step_started_) drain();
  reset_step();
  armed_ = true;
}

void Reducer::disarm() {
  if (step_started_) prepare_for_backward();  // finish and clean up an interrupted step
  armed_ = false;
}

void Reducer::reset_step() {
  for (Slot& slot : slots_) {
    slot.ready = false;
    slot.used = false;
  }
  for (Bucket& b : buckets_) {
    b.pending = b.slots.size();
    b.work.reset();
  }
  next_bucket_ = 0;
  step_started_ = false;
  armed_ = false;
  step_ = StepTimeline();
  step_.buckets.resize(buckets_.size());
}

// Note [Gradients are views]
// The engine's AccumulateGrad sets .grad to the incoming gradient when .grad is undefined, and
// adds into .grad in place otherwise. So once .grad is a view of its bucket slot, every later
// backward accumulates straight into the bucket, and the bucket is what gets all-reduced: no
// copy in either direction. .grad is undefined (a fresh tensor arrives instead) in two cases:
// before the first synchronised backward, and after zero_grad(set_to_none = true), the
// optimizers' default. Then the hook copies the gradient into the slot once and makes .grad the
// view again. zero_grad(set_to_none = false) zeroes the views in place and saves that copy.
// Under no_sync the hooks do nothing, so a fresh .grad stays a plain tensor until the next
// synchronised backward, whose hook moves it into the bucket.
void Reducer::make_grad_a_view(Slot& slot) {
  if (!slot.view.defined()) return;  // a group of one: no buckets (Note [A group of one])
  Tensor grad = slot.param.grad();
  const bool is_view = grad.defined() && grad.storage() == slot.view.storage() &&
                       grad.storage_offset() == slot.view.storage_offset() &&
                       grad.shape() == slot.view.shape() && grad.strides() == slot.view.strides();
  if (is_view) return;
  NoGradGuard no_grad;
  slot.view.copy_(grad);
  slot.param.set_grad(slot.view);
}

void Reducer::mark_ready(std::size_t s) {
  if (!armed_) return;  // Note [Armed by forward]
  Slot& slot = slots_[s];
  if (!step_started_) {
    step_started_ = true;
    step_.first_gradient = Work::Clock::now();
    const std::weak_ptr<Reducer> weak = weak_from_this();
    autograd::queue_callback([weak] {
      if (auto reducer = weak.lock()) reducer->finalize();
    });
  }
  LG_INTERNAL_ASSERT(!slot.ready, slot.name, " marked ready twice");  // refuse_second_gradient
  const Device bucket_device = infos_[slot.bucket].device;
  LG_CHECK_DEVICE(
      slot.param.device() == bucket_device, "DistributedDataParallel: parameter '", slot.name,
      "' is on ", slot.param.device(), " but its bucket on ", bucket_device,
      ": the parameters moved after the module was wrapped. Move the module, or build "
      "its offload::ParameterOffload, before wrapping it (Note [Offloaded parameters])");
  LG_CHECK_DTYPE(slot.param.dtype() == infos_[slot.bucket].dtype,
                 "DistributedDataParallel: parameter '", slot.name, "' is ", slot.param.dtype(),
                 " but its bucket ", infos_[slot.bucket].dtype,
                 ": the module was converted after it was wrapped. Convert the module (to(dtype)) "
                 "before wrapping it");
  make_grad_a_view(slot);
  slot.used = true;
  mark_slot_done(slot);
  step_.last_gradient = Work::Clock::now();  // before the launch, which may yield to the worker
  launch_ready_buckets();
}

void Reducer::mark_slot_done(Slot& slot) {
  slot.ready = true;
  if (--buckets_[slot.bucket].pending == 0) step_.buckets[slot.bucket].ready = Work::Clock::now();
}

// Note [Offloaded parameters]
// A module whose parameters offload::ParameterOffload keeps in host memory is wrapped after the
// offload is built: its parameters are then host tensors, so its buckets are host tensors too,
// and a Gloo group reduces them on the host (NCCL takes its GPU's tensors only: the constructor
// refuses such a group, naming the parameter). Nothing else changes: the offload's gradient hook
// runs before AccumulateGrad and hands over a host gradient, and this reducer's
// post-accumulate-grad hook copies it into the bucket (a CUDA copy has landed by then: the offload
// waits for it when a post-accumulate-grad hook will read it). So the device never holds a
// bucket, which would cost the whole gradient in device memory and undo the offload. The other
// order, the offload built on an already wrapped module, would leave device buckets under host
// parameters: mark_ready refuses it, naming the parameter.
//
// Note [Launching in bucket order]
// Gradients may arrive in another order than the bucket assignment expected (a model whose
// forward uses its layers out of registration order, or different control flow per rank). The
// ranks must still call the same collectives in the same order, so bucket b is launched only
// after buckets 0..b-1: a bucket that is complete early waits for its predecessors. The order is
// the same on every rank, whatever the arrival order.
//
// Note [A group of one]
// With one rank the average of a bucket over the ranks is the bucket itself (x / 1 == x in IEEE
// arithmetic), so no collective is launched: the bucket is reduced as soon as it is complete
// (its timeline's start and end are that moment), and the "used" flags of
// find_unused_parameters are this rank's. On one GPU the two small all-reduces of the cnn cost
// 0.35 ms of a 1 ms step over NCCL (bench/results/2026-11-24-h100-80gb-hbm3.md). With no
// collective to feed, the buckets themselves are not needed either: a group of one allocates
// none, and .grad stays the tensor autograd made (Note [Gradients are views] applies from two
// ranks on). The copy of every fresh gradient into its slot after zero_grad() was, without the
// all-reduces, most of what DDP still cost there: 7.1% and 7.6% of the cnn's 0.9 ms step over
// NCCL on an H100 (bench/results/2026-11-25-h100-80gb-hbm3*.md), against a target of 5%; and
// the buckets held a second copy of every gradient. What remains is the hooks' bookkeeping.
void Reducer::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& b = buckets_[next_bucket_];
    if (group_->size() == 1) {
      BucketTimeline& t = step_.buckets[next_bucket_];
      t.started = t.finished = Work::Clock::now();
      ++next_bucket_;
      continue;
    }
    try {
      b.work = group_->all_reduce_async(b.flat, ReduceOp::Avg);
    } catch (const Error& e) {
      LG_THROW(Error, "DistributedDataParallel: could not start the all-reduce of ",
               describe_bucket(next_bucket_), ": ", e.message());
    }
    ++next_bucket_;
  }
}

std::string Reducer::describe_bucket(std::size_t b) const {
  const BucketInfo& info = infos_[b];
  return detail::str_cat("bucket ", b, " of ", buckets_.size(), " (", info.dtype, ", ", info.numel,
                         " elements; ", info.parameters.size(), " parameter",
                         info.parameters.size() == 1 ? "" : "s", ": ", name_list(info.parameters),
                         ")");
}

// Waits for every launched bucket, in order, keeping their times. Returns the first failure
// (with the bucket named), after every bucket is done: none is left writing into its tensor.
std::exception_ptr Reducer::wait_for_buckets() {
  std::exception_ptr first_error;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    if (!bucket.work) continue;
    try {
      bucket.work->wait();
    } catch (const Error& e) {
      if (!first_error) {
        first_error = std::make_exception_ptr(
            Error(detail::str_cat("DistributedDataParallel: the all-reduce of ", describe_bucket(b),
                                  " failed in backward: ", e.message()),
                  __FILE__, __LINE__));
      }
    }
    step_.buckets[b].started = bucket.work->started_at();
    step_.buckets[b].finished = bucket.work->finished_at();
  }
  return first_error;
}

// Note [One step of the reducer]
// Forward arms the reducer; the first hook of the backward queues finalize() (below) as an
// end-of-backward callback; each hook makes its parameter's .grad the view of its slot, marks the
// slot ready and launches the buckets that are complete, in bucket order. finalize() runs once the
// engine has run every node:
//  1. Parameters whose hook did not run got no gradient in this backward. Without
//     find_unused_parameters that is an Error naming them (after the launched buckets finished,
//     so no all-reduce is left writing). With it, each such slot is marked ready: its .grad, if
//     it has one (accumulated under no_sync, or zeroed in place), is its contribution; otherwise
//     the slot is zero-filled.
//  2. The remaining buckets are launched; with find_unused_parameters, one more all-reduce (Max)
//     of the "used" flags tells which parameters no rank used. (A group of one launches none:
//     Note [A group of one].)
//  3. Every bucket is waited for. A parameter no rank used keeps the .grad it had (undefined
//     stays undefined, so the optimizer skips it, as in a single process); one used by some rank
//     gets the averaged view.
// The step's state is reset before finalize returns or throws, and the reducer disarmed.
void Reducer::finalize() {
  step_.backward_done = Work::Clock::now();
  std::vector<std::string> missing;
  for (const Slot& slot : slots_)
    if (!slot.ready) missing.push_back(slot.name);
  if (!missing.empty() && !find_unused_parameters_) {
    wait_for_buckets();  // its errors would only repeat the one below's cause
    const std::vector<std::string> names = missing;
    reset_step();
    LG_THROW(Error, "DistributedDataParallel: ", names.size(), " parameter",
             names.size() == 1 ? "" : "s", " received no gradient in this backward on rank ",
             group_->rank(), ": ", name_list(names),
             ". Every parameter must contribute to the loss in every synchronised step, or its "
             "bucket is never reduced; if some parameters are legitimately unused, pass "
             "DDPOptions().find_unused_parameters(true), or freeze them (requires_grad_(false)) "
             "before wrapping the module");
  }
  Tensor used_flags;
  std::shared_ptr<Work> used_work;
  std::exception_ptr error;
  try {
    NoGradGuard no_grad;
    for (Slot& slot : slots_) {
      if (slot.ready) continue;
      if (slot.param.grad().defined()) {
        make_grad_a_view(slot);
        slot.used = true;
      } else if (slot.view.defined()) {
        slot.view.zero_();
      }
      mark_slot_done(slot);
    }
    launch_ready_buckets();
    if (find_unused_parameters_ && group_->size() > 1) {  // Note [A group of one]
      Tensor mine = zeros({static_cast<std::int64_t>(slots_.size())}, TensorOptions(kInt64));
      auto* flags = mine.data_ptr<std::int64_t>();
      for (std::size_t s = 0; s < slots_.size(); ++s)
        flags[s] = slots_[s].used ? 1 : 0;
      // On the group's device: NCCL's collectives take its GPU's tensors only.
      used_flags = mine.to(group_->device());
      used_work = group_->all_reduce_async(used_flags, ReduceOp::Max);
    }
  } catch (...) {
    error = std::current_exception();
  }
  const std::exception_ptr bucket_error = wait_for_buckets();
  if (!error) error = bucket_error;
  if (used_work) {
    try {
      used_work->wait();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  step_.reduced = Work::Clock::now();
  if (!error && used_work) {
    used_flags = used_flags.cpu();  // after the collective on the caller's stream (NCCL)
    const auto* flags = used_flags.data_ptr<std::int64_t>();
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      if (!slots_[s].used && flags[s] != 0) slots_[s].param.set_grad(slots_[s].view);
    }
  }
  last_step_ = step_;
  reset_step();
  if (error) std::rethrow_exception(error);
}

}  // namespace leangrad::distributed
