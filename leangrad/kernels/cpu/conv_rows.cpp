// Note [Convolution by padded rows]
//   A convolution with few output channels (srnet's tail, 16 -> 1; a Laplacian filter, 1 -> 1)
//   is a poor GEMM: im2col writes and reads K = C_in * kh * kw rows of P pixels for each sample
//   (451 KB for srnet's tail on 28 x 28), and the product over them is a matrix-vector product,
//   so the time is the col's traffic: srnet's tail took 1.1 ms forward and 2.1 backward at batch
//   64 on one thread, as much as its 16 -> 16 convolutions. With stride 1 and dilation 1 every
//   tap is instead one long run of multiply-adds:
//   - Each input plane is copied into a zero-padded plane P of Hp x Wp (Hp = out_h + kh - 1,
//     Wp = out_w + kw - 1). Output (i, j) then reads P at (i + r, j + s) for tap (r, s): on the
//     "wide" grid of out_h rows of Wp columns, element e = i * Wp + j reads P[e + r * Wp + s]. So
//     a tap adds k * P[e + offset] to every e < L = (out_h - 1) * Wp + out_w, one loop the
//     compiler vectorises; the wide grid's columns j >= out_w take values nobody reads, and the
//     rows are copied out of it at the end.
//   - The input gradient is the same correlation of dy, padded by kernel - 1 - padding, with the
//     kernel turned by 180 degrees and its in and out channels swapped: dx[c, i, j] is the sum of
//     w[o, c, kh - 1 - r, kw - 1 - s] * dy_padded[o, i + r, j + s]. So padding above kernel - 1
//     is not taken (conv_rows_applies).
//   - The weight gradient of tap (r, s) from in channel c to out channel o is a dot product of
//     dy[o] on the wide grid (zeros in the columns past out_w) with P_c shifted by the tap,
//     summed over the samples; up to 8 taps of a plane at once, each load of dy serving them all.
//     Those zeros meet input values no output of the tap reads, and 0 * inf is NaN: a sample
//     whose planes hold an infinity or NaN sums the valid columns alone. Each dot product keeps
//     one 32-byte vector of running sums, added in a fixed tree (kernels/cpu/lane_sums.h), so its
//     value does not depend on the machine; the samples are split into chunks summed apart and
//     added in chunk order (kernels/cpu/sample_chunks.h, as im2col's weight gradient).
//   Every output element sums its taps in one order, channel by channel and tap by tap (the
//   bias first): the result does not depend on the thread count, except the weight gradient's
//   chunks. Where it runs: Note [Which CPU convolution] in kernels/cpu/conv.cpp.
#include <leangrad/kernels/cpu/conv_rows.h>

#include <algorithm>
#include <vector>

#include <leangrad/kernels/cpu/lane_sums.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/sample_chunks.h>

namespace leangrad::kernels::cpu {

namespace {

// Running sums of all_finite's check.
constexpr int kLanes = 16;

// The planes of one (sample, group), zero-padded: `count` planes of rows x cols copied to
// padded planes of (rows + top + bottom) x (cols + left + right).
struct Padding {
  std::int64_t top, bottom, left, right;
};

template <typename T>
void pad_planes(const T* planes, std::int64_t count, std::int64_t rows, std::int64_t cols,
                const Padding& p, T* padded) {
  const std::int64_t padded_cols = cols + p.left + p.right;
  const std::int64_t padded_rows = rows + p.top + p.bottom;
  for (std::int64_t c = 0; c < count; ++c) {
    const T* plane = planes + c * rows * cols;
    T* out = padded + c * padded_rows * padded_cols;
    std::fill(out, out + p.top * padded_cols, T(0));
    for (std::int64_t i = 0; i < rows; ++i) {
      T* row = out + (p.top + i) * padded_cols;
      std::fill(row, row + p.left, T(0));
      std::copy(plane + i * cols, plane + (i + 1) * cols, row + p.left);
      std::fill(row + p.left + cols, row + padded_cols, T(0));
    }
    std::fill(out + (p.top + rows) * padded_cols, out + padded_rows * padded_cols, T(0));
  }
}

// The sizes of one valid correlation on the wide grid.
struct Correlation {
  std::int64_t out_h, out_w;  // the output plane
  std::int64_t kernel_h, kernel_w;
  std::int64_t in_channels;  // the padded planes summed into each output plane

