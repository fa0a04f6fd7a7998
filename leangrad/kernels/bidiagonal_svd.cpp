// Implicit QR on an upper bidiagonal matrix (Note [Bidiagonal QR] in the header).
#include <leangrad/kernels/bidiagonal_svd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace leangrad::kernels {
namespace {

// LAPACK's eps: the unit roundoff, half of the distance from 1 to the next value.
template <typename T>
constexpr T kUnitRoundoff = std::numeric_limits<T>::epsilon() / 2;

template <typename T>
T sign_of(T x) {
  return std::copysign(T(1), x);
}

// A plane rotation [c s; -s c] and what it leaves of the vector it was made for.
template <typename T>
struct Rotation {
  T c;
  T s;
  T r;
};

// c, s and r with [c s; -s c] [f; g] = [r; 0], c >= 0 and r of f's sign (|g| where f is 0).
// f^2 + g^2 is formed directly where neither square can overflow or lose everything to underflow,
// and after scaling by the larger magnitude otherwise.
template <typename T>
Rotation<T> make_rotation(T f, T g) {
  constexpr T kSafeMin = std::numeric_limits<T>::min();
  constexpr T kSafeMax = 1 / kSafeMin;
  const T root_min = std::sqrt(kSafeMin);
  const T root_max = std::sqrt(kSafeMax / 2);
  if (g == 0) return {T(1), T(0), f};
  if (f == 0) return {T(0), sign_of(g), std::fabs(g)};
  const T fa = std::fabs(f);
  const T ga = std::fabs(g);
  if (fa > root_min && fa < root_max && ga > root_min && ga < root_max) {
    const T norm = std::sqrt(f * f + g * g);
    const T r = std::copysign(norm, f);
    return {fa / norm, g / r, r};
  }
  const T scale = std::min(kSafeMax, std::max(kSafeMin, std::max(fa, ga)));
  const T fs = f / scale;
  const T gs = g / scale;
  const T norm = std::sqrt(fs * fs + gs * gs);
  const T r = std::copysign(norm, f);
  return {std::fabs(fs) / norm, gs / r, r * scale};
}

// The smaller singular value of [f g; 0 h] (LAPACK's las2). With F >= H the magnitudes of f and
// h, sigma_max + sigma_min = sqrt((F + H)^2 + g^2) = s and sigma_max - sigma_min =
// sqrt((F - H)^2 + g^2) = r, so sigma_min = F H / sigma_max = 2 F H / (s + r), formed from ratios
// that cannot overflow.
template <typename T>
T smaller_singular_value_2x2(T f, T g, T h) {
  const T fa = std::fabs(f);
  const T ga = std::fabs(g);
  const T ha = std::fabs(h);
  const T low = std::min(fa, ha);
  const T high = std::max(fa, ha);
  if (low == 0) return T(0);
  const T sum = 1 + low / high;              // (F + H) / F
  const T difference = (high - low) / high;  // (F - H) / F
  if (ga < high) {
    const T g_ratio = (ga / high) * (ga / high);
    return low *
           (2 / (std::sqrt(sum * sum + g_ratio) + std::sqrt(difference * difference + g_ratio)));
  }
  const T ratio = high / ga;  // F / g
  if (ratio == 0) return (low * high) / ga;
  const T c = 1 / (std::sqrt(1 + (sum * ratio) * (sum * ratio)) +
                   std::sqrt(1 + (difference * ratio) * (difference * ratio)));
  return 2 * ((low * c) * ratio);
}

// x, y = c x + s y, c y - s x over len entries (two columns of U or V).
template <typename T>
void rotate(T* __restrict x, T* __restrict y, std::int64_t len, T c, T s) {
  for (std::int64_t i = 0; i < len; ++i) {
    const T a = x[i];
    const T b = y[i];
    x[i] = c * a + s * b;
    y[i] = c * b - s * a;
  }
}

// The columns of a column-major matrix with `rows` rows, or none (null).
template <typename T>
struct Columns {
  T* data;
  std::int64_t rows;

