// The tiled transposed copy (Note [Tiled transposed copy] in kernels/cpu/transpose_copy.cpp) and
// the copy with a narrow side (Note [Copies with a narrow side]):
// contiguous() of transposes and permutes, copy_ into a transposed view, broadcast and outer dims,
// sides that are not whole tiles or register blocks, on one thread and two, in every dtype; each
// byte of the result against an index loop over the source's own strides. The inputs are random
// bytes, so the floating dtypes carry NaNs with payloads and the copy must move bits untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/cpu/transpose_copy.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/ops.h>

#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad {
namespace {

constexpr DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16,
                                kInt64,   kInt32,   kUInt8,   DType::Bool};

// A contiguous tensor of random bytes (0 or 1 for bool, whose other bytes are not values).
Tensor random_bytes(const Shape& shape, DType dtype, std::mt19937& rng) {
  Tensor t = empty(shape, TensorOptions(dtype));
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  const std::size_t n = t.nbytes();
  for (std::size_t i = 0; i < n; ++i)
    bytes[i] = static_cast<unsigned char>(dtype == DType::Bool ? rng() & 1 : rng());
  return t;
}

// Every element of dst holds the bytes of src's element at the same index.
void expect_same_elements(const Tensor& dst, const Tensor& src, const std::string& what) {
  ASSERT_EQ(dst.shape(), src.shape()) << what;
  ASSERT_EQ(dst.dtype(), src.dtype()) << what;
  const std::size_t size = element_size(dst.dtype());
  const auto* d = static_cast<const unsigned char*>(dst.data_ptr());
  const auto* s = static_cast<const unsigned char*>(src.data_ptr());
  for (std::int64_t i = 0; i < dst.numel(); ++i) {
    ASSERT_EQ(std::memcmp(d + test::storage_offset_of(dst, i) * size,
                          s + test::storage_offset_of(src, i) * size, size),
              0)
        << what << ": element " << i << " of " << dtype_name(dst.dtype());
  }
}

struct PermuteCase {
  Shape shape;                      // of the contiguous source
  std::vector<std::int64_t> order;  // the permute
};

// Transposes whose sides are whole tiles, whole register blocks, neither, exactly the smallest
// side the tiles take and one below it (a narrow side), with outer dims before, between and
// after the two; pixel_shuffle's permutes and their inverses, narrow sides of 2 to 7 elements on
// either side.
const PermuteCase kPermutes[] = {
    {{64, 64}, {1, 0}},
    {{1024, 128}, {1, 0}},  // whole square tiles in every dtype
    {{1100, 150}, {1, 0}},  // several square tiles each way, the last partial, in every dtype
    {{4096, 40}, {1, 0}},   // out's rows 4096 elements long: the tiles of runs along out
    {{37, 45}, {1, 0}},
    {{8, 8}, {1, 0}},
    {{7, 100}, {1, 0}},
    {{130, 9}, {1, 0}},
    {{3, 33, 40}, {2, 0, 1}},
    {{2, 19, 5, 7}, {0, 2, 3, 1}},
    {{4, 50, 3, 20}, {3, 1, 2, 0}},
    {{2, 3, 2, 2, 5, 9}, {0, 1, 4, 2, 5, 3}},  // pixel_shuffle, r = 2: out's narrow side
    {{2, 3, 5, 3, 9, 3}, {0, 1, 3, 5, 2, 4}},  // pixel_unshuffle, r = 3: in's narrow side
    {{5, 11, 6}, {0, 2, 1}},
    {{40, 4}, {1, 0}},
    {{3, 10, 5}, {2, 1, 0}},
    {{2, 17, 8, 7}, {0, 3, 1, 2}},
};

TEST(TransposeCopy, PermutesEveryDType) {
  std::mt19937 rng(7);
  for (const DType dtype : kAllDTypes) {
    for (const PermuteCase& c : kPermutes) {
      const Tensor source = random_bytes(c.shape, dtype, rng).permute(c.order);
      const Tensor copy = source.contiguous();
      ASSERT_TRUE(copy.is_contiguous());
      expect_same_elements(copy, source, "contiguous() of a permute of " + shape_str(c.shape));
    }
  }
}

TEST(TransposeCopy, IntoATransposedView) {
  std::mt19937 rng(11);
  for (const DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{45, 37}, Shape{96, 64}, Shape{9, 300}}) {
      Tensor storage = random_bytes(shape, dtype, rng);
      Tensor dst = storage.t();  // stride 1 along dim 0
      const Tensor src = random_bytes(dst.shape(), dtype, rng);
      dst.copy_(src);
      expect_same_elements(dst, src, "copy_ into the transpose of " + shape_str(shape));
    }
  }
}

