// Note [Tiled transposed copy]
//   When out's contiguous dim is not in's (x.t().contiguous(), the gradient of a transpose, a
//   permute to channels-last, copy_ into a transposed view), the strided loop of
//   kernels/cpu/elementwise_loops.h writes a run of out while stepping through in by a whole row
//   per element: every element read from another cache line, and for a row of a power of two bytes
//   every one of those lines in the same L1 set, so each is read from memory again for each of its
//   16 floats. A (4096, 4096) float32 transposed copy took 170 ms on one thread, a memcpy of its
//   64 MiB 15.
//   So such a copy goes in tiles, read along in's contiguous dim, written along out's. Inside a
//   tile, blocks of as many elements a side as a SIMD register holds (8 floats in AVX) are
//   transposed in registers by Eigen's packet transposes (ptranspose of a PacketBlock, the ones
//   its GEMM packs with): GCC does not find that in a scalar tile loop, which took 86 ms. The
//   edges of a tile past its last whole block are copied one element at a time. Tiles are
//   independent, so the threads split them. 35-39 ms for that copy here, 2.1 to 5.2 times
//   LibTorch 1.13's speed over transposes and NCHW <-> NHWC
//   (bench/results/2026-12-02-cpu-transposed-copy-zen3-2core.md).
//   Tiles are square, 128 bytes a side (32 x 32 floats), their register blocks taken a row at a
//   time, unless out's rows lie a multiple of 4 KiB apart: a block row stores 32 bytes into each of
//   32 lines of out, which at such a stride all fall in one or two of L1's sets, and comes back for
//   the next 32 bytes after the others have pushed them out. There a tile is 1024 bytes along
//   out's contiguous dim by 128 along in's (256 x 32 floats), its blocks taken a column at a time:
//   a block column stores its runs of out 1024 bytes long one block after the next, so each line
//   of out is written whole in one go. 1.4 to 2.5 times the square tiles' speed on a (4096, 4096)
//   transpose, NHWC -> NCHW and a (2048, 512) float transpose; the square tiles keep the other
//   strides, where the long ones were up to 1.6 times slower (a (512, 2048) or (768, 512) float
//   source; bench/results/2026-12-05-cpu-transposed-gemm-zen4-2core.md). Neighbour tasks take
//   neighbour tiles along out's contiguous dim for the square tiles, along in's for the long ones.
//   Bits are copied as they are: the registers move floats without arithmetic (a NaN keeps its
//   payload, as the strided loop's same-dtype copy does), and the elements are handled as bytes of
//   their size, so every dtype takes the path: bool and uint8 as Eigen's bool packets, float16 and
//   bfloat16 as Eigen::half's, int32 as float's, int64 as double's.
#include <leangrad/kernels/cpu/transpose_copy.h>

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu {
namespace {

// The Eigen scalar whose packets carry elements of kBytes bytes through a register transpose.
template <std::size_t kBytes>
struct PacketElement;
template <>
struct PacketElement<1> {
  using type = bool;
};
template <>
struct PacketElement<2> {
  using type = Eigen::half;
};
template <>
struct PacketElement<4> {
  using type = float;
};
template <>
struct PacketElement<8> {
  using type = double;
};

// Bytes of one element, copied whole.
template <std::size_t kBytes>
struct Element {
  unsigned char bytes[kBytes];
};

// A square block of kSide x kSide elements transposed in registers: kSide loads along in's
// contiguous dim, Eigen's ptranspose, kSide stores along out's. Without AVX (a build for another
// LEANGRAD_CPU_ARCH), kSide is 1 and the tiles copy one element at a time.
template <std::size_t kBytes>
struct RegisterBlock {
  using E = Element<kBytes>;
#if defined(EIGEN_VECTORIZE_AVX)
  using Scalar = typename PacketElement<kBytes>::type;
  using Packet = typename Eigen::internal::packet_traits<Scalar>::type;
  static constexpr std::int64_t kSide = Eigen::internal::unpacket_traits<Packet>::size;

  // out[j * out_stride + i] = in[i * in_stride + j] for i, j < kSide.
  static void transpose(E* out, std::int64_t out_stride, const E* in, std::int64_t in_stride) {
    // A vector type as a template argument loses its alignment attribute, which GCC warns about;
    // PacketBlock holds the packets as Eigen's own kernels do (Eigen silences it in its headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
    Eigen::internal::PacketBlock<Packet, kSide> block;
#pragma GCC diagnostic pop
    for (std::int64_t i = 0; i < kSide; ++i) {
      block.packet[i] =
          Eigen::internal::ploadu<Packet>(reinterpret_cast<const Scalar*>(in + i * in_stride));
    }
    Eigen::internal::ptranspose(block);
    for (std::int64_t j = 0; j < kSide; ++j)
      Eigen::internal::pstoreu(reinterpret_cast<Scalar*>(out + j * out_stride), block.packet[j]);
  }
#else
  static constexpr std::int64_t kSide = 1;
  static void transpose(E* out, std::int64_t, const E* in, std::int64_t) {
    std::memcpy(out, in, kBytes);
  }
#endif
};

// The two shapes of tile (Note [Tiled transposed copy]), in bytes along a (out's contiguous dim)
// and b (in's), each at least one register block, and whether the blocks go a column at a time
// (i inside: runs along out) or a row at a time (j inside: runs along in). Neighbour tasks take
// neighbour tiles along b for the first, along a for the second.
struct Tiling {
  std::int64_t bytes_a, bytes_b;
  bool block_columns;
};
constexpr Tiling kRunsAlongOut{1024, 128, true};
constexpr Tiling kSquare{128, 128, false};

template <std::size_t kBytes>
constexpr std::int64_t tile_extent(std::int64_t bytes) {
  return std::max<std::int64_t>(bytes / static_cast<std::int64_t>(kBytes),
                                RegisterBlock<kBytes>::kSide);
}

// out[i + j * out_stride] = in[i * in_stride + j] for i < extent_a, j < extent_b: i runs along
// out's contiguous dim (a), j along in's (b), in register blocks a column (kBlockColumns: each
// column writes kSide runs of out as long as the tile, whole cache lines) or a row at a time.
template <std::size_t kBytes, bool kBlockColumns>
void copy_tile(Element<kBytes>* out, std::int64_t out_stride, const Element<kBytes>* in,
               std::int64_t in_stride, std::int64_t extent_a, std::int64_t extent_b) {
  using Block = RegisterBlock<kBytes>;
  constexpr std::int64_t kSide = Block::kSide;
  const std::int64_t whole_a = extent_a / kSide * kSide;
  const std::int64_t whole_b = extent_b / kSide * kSide;
  const auto block = [&](std::int64_t i, std::int64_t j) {
    Block::transpose(out + i + j * out_stride, out_stride, in + i * in_stride + j, in_stride);
  };
  if constexpr (kBlockColumns) {
    for (std::int64_t j = 0; j < whole_b; j += kSide) {
      for (std::int64_t i = 0; i < whole_a; i += kSide)
        block(i, j);
    }
  } else {
    for (std::int64_t i = 0; i < whole_a; i += kSide) {
      for (std::int64_t j = 0; j < whole_b; j += kSide)
        block(i, j);
    }
  }
  // The edges: the columns past the last whole block of every row, then the rows past it.
  for (std::int64_t i = 0; i < extent_a; ++i) {
    for (std::int64_t j = i < whole_a ? whole_b : 0; j < extent_b; ++j)
      out[i + j * out_stride] = in[i * in_stride + j];
  }
}

// The dims of g other than a and b, in order, and the number of their indices.
struct OuterDims {
  int dims[kMaxDims];
  int count = 0;
  std::int64_t total = 1;
};

OuterDims outer_dims_except(const ElementwiseGeometry& g, int a, int b) {
  OuterDims outer;
  for (int d = 0; d < g.ndim; ++d) {
    if (d == a || d == b) continue;
    outer.dims[outer.count++] = d;
    outer.total *= g.sizes[d];
  }
  return outer;
}

// The copy in tiles of `tiling` over dims a (out's stride 1) and b (in's stride 1), once for each
// index of the other dims.
template <std::size_t kBytes, Tiling kTiling>
void copy_tiles(const ElementwiseGeometry& g, int a, int b, void* out, const void* in) {
  using E = Element<kBytes>;
  constexpr std::int64_t kTileA = tile_extent<kBytes>(kTiling.bytes_a);
  constexpr std::int64_t kTileB = tile_extent<kBytes>(kTiling.bytes_b);
  const std::int64_t size_a = g.sizes[a];
  const std::int64_t size_b = g.sizes[b];
  const std::int64_t out_stride = g.strides[0][b];
  const std::int64_t in_stride = g.strides[1][a];
  const OuterDims outer = outer_dims_except(g, a, b);
  const std::int64_t tiles_a = (size_a + kTileA - 1) / kTileA;
  const std::int64_t tiles_b = (size_b + kTileB - 1) / kTileB;
  const std::int64_t tiles_per_plane = tiles_a * tiles_b;
  E* const out_e = static_cast<E*>(out);
  const E* const in_e = static_cast<const E*>(in);
  parallel_for(outer.total * tiles_per_plane, grain_for(kTileA * kTileB),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t item = begin; item < end; ++item) {
                   std::int64_t rest = item / tiles_per_plane;
                   const std::int64_t tile = item % tiles_per_plane;
                   std::int64_t out_offset = 0;
                   std::int64_t in_offset = 0;
                   for (int k = outer.count - 1; k >= 0; --k) {
                     const int d = outer.dims[k];
                     const std::int64_t index = rest % g.sizes[d];
                     rest /= g.sizes[d];
                     out_offset += index * g.strides[0][d];
                     in_offset += index * g.strides[1][d];
                   }
                   const std::int64_t a0 =
                       (kTiling.block_columns ? tile / tiles_b : tile % tiles_a) * kTileA;
                   const std::int64_t b0 =
                       (kTiling.block_columns ? tile % tiles_b : tile / tiles_a) * kTileB;
                   copy_tile<kBytes, kTiling.block_columns>(
                       out_e + out_offset + a0 + b0 * out_stride, out_stride,
                       in_e + in_offset + a0 * in_stride + b0, in_stride,
                       std::min(kTileA, size_a - a0), std::min(kTileB, size_b - b0));
                 }
               });
}