  void rotate(std::int64_t i, std::int64_t j, T c, T s) const {
    if (data != nullptr) kernels::rotate(data + i * rows, data + j * rows, rows, c, s);
  }
  void negate(std::int64_t j) const {
    if (data == nullptr) return;
    for (std::int64_t r = 0; r < rows; ++r)
      data[j * rows + r] = -data[j * rows + r];
  }
  void swap(std::int64_t i, std::int64_t j) const {
    if (data != nullptr) std::swap_ranges(data + i * rows, data + (i + 1) * rows, data + j * rows);
  }
};

// One sweep over the block [ll, m] from the top down (down = true) or from the bottom up, with
// the given shift (0: the zero-shift sweep). thresh: the absolute floor below which the new last
// (first) off-diagonal entry is set to 0.
template <typename T>
void sweep(T* d, T* e, std::int64_t ll, std::int64_t m, T shift, bool down, T thresh,
           const Columns<T>& u, const Columns<T>& v) {
  if (shift == 0) {
    // Demmel and Kahan's zero-shift sweep: products and rotations only.
    T cs = 1;
    T old_cs = 1;
    T old_sn = 0;
    if (down) {
      for (std::int64_t i = ll; i < m; ++i) {
        const Rotation<T> right = make_rotation(d[i] * cs, e[i]);
        cs = right.c;
        if (i > ll) e[i - 1] = old_sn * right.r;
        const Rotation<T> left = make_rotation(old_cs * right.r, d[i + 1] * right.s);
        old_cs = left.c;
        old_sn = left.s;
        d[i] = left.r;
        v.rotate(i, i + 1, right.c, right.s);
        u.rotate(i, i + 1, left.c, left.s);
      }
      const T h = d[m] * cs;
      d[m] = h * old_cs;
      e[m - 1] = h * old_sn;
      if (std::fabs(e[m - 1]) <= thresh) e[m - 1] = 0;
    } else {
      for (std::int64_t i = m; i > ll; --i) {
        const Rotation<T> right = make_rotation(d[i] * cs, e[i - 1]);
        cs = right.c;
        if (i < m) e[i] = old_sn * right.r;
        const Rotation<T> left = make_rotation(old_cs * right.r, d[i - 1] * right.s);
        old_cs = left.c;
        old_sn = left.s;
        d[i] = left.r;
        u.rotate(i - 1, i, right.c, -right.s);
        v.rotate(i - 1, i, left.c, -left.s);
      }
      const T h = d[ll] * cs;
      d[ll] = h * old_cs;
      e[ll] = h * old_sn;
      if (std::fabs(e[ll]) <= thresh) e[ll] = 0;
    }
    return;
  }
  // The shifted sweep: the first rotation is that of B^T B - shift^2 I's first column, the rest
  // chase the bulge it makes.
  if (down) {
    T f = (std::fabs(d[ll]) - shift) * (sign_of(d[ll]) + shift / d[ll]);
    T g = e[ll];
    for (std::int64_t i = ll; i < m; ++i) {
      const Rotation<T> right = make_rotation(f, g);
      if (i > ll) e[i - 1] = right.r;
      f = right.c * d[i] + right.s * e[i];
      e[i] = right.c * e[i] - right.s * d[i];
      g = right.s * d[i + 1];
      d[i + 1] = right.c * d[i + 1];
      const Rotation<T> left = make_rotation(f, g);
      d[i] = left.r;
      f = left.c * e[i] + left.s * d[i + 1];
      d[i + 1] = left.c * d[i + 1] - left.s * e[i];
      if (i < m - 1) {
        g = left.s * e[i + 1];
        e[i + 1] = left.c * e[i + 1];
      }
      v.rotate(i, i + 1, right.c, right.s);
      u.rotate(i, i + 1, left.c, left.s);
    }
    e[m - 1] = f;
    if (std::fabs(e[m - 1]) <= thresh) e[m - 1] = 0;
  } else {
    T f = (std::fabs(d[m]) - shift) * (sign_of(d[m]) + shift / d[m]);
    T g = e[m - 1];
    for (std::int64_t i = m; i > ll; --i) {
      const Rotation<T> right = make_rotation(f, g);
      if (i < m) e[i] = right.r;
      f = right.c * d[i] + right.s * e[i - 1];
      e[i - 1] = right.c * e[i - 1] - right.s * d[i];
      g = right.s * d[i - 1];
      d[i - 1] = right.c * d[i - 1];
      const Rotation<T> left = make_rotation(f, g);
      d[i] = left.r;
      f = left.c * e[i - 1] + left.s * d[i - 1];
      d[i - 1] = left.c * d[i - 1] - left.s * e[i - 1];
      if (i > ll + 1) {
        g = left.s * e[i - 2];
        e[i - 2] = left.c * e[i - 2];
      }
      u.rotate(i - 1, i, right.c, -right.s);
      v.rotate(i - 1, i, left.c, -left.s);
    }
    e[ll] = f;
    if (std::fabs(e[ll]) <= thresh) e[ll] = 0;
  }
}

}  // namespace

