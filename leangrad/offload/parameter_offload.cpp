// offload::ParameterOffload: parameters in host memory, streamed to the device unit by unit.
//
// Policy
// - A unit is a submodule that owns parameters itself (a Linear, a Conv2d, a GroupNorm); its
//   parameters move together. Each parameter keeps its Tensor identity (what the optimizer and
//   the user hold): between uses its storage is the host master copy.
// - Forward (the unit's pre-hook): its parameters are copied to the device, unless a prefetch
//   already did, and the parameters are pointed at those device copies; the next `prefetch` units
//   of the recorded forward order are copied in on the copy stream meanwhile. After its forward
//   (the hook): the parameters point at the host again and the device memory is given back, even
//   when autograd saved the parameter for backward. See Note [Releasable device storage].
// - Backward: a hook on the unit's output runs when the output's gradient is complete, just
//   before the unit's backward nodes: the saved parameters get device memory and values again,
//   and the unit before it in forward order is prefetched. Each parameter's gradient is copied to
//   the host by a hook that runs before AccumulateGrad (the device gradient is freed at once),
//   and the parameter's device memory is given back then. See Note [Gradients to the host].
// - At the end of backward (autograd::queue_callback) the host waits for the gradient copies, so
//   backward() returns with every gradient in host memory: the optimizer then steps on the host.
// - Recompute (autograd::checkpoint) and offload::SaveOnCpu work beside it: a recompute runs the
//   units' hooks again (Note [Module call], nn/module.cpp), and SaveOnCpu leaves the parameters'
//   device copies to us (detail::is_offloaded_parameter_storage).
// - On the CPU as "device", the device copies come from the CPU allocator and the host copies
//   from the pinned pool: the same life cycle, with synchronous copies.
// - Tied weights (one tensor registered by several units) are offloaded once. See Note [Tied
//   weights].
#include <leangrad/offload/parameter_offload.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <leangrad/autograd/autograd_meta.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/storage.h>
#include <leangrad/offload/copy_stream.h>

namespace leangrad::offload {
namespace {

// The device storages of every live ParameterOffload, for SaveOnCpu, and the parameters they
// manage, so a parameter is not offloaded twice.
struct Registry {
  std::mutex mutex;
  std::unordered_set<const Storage*> device_storages;
  std::unordered_set<const TensorImpl*> parameters;
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: hooks may run during static destruction
  return *r;
}

bool has_post_accumulate_grad_hooks(const Tensor& param) {
  const autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(param);
  return meta != nullptr && !meta->post_accumulate_grad_hooks.empty();
}

}  // namespace

namespace detail {
bool is_offloaded_parameter_storage(const Storage* storage) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.device_storages.count(storage) != 0;
}
}  // namespace detail

// Note [Releasable device storage]
// Autograd saves a parameter used by an op (the weight of linear, conv2d, group_norm) as an alias
// sharing its storage. If the unit's parameters were plain device tensors, those aliases would
// keep every unit's parameters on the device from forward to backward: no saving at all. Instead
// each parameter has ONE device Storage object for its whole life, whose memory comes and goes
// (Storage::release_memory / adopt_memory): during the unit's forward the parameter's TensorImpl
// points at it, so whatever autograd saves refers to this object; after the forward the memory
// goes back to the caching allocator while the aliases stay valid references; before the unit's
// backward new memory is adopted and the values copied in again, so the backward formulas read
// the same parameter values through the same aliases. Swapping the TensorImpl's storage does not
// bump its version (the values are the same), so the saved-tensor version check still holds. A
// use of the storage without memory (a unit called as module.forward(x), which skips the hooks)
// is refused by Tensor::data_ptr() with an Error, never read.
struct OffloadedParam {
  Tensor param;                         // the module's parameter
  std::shared_ptr<Storage> host;        // its master copy (pinned pool unless pin_memory is off)
  std::shared_ptr<Storage> device;      // the releasable device storage
  std::shared_ptr<cuda::Event> copied;  // CUDA: the copy into `device` has landed
  bool filled = false;                  // `device` has memory holding the current values
  std::uint32_t filled_version = 0;     // param.version() when `device` was filled
  std::size_t index = 0;                // in State::params
  bool gradient_hooked = false;  // its gradient hook is registered (Note [Gradients to the host])

