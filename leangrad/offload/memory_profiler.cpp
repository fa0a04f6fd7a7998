// profile_step (offload/memory_planner.h): one real training step, every block recomputed and
// instrumented through its forward wrapper, cut into windows at the blocks' boundaries; the peak
// allocated of each window, the bytes each block saves and the time of each of its phases.
// See Note [Profiling a step].
#include <algorithm>
#include <any>
#include <chrono>
#include <cstddef>
#include <memory>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/memory.h>
#include <leangrad/offload/memory_planner.h>

namespace leangrad::offload {

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::int64_t storage_bytes(const Tensor& t) {
  return t.defined() && t.storage()
             ? memory::allocated_size(static_cast<std::int64_t>(t.storage()->nbytes()))
             : 0;
}

// Note [Profiling a step]
// Every block runs under a wrapper that calls it through autograd::checkpoint, so the step is
// the smallest-footprint plan (it fits wherever any plan fits) and every block's forward runs
// twice: first without a graph, then, at the start of the block's backward, with one. The
// boundaries cut the step into windows (offload/memory_planner.h, MemoryWindow):
//   wrapper entry             Forward(i)     the forward without a graph
//   wrapper exit              Between        (held_blocks + 1)
//   the model's forward hook  Between        after the forward (MemoryWindow::after_forward):
//                                            the loss, the model's backward down to the last
//                                            block; every later window counts as after it too
//   hook on the output's grad Recompute(i)   CheckpointNode starts: the forward with a graph,
//                                            its saved tensors counted by a saved-tensor hook
//   the recompute returns     Backward(i)    the backward through the recomputed graph
//   the input's gradient is   Between        (held_blocks = i) until the next block's backward,
//   final (post-accumulate                   the rest of the model's backward, the optimizer
//   hook on the recompute's                  step
//   input leaf)
// At each boundary the device is synchronised (CUDA: the times are the kernels'), the open
// window gets the allocator's peak since the last boundary, and the peak is reset. A block whose
// input needs no gradient has no last boundary: its Backward window runs to the next one.
// Saved bytes: the distinct storages on the device that the recompute's ops save, parameters
// and buffers excluded, each counted as the allocator does (memory::allocated_size).
//
// Note [Inputs the caller holds]
// The peak model frees a block's input when the block's policy does not keep it (SaveOnCpu, and
// Keep when no op saves it), which is true only when nothing else holds the input. The model's
// own code may: srnet's `blocks(shuffle(head(x)))` keeps shuffle's output, the first block's
// input, alive to the end of that full expression, as C++ keeps every temporary (Python would
// drop it after the call). So the profile asks. The wrapper saves the block's input for the
// checkpoint through a pack hook of its own, which keeps the alias SavedTensor makes (one more
// owner of the storage, and the only one the checkpoint has) and a weak reference to the
// storage. Whenever the storage has another owner, someone outside the block holds the input:
//   input_held_forward        checked when the window the block's exit opened closes: the
//                             caller has moved on (the next block started, or the model's
//                             forward returned);
//   input_held_after_forward  checked when the model's forward returns (its locals are gone),
//                             and again when backward reaches the block, before its recompute.
// An owner still there at a check held the input for the whole stretch before it, so these say
// in which windows a plan keeps the input on the device (Note [Peak model]). The model's forward
// hook is what tells the forward's windows from those after it; a model called without its
// hooks (forward() directly) has no such boundary, and the windows up to the last block's
// backward count as the forward's: an upper bound. One case goes unseen: the last block's exit
// window closes only when the model has returned, so a model whose code uses the last block's
// input again after that block (say `head(b1(h)) + h`) holds it in that stretch unnoticed.
class StepRecorder : public std::enable_shared_from_this<StepRecorder> {
 public:
  StepRecorder(Device device, std::size_t blocks, const std::vector<Tensor>& resident)
      : device_(device), blocks_(blocks), inputs_(blocks) {
    for (const Tensor& t : resident) {
      if (t.defined() && t.storage()) resident_.push_back(t.storage().get());
    }
  }

  // The tensors whose gradients count as parameter gradients in each window.
  void set_parameters(std::vector<Tensor> parameters) { parameters_ = std::move(parameters); }

