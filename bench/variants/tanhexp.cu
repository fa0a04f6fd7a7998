// variant_tanhexp: numbered variants of the TanhExp kernels, forward and backward, float32 and
// bfloat16 (llm.c dev/cuda style). The library's kernel is kernels/cuda/tanhexp.cu; its math is
// kernels/tanhexp_math.h (Note [Stable TanhExp]). Every variant here has the same memory side:
// a grid-stride loop over 16-byte vectors (4 float32 or 8 bfloat16 per load, Vector<T, W> of
// kernels/cuda/cuda_common.cuh), math in float, one rounding per output, a one-wave grid
// (Note [Grid policy]). They differ in the per-element math, u = e^min(x, 20):
//   1  tanhf       the former formula: f(x) = x tanhf(u),
//                  f'(x) = tanhf(u) + x (u 4t / (1 + t)^2) with t = e^{-2u};
//                  forward exp + tanhf, backward exp + tanhf + exp and a division.
//   2  one_exp     the current shared math, tanh_sech2_nonnegative: tanh(u) and sech^2(u) from the
//                  one t = e^{-2u} (r = 1 / (1 + t), tanh = (1 - t) r, sech^2 = 4 t r^2, with a
//                  Taylor series for 1 - t when u < 1/2); both ways two exps, a division and
//                  the series' ten multiply-adds.
// Both are memory-bound on an H100 at 16M elements if the math hides behind the loads; the rows
// show whether it does (GB/s against HBM) and the check column shows the accuracy against a
// plain double-precision CPU loop, which every variant must pass before it is timed.
//
// Run:  build/bench/variants/variant_tanhexp [VARIANT] [N]    (no VARIANT: all; N: 2^24)
// Promote a winner: put its per-element math in kernels/tanhexp_math.h (LG_HOST_DEVICE, so the
// CPU loop and tests/kernels/test_tanhexp.cpp check the formula the GPU runs) or its loop in
// kernels/cuda/tanhexp.cu; run the tests (op table rows, test_tanhexp) and
// build/bench/gpu_tanhexp_group_norm; keep the variant here, under its technique name, with the
// numbers that decided it (GPU, date) in this header.
#include <cmath>
#include <cstdint>
#include <string>

#include "bench/gpu_harness.h"
#include "bench/variants/variants.h"
#include <leangrad/core/half.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/tanhexp_math.h>

namespace {

using leangrad::BFloat16;
using leangrad::DType;
using leangrad::Tensor;
namespace bench = leangrad::bench;
namespace kc = leangrad::kernels::cuda;

constexpr int kThreadsPerBlock = 256;

// ---- The per-element math of each variant ----------------------------------------------------

// Variant 1: tanhf, and sech^2(u) = 4t / (1 + t)^2 from a second exp.
struct TanhfMath {
  __device__ static float forward(float x) {
    return x * tanhf(leangrad::kernels::tanhexp_clamped_exp(x));
  }
  __device__ static float derivative(float x) {
    const float u = leangrad::kernels::tanhexp_clamped_exp(x);
    const float t = expf(-2.0f * u);
    const float one_plus_t = 1.0f + t;
    return tanhf(u) + x * (u * (4.0f * t / (one_plus_t * one_plus_t)));
  }
};

// Variant 2: kernels/tanhexp_math.h as the library runs it.
struct OneExpMath {
  __device__ static float forward(float x) { return leangrad::kernels::tanhexp_forward_math(x); }
  __device__ static float derivative(float x) {
    return leangrad::kernels::tanhexp_derivative_math(x);
  }
};

// ---- Kernels (one pair, templated on the math) -----------------------------------------------

// y[i] = f(x[i]), i < n: 16-byte vectors, then the last n % width elements one by one.
template <typename Math, typename T>
__global__ void tanhexp_forward_kernel(std::int64_t n, T* __restrict__ y, const T* __restrict__ x) {
  constexpr int kWidth = kc::kVectorWidth<T>;
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = kc::global_thread_index(); v < num_vectors; v += kc::grid_thread_count()) {
    const kc::Vector<T, kWidth> in = kc::load_vector<kWidth>(x, v);
    kc::Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out.val[lane] = static_cast<T>(Math::forward(static_cast<float>(in.val[lane])));
    kc::store_vector<kWidth>(y, v, out);
  }
  for (std::int64_t i = num_vectors * kWidth + kc::global_thread_index(); i < n;
       i += kc::grid_thread_count())
    y[i] = static_cast<T>(Math::forward(static_cast<float>(x[i])));
}