  // The parameter's shape over `storage`.
  Tensor view_of(const std::shared_ptr<Storage>& storage) const {
    return make_tensor(storage, param.dtype(), param.shape(), param.strides());
  }
};

// Note [Tied weights]
// A tensor registered by several units (an embedding and an output projection sharing a weight)
// is one OffloadedParam: one host master copy, one releasable device storage, one gradient hook.
// Each unit that uses it brings it in before its forward and gives it back after, like any
// parameter, so its bytes cross once per using unit and the device holds it once at a time. In
// backward the copy brought back for the first of its units to run serves the others: the
// parameter is given back only by its gradient hook, which runs once, when its AccumulateGrad
// gets the gradients of all its units summed. Units sharing a weight must run one after another,
// which this relies on: the constructor refuses a weight shared by a module and a submodule of
// it (the inner unit's forward would give the weight back while the outer one still uses it).
struct Unit {
  std::string name;
  nn::Module* module = nullptr;
  // Its parameters; a tied weight (one tensor registered by several units) is one OffloadedParam
  // that each of its units points at (Note [Tied weights]).
  std::vector<OffloadedParam*> params;
  std::int64_t bytes = 0;
  nn::HookHandle pre_hook, post_hook;
  bool awaiting_backward = false;  // released after a forward that saved its parameters
  bool in_forward = false;  // between its pre-hook and its hook (Note [A forward that throws])
};

struct ParameterOffload::State {
  ParameterOffloadOptions options;
  std::vector<std::unique_ptr<OffloadedParam>> params;  // each distinct parameter once
  std::vector<Unit> units;
  std::vector<int> order;     // units by first forward call (learned once)
  std::vector<bool> ordered;  // units already in `order`
  std::vector<std::string> copy_log;
  ParameterOffloadStats stats;
  std::vector<std::shared_ptr<cuda::Event>> gradient_copies;  // in flight to the host
  bool end_of_backward_queued = false;

  explicit State(ParameterOffloadOptions o) : options(std::move(o)) {}

  bool on_cuda() const { return options.device().is_cuda(); }

  // Copies unit u's parameters that need it into device memory: on the copy stream for CUDA
  // (returns before the copy is done; `copied` says when), at once on the CPU.
  // `saved_only`: only the parameters whose device storage autograd still refers to.
  void copy_in(int u, bool saved_only) {
    Unit& unit = units[static_cast<std::size_t>(u)];
    bool copied_any = false;
    for (OffloadedParam* p : unit.params) {
      // A copy made before the parameter changed on the host (after ParameterOffload::step) is
      // made again.
      if (p->filled && p->filled_version != p->param.version()) release(*p);
      if (p->filled || (saved_only && p->device.use_count() == 1)) continue;
      copy_param_in(*p);
      copied_any = true;
      stats.to_device_bytes += static_cast<std::int64_t>(p->device->nbytes());
    }
    if (copied_any) {
      ++stats.to_device_copies;
      copy_log.push_back(unit.name);
    }
  }

  void copy_param_in(OffloadedParam& p) {
    const std::size_t nbytes = p.device->nbytes();
    p.filled_version = p.param.version();
    if (!on_cuda()) {
      p.device->adopt_memory(Storage::allocate(nbytes, options.device())->release_memory());
      p.view_of(p.device).copy_(p.view_of(p.host));
      p.filled = true;
      return;
    }
    // As SaveOnCpu's copy back (Note [Unpack ordering], offload/save_on_cpu.cpp): the block is
    // allocated on the copy stream C, so C may write it at once; the compute stream waits for
    // the copy's event before it reads the parameter (wait_until_copied).
    const int device = options.device().index;
    detail::CurrentDeviceScope on_device(device);
    const cuda::Stream copy = detail::copy_stream(device);
    {
      cuda::StreamGuard on_copy_stream(copy);
      p.device->adopt_memory(Storage::allocate(nbytes, options.device())->release_memory());
      p.view_of(p.device).copy_(p.view_of(p.host), /*non_blocking=*/true);
    }
    p.copied = detail::record_event(copy);
    p.filled = true;
  }

