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
// The settings are per thread (as grad mode) and per device type (as PyTorch's). Backward runs
// with autocast off: every node computes its gradients in the dtypes its forward ran in
// (autograd/engine.cpp), and a checkpoint segment is recomputed under the autocast settings of
// its forward (autograd/checkpoint.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>
#include <leangrad/core/tensor.h>

namespace leangrad::amp {

// An autocast setting: a guard's argument, and what autocast_state(device_type) reports.
struct AutocastState {
  bool enabled = false;
  DType dtype = kBFloat16;                // the lower precision: float16 or bfloat16
  std::optional<DeviceType> device_type;  // ops on tensors of this device type; none: every device
};

// This thread's setting for ops on tensors of `device_type` (device_type filled in). Each device
// type has its own, as in PyTorch (torch.is_autocast_enabled() and is_autocast_cpu_enabled()).
AutocastState autocast_state(DeviceType device_type);
// Whether autocast is on for ops on `device_type`, or, with none given, on any device type.
bool is_autocast_enabled(std::optional<DeviceType> device_type = std::nullopt);

// Sets autocast to `dtype` (float16 or bfloat16, else DTypeError) for ops on `device_type` (every
// device type when not given) until the guard dies, then restores the previous settings. With
// enabled = false it turns autocast off there inside an autocast region (torch's enabled=False).
// The setting of a device type the guard does not name is left as it was: a guard for CUDA
// inside one for the CPU leaves the CPU ops autocast. Guards nest; the cast cache is emptied
// when the outermost guard ends.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype = kBFloat16,
                         std::optional<DeviceType> device_type = std::nullopt, bool enabled = true);
  explicit AutocastGuard(const AutocastState& state);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  AutocastState previous_cpu_;
  AutocastState previous_cuda_;
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
