// Autocast state, the per-operand casts of the policy, and the cast cache (autograd/autocast.h).
#include <leangrad/autograd/autocast.h>

#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>

namespace leangrad::amp {

// Note [Autocast policy]
//   Which precision each op runs in under an AutocastGuard, as PyTorch's autocast lists
//   (torch/csrc/autograd/autocast_mode.cpp: "lower_precision_fp", "fp32", "promote"):
//   - lower precision (every float32/float16/bfloat16 operand cast to the autocast dtype):
//     matmul, linear (weight and bias too), conv2d and conv_transpose2d (weight and bias too).
//     These are where the time goes and where tensor cores run; their saved inputs take half
//     the memory.
//   - float32 (float16/bfloat16 operands cast to float32, result float32): exp, log, pow,
//     sum, mean, softmax, log_softmax and the losses (cross_entropy, nll_loss, mse_loss,
//     l1_loss): ops whose range or accumulation a 16-bit result would lose.
//   - the input's dtype with float32 math: tanhexp and group_norm (and layer_norm and
//     batch_norm, which run on group_norm's kernels). Our kernels are fused and
//     compute in float32 whatever they store (opmath_t, kernels/elementwise_math.h): TanhExp's
//     exp and GroupNorm's statistics (mean and rstd, kept in float32 for the backward) never
//     round to 16 bits; only the stored output does. GroupNorm's weight and bias are cast to
//     the input's dtype. PyTorch casts group_norm's and layer_norm's input to float32 instead,
//     because its unfused composites would otherwise compute in 16 bits; we keep the activation
//     half-size.
//   - everything else runs in the dtype it is given; ops with several floating operands
//     (add, mul, where, cat, ...) promote to the widest, so a float32 residual added to a
//     bfloat16 branch gives float32, as in PyTorch.
//   float64 operands are never cast. Outside the guard nothing is cast.

// Note [Autocast cast cache]
//   A parameter used twice in one forward (a shared weight, or a module called twice) would be
//   cast twice: two copies in memory and two nodes. Casts of leaves that require grad are kept
//   in a thread-local cache keyed by the source tensor, the target dtype and grad mode, and
//   emptied when the outermost enabled guard ends (the end of the forward). An entry holds the
//   source (so its address cannot be reused while cached) and the source's version: after an
//   in-place change of the parameter the entry is stale and the cast is made again.

namespace {

struct CacheEntry {
  Tensor source;
  DType dtype;
  bool grad_mode;
  std::uint32_t version;
  Tensor cast;
};

thread_local AutocastState tls_state;
thread_local int tls_enabled_depth = 0;  // enabled guards alive on this thread
thread_local std::vector<CacheEntry> tls_cache;

bool applies_to(const Tensor& t) {
  if (!tls_state.enabled || !t.defined() || !is_floating(t.dtype())) return false;
  return !tls_state.device_type || *tls_state.device_type == t.device().type;
}

Tensor cast_cached(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  if (!(t.is_leaf() && t.requires_grad())) return to(t, t.device(), dtype);
  const bool grad_mode = autograd::grad_mode_enabled();
  for (CacheEntry& entry : tls_cache) {
    if (&entry.source.impl() != &t.impl() || entry.dtype != dtype || entry.grad_mode != grad_mode)
      continue;
    if (entry.version == t.version()) return entry.cast;
    entry.cast = to(t, t.device(), dtype);
    entry.version = t.version();
    return entry.cast;
  }
  Tensor cast = to(t, t.device(), dtype);
  tls_cache.push_back({t, dtype, grad_mode, t.version(), cast});
  return cast;
}

void enter(const AutocastState& state) {
  if (state.enabled) {
    LG_CHECK_DTYPE(state.dtype == kFloat16 || state.dtype == kBFloat16,
                   "AutocastGuard: expected float16 or bfloat16, got ", state.dtype);
    ++tls_enabled_depth;
  }
  tls_state = state;
}

}  // namespace

AutocastState autocast_state() {
  return tls_state;
}

bool is_autocast_enabled() {
  return tls_state.enabled;
}

AutocastGuard::AutocastGuard(DType dtype, std::optional<DeviceType> device_type, bool enabled)
    : AutocastGuard(AutocastState{enabled, dtype, device_type}) {}

AutocastGuard::AutocastGuard(const AutocastState& state) : previous_(tls_state) {
  enter(state);
}

AutocastGuard::~AutocastGuard() {
  if (tls_state.enabled && --tls_enabled_depth == 0) tls_cache.clear();
  tls_state = previous_;
}

Tensor autocast_operand(const Tensor& t, CastPolicy policy) {
  if (!applies_to(t) || t.dtype() == kFloat64) return t;
  switch (policy) {
    case CastPolicy::LowerPrecision:
      return cast_cached(t, tls_state.dtype);
    case CastPolicy::Float32:
      return cast_cached(t, kFloat32);
  }
  return t;
}

Tensor autocast_operand_to(const Tensor& t, DType dtype) {
  if (!applies_to(t) || t.dtype() == kFloat64 || !is_floating(dtype) || dtype == kFloat64) return t;
  return cast_cached(t, dtype);
}

std::size_t autocast_cache_size() {
  return tls_cache.size();
}

}  // namespace leangrad::amp