  void begin_step() {
    held_ = 0;
    after_forward_ = false;
    exited_block_ = -1;
    windows_.clear();
    window_ms_.clear();
    carried_peak_ = 0;
    synchronize();
    memory::reset_peak(device_);
    open(WindowKind::Between, -1);
    step_start_ = Clock::now();
  }

  // Closes the last window; returns the step's time.
  double end_step() {
    close();
    return milliseconds(Clock::now() - step_start_);
  }

  void forward_begins(int block) {
    LG_CHECK(held_ == block, "profile_step: block ", block, " started its forward with ", held_,
             " blocks holding activations before it; the blocks must run in the order given, "
             "each once per forward");
    after_forward_ = false;  // gradient accumulation: the next forward
    boundary(WindowKind::Forward, block);
  }

  // The checkpoint of `block` saves `input`: the alias SavedTensor made, kept by the pack hook
  // (Note [Inputs the caller holds]).
  void checkpoint_saves(int block, const Tensor& input) {
    inputs_[static_cast<std::size_t>(block)] = input.storage();
  }

  void forward_ends(int block, const Tensor& input, const Tensor& output) {
    LG_CHECK(output.requires_grad(), "profile_step: the output of block ", block,
             " does not require grad: a block without a backward cannot be planned");
    BlockMeasure& m = blocks_[static_cast<std::size_t>(block)];
    m.input_bytes = std::max(m.input_bytes, storage_bytes(input));
    m.output_bytes = std::max(m.output_bytes, storage_bytes(output));
    held_ = block + 1;
    boundary(WindowKind::Between, -1);
    exited_block_ = block;
  }

  // The model's forward returned (its forward hook): what it held in its locals and temporaries
  // is gone. A window starts that counts as after the forward.
  void model_forward_returns() {
    if (after_forward_ || held_ == 0) return;  // evaluation, or no block ran
    for (int j = 0; j < held_; ++j) {
      BlockMeasure& m = blocks_[static_cast<std::size_t>(j)];
      if (held_by_caller(j)) m.input_held_after_forward_bytes = m.input_bytes;
    }
    after_forward_ = true;
    boundary(WindowKind::Between, -1);
  }

  void backward_begins(int block) {
    LG_CHECK(held_ == block + 1, "profile_step: block ", block, " started its backward with ",
             held_, " blocks holding activations; the blocks' backwards must run in reverse order");
    held_ = block;
    BlockMeasure& m = blocks_[static_cast<std::size_t>(block)];
    if (held_by_caller(block)) m.input_held_after_forward_bytes = m.input_bytes;
    after_forward_ = true;
    boundary(WindowKind::Recompute, block);
  }

  // The recompute of `block`: call(input) with a graph, its saved storages counted.
  Tensor recompute(int block, const Tensor& input, const nn::ForwardCall& call) {
    const std::int64_t start = mark();
    std::vector<const Storage*> seen;
    std::int64_t saved = 0;
    bool input_saved = false;
    Tensor output;
    {
      autograd::SavedTensorHooksGuard count(
          [&](const Tensor& t) -> std::any {
            const Storage* s = t.storage().get();
            const bool counted =
                t.device() != device_ || s == nullptr ||
                std::find(resident_.begin(), resident_.end(), s) != resident_.end() ||
                std::find(seen.begin(), seen.end(), s) != seen.end();
            if (!counted) {
              seen.push_back(s);
              saved += storage_bytes(t);
              if (s == input.storage().get()) input_saved = true;
            }
            return t;
          },
          [](const std::any& packed) { return std::any_cast<Tensor>(packed); });
      output = call(input);
    }
    synchronize();
    BlockMeasure& m = blocks_[static_cast<std::size_t>(block)];
    m.saved_bytes = std::max(m.saved_bytes, saved);
    if (input_saved) m.saved_input_bytes = std::max(m.saved_input_bytes, storage_bytes(input));
    m.forward_rise_bytes =
        std::max(m.forward_rise_bytes, memory::stats(device_).peak_allocated - start);
    boundary(WindowKind::Backward, block);
    if (input.requires_grad()) {
      Tensor leaf = input;  // the recompute's input: a leaf (Note [Checkpoint recompute])
      leaf.register_post_accumulate_grad_hook(
          [self = shared_from_this()](const Tensor&) { self->boundary(WindowKind::Between, -1); });
    }
    return output;
  }