// dx[i] = dy[i] f'(x[i]), i < n.
template <typename Math, typename T>
__global__ void tanhexp_backward_kernel(std::int64_t n, T* __restrict__ dx,
                                        const T* __restrict__ dy, const T* __restrict__ x) {
  constexpr int kWidth = kc::kVectorWidth<T>;
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = kc::global_thread_index(); v < num_vectors; v += kc::grid_thread_count()) {
    const kc::Vector<T, kWidth> g = kc::load_vector<kWidth>(dy, v);
    const kc::Vector<T, kWidth> in = kc::load_vector<kWidth>(x, v);
    kc::Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane) {
      out.val[lane] = static_cast<T>(static_cast<float>(g.val[lane]) *
                                     Math::derivative(static_cast<float>(in.val[lane])));
    }
    kc::store_vector<kWidth>(dx, v, out);
  }
  for (std::int64_t i = num_vectors * kWidth + kc::global_thread_index(); i < n;
       i += kc::grid_thread_count())
    dx[i] = static_cast<T>(static_cast<float>(dy[i]) * Math::derivative(static_cast<float>(x[i])));
}

// ---- Launchers -------------------------------------------------------------------------------

template <typename Kernel>
unsigned int blocks_for(Kernel* kernel, std::int64_t n, int width) {
  return kc::grid_size(kernel, kThreadsPerBlock,
                       kc::ceil_div(kc::ceil_div(n, width), kThreadsPerBlock));
}

template <typename Math, typename T>
void forward_typed(const Tensor& x, const Tensor& y) {
  const T* in = x.data_ptr<T>();
  T* out = y.data_ptr<T>();
  LG_CHECK((kc::vector_aligned<T, kc::kVectorWidth<T>>(in, out)), "tanhexp variant: unaligned");
  auto* kernel = tanhexp_forward_kernel<Math, T>;
  kernel<<<blocks_for(kernel, x.numel(), kc::kVectorWidth<T>), kThreadsPerBlock, 0,
           kc::current_stream()>>>(x.numel(), out, in);
  LG_CUDA_CHECK_LAUNCH();
}

template <typename Math, typename T>
void backward_typed(const Tensor& dy, const Tensor& x, const Tensor& dx) {
  const T* g = dy.data_ptr<T>();
  const T* in = x.data_ptr<T>();
  T* out = dx.data_ptr<T>();
  LG_CHECK((kc::vector_aligned<T, kc::kVectorWidth<T>>(g, in, out)), "tanhexp variant: unaligned");
  auto* kernel = tanhexp_backward_kernel<Math, T>;
  kernel<<<blocks_for(kernel, x.numel(), kc::kVectorWidth<T>), kThreadsPerBlock, 0,
           kc::current_stream()>>>(x.numel(), out, g, in);
  LG_CUDA_CHECK_LAUNCH();
}

// y = f(x) on the device; float32 or bfloat16, contiguous.
template <typename Math>
void forward(const Tensor& x, const Tensor& y) {
  if (x.dtype() == leangrad::kFloat32) {
    forward_typed<Math, float>(x, y);
  } else {
    forward_typed<Math, BFloat16>(x, y);
  }
}

