// BatchNorm's reference loops on the CPU (kernels/cpu/batch_norm_reference.h): the specification
// that the vectorised launchers (kernels/cpu/batch_norm_vectorized.cpp) and the CUDA kernels are
// tested against. Plain loops over the layout of Note [BatchNorm layout and math]
// (kernels/group_norm_math.h), one element at a time, one channel per task:
//   statistics: per channel, Welford over its values (welford_update, in opmath_t<T>), sample
//               after sample;
//   forward:    y = (x - mean) * rstd * w[c] + b[c];
//   backward:   per channel, sum dy and sum dy x in double; dweight = (sum dy x - mean sum dy)
//               rstd, dbias = sum dy; training: the input gradient's coefficients
//               (group_norm_input_grad_coefs) and dx = rstd w dy + x_coef x + const_coef;
//               evaluation: dx = rstd w dy.
#include <leangrad/kernels/cpu/batch_norm_reference.h>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels::cpu::reference {

namespace {

// fn(i) for the index i of every value of channel c, sample after sample.
template <typename F>
void for_each_in_channel(const BatchNormSizes& sizes, std::int64_t c, const F& fn) {
  for (std::int64_t n = 0; n < sizes.batch; ++n) {
    const std::int64_t base = (n * sizes.channels + c) * sizes.spatial;
    for (std::int64_t s = 0; s < sizes.spatial; ++s)
      fn(base + s);
  }
}

}  // namespace

void batch_norm_statistics(DType dtype, const BatchNormSizes& sizes, void* mean, void* rstd,
                           const void* x, double eps) {
  dispatch_floating(dtype, "batch_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* in = static_cast<const T*>(x);
    parallel_for(
        sizes.channels, grain_for(sizes.channel_size()), [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t c = begin; c < end; ++c) {
            WelfordState<Acc> s;
            for_each_in_channel(
                sizes, c, [&](std::int64_t i) { s = welford_update(s, static_cast<Acc>(in[i])); });
            static_cast<Acc*>(mean)[c] = s.mean;
            static_cast<Acc*>(rstd)[c] = welford_rstd(s, static_cast<Acc>(eps));
          }
        });
  });
}

void batch_norm_forward(DType dtype, const BatchNormSizes& sizes, void* out, const void* x,
                        const void* mean, const void* rstd, const void* weight, const void* bias) {
  dispatch_floating(dtype, "batch_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const T* b = static_cast<const T*>(bias);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    T* y = static_cast<T*>(out);
    parallel_for(sizes.channels, grain_for(sizes.channel_size()),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t c = begin; c < end; ++c) {
                     const Acc wc = load_or(w, c, Acc(1));
                     const Acc bc = load_or(b, c, Acc(0));
                     for_each_in_channel(sizes, c, [&](std::int64_t i) {
                       const Acc normalized = (static_cast<Acc>(in[i]) - mean_in[c]) * rstd_in[c];
                       y[i] = static_cast<T>(normalized * wc + bc);
                     });
                   }
                 });
  });
}

void batch_norm_backward(DType dtype, const BatchNormSizes& sizes, bool training, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "batch_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    // In double whatever T is, as GroupNorm's and LayerNorm's reference backwards.
    using Sum = double;
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    T* dx = static_cast<T*>(grad_input);
    auto element = [](const T* p, std::int64_t i) {
      return static_cast<Sum>(static_cast<Acc>(p[i]));
    };
    parallel_for(
        sizes.channels, grain_for(sizes.channel_size()), [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t c = begin; c < end; ++c) {
            Sum sum_dy = 0;
            Sum sum_dy_x = 0;
            for_each_in_channel(sizes, c, [&](std::int64_t i) {
              sum_dy += element(dy, i);
              sum_dy_x += element(dy, i) * element(in, i);
            });
            const Sum m = mean_in[c];
            const Sum r = rstd_in[c];
            const Sum wc = load_or(w, c, Sum(1));
            if (grad_weight != nullptr)
              static_cast<T*>(grad_weight)[c] = static_cast<T>((sum_dy_x - m * sum_dy) * r);
            if (grad_bias != nullptr) static_cast<T*>(grad_bias)[c] = static_cast<T>(sum_dy);
            if (dx == nullptr) continue;
            const GroupInputGradCoefs<Sum> k =
                training ? group_norm_input_grad_coefs<Sum>(m, r, wc * sum_dy, wc * sum_dy_x,
                                                            sizes.channel_size())
                         : GroupInputGradCoefs<Sum>{0, 0};
            for_each_in_channel(sizes, c, [&](std::int64_t i) {
              dx[i] = static_cast<T>(r * wc * element(dy, i) + k.x_coef * element(in, i) +
                                     k.const_coef);
            });
          }
        });
  });
}

}  // namespace leangrad::kernels::cpu::reference