  const std::vector<MemoryWindow>& windows() const { return windows_; }
  const std::vector<double>& window_ms() const { return window_ms_; }

  struct BlockMeasure {
    std::int64_t input_bytes = 0, output_bytes = 0, saved_bytes = 0, forward_rise_bytes = 0;
    std::int64_t saved_input_bytes = 0, input_held_forward_bytes = 0,
                 input_held_after_forward_bytes = 0;
  };
  const std::vector<BlockMeasure>& blocks() const { return blocks_; }

 private:
  void synchronize() const {
    if (device_.is_cuda()) cuda::synchronize(device_.index);
  }

  std::int64_t gradient_bytes() const {
    std::int64_t bytes = 0;
    for (const Tensor& p : parameters_)
      bytes += storage_bytes(p.grad());
    return bytes;
  }

  // Whether the input of `block` has an owner besides its checkpoint's pack hook.
  bool held_by_caller(int block) const {
    return inputs_[static_cast<std::size_t>(block)].use_count() > 1;
  }

  void open(WindowKind kind, int block) {
    MemoryWindow w;
    w.kind = kind;
    w.block = block;
    w.held_blocks = held_;
    w.after_forward = after_forward_;
    w.start_bytes = memory::stats(device_).allocated;
    w.gradient_bytes = gradient_bytes();
    open_ = w;
    open_time_ = Clock::now();
  }

  void close() {
    if (exited_block_ >= 0) {  // the window the block's exit opened: the caller has moved on
      BlockMeasure& m = blocks_[static_cast<std::size_t>(exited_block_)];
      if (held_by_caller(exited_block_)) m.input_held_forward_bytes = m.input_bytes;
      exited_block_ = -1;
    }
    synchronize();
    const Clock::time_point now = Clock::now();
    open_.peak_bytes = std::max(carried_peak_, memory::stats(device_).peak_allocated);
    carried_peak_ = 0;
    windows_.push_back(open_);
    window_ms_.push_back(milliseconds(now - open_time_));
    memory::reset_peak(device_);
  }

  void boundary(WindowKind next, int block) {
    close();
    open(next, block);
  }

  // Resets the peak inside the open window (keeping what it reached so far) and returns the
  // allocated bytes now.
  std::int64_t mark() {
    synchronize();
    const MemoryStats s = memory::stats(device_);
    carried_peak_ = std::max(carried_peak_, s.peak_allocated);
    memory::reset_peak(device_);
    return s.allocated;
  }

  Device device_;
  std::vector<const Storage*> resident_;  // parameters and buffers: never counted as saved
  std::vector<Tensor> parameters_;
  std::vector<BlockMeasure> blocks_;
  std::vector<std::weak_ptr<Storage>> inputs_;  // each block's input, as its checkpoint saved it
  int held_ = 0;
  bool after_forward_ = false;
  int exited_block_ = -1;  // the block whose exit opened the current window, until it closes
  std::vector<MemoryWindow> windows_;
  std::vector<double> window_ms_;
  MemoryWindow open_;
  Clock::time_point open_time_;
  Clock::time_point step_start_;
  std::int64_t carried_peak_ = 0;
};

// The forward wrapper of block `index` while it is profiled.
nn::ForwardWrapper profiling_wrapper(const std::shared_ptr<StepRecorder>& recorder, int index) {
  return [recorder, index](const Tensor& input, const nn::ForwardCall& call) {
    if (!autograd::grad_mode_enabled()) return call(input);  // evaluation: not profiled
    recorder->forward_begins(index);
    const autograd::CheckpointFn run = [recorder, index, call](const std::vector<Tensor>& in) {
      // Without a graph: the forward. With one: CheckpointNode's recompute in backward.
      if (!autograd::grad_mode_enabled()) return std::vector<Tensor>{call(in[0])};
      return std::vector<Tensor>{recorder->recompute(index, in[0], call)};
    };
    Tensor output;
    {
      // The checkpoint's only save (its forward runs without a graph): Note [Inputs the caller
      // holds].
      autograd::SavedTensorHooksGuard watch(
          [recorder, index](const Tensor& t) -> std::any {
            recorder->checkpoint_saves(index, t);
            return t;
          },
          [](const std::any& packed) { return std::any_cast<Tensor>(packed); });
      output = autograd::checkpoint(run, {input})[0];
    }
    recorder->forward_ends(index, input, output);
    output.register_hook([recorder, index](const Tensor&) { recorder->backward_begins(index); });
    return output;
  };
}

// "blocks.3": the dotted path of `target` under `module`, or empty.
std::string path_of(const nn::Module& module, const nn::Module* target, const std::string& prefix) {
  for (const auto& [name, child] : module.named_children()) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    if (child.get() == target) return path;
    std::string found = path_of(*child, target, path);
    if (!found.empty()) return found;
  }
  return "";
}