template <typename Math>
void backward(const Tensor& dy, const Tensor& x, const Tensor& dx) {
  if (x.dtype() == leangrad::kFloat32) {
    backward_typed<Math, float>(dy, x, dx);
  } else {
    backward_typed<Math, BFloat16>(dy, x, dx);
  }
}

struct Variant {
  const char* technique;
  void (*forward)(const Tensor& x, const Tensor& y);
  void (*backward)(const Tensor& dy, const Tensor& x, const Tensor& dx);
};
constexpr Variant kVariants[] = {
    {"tanhf", forward<TanhfMath>, backward<TanhfMath>},
    {"one_exp", forward<OneExpMath>, backward<OneExpMath>},
};
constexpr int kNumVariants = static_cast<int>(sizeof(kVariants) / sizeof(kVariants[0]));

// ---- The CPU reference: plain loops in double ------------------------------------------------

Tensor forward_reference(const Tensor& x) {
  const Tensor x64 = bench::cpu_float64(x);
  Tensor y = bench::empty_float64_like(x);
  const double* in = x64.data_ptr<double>();
  double* out = y.data_ptr<double>();
  for (std::int64_t i = 0; i < x64.numel(); ++i)
    out[i] = in[i] * std::tanh(std::exp(in[i]));
  return y;
}

// dx = dy (tanh(u) + x u sech^2(u)), u = e^x (|x| < 40 here: randn, no overflow in double).
Tensor backward_reference(const Tensor& dy, const Tensor& x) {
  const Tensor dy64 = bench::cpu_float64(dy);
  const Tensor x64 = bench::cpu_float64(x);
  Tensor dx = bench::empty_float64_like(x);
  const double* g = dy64.data_ptr<double>();
  const double* in = x64.data_ptr<double>();
  double* out = dx.data_ptr<double>();
  for (std::int64_t i = 0; i < x64.numel(); ++i) {
    const double u = std::exp(in[i]);
    const double sech = 1.0 / std::cosh(u);
    out[i] = g[i] * (std::tanh(u) + in[i] * u * sech * sech);
  }
  return dx;
}

// ---- Rows ------------------------------------------------------------------------------------

void variant_rows(bench::GpuBench& bench, int number, std::int64_t n, DType dtype) {
  const Variant& variant = kVariants[number - 1];
  const auto options = leangrad::TensorOptions(dtype).device(leangrad::Device::cuda());
  const Tensor x = leangrad::randn({n}, options);
  const Tensor dy = leangrad::randn({n}, options);
  const Tensor out = leangrad::empty({n}, options);
  // float32: a few ulps (the former formula was within 4 of double); bfloat16: one rounding.
  const double tolerance = dtype == leangrad::kFloat32 ? 1e-5 : 1e-2;
  const double element_bytes = static_cast<double>(leangrad::element_size(dtype));
  const std::string tag = bench::format("%s n=%lld %d %s", leangrad::dtype_name(dtype),
                                        static_cast<long long>(n), number, variant.technique);

  variant.forward(x, out);
  bench.run("tanhexp fwd " + tag, bench::Work::bytes(2.0 * n * element_bytes),
            bench::check_close(out, forward_reference(x), tolerance),
            [&] { variant.forward(x, out); });
  variant.backward(dy, x, out);
  bench.run("tanhexp bwd " + tag, bench::Work::bytes(3.0 * n * element_bytes),
            bench::check_close(out, backward_reference(dy, x), tolerance),
            [&] { variant.backward(dy, x, out); });
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "variant_tanhexp", [](bench::GpuBench& bench) {
    const bench::VariantArguments args =
        bench::parse_variant_arguments(bench.options().arguments, kNumVariants, 1 << 24);
    bench.note(
        "TanhExp variants: 1 tanhf (the former formula), 2 one_exp (kernels/tanhexp_math.h)");
    for (const DType dtype : {leangrad::kFloat32, leangrad::kBFloat16}) {
      for (const int number : args.variants)
        variant_rows(bench, number, args.n, dtype);
    }
  });
}
