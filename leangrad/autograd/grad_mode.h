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

}  // namespace leangrad
