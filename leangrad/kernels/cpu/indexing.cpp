// Indexing on the CPU (kernels/backend.h): index_select (and Embedding, its outer-1 case) and its
// adjoint, gather and scatter.
//   index_select           one output row of `inner` elements per (o, i), copied from its index's
//                          row; threads split the rows
//   index_select_backward  each upstream row added into the row of its index, in index order;
//                          threads split the (o, column) pairs, each owning its columns across
//                          every index: no races, and the same order of additions as one thread
//                          (rows of one element: threads split the outer rows, each a scatter
//                          loop over the indices, the same order)
//   gather, scatter        line by line (Note [Gather lines] in kernels/gather_geometry.h):
//                          threads split the lines, which never share an element of self; within
//                          a line scatter combines (or writes: the last one stays) in index order
// Accumulation is in opmath_t (float for the 16-bit floats). The CPU entries check every index,
// so the out-of-range branches here only keep a direct caller of a launcher in bounds.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>

namespace leangrad::kernels::cpu {

namespace {

// What an out-of-range index reads: NaN, or 0 in an integral dtype.
template <typename T>
T out_of_range_value() {
  if constexpr (std::is_integral_v<T>) {
    return T{};
  } else {
    return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  }
}

// visit(k, offset) for each element k of the index, offset the position in self it stands for
// (-1 when its value is out of range), line by line (Note [Gather lines]): threads split the
// lines, and each line is visited in index order.
template <typename Visit>
void for_each_indexed(const GatherGeometry& g, const std::int64_t* index, const Visit& visit) {
  const std::int64_t length = g.line_length();
  if (length == 0) return;
  const std::int64_t step = g.self_strides[g.dim];
  parallel_for(g.line_count(), grain_for(length), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t l = begin; l < end; ++l) {
      const std::int64_t start = g.line_start(l);
      const std::int64_t base = g.self_base(start);
      for (std::int64_t j = 0; j < length; ++j) {
        const std::int64_t k = start + j * g.inner;
        const std::int64_t v = index[k];
        visit(k, g.valid(v) ? base + v * step : std::int64_t{-1});
      }
    }
  });
}

}  // namespace

void index_select(DType dtype, void* out, const void* in, const std::int64_t* indices,
                  std::int64_t outer, std::int64_t size, std::int64_t num_indices,
                  std::int64_t inner) {
  dispatch_all(dtype, "index_select", [&]<typename T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    if (inner == 1) {  // single elements (the last dim): a gather loop per outer row
      parallel_for(outer, grain_for(num_indices), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t o = begin; o < end; ++o) {
          const T* xo = x + o * size;
          T* yo = y + o * num_indices;
          for (std::int64_t i = 0; i < num_indices; ++i) {
            const std::int64_t row = indices[i];
            yo[i] = row >= 0 && row < size ? xo[row] : out_of_range_value<T>();
          }
        }
      });
      return;
    }
    parallel_for(outer * num_indices, grain_for(inner), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t o = r / num_indices;
        const std::int64_t row = indices[r % num_indices];
        T* dst = y + r * inner;
        if (row < 0 || row >= size) {
          std::fill(dst, dst + inner, out_of_range_value<T>());
          continue;
        }
        const T* src = x + (o * size + row) * inner;
        std::copy(src, src + inner, dst);
      }
    });
  });
}

// Note [float16 gradients of index_select]
//   The gradient adds float16 rows into float32 ones. Each element widened through core/half.h
//   kept the add scalar: an Embedding of (512, 2048) float16 weights by 4096 indices, forward and
//   backward under a loss, took 17.9 ms on one thread, float32's 11.0. So a float16 row is widened
//   kWiden elements at a time by kernels/cpu/half_convert.h (exact, core/half.h's values) and
//   added from there, in the same order: 9.6 ms.
constexpr std::int64_t kWiden = 512;