// Square tiles, unless out's rows lie a multiple of 4 KiB apart: then the square tile's 32 rows
// of out share a handful of L1 sets (every row the same set at 4 KiB), and the tiles whose runs go
// along out, writing each of their lines whole in one go, take over (Note [Tiled transposed
// copy]).
template <std::size_t kBytes>
void copy_transposed_as(const ElementwiseGeometry& g, int a, int b, void* out, const void* in) {
  const std::int64_t out_row_bytes = g.strides[0][b] * static_cast<std::int64_t>(kBytes);
  if (out_row_bytes % 4096 == 0) {
    copy_tiles<kBytes, kRunsAlongOut>(g, a, b, out, in);
  } else {
    copy_tiles<kBytes, kSquare>(g, a, b, out, in);
  }
}

// Note [Copies with a narrow side]
//   A permute whose contiguous dim on one side is only a few elements long (pixel_shuffle's
//   (N, C, r, r, H, W) -> (N, C, H, r, W, r) with r = 2, and its gradient back) is no transpose
//   for tiles: one side of the block would be 2. The strided loop took it a run of 2 at a time
//   (0.9 ms for srnet's (64, 16, 28, 28) shuffle, 3.2 MB each way). Here the copy goes along the
//   long dim (stride 1 on the other side) with the narrow dim inside, its few elements unrolled:
//   out is then written and in read as kNarrow streams that each advance element by element, and
//   the per-element loop overhead of the short runs is gone.
//
// out[s * out_narrow + l * out_long] = in[s * in_narrow + l * in_long] for s < kNarrow, l < count.
template <std::size_t kBytes, std::int64_t kNarrow>
void copy_narrow_run(Element<kBytes>* out, std::int64_t out_narrow, std::int64_t out_long,
                     const Element<kBytes>* in, std::int64_t in_narrow, std::int64_t in_long,
                     std::int64_t count) {
  for (std::int64_t l = 0; l < count; ++l) {
#pragma GCC unroll 8
    for (std::int64_t s = 0; s < kNarrow; ++s)
      out[s * out_narrow + l * out_long] = in[s * in_narrow + l * in_long];
  }
}

