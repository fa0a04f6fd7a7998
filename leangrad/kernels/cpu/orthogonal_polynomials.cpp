// The orthogonal polynomials on the CPU (orthogonal_polynomial of kernels/backend.h): one loop
// over contiguous x and n, each element computed in double by kernels/orthogonal_polynomials.h
// (Note [Orthogonal polynomials]) and rounded to the dtype. An element can cost up to
// kMaxRecurrenceDegree steps, so the threads split the elements at a small grain.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/orthogonal_polynomials.h>

namespace leangrad::kernels::cpu {

namespace {
// Elements per task: a task of the cheapest elements (a closed form) still takes microseconds.
constexpr std::int64_t kPolynomialGrain = 2048;
}  // namespace

void orthogonal_polynomial(OrthogonalPolynomial p, bool slope, DType dtype, std::int64_t count,
                           void* out, const void* x, const void* n) {
  dispatch_floating(dtype, "orthogonal_polynomial", [&]<typename T>() {
    T* y = static_cast<T*>(out);
    const T* xs = static_cast<const T*>(x);
    const T* ns = static_cast<const T*>(n);
    parallel_for(count, kPolynomialGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const auto xi = static_cast<double>(xs[i]);
        const auto ni = static_cast<double>(ns[i]);
        const double v = slope ? orthogonal_polynomials::slope(p, xi, ni)
                               : orthogonal_polynomials::value(p, xi, ni);
        y[i] = static_cast<T>(v);
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu
