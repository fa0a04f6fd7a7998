// GroupNorm's reference loops on the CPU (kernels/cpu/group_norm_reference.h): the specification
// that the vectorised launchers (kernels/cpu/group_norm_vectorized.cpp) and the CUDA kernels are
// tested against. Plain loops over the layout of Note [GroupNorm layout and math]
// (kernels/group_norm_math.h), with the shared math:
//   forward:  per group, Welford over chunks of kWelfordChunk elements merged with welford_merge
//             (the same merge the CUDA blocks use), then y = scale[n, c] * x + shift[n, c];
//   backward: per (n, c) sums of dy and dy * x; dweight and dbias from them; per group the
//             coefficients of dx; then dx = rstd w dy + x_coef x + const_coef.
// Accumulation is in opmath_t<T> (float for float32/16/bf16, double for float64).
#include <leangrad/kernels/cpu/group_norm_reference.h>

#include <algorithm>
#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels::cpu::reference {

namespace {

// Elements one Welford state runs over before it is merged into the group's total.
constexpr std::int64_t kWelfordChunk = 4096;

}  // namespace

void group_norm_forward(DType dtype, const GroupNormSizes& sizes, void* out, void* mean, void* rstd,
                        const void* x, const void* weight, const void* bias, double eps) {
  dispatch_floating(dtype, "group_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const std::int64_t per_group = sizes.channels_per_group();
    const std::int64_t group_size = sizes.group_size();
    const std::int64_t hw = sizes.spatial;
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const T* b = static_cast<const T*>(bias);
    T* y = static_cast<T*>(out);
    Acc* mean_out = static_cast<Acc*>(mean);
    Acc* rstd_out = static_cast<Acc*>(rstd);
    parallel_for(sizes.batch * sizes.groups, grain_for(group_size),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t row = begin; row < end; ++row) {
                     const T* group_in = in + row * group_size;
                     WelfordState<Acc> total;
                     for (std::int64_t c0 = 0; c0 < group_size; c0 += kWelfordChunk) {
                       WelfordState<Acc> chunk;
                       const std::int64_t c1 = std::min(group_size, c0 + kWelfordChunk);
                       for (std::int64_t i = c0; i < c1; ++i)
                         chunk = welford_update(chunk, static_cast<Acc>(group_in[i]));
                       total = welford_merge(total, chunk);
                     }
                     const Acc r = welford_rstd(total, static_cast<Acc>(eps));
                     mean_out[row] = total.mean;
                     rstd_out[row] = r;
                     const std::int64_t g = row % sizes.groups;
                     for (std::int64_t k = 0; k < per_group; ++k) {
                       const std::int64_t c = g * per_group + k;
                       const ChannelAffine<Acc> a = group_norm_channel_affine(
                           total.mean, r, load_or(w, c, Acc(1)), load_or(b, c, Acc(0)));
                       const T* channel_in = group_in + k * hw;
                       T* channel_out = y + row * group_size + k * hw;
                       for (std::int64_t i = 0; i < hw; ++i)
                         channel_out[i] =
                             static_cast<T>(a.scale * static_cast<Acc>(channel_in[i]) + a.shift);
                     }
                   }
                 });
  });
}

void group_norm_backward(DType dtype, const GroupNormSizes& sizes, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "group_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    // The reference accumulates in double whatever T is: sums of thousands of float terms in
    // order lose ~n eps, more than the tolerance the CUDA kernels are held to.
    using Sum = double;
    const std::int64_t n_batch = sizes.batch;
    const std::int64_t channels = sizes.channels;
    const std::int64_t per_group = sizes.channels_per_group();
    const std::int64_t hw = sizes.spatial;
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);

    // Pass 1: per (n, c) sums over the spatial dims.
    std::vector<Sum> sum_dy(static_cast<std::size_t>(n_batch * channels));
    std::vector<Sum> sum_dy_x(sum_dy.size());
    parallel_for(n_batch * channels, grain_for(hw), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t nc = begin; nc < end; ++nc) {
        Sum s = 0;
        Sum sx = 0;
        for (std::int64_t i = nc * hw; i < (nc + 1) * hw; ++i) {
          const Sum g = static_cast<Sum>(static_cast<Acc>(dy[i]));
          s += g;
          sx += g * static_cast<Sum>(static_cast<Acc>(in[i]));
        }
        sum_dy[nc] = s;
        sum_dy_x[nc] = sx;
      }
    });

    // dweight, dbias: per channel, over the batch.
    if (grad_weight != nullptr || grad_bias != nullptr) {
      for (std::int64_t c = 0; c < channels; ++c) {
        Sum dw = 0;
        Sum db = 0;
        for (std::int64_t n = 0; n < n_batch; ++n) {
          const std::int64_t row = n * sizes.groups + c / per_group;
          const std::int64_t nc = n * channels + c;
          dw += (sum_dy_x[nc] - mean_in[row] * sum_dy[nc]) * rstd_in[row];
          db += sum_dy[nc];
        }
        if (grad_weight != nullptr) static_cast<T*>(grad_weight)[c] = static_cast<T>(dw);
        if (grad_bias != nullptr) static_cast<T*>(grad_bias)[c] = static_cast<T>(db);
      }
    }

    // Pass 2: dx, one group at a time.
    if (grad_input == nullptr) return;
    T* dx = static_cast<T*>(grad_input);
    parallel_for(n_batch * sizes.groups, grain_for(sizes.group_size()),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t row = begin; row < end; ++row) {
                     const std::int64_t n = row / sizes.groups;
                     const std::int64_t c0 = (row % sizes.groups) * per_group;
                     Sum a = 0;
                     Sum b = 0;
                     for (std::int64_t c = c0; c < c0 + per_group; ++c) {
                       const Sum wc = load_or(w, c, Sum(1));
                       a += wc * sum_dy[n * channels + c];
                       b += wc * sum_dy_x[n * channels + c];
                     }
                     const Sum r = rstd_in[row];
                     const GroupInputGradCoefs<Sum> k = group_norm_input_grad_coefs<Sum>(
                         mean_in[row], r, a, b, sizes.group_size());
                     for (std::int64_t c = c0; c < c0 + per_group; ++c) {
                       const Sum dy_coef = r * load_or(w, c, Sum(1));
                       const std::int64_t base = (n * channels + c) * hw;
                       for (std::int64_t i = base; i < base + hw; ++i)
                         dx[i] = static_cast<T>(
                             dy_coef * static_cast<Sum>(static_cast<Acc>(dy[i])) +
                             k.x_coef * static_cast<Sum>(static_cast<Acc>(in[i])) + k.const_coef);
                     }
                   }
                 });
  });
}

}  // namespace leangrad::kernels::cpu::reference