  // The compute stream waits for unit u's copies (no host wait), and the device blocks are marked
  // as used by it, so that they return to the copy stream's pool only after its kernels.
  void wait_until_copied(int u) {
    if (!on_cuda()) return;
    const int device = options.device().index;
    detail::CurrentDeviceScope on_device(device);
    const cuda::Stream compute = cuda::current_stream(device);
    for (OffloadedParam* p : units[static_cast<std::size_t>(u)].params) {
      if (!p->copied) continue;
      compute.wait(*p->copied);
      p->view_of(p->device).record_stream(compute);
      p->copied.reset();
    }
  }

  void release(OffloadedParam& p) {
    if (!p.filled) return;
    p.device->release_memory();  // back to the caching allocator (stream-ordered on CUDA)
    p.filled = false;
  }

  void prefetch_after(int u) {
    if (options.prefetch() <= 0 || autograd::backward_running()) return;
    const auto it = std::find(order.begin(), order.end(), u);
    if (it == order.end()) return;
    for (auto next = it + 1; next != order.end() && next - it <= options.prefetch(); ++next)
      copy_in(*next, /*saved_only=*/false);
  }

  // Note [A forward that throws]
  // nn::Module runs no forward hook when forward throws, so a unit whose forward threw keeps
  // its parameters pointed at their device copies. Whatever changed them in place since (a
  // load_state_dict, an optimizer step on the CPU "device") wrote into those copies and bumped
  // the version; copy_in would then drop the copy and bring the old host values back. So before
  // such a unit runs again, and before a step, its parameters go back to the host with the
  // device copy's values when they changed. And a backward that threw never ran its
  // end-of-backward callback (the engine drops it): the next forward runs it.
  void recover_unit(int u) {
    Unit& unit = units[static_cast<std::size_t>(u)];
    if (!unit.in_forward) return;
    unit.in_forward = false;
    for (OffloadedParam* p : unit.params) {
      if (p->param.impl().storage != p->device) continue;
      if (p->filled && p->filled_version != p->param.version()) {
        wait_until_copied(u);
        p->view_of(p->host).copy_(p->view_of(p->device));
        p->filled_version = p->param.version();
      }
      p->param.impl().storage = p->host;
    }
  }

  // The end-of-backward work of a backward that threw, outside any backward.
  void finish_dropped_backward() {
    if (end_of_backward_queued && !autograd::backward_running()) end_of_backward();
  }

  void recover_all() {
    for (std::size_t u = 0; u < units.size(); ++u)
      recover_unit(static_cast<int>(u));
    finish_dropped_backward();
  }

  // A parameter given new data while offloaded (set_data, Module::to) no longer has the storage
  // the offload keeps in step with the device: refused, rather than silently undone.
  void check_own_storage(int u) const {
    for (const OffloadedParam* p : units[static_cast<std::size_t>(u)].params) {
      LG_CHECK(p->param.impl().storage == p->host || p->param.impl().storage == p->device,
               "ParameterOffload: a parameter of '", units[static_cast<std::size_t>(u)].name,
               "' of shape ", p->param.shape(),
               " was given new data (set_data, Module::to) while offloaded; destroy the "
               "ParameterOffload first, change the parameter, then offload again");
    }
  }

  // One gradient hook per parameter that requires grad, tied or not: its AccumulateGrad runs
  // once per backward, with the gradients of every unit that used it summed. A parameter frozen
  // (requires_grad false) when the offload was made gets its hook at its unit's first forward
  // after it was unfrozen; without it its gradient would stay in device memory.
  void hook_gradient(std::size_t i, const std::weak_ptr<State>& self) {
    OffloadedParam& p = *params[i];
    if (p.gradient_hooked || !p.param.requires_grad()) return;
    p.gradient_hooked = true;
    // Tensor hooks cannot be removed: after the ParameterOffload is gone this one does nothing.
    p.param.register_hook([self, i](const Tensor& grad) {
      const std::shared_ptr<State> state = self.lock();
      return state ? state->gradient_to_host(i, grad, self) : Tensor();
    });
  }

