// window_max_places (kernels/window_max.h).
#include <leangrad/kernels/window_max.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels {

Tensor window_max_places(const Tensor& x, const std::vector<std::vector<std::int64_t>>& starts,
                         const std::vector<std::int64_t>& out,
                         const std::vector<std::int64_t>& taps) {
  LG_INTERNAL_ASSERT(x.device().is_cpu() && x.is_contiguous() && x.dim() == 2 &&
                     starts.size() == out.size() && !taps.empty());
  const std::int64_t planes = x.size(0), in_plane = x.size(1);
  const auto dims = static_cast<std::int64_t>(out.size());
  std::int64_t outputs = 1;
  for (const std::int64_t o : out)
    outputs *= o;
  Tensor places = empty({planes, outputs}, kInt64);
  std::int64_t* const where = places.data_ptr<std::int64_t>();
  const auto n_taps = static_cast<std::int64_t>(taps.size());
  dispatch_floating(x.dtype(), "fractional_max_pool", [&]<typename T>() {
    // float16 and bfloat16 compare as float (exact), float and double as themselves.
    using Compared = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* const data = x.data_ptr<T>();
    cpu::parallel_for(
        planes, cpu::grain_for(outputs * n_taps), [&](std::int64_t p0, std::int64_t p1) {
          std::vector<std::int64_t> index(static_cast<std::size_t>(dims));
          for (std::int64_t p = p0; p < p1; ++p) {
            const T* plane = data + p * in_plane;
            std::int64_t* plane_places = where + p * outputs;
            std::fill(index.begin(), index.end(), 0);
            for (std::int64_t o = 0; o < outputs; ++o) {
              std::int64_t first = 0;
              for (std::int64_t d = 0; d < dims; ++d) {
                const auto i = static_cast<std::size_t>(d);
                first += starts[i][static_cast<std::size_t>(p * out[i] + index[i])];
              }
              // A larger value, or the first NaN, replaces the best; past a NaN nothing does.
              // The choice is arithmetic on the place, not a branch: on data without order a
              // branch per tap mispredicts often.
              std::int64_t best_at = first + taps[0];
              for (std::int64_t k = 1; k < n_taps; ++k) {
                const std::int64_t at = first + taps[static_cast<std::size_t>(k)];
                const auto v = static_cast<Compared>(plane[at]);
                const auto best = static_cast<Compared>(plane[best_at]);
                const auto take = static_cast<std::int64_t>(std::isgreater(v, best)) |
                                  (static_cast<std::int64_t>(std::isunordered(v, v)) &
                                   static_cast<std::int64_t>(!std::isunordered(best, best)));
                best_at += (at - best_at) * take;
              }
              plane_places[o] = best_at;
              for (std::int64_t d = dims - 1; d >= 0; --d) {  // the next output, last dim fastest
                const auto i = static_cast<std::size_t>(d);
                if (++index[i] < out[i]) break;
                index[i] = 0;
              }
            }
          }
        });
  });
  return places;
}

}  // namespace leangrad::kernels
