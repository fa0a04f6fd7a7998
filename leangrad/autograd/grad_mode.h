// Grad mode and anomaly mode: thread-local switches that decide whether ops record the graph
// and whether backward checks every gradient for NaN/Inf.
//   { NoGradGuard no_grad; w.add_(g, -lr); }          // optimizer steps, evaluation
//   { autograd::AnomalyMode anomaly; loss.backward(); }  // names the op that produced a NaN
#pragma once

namespace leangrad {

namespace autograd {
bool grad_mode_enabled();
void set_grad_mode_enabled(bool enabled);
bool anomaly_mode_enabled();

// Sets grad mode for a scope (enabled or not) and restores the previous mode on exit.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(grad_mode_enabled()) {
    set_grad_mode_enabled(enabled);
  }
  ~GradModeGuard() { set_grad_mode_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// While alive (on this thread), backward checks each node's results for NaN/Inf and throws an
// Error naming the node (e.g. "LogBackward") and the forward op that created it.
class AnomalyMode {
 public:
  AnomalyMode();
  ~AnomalyMode();
  AnomalyMode(const AnomalyMode&) = delete;
  AnomalyMode& operator=(const AnomalyMode&) = delete;

 private:
  bool previous_;
};
}  // namespace autograd

// Ops run inside this scope record no graph (as torch::NoGradGuard).
class NoGradGuard : public autograd::GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

// LibTorch's other spellings of the same switch.
// torch::AutoGradMode: grad mode on or off for a scope.
class AutoGradMode : public autograd::GradModeGuard {
 public:
  explicit AutoGradMode(bool enabled) : GradModeGuard(enabled) {}
};

// torch::InferenceMode: no graph is recorded while it is alive (and enabled). leangrad has no
// separate "inference tensors": this is NoGradGuard under LibTorch's name, so tensors made inside
// may later be used with autograd (docs/api-notes.md).
class InferenceMode : public autograd::GradModeGuard {
 public:
  explicit InferenceMode(bool enabled = true)
      : GradModeGuard(enabled ? false : autograd::grad_mode_enabled()) {}
};

// torch::GradMode: the thread's switch itself.
struct GradMode {
  static bool is_enabled() { return autograd::grad_mode_enabled(); }
  static void set_enabled(bool enabled) { autograd::set_grad_mode_enabled(enabled); }
};

namespace autograd {
// torch::autograd::DetectAnomalyGuard: AnomalyMode under LibTorch's name.
using DetectAnomalyGuard = AnomalyMode;
}  // namespace autograd

}  // namespace leangrad