  void before_forward(int u, const std::weak_ptr<State>& self) {
    // Not inside a recompute: a unit still "in forward" is one whose forward threw.
    if (!autograd::backward_running()) recover_unit(u);
    finish_dropped_backward();
    check_own_storage(u);
    for (const OffloadedParam* p : units[static_cast<std::size_t>(u)].params)
      hook_gradient(p->index, self);
    units[static_cast<std::size_t>(u)].in_forward = true;
    if (!ordered[static_cast<std::size_t>(u)]) {
      ordered[static_cast<std::size_t>(u)] = true;
      order.push_back(u);
    }
    copy_in(u, /*saved_only=*/false);
    wait_until_copied(u);
    for (OffloadedParam* p : units[static_cast<std::size_t>(u)].params)
      p->param.impl().storage = p->device;
    prefetch_after(u);
  }

  void after_forward(int u, const Tensor& output, const std::weak_ptr<State>& self) {
    Unit& unit = units[static_cast<std::size_t>(u)];
    unit.in_forward = false;
    bool saved = false;
    for (OffloadedParam* p : unit.params) {
      p->param.impl().storage = p->host;
      const bool referenced = p->device.use_count() > 1;  // saved for backward (or a view kept)
      saved = saved || referenced;
      // A recompute's backward follows at once: keep what it saved.
      if (!(referenced && autograd::backward_running())) release(*p);
    }
    if (!saved || !output.defined() || !output.requires_grad()) return;
    unit.awaiting_backward = true;
    Tensor(output).register_hook([self, u](const Tensor&) {
      if (const std::shared_ptr<State> state = self.lock()) state->before_backward(u, self);
    });
  }

  // Note [Gradients to the host]
  // The unit's backward nodes are about to run: bring back what they saved, and queue the copy
  // of the unit that runs backward after it (the one before it in forward order).
  void before_backward(int u, const std::weak_ptr<State>& self) {
    queue_end_of_backward(self);
    Unit& unit = units[static_cast<std::size_t>(u)];
    unit.awaiting_backward = false;
    copy_in(u, /*saved_only=*/true);
    wait_until_copied(u);
    const auto it = std::find(order.begin(), order.end(), u);
    for (auto previous = std::make_reverse_iterator(it); previous != order.rend(); ++previous) {
      Unit& before = units[static_cast<std::size_t>(*previous)];
      if (!before.awaiting_backward) continue;
      if (options.prefetch() > 0) copy_in(*previous, /*saved_only=*/true);
      break;
    }
  }

  // The hook on a parameter's gradient, before AccumulateGrad: the gradient goes to a host block
  // (the device one is freed when the engine drops it, after the copy has read it), and the
  // parameter's device memory is given back: the nodes that used it have run. AccumulateGrad
  // adopts the host block as .grad without reading it; only when .grad already holds a gradient
  // (accumulation) does the host add them, so then the copy must have landed first; and so must
  // it when a post-accumulate-grad hook will read .grad as soon as it is set
  // (DistributedDataParallel's reducer copies it into its bucket: Note [Offloaded parameters] in
  // distributed/reducer.cpp).
  Tensor gradient_to_host(std::size_t i, const Tensor& grad, const std::weak_ptr<State>& self) {
    queue_end_of_backward(self);
    OffloadedParam& p = *params[i];
    Tensor host =
        empty(grad.shape(), TensorOptions(grad.dtype()).pinned_memory(options.pin_memory()));
    if (!grad.is_cuda()) {
      host.copy_(grad);
    } else {
      const int device = grad.device().index;
      detail::CurrentDeviceScope on_device(device);
      const cuda::Stream copy = detail::copy_stream(device);
      copy.wait(*detail::record_event(cuda::current_stream(device)));
      {
        cuda::StreamGuard on_copy_stream(copy);
        host.copy_(grad, /*non_blocking=*/true);
      }
      grad.record_stream(copy);
      std::shared_ptr<cuda::Event> landed = detail::record_event(copy);
      if (p.param.grad().defined() || has_post_accumulate_grad_hooks(p.param)) {
        landed->synchronize();
      } else {
        gradient_copies.push_back(std::move(landed));
      }
    }
    stats.to_host_bytes += static_cast<std::int64_t>(grad.nbytes());
    release(p);
    return host;
  }