template <typename T>
Svd2x2<T> svd_2x2(T f, T g, T h) {
  // The larger of |f| and |h| is taken as ft (swap: they were exchanged, which exchanges the
  // roles of the left and right rotations at the end); pmax names the entry of largest magnitude
  // (1: f, 2: g, 3: h), whose sign fixes the signs of the values.
  T ft = f;
  T fa = std::fabs(f);
  T ht = h;
  T ha = std::fabs(h);
  int pmax = 1;
  const bool swap = ha > fa;
  if (swap) {
    pmax = 3;
    std::swap(ft, ht);
    std::swap(fa, ha);
  }
  const T gt = g;
  const T ga = std::fabs(g);
  T smaller, larger, clt, slt, crt, srt;
  if (ga == 0) {  // already diagonal
    smaller = ha;
    larger = fa;
    clt = 1;
    crt = 1;
    slt = 0;
    srt = 0;
  } else {
    bool g_small = true;
    if (ga > fa) {
      pmax = 2;
      if (fa / ga < kUnitRoundoff<T>) {  // g dominates: the values are g and f h / g
        g_small = false;
        larger = ga;
        smaller = ha > 1 ? fa / (ga / ha) : (fa / ga) * ha;
        clt = 1;
        slt = ht / gt;
        srt = 1;
        crt = ft / gt;
      }
    }
    if (g_small) {
      // l = (F - H) / F and m = g / f; the values are F a and H / a with a = (s + r) / 2,
      // s = sqrt((2 - l)^2 + m^2), r = sqrt(l^2 + m^2); t is the right rotation's tangent.
      const T diff = fa - ha;
      T l = diff == fa ? T(1) : diff / fa;  // 1 also where f or h is infinite
      const T mr = gt / ft;
      T t = 2 - l;
      const T mm = mr * mr;
      const T s = std::sqrt(t * t + mm);
      const T r = l == 0 ? std::fabs(mr) : std::sqrt(l * l + mm);
      const T a = (s + r) / 2;
      smaller = ha / a;
      larger = fa * a;
      if (mm == 0) {  // m underflowed
        t = l == 0 ? std::copysign(T(2), ft) * sign_of(gt) : gt / std::copysign(diff, ft) + mr / t;
      } else {
        t = (mr / (s + t) + mr / (r + l)) * (1 + a);
      }
      l = std::sqrt(t * t + 4);
      crt = 2 / l;
      srt = t / l;
      clt = (crt + srt * mr) / a;
      slt = (ht / ft) * srt / a;
    }
  }
  Svd2x2<T> out{};
  if (swap) {
    out.cos_left = srt;
    out.sin_left = crt;
    out.cos_right = slt;
    out.sin_right = clt;
  } else {
    out.cos_left = clt;
    out.sin_left = slt;
    out.cos_right = crt;
    out.sin_right = srt;
  }
  T sign = 0;
  if (pmax == 1) sign = sign_of(out.cos_right) * sign_of(out.cos_left) * sign_of(f);
  if (pmax == 2) sign = sign_of(out.sin_right) * sign_of(out.cos_left) * sign_of(g);
  if (pmax == 3) sign = sign_of(out.sin_right) * sign_of(out.sin_left) * sign_of(h);
  out.larger = std::copysign(larger, sign);
  out.smaller = std::copysign(smaller, sign * sign_of(f) * sign_of(h));
  return out;
}