  std::int64_t padded_w() const { return out_w + kernel_w - 1; }
  std::int64_t padded_plane() const { return (out_h + kernel_h - 1) * padded_w(); }
  std::int64_t wide_length() const { return (out_h - 1) * padded_w() + out_w; }
};

// The stretch of the wide grid one pass of the taps keeps in registers for each of kBlock output
// planes: kVectors vectors of 32 bytes (AVX2's registers), eight in all, so that eight chains of
// multiply-adds hide the latency of each.
constexpr std::int64_t kMaxBlock = 4;
template <typename T, std::int64_t kBlock = 1>
struct Chunk {
  using Vector [[gnu::vector_size(32)]] = T;
  static constexpr std::int64_t kLanes = 32 / sizeof(T);
  static constexpr std::int64_t kVectors = kBlock == 1 ? 8 : kBlock == 2 ? 4 : 2;
  static constexpr std::int64_t kSize = kVectors * kLanes;
};
constexpr std::int64_t kMaxVectors = 8;

// Slack past the padded planes so that the last chunk, which runs past the wide grid's end, reads
// inside the buffer (values that land only in columns nobody reads).
template <typename T>
std::int64_t padded_buffer_size(const Correlation& c) {
  return c.in_channels * c.padded_plane() + kMaxVectors * Chunk<T>::kLanes;
}

// kBlock output planes at once: out[b] (out_h x out_w) = start[b] + the sum over c, r, s of
// kernel[((c * kh + r) * kw + s) * kBlock + b] * padded[c] at (i + r, j + s), in that order. Each
// chunk of the wide grid runs all the taps in registers, each load of the input serving the
// kBlock planes; wide: scratch of kBlock * (wide_length rounded up to a chunk) elements.
template <std::int64_t kBlock, typename T>
void correlate_block(const Correlation& c, const T* padded, const T* kernel, const T* start,
                     T* wide, T* const* out) {
  using V = typename Chunk<T, kBlock>::Vector;
  constexpr std::int64_t kLanes = Chunk<T, kBlock>::kLanes, kVectors = Chunk<T, kBlock>::kVectors;
  constexpr std::int64_t kSize = Chunk<T, kBlock>::kSize;
  const std::int64_t pitch = c.padded_w();
  const std::int64_t chunks = (c.wide_length() + kSize - 1) / kSize;
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::int64_t e0 = chunk * kSize;
    V acc[kBlock][kVectors];
#pragma GCC unroll 4
    for (std::int64_t b = 0; b < kBlock; ++b) {
#pragma GCC unroll 8
      for (std::int64_t v = 0; v < kVectors; ++v)
        acc[b][v] = V{} + start[b];
    }
    const T* k = kernel;
    for (std::int64_t ci = 0; ci < c.in_channels; ++ci) {
      for (std::int64_t r = 0; r < c.kernel_h; ++r) {
        const T* row = padded + ci * c.padded_plane() + r * pitch + e0;
        for (std::int64_t s = 0; s < c.kernel_w; ++s, k += kBlock) {
          V x[kVectors];
#pragma GCC unroll 8
          for (std::int64_t v = 0; v < kVectors; ++v)
            __builtin_memcpy(&x[v], row + s + v * kLanes, sizeof(V));
#pragma GCC unroll 4
          for (std::int64_t b = 0; b < kBlock; ++b) {
#pragma GCC unroll 8
            for (std::int64_t v = 0; v < kVectors; ++v)
              acc[b][v] += k[b] * x[v];
          }
        }
      }
    }
#pragma GCC unroll 4
    for (std::int64_t b = 0; b < kBlock; ++b) {
#pragma GCC unroll 8
      for (std::int64_t v = 0; v < kVectors; ++v)
        __builtin_memcpy(wide + b * chunks * kSize + e0 + v * kLanes, &acc[b][v], sizeof(V));
    }
  }
  for (std::int64_t b = 0; b < kBlock; ++b) {
    for (std::int64_t i = 0; i < c.out_h; ++i) {
      const T* row = wide + b * chunks * kSize + i * pitch;
      std::copy(row, row + c.out_w, out[b] + i * c.out_w);
    }
  }
}

// count output planes (count <= kMaxBlock) by correlate_block; kernel as it takes it.
template <typename T>
void correlate(const Correlation& c, const T* padded, const T* kernel, const T* start,
               std::int64_t count, T* wide, T* const* out) {
  switch (count) {
    case 1:
      return correlate_block<1>(c, padded, kernel, start, wide, out);
    case 2:
      return correlate_block<2>(c, padded, kernel, start, wide, out);
    case 3:
      return correlate_block<3>(c, padded, kernel, start, wide, out);
    default:
      return correlate_block<4>(c, padded, kernel, start, wide, out);
  }
}

template <typename T>
std::int64_t wide_buffer_size(const Correlation& c) {
  // Each block's planes take (wide_length rounded up to its chunk) elements: at most kMaxVectors
  // vectors more than wide_length for each of kMaxBlock planes.
  const std::int64_t size = kMaxVectors * Chunk<T>::kLanes;
  return kMaxBlock * ((c.wide_length() + size - 1) / size) * size;
}

// sums[t] += the sum of wide[e] * plane[offsets[t] + e] over the first `vectors` 32-byte vectors
// of e, for t < kGroup: the dot products of dy on the wide grid with the plane shifted by kGroup
// taps at once, each load of dy serving them all, each in one vector of running sums added in a
// fixed tree.
template <int kGroup, typename T>
void tap_dots(const T* wide, const T* plane, const std::int64_t* offsets, std::int64_t vectors,
              T* sums) {
  using V = typename Chunk<T>::Vector;
  constexpr std::int64_t kVectorLanes = Chunk<T>::kLanes;
  V acc[kGroup] = {};
  for (std::int64_t k = 0; k < vectors; ++k) {
    V d;
    __builtin_memcpy(&d, wide + k * kVectorLanes, sizeof(V));
#pragma GCC unroll 8
    for (int t = 0; t < kGroup; ++t) {
      V x;
      __builtin_memcpy(&x, plane + offsets[t] + k * kVectorLanes, sizeof(V));
      acc[t] += d * x;
    }
  }
  for (int t = 0; t < kGroup; ++t) {
    T lanes[kVectorLanes];
    __builtin_memcpy(lanes, &acc[t], sizeof(V));
    sums[t] += sum_of_lanes(lanes);
  }
}

// tap_dots over `taps` taps, in groups of 8 (the accumulators and two operands fit AVX2's 16
// registers).
template <typename T>
void all_tap_dots(const T* wide, const T* plane, const std::int64_t* offsets, std::int64_t taps,
                  std::int64_t vectors, T* sums) {
  for (std::int64_t t0 = 0; t0 < taps; t0 += 8) {
    const std::int64_t* o = offsets + t0;
    T* out = sums + t0;
    switch (std::min<std::int64_t>(8, taps - t0)) {
      case 1:
        tap_dots<1>(wide, plane, o, vectors, out);
        break;
      case 2:
        tap_dots<2>(wide, plane, o, vectors, out);
        break;
      case 3:
        tap_dots<3>(wide, plane, o, vectors, out);
        break;
      case 4:
        tap_dots<4>(wide, plane, o, vectors, out);
        break;
      case 5:
        tap_dots<5>(wide, plane, o, vectors, out);
        break;
      case 6:
        tap_dots<6>(wide, plane, o, vectors, out);
        break;
      case 7:
        tap_dots<7>(wide, plane, o, vectors, out);
        break;
      default:
        tap_dots<8>(wide, plane, o, vectors, out);
        break;
    }
  }
}

// Whether p[0, n) are all finite: x * 0 is 0 for finite x and NaN for an infinity or NaN, summed
// in kLanes running sums (a loop the compiler vectorises).
template <typename T>
bool all_finite(const T* p, std::int64_t n) {
  T lanes[kLanes] = {};
  const std::int64_t whole = n / kLanes * kLanes;
  for (std::int64_t e = 0; e < whole; e += kLanes) {
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += p[e + l] * T(0);
  }
  for (std::int64_t e = whole; e < n; ++e)
    lanes[e - whole] += p[e] * T(0);
  return sum_of_lanes(lanes) == T(0);
}

// dot over the wide grid's columns below cols only, one product at a time: for input planes
// that hold an infinity or NaN, which a zero of dy in a column nobody reads would turn into a
// NaN the sum over the valid products does not have.
template <typename T>
T dot_valid_columns(const T* wide, const T* b, std::int64_t rows, std::int64_t pitch,
                    std::int64_t cols) {
  T sum = T(0);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j)
      sum += wide[i * pitch + j] * b[i * pitch + j];
  }
  return sum;
}