  void queue_end_of_backward(const std::weak_ptr<State>& self) {
    if (end_of_backward_queued) return;
    end_of_backward_queued = true;
    autograd::queue_callback([self] {
      if (const std::shared_ptr<State> state = self.lock()) state->end_of_backward();
    });
  }

  // Every gradient is on the host when backward() returns; device memory brought back for
  // backward and not yet given back (parameters without gradients) goes now.
  void end_of_backward() {
    end_of_backward_queued = false;
    for (const auto& event : gradient_copies)
      event->synchronize();
    gradient_copies.clear();
    for (Unit& unit : units)
      unit.awaiting_backward = false;
    for (const std::unique_ptr<OffloadedParam>& p : params) {
      if (p->param.impl().storage != p->device) release(*p);
    }
  }
};

namespace {

// Submodules owning parameters, depth first in registration order, with dotted names.
void collect_units(nn::Module& module, const std::string& name,
                   std::vector<std::pair<std::string, nn::Module*>>& out) {
  if (!module.named_parameters(/*recurse=*/false).is_empty()) out.emplace_back(name, &module);
  for (const auto& [child_name, child] : module.named_children())
    collect_units(*child, name.empty() ? child_name : name + "." + child_name, out);
}

}  // namespace

ParameterOffload::ParameterOffload(std::shared_ptr<nn::Module> module,
                                   ParameterOffloadOptions options)
    : module_(std::move(module)), options_(options), state_(std::make_shared<State>(options)) {
  LG_CHECK(module_ != nullptr, "ParameterOffload: got a null module");
  const Device device = options_.device();
  LG_CHECK_DEVICE(device.is_cpu() || device.is_cuda(), "ParameterOffload: cannot compute on ",
                  device);
  if (device.is_cuda()) {  // checked before anything moves: a forward would fail on every call
    LG_CHECK_DEVICE(cuda::is_available(), "ParameterOffload: cannot compute on ", device,
                    ": no CUDA device is available");
    LG_CHECK_DEVICE(device.index >= 0 && device.index < cuda::device_count(),
                    "ParameterOffload: cannot compute on ", device, ": this machine has ",
                    cuda::device_count(), " CUDA device(s)");
  }
  std::vector<std::pair<std::string, nn::Module*>> found;
  collect_units(*module_, "", found);

  // Check everything before changing anything: on an error the module is as it was.
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    // Each tensor's units so far, with its name in each. Units come in pre-order, so a unit's
    // ancestors come before it.
    struct Use {
      std::string unit, name;
    };
    std::unordered_map<const TensorImpl*, std::vector<Use>> seen;
    const auto contains = [](const std::string& outer, const std::string& inner) {
      return outer.empty() || inner.starts_with(outer + ".");
    };
    for (const auto& [unit_name, unit_module] : found) {
      for (const auto& [param_name, p] : unit_module->named_parameters(/*recurse=*/false)) {
        const std::string full = unit_name.empty() ? param_name : unit_name + "." + param_name;
        LG_CHECK(!r.parameters.count(&p.impl()), "ParameterOffload: parameter '", full,
                 "' is already offloaded by another ParameterOffload");
        std::vector<Use>& uses = seen[&p.impl()];
        for (const Use& use : uses) {  // a tied weight's units must not nest (Note [Tied weights])
          LG_CHECK(!contains(use.unit, unit_name), "ParameterOffload: parameter '", full,
                   "' is the same tensor as '", use.name,
                   "' of a module that contains it; tied weights are supported between units that "
                   "run one after another, not between a module and its own submodule (register "
                   "the weight in one of them only)");
        }
        uses.push_back({unit_name, full});
        if (uses.size() > 1) continue;  // a tied weight, checked once
        LG_CHECK_DEVICE(p.device() == device || p.device().is_cpu(),
                        "ParameterOffload: parameter '", full, "' is on ", p.device(),
                        ", the offload computes on ", device);
        LG_CHECK(p.is_contiguous() && p.storage_offset() == 0 &&
                     p.storage()->nbytes() == p.nbytes() && p.storage().use_count() == 1,
                 "ParameterOffload: parameter '", full, "' of shape ", p.shape(),
                 " must be contiguous and own its storage alone (no views of it kept)");
      }
    }
  }

  State& s = *state_;
  const std::weak_ptr<State> weak = state_;
  std::unordered_map<const TensorImpl*, OffloadedParam*> offloaded;  // tied weights: met before
  for (const auto& [unit_name, unit_module] : found) {
    Unit unit;
    unit.name = unit_name;
    unit.module = unit_module;
    for (const auto& [param_name, p] : unit_module->named_parameters(/*recurse=*/false)) {
      unit.bytes += static_cast<std::int64_t>(p.nbytes());
      if (const auto it = offloaded.find(&p.impl()); it != offloaded.end()) {
        unit.params.push_back(it->second);
        continue;
      }
      auto op = std::make_unique<OffloadedParam>();
      op->param = p;
      op->host = Storage::allocate(p.nbytes(), Device::cpu(), options_.pin_memory());
      op->view_of(op->host).copy_(p);  // blocking: a one-time move
      op->device = std::make_shared<Storage>(DataPtr(), p.nbytes(), device);
      p.impl().storage = op->host;
      if (p.grad().defined()) p.set_grad(p.grad().to(Device::cpu()));
      op->index = s.params.size();
      offloaded[&p.impl()] = op.get();
      unit.params.push_back(op.get());
      s.params.push_back(std::move(op));
    }
    s.units.push_back(std::move(unit));
  }
  s.ordered.assign(s.units.size(), false);
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const std::unique_ptr<OffloadedParam>& p : s.params) {
      r.device_storages.insert(p->device.get());
      r.parameters.insert(&p->param.impl());
    }
  }
  for (std::size_t u = 0; u < s.units.size(); ++u) {
    const int index = static_cast<int>(u);
    Unit& unit = s.units[u];
    unit.pre_hook =
        unit.module->register_forward_pre_hook([weak, index](nn::Module&, const Tensor&) {
          if (const std::shared_ptr<State> state = weak.lock()) state->before_forward(index, weak);
        });
    unit.post_hook = unit.module->register_forward_hook(
        [weak, index](nn::Module&, const Tensor&, const Tensor& output) {
          if (const std::shared_ptr<State> state = weak.lock())
            state->after_forward(index, output, weak);
        });
  }
  for (std::size_t i = 0; i < s.params.size(); ++i)
    s.hook_gradient(i, weak);
}

