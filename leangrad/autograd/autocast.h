// amp::AutocastGuard: mixed precision in the forward pass, as torch.autocast.
//
//   {
//     amp::AutocastGuard autocast(kBFloat16);   // or kFloat16 (with amp::GradScaler)
//     loss = criterion(model(x), y);             // matmul/linear/conv2d in bfloat16
//   }
//   loss.backward();                             // outside: gradients in each tensor's dtype
//
// Under the guard each public function casts its floating operands by the op's policy before it
// runs; parameters stay float32 (the master weights) and receive float32 gradients through the
// differentiable casts. See Note [Autocast policy] for the table, Note [Autocast cast cache] for
// why a weight used twice is cast once, and docs/training.md ("Mixed precision").
//
// The state is per thread (as grad mode). Backward runs with autocast off: every node computes
// its gradients in the dtypes its forward ran in (autograd/engine.cpp), and a checkpoint segment
// is recomputed under the autocast state of its forward (autograd/checkpoint.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>
#include <leangrad/core/tensor.h>

namespace leangrad::amp {

// This thread's autocast setting.
struct AutocastState {
  bool enabled = false;
  DType dtype = kBFloat16;                // the lower precision: float16 or bfloat16
  std::optional<DeviceType> device_type;  // ops on tensors of this device type; none: every device
};

AutocastState autocast_state();
bool is_autocast_enabled();

// Enables autocast to `dtype` (float16 or bfloat16, else DTypeError) for ops on `device_type`
// (every device when not given) until the guard dies, then restores the previous state. With
// enabled = false it turns autocast off inside an autocast region (torch's enabled=False).
// Guards nest; the cast cache is emptied when the outermost enabled guard ends.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype = kBFloat16,
                         std::optional<DeviceType> device_type = std::nullopt, bool enabled = true);
  explicit AutocastGuard(const AutocastState& state);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  AutocastState previous_;
};

// The policies of Note [Autocast policy], applied to one operand by the public functions.
enum class CastPolicy : std::uint8_t {
  LowerPrecision,  // float32/float16/bfloat16 -> the autocast dtype (float64 is left alone)
  Float32,         // float16/bfloat16 -> float32
};

// `t` cast by `policy` when autocast is on for t's device; `t` itself otherwise (and for
// undefined or non-floating tensors). Casts of leaves that require grad are cached.
Tensor autocast_operand(const Tensor& t, CastPolicy policy);
// `t` cast to `dtype` under the same conditions (GroupNorm's affine parameters follow its input).
Tensor autocast_operand_to(const Tensor& t, DType dtype);
// Entries in this thread's cast cache (tests; Note [Autocast cast cache]).
std::size_t autocast_cache_size();

}  // namespace leangrad::amp