// The copy along dim `along` (its stride 1 on one side) with the narrow dim `narrow` (stride 1 on
// the other, 2 to kTransposeMinSide - 1 elements) inside, once for each index of the other dims.
template <std::size_t kBytes, std::int64_t kNarrow>
void copy_narrow(const ElementwiseGeometry& g, int along, int narrow, void* out, const void* in) {
  using E = Element<kBytes>;
  const std::int64_t size_long = g.sizes[along];
  const OuterDims outer = outer_dims_except(g, along, narrow);
  E* const out_e = static_cast<E*>(out);
  const E* const in_e = static_cast<const E*>(in);
  parallel_for(
      outer.total, grain_for(size_long * kNarrow), [&](std::int64_t begin, std::int64_t end) {
        // The outer dims' indices of `begin`, then counted up item by item (the runs are short: a
        // division per dim and item would cost as much as the copy).
        std::int64_t index[kMaxDims];
        std::int64_t rest = begin;
        std::int64_t out_offset = 0;
        std::int64_t in_offset = 0;
        for (int k = outer.count - 1; k >= 0; --k) {
          const int d = outer.dims[k];
          index[k] = rest % g.sizes[d];
          rest /= g.sizes[d];
          out_offset += index[k] * g.strides[0][d];
          in_offset += index[k] * g.strides[1][d];
        }
        for (std::int64_t item = begin; item < end; ++item) {
          copy_narrow_run<kBytes, kNarrow>(out_e + out_offset, g.strides[0][narrow],
                                           g.strides[0][along], in_e + in_offset,
                                           g.strides[1][narrow], g.strides[1][along], size_long);
          for (int k = outer.count - 1; k >= 0; --k) {
            const int d = outer.dims[k];
            out_offset += g.strides[0][d];
            in_offset += g.strides[1][d];
            if (++index[k] < g.sizes[d]) break;
            out_offset -= g.sizes[d] * g.strides[0][d];
            in_offset -= g.sizes[d] * g.strides[1][d];
            index[k] = 0;
          }
        }
      });
}