ParameterOffload::~ParameterOffload() {
  // A unit whose forward threw still points at its device copies: back to the host (Note [A
  // forward that throws]), and a backward that threw has its gradient copies waited for.
  try {
    state_->recover_all();
  } catch (...) {  // a destructor never throws; a copy back that failed leaves the device copy
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (Unit& unit : state_->units) {
    unit.pre_hook.remove();
    unit.post_hook.remove();
  }
  for (const std::unique_ptr<OffloadedParam>& p : state_->params) {
    r.device_storages.erase(p->device.get());
    r.parameters.erase(&p->param.impl());
  }
}

std::vector<std::string> ParameterOffload::unit_names() const {
  std::vector<std::string> names;
  for (const Unit& unit : state_->units)
    names.push_back(unit.name);
  return names;
}

std::int64_t ParameterOffload::largest_unit_bytes() const {
  std::int64_t largest = 0;
  for (const Unit& unit : state_->units)
    largest = std::max(largest, unit.bytes);
  return largest;
}

const std::vector<std::string>& ParameterOffload::copy_log() const {
  return state_->copy_log;
}

void ParameterOffload::clear_copy_log() {
  state_->copy_log.clear();
}

ParameterOffloadStats ParameterOffload::stats() const {
  return state_->stats;
}

// Note [The host step and the next forward's copies]
// With the parameters on the host the optimizer steps there, and the next forward cannot start
// before its first unit's parameters are back on the device. optimizer.step() would update every
// parameter and only then let the forward's pre-hook start that copy. step() instead runs the
// optimizer once per unit, in forward order, on that unit's parameters alone (the others' grad is
// set aside for the call, so the optimizer skips them as parameters without a gradient), and
// copies each of the first `prefetch` + 1 units to the device right after its update: on CUDA on
// the copy stream, while the host goes on with the next units, and the next forward's pre-hook
// finds them there (Unit copies are the pre-hook's own, so it only waits for their event). Every
// optimizer keeps its steps and state per parameter, so the updates are those of one step over
// all of them, bitwise. A copy records the parameter's version; a parameter changed on the host
// before the forward (a load, an edit) no longer matches it and is copied again. The host never
// overwrites a parameter whose copy may still be reading it: its next update follows a backward,
// whose end waits for the gradient copies queued on the same copy stream after it.
void ParameterOffload::step(optim::Optimizer& optimizer) {
  State& s = *state_;
  s.recover_all();  // Note [A forward that throws]
  std::vector<Tensor> params;
  for (const optim::ParamGroup& group : optimizer.param_groups())
    for (const Tensor& p : group.params)
      params.push_back(p);
  std::unordered_map<const TensorImpl*, std::size_t> index;
  for (std::size_t i = 0; i < params.size(); ++i)
    index[&params[i].impl()] = i;
  // Every gradient set aside, and given back however this returns.
  std::vector<Tensor> grads(params.size());
  for (std::size_t i = 0; i < params.size(); ++i)
    grads[i] = params[i].grad();
  struct GiveBack {
    std::vector<Tensor>& params;
    std::vector<Tensor>& grads;
    ~GiveBack() {  // what was there, unchecked (a destructor must not throw)
      for (std::size_t i = 0; i < params.size(); ++i)
        params[i].mutable_grad() = grads[i];
    }
  } give_back{params, grads};
  for (Tensor& p : params)
    p.set_grad(Tensor());

  std::vector<bool> stepped(params.size(), false);
  // Steps the parameters `which` (indices into params) that have a gradient and were not stepped.
  auto step_these = [&](const std::vector<std::size_t>& which) {
    std::vector<std::size_t> now;
    for (std::size_t i : which) {
      if (stepped[i] || !grads[i].defined()) continue;
      stepped[i] = true;
      params[i].set_grad(grads[i]);
      now.push_back(i);
    }
    if (now.empty()) return;
    optimizer.step();
    for (std::size_t i : now)
      params[i].set_grad(Tensor());
  };
  // Units in forward order (those not called yet after them), each followed by its copy when it
  // is among the first prefetch + 1.
  std::vector<int> units = s.order;
  for (int u = 0; u < static_cast<int>(s.units.size()); ++u)
    if (!s.ordered[static_cast<std::size_t>(u)]) units.push_back(u);
  const std::size_t ahead = static_cast<std::size_t>(std::max(0, s.options.prefetch())) + 1;
  for (std::size_t k = 0; k < units.size(); ++k) {
    std::vector<std::size_t> which;
    for (const OffloadedParam* p : s.units[static_cast<std::size_t>(units[k])].params) {
      const auto it = index.find(&p->param.impl());
      if (it != index.end()) which.push_back(it->second);
    }
    step_these(which);
    if (k < ahead && k < s.order.size()) s.copy_in(units[k], /*saved_only=*/false);
  }
  // The optimizer's parameters that no unit holds.
  std::vector<std::size_t> rest(params.size());
  for (std::size_t i = 0; i < params.size(); ++i)
    rest[i] = i;
  step_these(rest);
}

}  // namespace leangrad::offload
