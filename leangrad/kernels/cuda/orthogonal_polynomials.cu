// The orthogonal polynomials in CUDA (orthogonal_polynomial of kernels/backend.h): a grid-stride
// loop over contiguous x and n, one element per thread, computed in double by the CPU's own
// per-element math (kernels/orthogonal_polynomials.h, Note [Orthogonal polynomials]) and rounded
// to the dtype. An element's cost is its degree's recurrence (closed forms for Chebyshev), so
// the warps of a tensor of mixed degrees diverge; the grid is one wave (Note [Grid policy]).
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/orthogonal_polynomials.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;

template <typename T>
__global__ void orthogonal_polynomial_kernel(OrthogonalPolynomial p, bool slope, std::int64_t count,
                                             T* __restrict__ out, const T* __restrict__ x,
                                             const T* __restrict__ n) {
  for (std::int64_t i = global_thread_index(); i < count; i += grid_thread_count()) {
    const auto xi = static_cast<double>(x[i]);
    const auto ni = static_cast<double>(n[i]);
    const double v =
        slope ? orthogonal_polynomials::slope(p, xi, ni) : orthogonal_polynomials::value(p, xi, ni);
    out[i] = static_cast<T>(v);
  }
}

}  // namespace

void orthogonal_polynomial(OrthogonalPolynomial p, bool slope, DType dtype, std::int64_t count,
                           void* out, const void* x, const void* n) {
  dispatch_floating(dtype, "orthogonal_polynomial", [&]<typename T>() {
    auto* kernel = orthogonal_polynomial_kernel<T>;
    const unsigned int blocks =
        grid_size(kernel, kThreadsPerBlock, ceil_div(count, kThreadsPerBlock));
    kernel<<<blocks, kThreadsPerBlock, 0, current_stream()>>>(
        p, slope, count, static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(n));
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