// Out's rows 4096 elements apart (a multiple of 4 KiB in every dtype) take the tiles whose runs
// go along out; here out is a window of such rows, several tiles along each dim, the last ones
// partial, so the tiles' edges and the elements past the window are checked.
TEST(TransposeCopy, IntoRowsAMultipleOf4KiBApart) {
  std::mt19937 rng(19);
  for (const DType dtype : kAllDTypes) {
    Tensor storage = random_bytes({150, 4096}, dtype, rng);
    const Tensor before = storage.clone();
    Tensor dst = storage.narrow(1, 0, 1100);  // (150, 1100), rows 4096 apart
    const Tensor src = random_bytes({1100, 150}, dtype, rng).t();
    dst.copy_(src);
    expect_same_elements(dst, src, "copy_ into rows 4096 elements apart");
    const Tensor rest = storage.narrow(1, 1100, 4096 - 1100);
    expect_same_elements(rest, before.narrow(1, 1100, 4096 - 1100), "elements past the window");
  }
}

TEST(TransposeCopy, BroadcastAndStridedOuterDims) {
  std::mt19937 rng(13);
  for (const DType dtype : kAllDTypes) {
    // A size-1 dim expanded: stride 0 in the source along an outer dim of the copy.
    const Tensor expanded = random_bytes({40, 1, 36}, dtype, rng).expand({40, 5, 36});
    const Tensor from_expanded = expanded.permute({2, 1, 0});
    expect_same_elements(from_expanded.contiguous(), from_expanded, "expanded outer dim");
    // Every other plane of a batch, transposed: an outer stride of two planes.
    const Tensor planes = random_bytes({6, 24, 40}, dtype, rng).slice(0, 0, 6, 2).transpose(1, 2);
    expect_same_elements(planes.contiguous(), planes, "every other plane");
    // A column slice: in's rows start at offsets that are not whole register blocks.
    const Tensor columns = random_bytes({50, 70}, dtype, rng).slice(1, 3, 60).t();
    expect_same_elements(columns.contiguous(), columns, "a column slice");
  }
}

TEST(TransposeCopy, SplitAcrossThreads) {
  const ThreadCount threads(2);
  std::mt19937 rng(17);
  for (const DType dtype : {kFloat32, kFloat16, kFloat64, kUInt8}) {
    for (const Shape& shape : {Shape{517, 300}, Shape{1100, 150}, Shape{4096, 40}}) {
      const Tensor source = random_bytes(shape, dtype, rng).t();
      expect_same_elements(source.contiguous(), source, "two threads");
    }
  }
}

// The kernel takes only geometries with out's and in's unit strides along different dims, one of
// at least kTransposeMinSide elements and the other of at least 2, and then copies every element;
// otherwise it writes nothing.
TEST(TransposeCopy, TakesOnlyTransposedGeometries) {
  const Tensor square = arange(0, 64, 1, TensorOptions(kFloat32)).reshape({8, 8});
  const Tensor narrow = arange(0, 56, 1, TensorOptions(kFloat32)).reshape({7, 8});
  const Tensor short_sides = arange(0, 42, 1, TensorOptions(kFloat32)).reshape({6, 7});
  struct Case {
    Tensor source;
    bool taken;
  };
  for (const Case& c :
       {Case{square.t(), true}, Case{square, false}, Case{narrow.t(), true}, Case{narrow, false},
        Case{short_sides.t(), false}, Case{square.slice(1, 0, 8, 2).t(), false}}) {
    Tensor out = full(c.source.shape(), -1.0, TensorOptions(kFloat32));
    const ElementwiseGeometry g = make_elementwise_geometry("copy_", out, {&c.source});
    EXPECT_EQ(kernels::cpu::copy_transposed(g, 4, out.data_ptr(), c.source.data_ptr()), c.taken)
        << shape_str(c.source.shape());
    if (c.taken) {
      expect_same_elements(out, c.source, "taken");
    } else {
      EXPECT_TRUE(test::all_close(out, std::vector<double>(out.numel(), -1.0)));
    }
  }
  Tensor out = empty({8, 8}, TensorOptions(kFloat32));
  const Tensor transposed = square.t();
  const ElementwiseGeometry g = make_elementwise_geometry("copy_", out, {&transposed});
  EXPECT_FALSE(kernels::cpu::copy_transposed(g, 3, nullptr, nullptr));  // no 3-byte elements
}

}  // namespace
}  // namespace leangrad