template <typename T>
bool bidiagonal_svd(T* d, T* e, std::int64_t n, T* u, std::int64_t u_rows, T* v,
                    std::int64_t v_rows) {
  const Columns<T> left{u, u_rows};
  const Columns<T> right{v, v_rows};
  constexpr T kEps = kUnitRoundoff<T>;
  constexpr std::int64_t kMaxIterationsPerStep = 6;
  if (n > 1) {
    const T tol = std::clamp(std::pow(kEps, T(-0.125)), T(10), T(100)) * kEps;
    // thresh: tol times an estimate of the smallest singular value (its lower bound over the
    // whole matrix, divided by sqrt(n)), floored where that underflows.
    T smallest = std::fabs(d[0]);
    if (smallest != 0) {
      T mu = smallest;
      for (std::int64_t i = 1; i < n && smallest != 0; ++i) {
        mu = std::fabs(d[i]) * (mu / (mu + std::fabs(e[i - 1])));
        smallest = std::min(smallest, mu);
      }
    }
    const T n_t = static_cast<T>(n);
    const T thresh =
        std::max(tol * (smallest / std::sqrt(n_t)),
                 T(kMaxIterationsPerStep) * (n_t * (n_t * std::numeric_limits<T>::min())));
    const std::int64_t max_iterations = kMaxIterationsPerStep * n * n;
    std::int64_t iterations = 0;
    std::int64_t old_ll = -1;
    std::int64_t old_m = -1;
    bool down = true;
    std::int64_t m = n - 1;  // the bottom of the block still being reduced
    while (m > 0) {
      if (iterations > max_iterations) return false;
      // The unreduced block [ll, m]: every e inside it above thresh; its largest entry.
      std::int64_t ll = 0;
      T block_max = std::fabs(d[m]);
      for (std::int64_t i = m - 1; i >= 0; --i) {
        if (std::fabs(e[i]) <= thresh) {
          e[i] = 0;
          ll = i + 1;
          break;
        }
        block_max = std::max({block_max, std::fabs(d[i]), std::fabs(e[i])});
      }
      if (ll == m) {  // d[m] is a singular value
        --m;
        continue;
      }
      if (ll == m - 1) {  // a 2 x 2 block: its exact SVD
        const Svd2x2<T> s = svd_2x2(d[m - 1], e[m - 1], d[m]);
        d[m - 1] = s.larger;
        e[m - 1] = 0;
        d[m] = s.smaller;
        right.rotate(m - 1, m, s.cos_right, s.sin_right);
        left.rotate(m - 1, m, s.cos_left, s.sin_left);
        m -= 2;
        continue;
      }
      // A new block sweeps from its larger end towards its smaller.
      if (ll > old_m || m < old_ll) down = std::fabs(d[ll]) >= std::fabs(d[m]);
      // Negligible off-diagonal entries, relative to the lower bound mu on the block's smallest
      // singular value met on the way (Note [Bidiagonal QR]).
      T smallest_in_block;
      bool split = false;
      if (down) {
        if (std::fabs(e[m - 1]) <= tol * std::fabs(d[m])) {
          e[m - 1] = 0;
          continue;
        }
        T mu = std::fabs(d[ll]);
        smallest_in_block = mu;
        for (std::int64_t i = ll; i < m; ++i) {
          if (std::fabs(e[i]) <= tol * mu) {
            e[i] = 0;
            split = true;
            break;
          }
          mu = std::fabs(d[i + 1]) * (mu / (mu + std::fabs(e[i])));
          smallest_in_block = std::min(smallest_in_block, mu);
        }
      } else {
        if (std::fabs(e[ll]) <= tol * std::fabs(d[ll])) {
          e[ll] = 0;
          continue;
        }
        T mu = std::fabs(d[m]);
        smallest_in_block = mu;
        for (std::int64_t i = m - 1; i >= ll; --i) {
          if (std::fabs(e[i]) <= tol * mu) {
            e[i] = 0;
            split = true;
            break;
          }
          mu = std::fabs(d[i]) * (mu / (mu + std::fabs(e[i])));
          smallest_in_block = std::min(smallest_in_block, mu);
        }
      }
      if (split) continue;
      old_ll = ll;
      old_m = m;
      // The shift: 0 where it is negligible against the block's largest value.
      T shift = 0;
      if (n_t * tol * (smallest_in_block / block_max) > std::max(kEps, T(0.01) * tol)) {
        const T end = down ? std::fabs(d[ll]) : std::fabs(d[m]);
        shift = down ? smaller_singular_value_2x2(d[m - 1], e[m - 1], d[m])
                     : smaller_singular_value_2x2(d[ll], e[ll], d[ll + 1]);
        if (end > 0 && (shift / end) * (shift / end) < kEps) shift = 0;
      }
      iterations += m - ll;
      sweep(d, e, ll, m, shift, down, thresh, left, right);
    }
  }
  // Non-negative values, in descending order with their vectors.
  for (std::int64_t i = 0; i < n; ++i) {
    if (d[i] < 0) {
      d[i] = -d[i];
      right.negate(i);
    }
  }
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    const std::int64_t j = std::max_element(d + i, d + n) - d;
    if (j == i) continue;
    std::swap(d[i], d[j]);
    left.swap(i, j);
    right.swap(i, j);
  }
  return true;
}

template bool bidiagonal_svd<float>(float*, float*, std::int64_t, float*, std::int64_t, float*,
                                    std::int64_t);
template bool bidiagonal_svd<double>(double*, double*, std::int64_t, double*, std::int64_t, double*,
                                     std::int64_t);
template Svd2x2<float> svd_2x2<float>(float, float, float);
template Svd2x2<double> svd_2x2<double>(double, double, double);

}  // namespace leangrad::kernels
