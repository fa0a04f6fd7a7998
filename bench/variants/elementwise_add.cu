// variant_elementwise_add: numbered variants of the contiguous elementwise kernel, on c = a + b
// in float32 and bfloat16 (llm.c dev/cuda style). The library's kernel is
// elementwise_contiguous_kernel in kernels/cuda/elementwise.cu; the per-element math is the CPU's
// (kernels/elementwise_math.h, binary_element<Add>: bfloat16 added in float, rounded once).
// Every variant is a grid-stride loop over vectors with a one-wave grid (Note [Grid policy]);
// they differ in the vector width, that is in the bytes one thread moves per access:
//   1  four_element_vectors   4 elements per access whatever the dtype: 16 bytes of float32,
//                             8 bytes of bfloat16 (twice the load instructions for 16-bit types)
//   2  sixteen_byte_vectors   16 bytes per access (Vector<T, kVectorWidth<T>>): 4 float32,
//                             8 bfloat16 -- what the library does
// For float32 the two are the same kernel: the pair of float32 rows is a control for the noise.
// Each is checked against a plain double-precision CPU loop before it is timed.
//
// Run:  build/bench/variants/variant_elementwise_add [VARIANT] [N]   (no VARIANT: all; N: 2^25)
// Promote a winner: change kOpVectorWidth / elementwise_contiguous_kernel in
// kernels/cuda/elementwise.cu (every elementwise family shares them), run the tests (the
// elementwise op table rows) and bench/bench_ops, and record the deciding numbers (GPU, date)
// here beside the variant, which stays.
#include <cstdint>
#include <string>

#include "bench/gpu_harness.h"
#include "bench/variants/variants.h"
#include <leangrad/core/half.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/elementwise_math.h>

namespace {

using leangrad::BFloat16;
using leangrad::DType;
using leangrad::Tensor;
namespace bench = leangrad::bench;
namespace kc = leangrad::kernels::cuda;

constexpr int kThreadsPerBlock = 256;

// c[i] = a[i] + b[i], i < n: kWidth-element vectors, then the last n % kWidth one by one.
template <typename T, int kWidth>
__global__ void add_kernel(std::int64_t n, T* __restrict__ c, const T* __restrict__ a,
                           const T* __restrict__ b) {
  using leangrad::BinaryOp;
  using leangrad::kernels::binary_element;
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = kc::global_thread_index(); v < num_vectors; v += kc::grid_thread_count()) {
    const kc::Vector<T, kWidth> va = kc::load_vector<kWidth>(a, v);
    const kc::Vector<T, kWidth> vb = kc::load_vector<kWidth>(b, v);
    kc::Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out.val[lane] = binary_element<BinaryOp::Add, T>(va.val[lane], vb.val[lane]);
    kc::store_vector<kWidth>(c, v, out);
  }
  for (std::int64_t i = num_vectors * kWidth + kc::global_thread_index(); i < n;
       i += kc::grid_thread_count())
    c[i] = binary_element<BinaryOp::Add, T>(a[i], b[i]);
}

template <typename T, int kWidth>
void add_typed(const Tensor& a, const Tensor& b, const Tensor& c) {
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  T* pc = c.data_ptr<T>();
  LG_CHECK((kc::vector_aligned<T, kWidth>(pa, pb, pc)), "elementwise_add variant: unaligned");
  const std::int64_t n = a.numel();
  auto* kernel = add_kernel<T, kWidth>;
  const unsigned int blocks = kc::grid_size(
      kernel, kThreadsPerBlock, kc::ceil_div(kc::ceil_div(n, kWidth), kThreadsPerBlock));
  kernel<<<blocks, kThreadsPerBlock, 0, kc::current_stream()>>>(n, pc, pa, pb);
  LG_CUDA_CHECK_LAUNCH();
}

// Variant 1: four elements per access.
void add_four_element_vectors(const Tensor& a, const Tensor& b, const Tensor& c) {
  if (a.dtype() == leangrad::kFloat32) {
    add_typed<float, 4>(a, b, c);
  } else {
    add_typed<BFloat16, 4>(a, b, c);
  }
}

// Variant 2: sixteen bytes per access.
void add_sixteen_byte_vectors(const Tensor& a, const Tensor& b, const Tensor& c) {
  if (a.dtype() == leangrad::kFloat32) {
    add_typed<float, kc::kVectorWidth<float>>(a, b, c);
  } else {
    add_typed<BFloat16, kc::kVectorWidth<BFloat16>>(a, b, c);
  }
}

struct Variant {
  const char* technique;
  void (*add)(const Tensor& a, const Tensor& b, const Tensor& c);
};
constexpr Variant kVariants[] = {
    {"four_element_vectors", add_four_element_vectors},
    {"sixteen_byte_vectors", add_sixteen_byte_vectors},
};
constexpr int kNumVariants = static_cast<int>(sizeof(kVariants) / sizeof(kVariants[0]));

// The CPU reference: a plain loop in double.
Tensor add_reference(const Tensor& a, const Tensor& b) {
  const Tensor a64 = bench::cpu_float64(a);
  const Tensor b64 = bench::cpu_float64(b);
  Tensor c = bench::empty_float64_like(a);
  const double* pa = a64.data_ptr<double>();
  const double* pb = b64.data_ptr<double>();
  double* pc = c.data_ptr<double>();
  for (std::int64_t i = 0; i < a64.numel(); ++i)
    pc[i] = pa[i] + pb[i];
  return c;
}

void variant_rows(bench::GpuBench& bench, int number, std::int64_t n, DType dtype) {
  const Variant& variant = kVariants[number - 1];
  const auto options = leangrad::TensorOptions(dtype).device(leangrad::Device::cuda());
  const Tensor a = leangrad::randn({n}, options);
  const Tensor b = leangrad::randn({n}, options);
  const Tensor c = leangrad::empty({n}, options);
  // float32: one rounding of a double sum; bfloat16: one rounding to 8 bits.
  const double tolerance = dtype == leangrad::kFloat32 ? 1e-6 : 1e-2;
  const double element_bytes = static_cast<double>(leangrad::element_size(dtype));
  variant.add(a, b, c);
  bench.run(bench::format("add %s n=%lld %d %s", leangrad::dtype_name(dtype),
                          static_cast<long long>(n), number, variant.technique),
            bench::Work::bytes(3.0 * n * element_bytes),
            bench::check_close(c, add_reference(a, b), tolerance), [&] { variant.add(a, b, c); });
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "variant_elementwise_add", [](bench::GpuBench& bench) {
    const bench::VariantArguments args =
        bench::parse_variant_arguments(bench.options().arguments, kNumVariants, 1 << 25);
    bench.note("c = a + b variants: 1 four_element_vectors, 2 sixteen_byte_vectors");
    for (const DType dtype : {leangrad::kFloat32, leangrad::kBFloat16}) {
      for (const int number : args.variants)
        variant_rows(bench, number, args.n, dtype);
    }
  });
}