Padding forward_padding(const Conv2dGeometry& g) {
  // The padded plane is (out_h + kernel_h - 1) x (out_w + kernel_w - 1): with stride 1 the far
  // side takes what the near padding and the input leave.
  const std::int64_t bottom = g.out_h + g.kernel_h - 1 - g.in_h - g.pad_h;
  const std::int64_t right = g.out_w + g.kernel_w - 1 - g.in_w - g.pad_w;
  return {g.pad_h, bottom, g.pad_w, right};
}

}  // namespace

bool conv_rows_applies(const Conv2dGeometry& g) {
  return g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1 &&
         g.pad_h <= g.kernel_h - 1 && g.pad_w <= g.kernel_w - 1 && g.out_h > 0 && g.out_w > 0;
}

template <typename T>
void conv2d_rows_forward(const Conv2dGeometry& g, T* y, const T* x, const T* w, const T* bias) {
  const std::int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const Correlation c{g.out_h, g.out_w, g.kernel_h, g.kernel_w, cin_g};
  const Padding padding = forward_padding(g);
  const std::int64_t taps = g.kernel_taps();
  // Each block of up to kMaxBlock output channels: its weights interleaved, tap by tap.
  const std::int64_t blocks_per_group = (cout_g + kMaxBlock - 1) / kMaxBlock;
  std::vector<T> kernels(g.out_channels * cin_g * taps);
  for (std::int64_t o = 0; o < g.out_channels; ++o) {
    const std::int64_t first = o / cout_g * cout_g + (o % cout_g) / kMaxBlock * kMaxBlock;
    const std::int64_t count = std::min(kMaxBlock, o / cout_g * cout_g + cout_g - first);
    for (std::int64_t i = 0; i < cin_g * taps; ++i)
      kernels[first * cin_g * taps + i * count + (o - first)] = w[o * cin_g * taps + i];
  }
  parallel_for(g.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> padded(padded_buffer_size<T>(c), T(0)), wide(wide_buffer_size<T>(c));
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t group = 0; group < g.groups; ++group) {
        pad_planes(x + (n * g.in_channels + group * cin_g) * g.in_pixels(), cin_g, g.in_h, g.in_w,
                   padding, padded.data());
        for (std::int64_t block = 0; block < blocks_per_group; ++block) {
          const std::int64_t first = group * cout_g + block * kMaxBlock;
          const std::int64_t count = std::min(kMaxBlock, (group + 1) * cout_g - first);
          T start[kMaxBlock];
          T* out[kMaxBlock];
          for (std::int64_t b = 0; b < count; ++b) {
            start[b] = bias != nullptr ? bias[first + b] : T(0);
            out[b] = y + (n * g.out_channels + first + b) * g.out_pixels();
          }
          correlate(c, padded.data(), kernels.data() + first * cin_g * taps, start, count,
                    wide.data(), out);
        }
      }
    }
  });
}

