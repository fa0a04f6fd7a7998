// Autocast state, the per-operand casts of the policy, and the cast cache (autograd/autocast.h).
#include <leangrad/autograd/autocast.h>

#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>

namespace leangrad::amp {

// Note [Autocast policy]
//   Which precision each op runs in under an AutocastGuard, as PyTorch's CUDA autocast lists
//   (aten/src/ATen/autocast_mode.cpp: "lower_precision_fp", "fp32", "fp32_set_opt_dtype",
//   "promote"), on every device type (PyTorch's CPU lists are shorter):
//   - lower precision (every float32/float16/bfloat16 operand cast to the autocast dtype):
//     matmul (and mm), linear (weight and bias too), conv1d, conv2d and conv_transpose2d
//     (weight and bias too). These are where the time goes and where tensor cores run; their
//     saved inputs take half the memory.
//   - float32 (float16/bfloat16 operands cast to float32, result float32): exp, expm1, log,
//     log1p (and so softplus), log2, log10, rsqrt, reciprocal, tan, asin, acos, sinh, cosh, pow,
//     erfinv, a scalar divided by a tensor
//     (rdiv, torch's __rdiv__), sum, softmax, log_softmax and the losses (cross_entropy, nll_loss,
//     mse_loss, l1_loss, binary_cross_entropy and _with_logits, smooth_l1_loss, huber_loss,
//     kl_div, poisson_nll_loss, margin_ranking_loss, hinge_embedding_loss, soft_margin_loss,
//     cosine_embedding_loss, triplet_margin_loss, and two that are Python composites in
//     PyTorch: gaussian_nll_loss, whose log and pow run in float32 there, and
//     multilabel_soft_margin_loss), cosine_similarity and pairwise_distance (whose norm PyTorch
//     runs in float32): ops whose range or accumulation a 16-bit result would lose. mean
//     is in none of PyTorch's lists: it keeps its input's dtype (and accumulates in float32 like
//     every 16-bit reduction), as do var and std.
//   - the input's dtype with float32 math: tanhexp, group_norm, layer_norm and batch_norm. Our
//     kernels are fused and compute in float32 whatever they store (opmath_t,
//     kernels/elementwise_math.h): TanhExp's exp and the normalizations' statistics (mean and
//     rstd, kept in float32 for the backward) never round to 16 bits; only the stored output
//     does. The weight and bias are cast to the input's dtype. PyTorch casts group_norm's and
//     layer_norm's input to float32 instead, because its unfused composites would otherwise
//     compute in 16 bits; we keep the activation half-size.
//   - everything else runs in the dtype it is given; ops with several floating operands
//     (add, mul, where, cat, ...) promote to the widest, so a float32 residual added to a
//     bfloat16 branch gives float32, as in PyTorch.
//   float64 operands are never cast. Outside the guard nothing is cast.

// Note [Autocast cast cache]
//   A parameter used twice in one forward (a shared weight, or a module called twice) would be
//   cast twice: two copies in memory and two nodes. Casts of leaves that require grad are kept
//   in a thread-local cache keyed by the source tensor, the target dtype and grad mode, and
//   emptied when the outermost guard ends (the end of the forward; guards are counted enabled or
//   not, as PyTorch's autocast nesting). An entry holds the
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

// Each device type's setting on this thread (device_type filled in), and the guards alive.
thread_local AutocastState tls_cpu{false, kBFloat16, DeviceType::CPU};
thread_local AutocastState tls_cuda{false, kBFloat16, DeviceType::CUDA};
thread_local int tls_guard_depth = 0;
thread_local std::vector<CacheEntry> tls_cache;

AutocastState& setting(DeviceType device_type) {
  return device_type == DeviceType::CUDA ? tls_cuda : tls_cpu;
}

// The autocast dtype for ops on t's device, or none when autocast does not apply to t.
std::optional<DType> autocast_dtype_for(const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype()) || t.dtype() == kFloat64) return std::nullopt;
  const AutocastState& s = setting(t.device().type);
  if (!s.enabled) return std::nullopt;
  return s.dtype;
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

}  // namespace

AutocastState autocast_state(DeviceType device_type) {
  return setting(device_type);
}

bool is_autocast_enabled(std::optional<DeviceType> device_type) {
  if (device_type) return setting(*device_type).enabled;
  return tls_cpu.enabled || tls_cuda.enabled;
}

AutocastGuard::AutocastGuard(DType dtype, std::optional<DeviceType> device_type, bool enabled)
    : AutocastGuard(AutocastState{enabled, dtype, device_type}) {}

AutocastGuard::AutocastGuard(const AutocastState& state)
    : previous_cpu_(tls_cpu), previous_cuda_(tls_cuda) {
  LG_CHECK_DTYPE(!state.enabled || is_reduced_precision(state.dtype),
                 "AutocastGuard: expected float16 or bfloat16, got ", state.dtype);
  for (DeviceType device_type : {DeviceType::CPU, DeviceType::CUDA}) {
    if (!state.device_type || *state.device_type == device_type)
      setting(device_type) = AutocastState{state.enabled, state.dtype, device_type};
  }
  ++tls_guard_depth;
}

AutocastGuard::~AutocastGuard() {
  tls_cpu = previous_cpu_;
  tls_cuda = previous_cuda_;
  if (--tls_guard_depth == 0) tls_cache.clear();
}

Tensor autocast_operand(const Tensor& t, CastPolicy policy) {
  const std::optional<DType> low = autocast_dtype_for(t);
  if (!low) return t;
  switch (policy) {
    case CastPolicy::LowerPrecision:
      return cast_cached(t, *low);
    case CastPolicy::Float32:
      return cast_cached(t, kFloat32);
  }
  return t;
}

Tensor autocast_operand_to(const Tensor& t, DType dtype) {
  if (!autocast_dtype_for(t) || !is_floating(dtype) || dtype == kFloat64) return t;
  return cast_cached(t, dtype);
}

std::size_t autocast_cache_size() {
  return tls_cache.size();
}

}  // namespace leangrad::amp