void index_select_backward(DType dtype, void* grad_in, const void* grad_out,
                           const std::int64_t* indices, std::int64_t outer, std::int64_t size,
                           std::int64_t num_indices, std::int64_t inner, std::int64_t skip_index) {
  dispatch_floating(dtype, "index_select_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    Acc* dx = static_cast<Acc*>(grad_in);
    const T* dy = static_cast<const T*>(grad_out);
    if (inner == 1) {  // single elements (unfold's flattened planes): a scatter loop per outer row
      parallel_for(outer, grain_for(num_indices), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t o = begin; o < end; ++o) {
          Acc* dxo = dx + o * size;
          const T* dyo = dy + o * num_indices;
          if constexpr (std::is_same_v<T, Half>) {  // Note [float16 gradients of index_select]
            float widened[kWiden];
            for (std::int64_t c = 0; c < num_indices; c += kWiden) {
              const std::int64_t m = std::min(kWiden, num_indices - c);
              widen(dyo + c, widened, m);
              for (std::int64_t k = 0; k < m; ++k) {
                const std::int64_t row = indices[c + k];
                if (row >= 0 && row < size && row != skip_index) dxo[row] += widened[k];
              }
            }
          } else {
            for (std::int64_t i = 0; i < num_indices; ++i) {
              const std::int64_t row = indices[i];
              if (row >= 0 && row < size && row != skip_index) dxo[row] += static_cast<Acc>(dyo[i]);
            }
          }
        }
      });
      return;
    }
    // Tasks own ranges of the outer * inner columns, about kElementwiseGrain additions each.
    parallel_for(outer * inner, grain_for(num_indices), [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t o = c0 / inner; o * inner < c1; ++o) {
        const std::int64_t j0 = std::max<std::int64_t>(c0 - o * inner, 0);
        const std::int64_t j1 = std::min<std::int64_t>(c1 - o * inner, inner);
        for (std::int64_t i = 0; i < num_indices; ++i) {
          const std::int64_t row = indices[i];
          if (row < 0 || row >= size || row == skip_index) continue;
          Acc* dst = dx + (o * size + row) * inner;
          const T* src = dy + (o * num_indices + i) * inner;
          if constexpr (std::is_same_v<T, Half>) {  // Note [float16 gradients of index_select]
            float widened[kWiden];
            for (std::int64_t c = j0; c < j1; c += kWiden) {
              const std::int64_t m = std::min(kWiden, j1 - c);
              widen(src + c, widened, m);
              for (std::int64_t k = 0; k < m; ++k)
                dst[c + k] += widened[k];
            }
          } else {
            for (std::int64_t j = j0; j < j1; ++j)
              dst[j] += static_cast<Acc>(src[j]);
          }
        }
      }
    });
  });
}

void gather(DType dtype, void* out, const void* self, const std::int64_t* index,
            const GatherGeometry& g) {
  dispatch_all(dtype, "gather", [&]<typename T>() {
    const T* x = static_cast<const T*>(self);
    T* y = static_cast<T*>(out);
    for_each_indexed(g, index, [&](std::int64_t k, std::int64_t offset) {
      y[k] = offset >= 0 ? x[offset] : out_of_range_value<T>();
    });
  });
}

void scatter(ScatterOp op, DType dtype, void* self, const void* src, const std::int64_t* index,
             const GatherGeometry& g) {
  if (op == ScatterOp::Assign) {
    dispatch_all(dtype, "scatter", [&]<typename T>() {
      T* out = static_cast<T*>(self);
      const T* s = static_cast<const T*>(src);
      // Each line in index order: a later element naming the same place overwrites.
      for_each_indexed(g, index, [&](std::int64_t k, std::int64_t offset) {
        if (offset >= 0) out[offset] = s[k];
      });
    });
    return;
  }
  dispatch_addable(dtype, op_name(op), [&]<typename T>() {
    using Acc = opmath_t<T>;
    Acc* acc = static_cast<Acc*>(self);
    const T* s = static_cast<const T*>(src);
    // Each step a lambda of its own type, so the loop inlines it.
    const auto combine = [&](const auto& step) {
      for_each_indexed(g, index, [&](std::int64_t k, std::int64_t offset) {
        if (offset >= 0) acc[offset] = step(acc[offset], static_cast<Acc>(s[k]));
      });
    };
    switch (op) {
      case ScatterOp::Sum:
        combine([](Acc a, Acc b) { return reduce_math::wrapping_add(a, b); });
        break;
      case ScatterOp::Prod:
        combine([](Acc a, Acc b) { return reduce_math::wrapping_mul(a, b); });
        break;
      case ScatterOp::Max:
        combine([](Acc a, Acc b) { return reduce_math::max_propagate_nan(a, b); });
        break;
      case ScatterOp::Min:
        combine([](Acc a, Acc b) { return reduce_math::min_propagate_nan(a, b); });
        break;
      case ScatterOp::Assign:
        break;
    }
  });
}

}  // namespace leangrad::kernels::cpu