template <typename T>
void conv2d_rows_input_grad(const Conv2dGeometry& g, T* dx, const T* dy, const T* w) {
  const std::int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const Correlation c{g.in_h, g.in_w, g.kernel_h, g.kernel_w, cout_g};
  const std::int64_t top = g.kernel_h - 1 - g.pad_h, left = g.kernel_w - 1 - g.pad_w;
  const Padding padding{top, g.in_h + g.kernel_h - 1 - g.out_h - top, left,
                        g.in_w + g.kernel_w - 1 - g.out_w - left};
  const std::int64_t taps = g.kernel_taps();
  // The kernels of blocks of up to kMaxBlock input channels, interleaved as correlate takes
  // them: for in channel ci of the group and out channel o, tap (r, s) is w[o, ci] turned by 180
  // degrees.
  const std::int64_t blocks_per_group = (cin_g + kMaxBlock - 1) / kMaxBlock;
  std::vector<T> kernels(g.groups * cin_g * cout_g * taps);
  for (std::int64_t group = 0; group < g.groups; ++group) {
    for (std::int64_t ci = 0; ci < cin_g; ++ci) {
      const std::int64_t first = ci / kMaxBlock * kMaxBlock;
      const std::int64_t count = std::min(kMaxBlock, cin_g - first);
      T* block = kernels.data() + (group * cin_g + first) * cout_g * taps;
      for (std::int64_t o = 0; o < cout_g; ++o) {
        const T* wo = w + ((group * cout_g + o) * cin_g + ci) * taps;
        for (std::int64_t t = 0; t < taps; ++t)
          block[(o * taps + t) * count + (ci - first)] = wo[taps - 1 - t];
      }
    }
  }
  parallel_for(g.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> padded(padded_buffer_size<T>(c), T(0)), wide(wide_buffer_size<T>(c));
    const T zeros[kMaxBlock] = {};
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t group = 0; group < g.groups; ++group) {
        pad_planes(dy + (n * g.out_channels + group * cout_g) * g.out_pixels(), cout_g, g.out_h,
                   g.out_w, padding, padded.data());
        for (std::int64_t block = 0; block < blocks_per_group; ++block) {
          const std::int64_t first = block * kMaxBlock;
          const std::int64_t count = std::min(kMaxBlock, cin_g - first);
          T* out[kMaxBlock];
          for (std::int64_t b = 0; b < count; ++b)
            out[b] = dx + (n * g.in_channels + group * cin_g + first + b) * g.in_pixels();
          correlate(c, padded.data(), kernels.data() + (group * cin_g + first) * cout_g * taps,
                    zeros, count, wide.data(), out);
        }
      }
    }
  });
}

