// The cumulative sum on the CPU (kernels/backend.h). A row along the dim is a chain of additions,
// so the parallelism is across rows: with inner == 1 (the dim is the last one) a task takes whole
// rows; otherwise a task takes a block of kColumns adjacent columns of one outer index and walks
// down the dim adding a row of the block at a time, contiguous loads the compiler vectorises.
#include <leangrad/kernels/backend.h>

#include <algorithm>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>

namespace leangrad::kernels::cpu {

namespace {

constexpr std::int64_t kColumns = 256;

}  // namespace

void cumsum(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t size,
            std::int64_t inner, bool reverse) {
  dispatch_addable(dtype, "cumsum", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    // The offset of step j along the dim.
    const auto row = [&](std::int64_t j) { return (reverse ? size - 1 - j : j) * inner; };
    if (inner == 1) {
      parallel_for(outer, grain_for(size), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t o = begin; o < end; ++o) {
          const T* xo = x + o * size;
          T* yo = y + o * size;
          Acc acc{};
          for (std::int64_t j = 0; j < size; ++j) {
            acc = reduce_math::wrapping_add(acc, static_cast<Acc>(xo[row(j)]));
            yo[row(j)] = static_cast<T>(acc);
          }
        }
      });
      return;
    }
    const std::int64_t blocks = (inner + kColumns - 1) / kColumns;
    parallel_for(outer * blocks, grain_for(size * kColumns),
                 [&](std::int64_t begin, std::int64_t end) {
                   Acc acc[kColumns];
                   for (std::int64_t t = begin; t < end; ++t) {
                     const std::int64_t o = t / blocks;
                     const std::int64_t c0 = (t % blocks) * kColumns;
                     const std::int64_t width = std::min(kColumns, inner - c0);
                     const T* xo = x + o * size * inner + c0;
                     T* yo = y + o * size * inner + c0;
                     std::fill(acc, acc + width, Acc{});
                     for (std::int64_t j = 0; j < size; ++j) {
                       const T* xr = xo + row(j);
                       T* yr = yo + row(j);
                       for (std::int64_t c = 0; c < width; ++c) {
                         acc[c] = reduce_math::wrapping_add(acc[c], static_cast<Acc>(xr[c]));
                         yr[c] = static_cast<T>(acc[c]);
                       }
                     }
                   }
                 });
  });
}

}  // namespace leangrad::kernels::cpu