// Removes the profiling wrappers and the model's forward hook however profile_step leaves.
struct ProfilingRemoved {
  const std::vector<std::shared_ptr<nn::Module>>& blocks;
  nn::HookHandle model_hook;
  ~ProfilingRemoved() {
    for (const auto& block : blocks)
      block->set_forward_wrapper(nullptr);
    model_hook.remove();
  }
};

}  // namespace

StepProfile profile_step(nn::Module& model, const std::vector<std::shared_ptr<nn::Module>>& blocks,
                         const std::function<void()>& step, const ProfileOptions& options) {
  LG_CHECK(!blocks.empty(), "profile_step: no blocks to profile");
  LG_CHECK(static_cast<bool>(step), "profile_step: expected a step function");
  LG_CHECK(options.warmup_steps >= 0 && options.measured_steps >= 1,
           "profile_step: expected warmup_steps >= 0 and measured_steps >= 1, got ",
           options.warmup_steps, " and ", options.measured_steps);
  const std::vector<Tensor> parameters = model.parameters();
  LG_CHECK(!parameters.empty(), "profile_step: the model has no parameters");
  const Device device = parameters.front().device();

  StepProfile profile;
  profile.device = device;
  for (const Tensor& p : parameters)
    profile.parameter_bytes += storage_bytes(p);
  profile.outside_parameter_bytes = profile.parameter_bytes;
  detail::check_blocks(blocks, "profile_step");
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    BlockProfile b;
    b.name = path_of(model, blocks[i].get(), "");
    LG_CHECK(!b.name.empty(), "profile_step: block ", i, " (", blocks[i]->name(),
             ") is not a submodule of the model");
    for (const Tensor& p : blocks[i]->parameters()) {
      b.parameter_bytes += storage_bytes(p);
      if (p.requires_grad()) b.gradient_bytes += storage_bytes(p);
    }
    profile.outside_parameter_bytes -= b.parameter_bytes;
    profile.blocks.push_back(std::move(b));
  }

  std::vector<Tensor> resident = parameters;
  for (const Tensor& b : model.buffers())
    resident.push_back(b);
  auto recorder = std::make_shared<StepRecorder>(device, blocks.size(), resident);
  recorder->set_parameters(parameters);
  ProfilingRemoved removed{blocks, {}};
  for (std::size_t i = 0; i < blocks.size(); ++i)
    blocks[i]->set_forward_wrapper(profiling_wrapper(recorder, static_cast<int>(i)));
  removed.model_hook =
      model.register_forward_hook([recorder](nn::Module&, const Tensor&, const Tensor&) {
        if (autograd::grad_mode_enabled()) recorder->model_forward_returns();
      });

  std::vector<double> step_ms;
  for (int s = 0; s < options.warmup_steps + options.measured_steps; ++s) {
    recorder->begin_step();
    step();
    const double ms = recorder->end_step();
    // Every block forward once and backward once in each step, as the planner's model has it: a
    // block the step never calls, or a step with no backward, measures nothing of it, and a plan
    // built on those zeros would not be a plan (they were taken silently).
    const std::vector<MemoryWindow>& windows = recorder->windows();
    std::vector<int> forwards(blocks.size(), 0), backwards(blocks.size(), 0);
    for (const MemoryWindow& w : windows) {
      if (w.block < 0) continue;
      if (w.kind == WindowKind::Forward) ++forwards[static_cast<std::size_t>(w.block)];
      if (w.kind == WindowKind::Backward) ++backwards[static_cast<std::size_t>(w.block)];
    }
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const std::string& name = profile.blocks[i].name;
      LG_CHECK(
          forwards[i] == 1, "profile_step: block ", i, " (", name, ") ran ", forwards[i],
          " times in the step's forward with grad mode on; each block must run exactly once per "
          "forward");
      LG_CHECK(backwards[i] == 1, "profile_step: block ", i, " (", name,
               ") had no backward in the step: the step must run forward, a loss that uses every "
               "block's output, and backward (with grad mode on)");
    }
    if (s < options.warmup_steps) continue;
    step_ms.push_back(ms);
    if (profile.windows.empty()) {
      profile.windows = windows;
    } else {
      LG_CHECK(windows.size() == profile.windows.size(),
               "profile_step: the measured steps ran the blocks differently (",
               profile.windows.size(), " windows, then ", windows.size(), ")");
      for (std::size_t w = 0; w < windows.size(); ++w) {
        MemoryWindow& kept = profile.windows[w];
        LG_CHECK(kept.kind == windows[w].kind && kept.block == windows[w].block,
                 "profile_step: the measured steps ran the blocks in different orders");
        kept.peak_bytes = std::max(kept.peak_bytes, windows[w].peak_bytes);
        kept.start_bytes = std::max(kept.start_bytes, windows[w].start_bytes);
        kept.gradient_bytes = std::max(kept.gradient_bytes, windows[w].gradient_bytes);
      }
    }
    // Times per step: each block's windows summed, then averaged over the measured steps.
    const double share = 1.0 / options.measured_steps;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      if (windows[w].kind == WindowKind::Between) continue;
      BlockProfile& b = profile.blocks[static_cast<std::size_t>(windows[w].block)];
      const double ms_share = share * recorder->window_ms()[w];
      if (windows[w].kind == WindowKind::Forward) b.nograd_forward_ms += ms_share;
      if (windows[w].kind == WindowKind::Recompute) b.forward_ms += ms_share;
      if (windows[w].kind == WindowKind::Backward) b.backward_ms += ms_share;
    }
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const StepRecorder::BlockMeasure& m = recorder->blocks()[i];
    BlockProfile& b = profile.blocks[i];
    b.input_bytes = m.input_bytes;
    b.output_bytes = m.output_bytes;
    b.saved_bytes = m.saved_bytes;
    b.forward_rise_bytes = m.forward_rise_bytes;
    b.saved_input_bytes = m.saved_input_bytes;
    b.input_held_forward_bytes = m.input_held_forward_bytes;
    b.input_held_after_forward_bytes = m.input_held_after_forward_bytes;
  }
  std::sort(step_ms.begin(), step_ms.end());
  profile.step_ms = step_ms[step_ms.size() / 2];
  CopyBandwidthProbe probe(device);
  profile.copy_bytes_per_ms = probe.measure();
  return profile;
}

