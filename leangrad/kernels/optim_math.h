// The per-element math of the optimizers, shared by the CPU reference loops
// (kernels/cpu/optim.cpp), the vectorised CPU kernels (kernels/cpu/optim_vectorized.cpp) and the
// fused CUDA kernels (kernels/cuda/optim.cu): all call these LG_HOST_DEVICE functors, so the CPU
// tests against PyTorch check the formulas the GPU runs.
//
// Note [Optimizer streams]
//   An update reads and writes kNumStreams arrays of one parameter tensor, element by element:
//   slot 0 the parameter, slot 1 its gradient (read only), then the states. A state that an
//   option turns off (SGD without momentum, Adam without amsgrad) has a null pointer and reads
//   as 0. Every functor is a template on the element type T (Update::Scalar) of the parameter,
//   whose gradient and states have the same dtype (as in PyTorch): float for float32, double for
//   float64, Half and BFloat16 for float16 and bfloat16. The arithmetic runs in Update::Math =
//   opmath_t<T> (T itself for float and double, float for the 16-bit types: Note [Optimizers in
//   half precision]); one formula serves every dtype, and a launch holds tensors of one dtype
//   (the optimizers make one launch per dtype). Hyperparameters common to a launch live in the
//   functor; those that differ per tensor (the group's lr and weight decay, bias corrections of
//   the tensor's own step) in its TensorScalars, both in Math. Each functor computes them in ONE
//   function, scalars_at(lr, weight_decay, step), in double and rounded to Math once, in the
//   order PyTorch's single-tensor implementations use (torch 1.13 optim/*.py): the host calls it
//   for a plain step, the kernels for a gated one (Note [Gated step]).
//
// Note [Optimizers in half precision]
//   A float16 or bfloat16 parameter keeps its gradient and states in its own dtype, as
//   torch.zeros_like(p) makes them. Every loop (the reference, the vectorised CPU one, CUDA)
//   loads each stream of an element into Math (float; exact), runs the functor in float, and
//   stores each value it writes (the parameter and each state) rounded once to the dtype, to
//   nearest even (core/half.h): the "opmath" of PyTorch's fused and CUDA foreach Adam. So a
//   bfloat16 Adam step is the float32 step on the widened values, rounded at the store, never an
//   op-by-op bfloat16 computation. For float and double the loads and stores are the identity.
//
// Note [Gated step]
//   amp::GradScaler must skip a step whose gradients hold an Inf or NaN without the host reading
//   the flag (optim::Optimizer::step_unless; PyTorch's fused Adam does the same). Such a launch
//   gets found_inf, an int on the device: nonzero means "leave every parameter and state as it
//   was". PyTorch skips optimizer.step() entirely then, so the step count does not advance; here
//   the host has already counted the step, so each tensor counts its skipped steps on the device
//   (StepArgs::skipped, an int32 made by the optimizer's first gated step) and its effective step
//   is t = step - skipped. Per tensor and launch, resolve_step runs once (the CPU: before the
//   tensor's loop; CUDA: thread 0 of every block):
//     found_inf set: the owner of the tensor (the CPU, or the block of its first chunk) adds 1 to
//                    *skipped; nothing else happens;
//     otherwise:     the scalars are Update::scalars_at(lr, weight_decay, step - *skipped), or the
//                    host's own (OptimTensor::scalars) for a tensor that never had a gated step.
//   Within a launch *skipped is read only when found_inf is clear and written only when it is set,
//   so the blocks of a tensor never race on it; launches on one stream are ordered.
#pragma once

#include <cmath>
#include <cstdint>

#include <leangrad/core/dtype.h>
#include <leangrad/core/macros.h>

namespace leangrad::kernels {

inline constexpr int kParamSlot = 0;
inline constexpr int kGradSlot = 1;

// True for finite x (NaN - NaN and inf - inf are NaN); the same on host and device.
template <typename T>
LG_HOST_DEVICE LG_INLINE bool is_finite(T x) {
  return x - x == T(0);
}

// What a tensor's step-dependent scalars are computed from on the device (Note [Gated step]).
struct StepArgs {
  double lr;
  double weight_decay;
  std::int64_t step;      // the host's count for this update: 1 on the first
  std::int32_t* skipped;  // steps the device skipped; null: `scalars` (the host's) hold
};

// One tensor of a multi-tensor launch: its streams (see Note [Optimizer streams]), its size, its
// scalars as the host computed them and, once gated steps are used, what the device computes
// them from.
template <typename Update>
struct OptimTensor {
  typename Update::Scalar* data[Update::kNumStreams];
  std::int64_t numel;
  typename Update::TensorScalars scalars;
  StepArgs step_args;
};

// torch.optim.SGD: g = maximize ? -g : g; g += wd p; buf = first ? g : momentum buf +
// (1 - dampening) g; g = nesterov ? g + momentum buf : buf; p -= lr g.
template <typename T>
struct SgdUpdateOf {
  using Scalar = T;                      // the dtype of the parameter, its gradient and its state
  using Math = opmath_t<T>;              // what one element's arithmetic runs in
  static constexpr int kNumStreams = 3;  // param, grad, momentum_buffer (null without momentum)
  struct TensorScalars {
    Math lr;
    Math weight_decay;
    bool first_step;  // the buffer starts as a copy of the gradient
  };
  Math momentum;
  Math one_minus_dampening;
  bool nesterov;
  bool maximize = false;  // ascend: the gradient negated first (exact)

