// LayerNorm's reference loops on the CPU (kernels/cpu/layer_norm_reference.h): the specification
// that the vectorised launchers (kernels/cpu/layer_norm_vectorized.cpp) and the CUDA kernels are
// tested against. Plain loops over the layout of Note [LayerNorm layout and math]
// (kernels/group_norm_math.h), one element at a time:
//   forward:  per row, Welford over the row's elements (welford_update, in opmath_t<T>), then
//             y = (x - mean) * rstd * w[m] + b[m];
//   backward: per row, the sums a = sum w dy and sum w dy x in double, the input gradient's
//             coefficients (group_norm_input_grad_coefs), dx = rstd w dy + x_coef x + const_coef;
//             dweight and dbias summed over the rows in order, in double.
#include <leangrad/kernels/cpu/layer_norm_reference.h>

#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu::reference {

void layer_norm_forward(DType dtype, std::int64_t rows, std::int64_t features, void* out,
                        void* mean, void* rstd, const void* x, const void* weight, const void* bias,
                        double eps) {
  dispatch_floating(dtype, "layer_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const T* b = static_cast<const T*>(bias);
    T* y = static_cast<T*>(out);
    Acc* mean_out = static_cast<Acc*>(mean);
    Acc* rstd_out = static_cast<Acc*>(rstd);
    parallel_for(rows, grain_for(features), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) {
        const T* row = in + r * features;
        WelfordState<Acc> s;
        for (std::int64_t m = 0; m < features; ++m)
          s = welford_update(s, static_cast<Acc>(row[m]));
        const Acc rs = welford_rstd(s, static_cast<Acc>(eps));
        mean_out[r] = s.mean;
        rstd_out[r] = rs;
        for (std::int64_t m = 0; m < features; ++m) {
          const Acc normalized = (static_cast<Acc>(row[m]) - s.mean) * rs;
          y[r * features + m] =
              static_cast<T>(normalized * load_or(w, m, Acc(1)) + load_or(b, m, Acc(0)));
        }
      }
    });
  });
}

void layer_norm_backward(DType dtype, std::int64_t rows, std::int64_t features, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "layer_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    // In double whatever T is, as GroupNorm's reference backward.
    using Sum = double;
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    auto element = [](const T* p, std::int64_t i) {
      return static_cast<Sum>(static_cast<Acc>(p[i]));
    };

    // dweight, dbias: per feature, over the rows in order.
    if (grad_weight != nullptr || grad_bias != nullptr) {
      parallel_for(features, grain_for(rows), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t m = begin; m < end; ++m) {
          Sum dw = 0;
          Sum db = 0;
          for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t i = r * features + m;
            dw += element(dy, i) * (element(in, i) - mean_in[r]) * rstd_in[r];
            db += element(dy, i);
          }
          if (grad_weight != nullptr) static_cast<T*>(grad_weight)[m] = static_cast<T>(dw);
          if (grad_bias != nullptr) static_cast<T*>(grad_bias)[m] = static_cast<T>(db);
        }
      });
    }

    // dx, one row at a time.
    if (grad_input == nullptr) return;
    T* dx = static_cast<T*>(grad_input);
    parallel_for(rows, grain_for(features), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t base = r * features;
        Sum a = 0;
        Sum b = 0;
        for (std::int64_t m = 0; m < features; ++m) {
          const Sum g = load_or(w, m, Sum(1)) * element(dy, base + m);
          a += g;
          b += g * element(in, base + m);
        }
        const Sum rs = rstd_in[r];
        const GroupInputGradCoefs<Sum> k =
            group_norm_input_grad_coefs<Sum>(mean_in[r], rs, a, b, features);
        for (std::int64_t m = 0; m < features; ++m)
          dx[base + m] = static_cast<T>(rs * load_or(w, m, Sum(1)) * element(dy, base + m) +
                                        k.x_coef * element(in, base + m) + k.const_coef);
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu::reference