template <typename T>
void conv2d_rows_weight_grad(const Conv2dGeometry& g, T* dw, const T* dy, const T* x) {
  const std::int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const Correlation c{g.out_h, g.out_w, g.kernel_h, g.kernel_w, cin_g};
  const Padding padding = forward_padding(g);
  const std::int64_t taps = g.kernel_taps();
  const std::int64_t pitch = c.padded_w(), length = c.wide_length();
  // The wide grid in whole vectors; the slack of the padded buffer covers the reads past it.
  const std::int64_t vectors = (length + Chunk<T>::kLanes - 1) / Chunk<T>::kLanes;
  std::vector<std::int64_t> offsets(taps);
  for (std::int64_t r = 0; r < g.kernel_h; ++r) {
    for (std::int64_t s = 0; s < g.kernel_w; ++s)
      offsets[r * g.kernel_w + s] = r * pitch + s;
  }
  const auto add_samples = [&](std::int64_t first, std::int64_t last, T* sums) {
    std::vector<T> padded(padded_buffer_size<T>(c), T(0));
    // dy[o] on the wide grid; its extra columns and the tail past `length` stay 0.
    std::vector<T> wide(vectors * Chunk<T>::kLanes, T(0));
    for (std::int64_t n = first; n < last; ++n) {
      for (std::int64_t group = 0; group < g.groups; ++group) {
        const T* x_group = x + (n * g.in_channels + group * cin_g) * g.in_pixels();
        pad_planes(x_group, cin_g, g.in_h, g.in_w, padding, padded.data());
        const bool finite = all_finite(x_group, cin_g * g.in_pixels());
        for (std::int64_t o = group * cout_g; o < (group + 1) * cout_g; ++o) {
          const T* dyo = dy + (n * g.out_channels + o) * g.out_pixels();
          for (std::int64_t i = 0; i < g.out_h; ++i)
            std::copy(dyo + i * g.out_w, dyo + (i + 1) * g.out_w, wide.data() + i * pitch);
          for (std::int64_t ci = 0; ci < cin_g; ++ci) {
            const T* plane = padded.data() + ci * c.padded_plane();
            T* tap_sums = sums + (o * cin_g + ci) * taps;
            if (finite) {
              all_tap_dots(wide.data(), plane, offsets.data(), taps, vectors, tap_sums);
              continue;
            }
            for (std::int64_t t = 0; t < taps; ++t) {
              tap_sums[t] +=
                  dot_valid_columns(wide.data(), plane + offsets[t], g.out_h, pitch, g.out_w);
            }
          }
        }
      }
    }
  };
  sum_over_sample_chunks(g.batch, g.out_channels * cin_g * taps, dw, add_samples);
}

#define LG_CONV_ROWS(T)                                                                          \
  template void conv2d_rows_forward<T>(const Conv2dGeometry&, T*, const T*, const T*, const T*); \
  template void conv2d_rows_input_grad<T>(const Conv2dGeometry&, T*, const T*, const T*);        \
  template void conv2d_rows_weight_grad<T>(const Conv2dGeometry&, T*, const T*, const T*);
LG_CONV_ROWS(float)
LG_CONV_ROWS(double)
#undef LG_CONV_ROWS

}  // namespace leangrad::kernels::cpu