template <std::size_t kBytes>
void copy_narrow_as(const ElementwiseGeometry& g, int along, int narrow, void* out,
                    const void* in) {
  static_assert(kTransposeMinSide == 8, "a case for each narrow size below kTransposeMinSide");
  switch (g.sizes[narrow]) {
    case 2:
      return copy_narrow<kBytes, 2>(g, along, narrow, out, in);
    case 3:
      return copy_narrow<kBytes, 3>(g, along, narrow, out, in);
    case 4:
      return copy_narrow<kBytes, 4>(g, along, narrow, out, in);
    case 5:
      return copy_narrow<kBytes, 5>(g, along, narrow, out, in);
    case 6:
      return copy_narrow<kBytes, 6>(g, along, narrow, out, in);
    default:
      return copy_narrow<kBytes, 7>(g, along, narrow, out, in);
  }
}

// f(std::integral_constant<std::size_t, element_size>{}) for elements of 1, 2, 4 or 8 bytes:
// true; false, without calling f, for any other size.
template <typename F>
bool with_element_bytes(std::size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      f(std::integral_constant<std::size_t, 1>{});
      return true;
    case 2:
      f(std::integral_constant<std::size_t, 2>{});
      return true;
    case 4:
      f(std::integral_constant<std::size_t, 4>{});
      return true;
    case 8:
      f(std::integral_constant<std::size_t, 8>{});
      return true;
    default:
      return false;
  }
}

// The innermost dim along which operand k steps by one element, or -1.
int unit_stride_dim(const ElementwiseGeometry& g, int k) {
  for (int d = g.ndim - 1; d >= 0; --d) {
    if (g.strides[k][d] == 1) return d;
  }
  return -1;
}

}  // namespace

bool copy_transposed(const ElementwiseGeometry& g, std::size_t element_size, void* out,
                     const void* in) {
  if (g.num_operands != 2 || g.ndim < 2) return false;
  const int a = unit_stride_dim(g, 0);
  const int b = unit_stride_dim(g, 1);
  if (a < 0 || b < 0 || a == b) return false;
  const bool tiles = g.sizes[a] >= kTransposeMinSide && g.sizes[b] >= kTransposeMinSide;
  // Note [Copies with a narrow side]: one side narrow, the other at least a tile's side.
  const bool narrow_a =
      g.sizes[a] >= 2 && g.sizes[a] < kTransposeMinSide && g.sizes[b] >= kTransposeMinSide;
  const bool narrow_b =
      g.sizes[b] >= 2 && g.sizes[b] < kTransposeMinSide && g.sizes[a] >= kTransposeMinSide;
  if (!tiles && !narrow_a && !narrow_b) return false;
  return with_element_bytes(element_size, [&](auto bytes) {
    constexpr std::size_t kBytes = decltype(bytes)::value;
    if (tiles) {
      copy_transposed_as<kBytes>(g, a, b, out, in);
    } else {
      copy_narrow_as<kBytes>(g, narrow_a ? b : a, narrow_a ? a : b, out, in);
    }
  });
}

}  // namespace leangrad::kernels::cpu