  // From the optimizer's options (1 - dampening computed in double, then rounded).
  static SgdUpdateOf make(double momentum, double dampening, bool nesterov, bool maximize) {
    return SgdUpdateOf{static_cast<Math>(momentum), static_cast<Math>(1.0 - dampening), nesterov,
                       maximize};
  }

  // `step` counts the updates of the momentum buffer (optim/sgd.cpp): 1 on the one that starts it.
  LG_HOST_DEVICE LG_INLINE TensorScalars scalars_at(double lr, double weight_decay,
                                                    std::int64_t step) const {
    return {static_cast<Math>(lr), static_cast<Math>(weight_decay), step == 1};
  }

  LG_HOST_DEVICE LG_INLINE bool operator()(const TensorScalars& s, Math (&x)[3]) const {
    Math g = maximize ? -x[kGradSlot] : x[kGradSlot];
    if (s.weight_decay != Math(0)) g = g + s.weight_decay * x[kParamSlot];
    if (momentum != Math(0)) {
      const Math buf = s.first_step ? g : x[2] * momentum + one_minus_dampening * g;
      x[2] = buf;
      g = nesterov ? g + momentum * buf : buf;
    }
    x[kParamSlot] = x[kParamSlot] + (-s.lr) * g;
    return true;
  }
};
using SgdUpdate = SgdUpdateOf<float>;

// torch.optim.Adam / AdamW (decoupled weight decay): with g negated first under maximize, and
// bias corrections bc1 = 1 - beta1^t, bc2 = 1 - beta2^t,
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;  vmax = max(vmax, v) (amsgrad)
//   p -= (lr / bc1) m / (sqrt(v or vmax) / sqrt(bc2) + eps)
// With skip_nonfinite (Adam8bit), an element whose gradient is NaN/Inf, or whose new second
// moment is not finite (a finite gradient whose square overflows: beyond about 1.8e19 in
// float32), is left as it was and the call returns false. An infinite moment would become its
// block's absmax, and every code of the block times an infinite absmax is NaN (0 * inf).
// The test of v covers the gradient's: a NaN or Inf g gives a NaN or Inf v.
template <typename T>
struct AdamUpdateOf {
  using Scalar = T;                      // the dtype of the parameter, its gradient and its states
  using Math = opmath_t<T>;              // what one element's arithmetic runs in
  static constexpr int kNumStreams = 5;  // param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq
  struct TensorScalars {
    Math lr;
    Math weight_decay;
    Math step_size;              // lr / bc1
    Math bias_correction2_sqrt;  // sqrt(bc2)
  };
  Math beta1, one_minus_beta1;
  Math beta2, one_minus_beta2;
  Math eps;
  bool amsgrad;
  bool decoupled_weight_decay;  // AdamW: p *= 1 - lr wd, instead of g += wd p
  bool skip_nonfinite;
  double beta1_double, beta2_double;  // the options' betas, for the bias corrections
  bool maximize;                      // ascend: the gradient negated first (exact)

  // From the optimizer's options (the 1 - beta terms computed in double, then rounded).
  static AdamUpdateOf make(double beta1, double beta2, double eps, bool amsgrad,
                           bool decoupled_weight_decay, bool skip_nonfinite,
                           bool maximize = false) {
    return AdamUpdateOf{static_cast<Math>(beta1),
                        static_cast<Math>(1.0 - beta1),
                        static_cast<Math>(beta2),
                        static_cast<Math>(1.0 - beta2),
                        static_cast<Math>(eps),
                        amsgrad,
                        decoupled_weight_decay,
                        skip_nonfinite,
                        beta1,
                        beta2,
                        maximize};
  }

  // Bias corrections of step t: bc1 = 1 - beta1^t, bc2 = 1 - beta2^t.
  LG_HOST_DEVICE LG_INLINE TensorScalars scalars_at(double lr, double weight_decay,
                                                    std::int64_t step) const {
    const double t = static_cast<double>(step);
    const double bias_correction1 = 1.0 - std::pow(beta1_double, t);
    const double bias_correction2 = 1.0 - std::pow(beta2_double, t);
    return {static_cast<Math>(lr), static_cast<Math>(weight_decay),
            static_cast<Math>(lr / bias_correction1),
            static_cast<Math>(std::sqrt(bias_correction2))};
  }