CopyBandwidthProbe::CopyBandwidthProbe(Device device) : device_(device) {
  if (!device.is_cuda()) return;
  try {
    on_device_ = empty({kBytes / 4}, TensorOptions(kFloat32).device(device));
    on_host_ = empty({kBytes / 4}, TensorOptions(kFloat32).pinned_memory(true));
  } catch (const OutOfMemoryError&) {
    on_device_ = Tensor();
    on_host_ = Tensor();
  }
}

double CopyBandwidthProbe::measure(const std::function<void()>& before_each_timing) {
  if (!ready()) return 0;
  double best_ms = 0;
  for (int i = 0; i < kTimings; ++i) {
    cuda::synchronize(device_.index);
    if (before_each_timing) before_each_timing();
    const Clock::time_point start = Clock::now();
    for (int k = 0; k < kCopiesPerTiming; ++k) {
      if (i % 2 == 0) {
        on_host_.copy_(on_device_);
      } else {
        on_device_.copy_(on_host_);
      }
    }
    cuda::synchronize(device_.index);
    const double ms = milliseconds(Clock::now() - start);
    if (best_ms == 0 || ms < best_ms) best_ms = ms;
  }
  return best_ms > 0 ? static_cast<double>(kBytes) * kCopiesPerTiming / best_ms : 0;
}

}  // namespace leangrad::offload
