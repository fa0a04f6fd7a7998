// The orthogonal polynomials on the CPU (orthogonal_polynomial of kernels/backend.h): one loop
// over contiguous x and n, each element computed in double by kernels/orthogonal_polynomials.h
// (Note [Orthogonal polynomials]) and rounded to the dtype. An element can cost up to
// kMaxRecurrenceDegree steps, so the threads split the elements at a small grain.
//
// Note [Orthogonal polynomials in lanes]
//   Each step of a recurrence waits for the one before (a division, for Legendre and Laguerre):
//   one element at a time, the scan's Legendre P_12 took 46 ns an element. Where a block of
//   kLaneBlock elements has one degree and every element is the recurrence alone
//   (orthogonal_polynomials::is_recurrence_alone: no special case, closed form or overflow), the
//   block runs the recurrence's steps across its elements in SIMD lanes, the same operations as
//   the scalar recurrence (this file is compiled with -ffp-contract=off), so each element's value
//   is the one it has alone. Other blocks take the elements one by one.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/orthogonal_polynomials.h>

namespace leangrad::kernels::cpu {

namespace {

namespace op = orthogonal_polynomials;

// Elements per task: a task of the cheapest elements (a closed form) still takes microseconds.
constexpr std::int64_t kPolynomialGrain = 2048;
// Elements whose recurrence steps run together in lanes.
constexpr std::int64_t kLaneBlock = 256;

// Calls f(std::integral_constant<OrthogonalPolynomial, p>{}), so that p's family is known when the
// recurrence's steps are compiled.
template <typename F>
void with_family(OrthogonalPolynomial p, F&& f) {
  using P = OrthogonalPolynomial;
  switch (p) {
#define LG_FAMILY_CASE(name) \
  case P::name:              \
    return f(std::integral_constant<P, P::name>{});
    LG_FAMILY_CASE(ChebyshevT)
    LG_FAMILY_CASE(ChebyshevU)
    LG_FAMILY_CASE(ChebyshevV)
    LG_FAMILY_CASE(ChebyshevW)
    LG_FAMILY_CASE(ShiftedChebyshevT)
    LG_FAMILY_CASE(ShiftedChebyshevU)
    LG_FAMILY_CASE(ShiftedChebyshevV)
    LG_FAMILY_CASE(ShiftedChebyshevW)
    LG_FAMILY_CASE(HermiteH)
    LG_FAMILY_CASE(HermiteHe)
    LG_FAMILY_CASE(LaguerreL)
    LG_FAMILY_CASE(LegendreP)
#undef LG_FAMILY_CASE
  }
}

// out[j] = p_n(x[j]) (its slope with kSlope) for j < m <= kLaneBlock, every element the
// recurrence alone at the integral degree n: the recurrence's steps across the elements.
template <OrthogonalPolynomial kP, bool kSlope, typename T>
void recurrence_block(const T* x, double n, T* out, std::int64_t m) {
  double y[kLaneBlock], q[kLaneBlock], r[kLaneBlock], dq[kLaneBlock], dr[kLaneBlock];
  for (std::int64_t j = 0; j < m; ++j) {
    y[j] = op::detail::argument(kP, static_cast<double>(x[j]));
    const op::detail::Terms first = op::detail::first_terms(kP, y[j]);
    q[j] = 1.0, r[j] = first.value;
    dq[j] = 0.0, dr[j] = first.slope;
  }
  const auto steps = static_cast<std::int64_t>(n);
  for (std::int64_t k = 1; k < steps; ++k) {
    const auto kd = static_cast<double>(k);
    for (std::int64_t j = 0; j < m; ++j) {
      const double next = op::detail::next_value(kP, y[j], kd, q[j], r[j]);
      if constexpr (kSlope) {
        const double dnext = op::detail::next_slope(kP, y[j], kd, r[j], dq[j], dr[j]);
        dq[j] = dr[j], dr[j] = dnext;
      }
      q[j] = r[j], r[j] = next;
    }
  }
  const double chain = op::detail::is_shifted(kP) ? 2.0 : 1.0;
  for (std::int64_t j = 0; j < m; ++j)
    out[j] = static_cast<T>(kSlope ? chain * dr[j] : r[j]);
}

// The degree elements [0, m) of x and n take recurrence_block at, if they do: one degree, an
// integral one in [1, kMaxRecurrenceDegree] after truncation, and each element the recurrence
// alone.
template <typename T>
std::optional<double> recurrence_block_degree(OrthogonalPolynomial p, bool slope, const T* x,
                                              const T* n, std::int64_t m) {
  const auto degree = std::trunc(static_cast<double>(n[0]));
  if (!(degree >= 1.0 && degree <= op::kMaxRecurrenceDegree)) return std::nullopt;  // and NaN
  const double safe = op::recurrence_safe_magnitude(degree);
  for (std::int64_t j = 0; j < m; ++j) {  // out at the first that is not (a mixed block: soon)
    const double y = op::detail::argument(p, static_cast<double>(x[j]));
    if (n[j] != n[0] || !op::is_recurrence_alone(p, slope, y, degree, safe)) return std::nullopt;
  }
  return degree;
}

}  // namespace

void orthogonal_polynomial(OrthogonalPolynomial p, bool slope, DType dtype, std::int64_t count,
                           void* out, const void* x, const void* n) {
  dispatch_floating(dtype, "orthogonal_polynomial", [&]<typename T>() {
    T* y = static_cast<T*>(out);
    const T* xs = static_cast<const T*>(x);
    const T* ns = static_cast<const T*>(n);
    with_family(p, [&](auto family) {
      constexpr OrthogonalPolynomial kP = decltype(family)::value;
      parallel_for(count, kPolynomialGrain, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t b = begin; b < end; b += kLaneBlock) {
          const std::int64_t m = std::min(kLaneBlock, end - b);
          if (const auto degree = recurrence_block_degree(kP, slope, xs + b, ns + b, m)) {
            if (slope) {
              recurrence_block<kP, true>(xs + b, *degree, y + b, m);
            } else {
              recurrence_block<kP, false>(xs + b, *degree, y + b, m);
            }
            continue;
          }
          for (std::int64_t i = b; i < b + m; ++i) {
            const auto xi = static_cast<double>(xs[i]);
            const auto ni = static_cast<double>(ns[i]);
            y[i] = static_cast<T>(slope ? op::slope(kP, xi, ni) : op::value(kP, xi, ni));
          }
        }
      });
    });
  });
}

}  // namespace leangrad::kernels::cpu