  LG_HOST_DEVICE LG_INLINE bool operator()(const TensorScalars& s, Math (&x)[5]) const {
    Math g = maximize ? -x[kGradSlot] : x[kGradSlot];
    Math p = x[kParamSlot];
    if (s.weight_decay != Math(0)) {
      if (decoupled_weight_decay) {
        p = p * (Math(1) - s.lr * s.weight_decay);
      } else {
        g = g + s.weight_decay * p;
      }
    }
    const Math m = x[2] * beta1 + one_minus_beta1 * g;
    const Math v = x[3] * beta2 + one_minus_beta2 * g * g;
    if (skip_nonfinite && !is_finite(v)) return false;
    x[2] = m;
    x[3] = v;
    Math second = v;
    if (amsgrad) {
      second = x[4] > v ? x[4] : v;
      x[4] = second;
    }
    const Math denom = std::sqrt(second) / s.bias_correction2_sqrt + eps;
    x[kParamSlot] = p + (-s.step_size) * (m / denom);
    return true;
  }
};
using AdamUpdate = AdamUpdateOf<float>;

// torch.optim.RAdam (Liu et al., 2020): Adam's moments; while the variance of the adaptive
// learning rate is intractable (rho_t <= 5, the first steps) a plain momentum step
// p -= lr m / bc1, afterwards p -= (m / bc1) lr (sqrt(bc2) / (sqrt(v) + eps)) rect.
// rho_t and rect depend only on the step (scalars_at).
template <typename T>
struct RAdamUpdateOf {
  using Scalar = T;                      // the dtype of the parameter, its gradient and its states
  using Math = opmath_t<T>;              // what one element's arithmetic runs in
  static constexpr int kNumStreams = 4;  // param, grad, exp_avg, exp_avg_sq
  struct TensorScalars {
    Math lr;
    Math weight_decay;
    Math bias_correction1;
    Math bias_correction2_sqrt;
    Math rect;
    bool rectified;  // rho_t > 5
  };
  Math beta1, one_minus_beta1;
  Math beta2, one_minus_beta2;
  Math eps;
  double beta1_double, beta2_double;  // the options' betas, for the step-dependent scalars

  static RAdamUpdateOf make(double beta1, double beta2, double eps) {
    return RAdamUpdateOf{static_cast<Math>(beta1),
                         static_cast<Math>(1.0 - beta1),
                         static_cast<Math>(beta2),
                         static_cast<Math>(1.0 - beta2),
                         static_cast<Math>(eps),
                         beta1,
                         beta2};
  }

  LG_HOST_DEVICE LG_INLINE TensorScalars scalars_at(double lr, double weight_decay,
                                                    std::int64_t step) const {
    const double t = static_cast<double>(step);
    const double bias_correction1 = 1.0 - std::pow(beta1_double, t);
    const double bias_correction2 = 1.0 - std::pow(beta2_double, t);
    // The maximum length of the approximated simple moving average, and its length at step t;
    // the variance is tractable (rectified steps) once it exceeds 5.
    const double rho_inf = 2.0 / (1.0 - beta2_double) - 1.0;
    const double rho_t = rho_inf - 2.0 * t * std::pow(beta2_double, t) / bias_correction2;
    const bool rectified = rho_t > 5.0;
    const double rect = rectified ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                              ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                                  : 0.0;
    return {static_cast<Math>(lr),
            static_cast<Math>(weight_decay),
            static_cast<Math>(bias_correction1),
            static_cast<Math>(std::sqrt(bias_correction2)),
            static_cast<Math>(rect),
            rectified};
  }

