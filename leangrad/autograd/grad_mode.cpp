// Thread-local grad mode and anomaly mode flags.
#include <leangrad/autograd/grad_mode.h>

namespace leangrad::autograd {

namespace {
thread_local bool grad_mode = true;
thread_local bool anomaly_mode = false;
}  // namespace

bool grad_mode_enabled() {
  return grad_mode;
}
void set_grad_mode_enabled(bool enabled) {
  grad_mode = enabled;
}
bool anomaly_mode_enabled() {
  return anomaly_mode;
}

AnomalyMode::AnomalyMode() : previous_(anomaly_mode) {
  anomaly_mode = true;
}
AnomalyMode::~AnomalyMode() {
  anomaly_mode = previous_;
}

}  // namespace leangrad::autograd