  LG_HOST_DEVICE LG_INLINE bool operator()(const TensorScalars& s, Math (&x)[4]) const {
    Math g = x[kGradSlot];
    if (s.weight_decay != Math(0)) g = g + s.weight_decay * x[kParamSlot];
    const Math m = x[2] * beta1 + one_minus_beta1 * g;
    const Math v = x[3] * beta2 + one_minus_beta2 * g * g;
    x[2] = m;
    x[3] = v;
    const Math corrected = m / s.bias_correction1;
    if (s.rectified) {
      const Math adaptive_lr = s.bias_correction2_sqrt / (std::sqrt(v) + eps);
      x[kParamSlot] = x[kParamSlot] + Math(-1) * (corrected * s.lr * adaptive_lr * s.rect);
    } else {
      x[kParamSlot] = x[kParamSlot] + Math(-1) * (corrected * s.lr);
    }
    return true;
  }
};
using RAdamUpdate = RAdamUpdateOf<float>;

// One parameter of Adam8bit with quantised states (kernels/quantization_math.h): state1/state2 hold
// one uint8 code per element, absmax1/absmax2 one float per block of kQuantBlockSize elements.
struct Adam8bitTensor {
  float* param;
  const float* grad;
  std::uint8_t* state1;  // first moment, signed dynamic map
  std::uint8_t* state2;  // second moment, unsigned dynamic map
  float* absmax1;
  float* absmax2;
  std::int64_t numel;
  AdamUpdate::TensorScalars scalars;
  StepArgs step_args;
};

// The scalars tensor `t` (an OptimTensor or Adam8bitTensor) uses in this launch, or false when
// found_inf (may be null) skips the step; `owner` is the one caller per tensor that counts the
// skip (Note [Gated step]).
template <typename Update, typename Entry>
LG_HOST_DEVICE LG_INLINE bool resolve_step(const Update& update, const Entry& t,
                                           const std::int32_t* found_inf, bool owner,
                                           typename Update::TensorScalars* scalars) {
  std::int32_t* skipped = t.step_args.skipped;
  if (found_inf != nullptr && *found_inf != 0) {
    if (owner && skipped != nullptr) *skipped += 1;
    return false;
  }
  *scalars = skipped == nullptr ? t.scalars
                                : update.scalars_at(t.step_args.lr, t.step_args.weight_decay,
                                                    t.step_args.step - *skipped);
  return true;
}

// A gradient for clip_grad_norm_ (float32, float64, float16 or bfloat16; GradScaler's are
// float32): contiguous.
template <typename T>
struct GradSpanOf {
  T* data;
  std::int64_t numel;
};
using GradSpan = GradSpanOf<float>;

// The contribution of one element to a p-norm (|g|^p in the gradient's dtype: in float32 it
// overflows to Inf past 3.4e38 as PyTorch's float32 norm does; p = inf reduces with
// max_propagating_nan instead of +).
template <typename T>
LG_HOST_DEVICE LG_INLINE T norm_term(T g, T norm_type) {
  const T a = std::fabs(g);
  if (norm_type == T(2)) return a * a;
  if (norm_type == T(1)) return a;
  return std::pow(a, norm_type);
}

// The larger of a and b, or NaN when either is NaN, as torch.max reduces: the inf-norm of
// gradients holding a NaN is NaN. (std::max, fmaxf and `a > b ? a : b` each drop a NaN on one
// side or both.)
template <typename T>
LG_HOST_DEVICE LG_INLINE T max_propagating_nan(T a, T b) {
  return (a > b || a != a) ? a : b;
}

// clip_grad_norm_'s factor for every gradient, as torch.nn.utils.clip_grad_norm_ takes it:
// clamp(max_norm / (total_norm + 1e-6), max=1). An infinite norm gives 0; a NaN norm gives NaN
// (clamp keeps NaN), so every gradient becomes NaN and a following step shows it, as in PyTorch.
// In the norm's dtype (float32 or float64, as PyTorch's tensor arithmetic).
template <typename T>
LG_HOST_DEVICE LG_INLINE T clip_coefficient(T max_norm, T total_norm) {
  const T coef = max_norm / (total_norm + static_cast<T>(1e-6));
  return coef > T(1) ? T(1) : coef;
}

// ---- Gradient scaling (amp::GradScaler) --------------------------------------------------------

// 1 / scale as torch.cuda.amp.GradScaler.unscale_ takes it: in double, rounded to float (exact
// for the powers of two a scaler normally holds).
LG_HOST_DEVICE LG_INLINE float inverse_scale(float scale) {
  return static_cast<float>(1.0 / static_cast<double>(scale));
}

// One gradient element unscaled (torch._amp_foreach_non_finite_check_and_unscale_): g * inv_scale,
// and *nonfinite raised when g is NaN or Inf (the product is stored either way).
LG_HOST_DEVICE LG_INLINE float unscale_element(float g, float inv_scale, bool* nonfinite) {
  if (!is_finite(g)) *nonfinite = true;
  return inv_scale == 1.0f ? g : g * inv_scale;
}

// The scale after a step (torch._amp_update_scale_): backed off (and the tracker reset) when the
// step found an Inf or NaN; otherwise the tracker counts clean steps and every growth_interval-th
// multiplies the scale by growth_factor (kept only if finite). The factors are applied in double,
// as PyTorch's kernel does.
LG_HOST_DEVICE LG_INLINE void update_scale_state(float* scale, std::int32_t* growth_tracker,
                                                 std::int32_t found_inf, double growth_factor,
                                                 double backoff_factor,
                                                 std::int32_t growth_interval) {
  if (found_inf != 0) {
    *scale = static_cast<float>(static_cast<double>(*scale) * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const std::int32_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(static_cast<double>(*scale) * growth_factor);
    if (is_finite(grown)) *scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = successful;
  }
}

}  // namespace leangrad::kernels
