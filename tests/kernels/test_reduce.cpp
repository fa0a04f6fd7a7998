// Tests of the reductions (kernels/ops_reduce.cpp, kernels/cpu/reduce.cpp): sum, mean, max and
// argmax against a plain reference loop in double, over single, multiple, negative and all dims,
// keepdim, non-contiguous inputs, 0-d and empty tensors, every dtype, NaN and ties; reductions in
// stages (16-bit ones against the bound of float32 accumulation and one rounding) and their
// memory; the accuracy of long float32 sums, results independent of the thread count, the errors
// bad input raises, and CUDA against the CPU when a GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/core/half.h>
#include <leangrad/core/memory.h>
#include <leangrad/core/parallel.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::make_tensor;
using test::to_vector;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool};
const ReduceOp kReduceOps[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min};

// ---- Reference (plain loops in double) -------------------------------------------------------

struct Expected {
  Shape shape;
  std::vector<double> values;
};

// Which dims are reduced (every dim for an empty list), wrapped.
std::vector<bool> reduced_mask(const Shape& shape, const std::vector<std::int64_t>& dims) {
  const auto ndim = static_cast<std::int64_t>(shape.size());
  std::vector<bool> mask(shape.size(), dims.empty());
  for (std::int64_t d : dims) {
    if (ndim > 0) mask[d < 0 ? d + ndim : d] = true;
  }
  return mask;
}

// For each input element (row-major), the flat output index it reduces into and its flat index
// within the reduced dims; also the output shape.
struct ReferenceIndexing {
  Shape out_shape;
  std::vector<std::int64_t> out_index, inner_index;
  std::int64_t num_outputs = 1;
};

ReferenceIndexing reference_indexing(const Shape& shape, const std::vector<std::int64_t>& dims,
                                     bool keepdim) {
  const std::vector<bool> mask = reduced_mask(shape, dims);
  ReferenceIndexing r;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!mask[d]) {
      r.out_shape.push_back(shape[d]);
      r.num_outputs *= shape[d];
    } else if (keepdim) {
      r.out_shape.push_back(1);
    }
  }
  std::int64_t numel = 1;
  for (std::int64_t s : shape)
    numel *= s;
  for (std::int64_t i = 0; i < numel; ++i) {
    std::int64_t rest = i, out = 0, inner = 0, out_scale = 1, inner_scale = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      const std::int64_t coord = rest % shape[d];
      rest /= shape[d];
      if (mask[d]) {
        inner += coord * inner_scale;
        inner_scale *= shape[d];
      } else {
        out += coord * out_scale;
        out_scale *= shape[d];
      }
    }
    r.out_index.push_back(out);
    r.inner_index.push_back(inner);
  }
  return r;
}

Expected reference_reduce(ReduceOp op, const std::vector<double>& x, const Shape& shape,
                          const std::vector<std::int64_t>& dims, bool keepdim) {
  const ReferenceIndexing r = reference_indexing(shape, dims, keepdim);
  const auto n = static_cast<std::size_t>(r.num_outputs);
  std::vector<double> acc(n, op == ReduceOp::Max ? -kInf : op == ReduceOp::Min ? kInf : 0.0);
  std::vector<std::int64_t> count(n, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto o = static_cast<std::size_t>(r.out_index[i]);
    ++count[o];
    if (op == ReduceOp::Max) {
      acc[o] = std::isnan(acc[o]) || std::isnan(x[i]) ? kNaN : std::max(acc[o], x[i]);
    } else if (op == ReduceOp::Min) {
      acc[o] = std::isnan(acc[o]) || std::isnan(x[i]) ? kNaN : std::min(acc[o], x[i]);
    } else {
      acc[o] += x[i];
    }
  }
  if (op == ReduceOp::Mean) {
    for (std::size_t o = 0; o < n; ++o)
      acc[o] /= static_cast<double>(count[o]);
  }
  return {r.out_shape, acc};
}

Expected reference_argmax(const std::vector<double>& x, const Shape& shape,
                          std::vector<std::int64_t> dims, bool keepdim) {
  const ReferenceIndexing r = reference_indexing(shape, dims, keepdim);
  const auto n = static_cast<std::size_t>(r.num_outputs);
  std::vector<double> best(n, kNaN), index(n, -1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto o = static_cast<std::size_t>(r.out_index[i]);
    const bool better =
        index[o] < 0 || (!std::isnan(best[o]) && (std::isnan(x[i]) || x[i] > best[o]));
    if (better) {
      best[o] = x[i];
      index[o] = static_cast<double>(r.inner_index[i]);
    }
  }
  return {r.out_shape, index};
}

// Deterministic pseudo-random values: uniform in [low, high), or integers when `integral`.
std::vector<double> random_values(std::int64_t n, std::uint32_t seed, double low = -4.0,
                                  double high = 4.0, bool integral = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v)
    x = integral ? std::floor(dist(gen)) : dist(gen);
  return v;
}

// Values that every dtype holds exactly: small non-negative integers (0/1 for bool).
std::vector<double> exact_values(std::int64_t n, DType dtype, std::uint32_t seed) {
  std::vector<double> v = random_values(n, seed, 0.0, dtype == kBool ? 2.0 : 10.0, true);
  return v;
}

std::int64_t numel_of(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  return n;
}

// Checks op(x, dims, keepdim) against the reference computed from x's own values.
void expect_reduce_matches(ReduceOp op, const Tensor& x, const std::vector<std::int64_t>& dims,
                           bool keepdim) {
  SCOPED_TRACE(std::string(op_name(op)) + " of " + shape_str(x.shape()) + " " +
               dtype_name(x.dtype()) + " over dims " + shape_str(dims) +
               (keepdim ? " keepdim" : ""));
  const Expected e = reference_reduce(op, to_vector(x), x.shape(), dims, keepdim);
  const Tensor y = ops::reduce(op, x, dims, keepdim);
  EXPECT_EQ(y.shape(), e.shape);
  // Results are rounded once to the output dtype; 16-bit sums of many terms may round in between
  // when converted back, so their tolerance is that of one rounding of the result.
  EXPECT_TRUE(all_close(y, e.values));
}

void expect_argmax_matches(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  SCOPED_TRACE("argmax of " + shape_str(x.shape()) + " " + dtype_name(x.dtype()) +
               (dim ? " over dim " + std::to_string(*dim) : " flattened") +
               (keepdim ? " keepdim" : ""));
  std::vector<std::int64_t> dims;
  if (dim) dims.push_back(*dim);
  Expected e = reference_argmax(to_vector(x), x.shape(), dims, keepdim);
  if (!dim && !keepdim) e.shape = {};
  const Tensor y = ops::argmax(x, dim, keepdim);
  EXPECT_EQ(y.dtype(), kInt64);
  EXPECT_EQ(y.shape(), e.shape);
  EXPECT_TRUE(all_close(y, e.values, 0, 0));
}

// Checks a Sum or Mean of float16/bfloat16 x against the float64 reference within the bound of
// its arithmetic: the sum accumulated in float32 in any order (staged or one pass, CPU or CUDA),
// then for Mean one float32 division, then one rounding to the 16-bit dtype. With S the exact
// sum, A = sum |x_i| over an output's n elements, u the unit roundoff of float32 (2^-24) and u16
// that of the dtype (2^-11 float16, 2^-8 bfloat16):
//   float32 sum:  |s - S| <= E = gamma(n - 1) A, gamma(k) = k u / (1 - k u) (any summation tree:
//                 no element takes part in more than n - 1 additions; 16 -> 32 bits is exact);
//   Sum:          |y - S| <= E + u16 (|S| + E) + eta,
//   Mean:         |y - S / n| <= E / n + (u + u16 (1 + u)) (|S| + E) / n + eta,
// eta being half the dtype's smallest subnormal (the absolute rounding error near zero). A
// partial rounded to 16 bits between stages adds u16 of each partial's size, which cancellation
// in S does not cover: such outputs fail this bound.
void expect_sixteen_bit_sum_within_bound(ReduceOp op, const Tensor& x,
                                         const std::vector<std::int64_t>& dims, bool keepdim) {
  ASSERT_TRUE(op == ReduceOp::Sum || op == ReduceOp::Mean);
  ASSERT_TRUE(x.dtype() == kFloat16 || x.dtype() == kBFloat16);
  SCOPED_TRACE(std::string(op_name(op)) + " of " + shape_str(x.shape()) + " " +
               dtype_name(x.dtype()) + " over dims " + shape_str(dims) +
               (keepdim ? " keepdim" : "") + " against the rounding bound");
  const std::vector<double> values = to_vector(x);
  const ReferenceIndexing r = reference_indexing(x.shape(), dims, keepdim);
  const auto num_outputs = static_cast<std::size_t>(r.num_outputs);
  std::vector<double> sum(num_outputs, 0.0), sum_abs(num_outputs, 0.0), count(num_outputs, 0.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto o = static_cast<std::size_t>(r.out_index[i]);
    sum[o] += values[i];  // exact: few terms of 16-bit values, far inside float64's 53 bits
    sum_abs[o] += std::fabs(values[i]);
    count[o] += 1;
  }
  const double u = std::ldexp(1.0, -24);
  const double u16 = std::ldexp(1.0, x.dtype() == kFloat16 ? -11 : -8);
  const double eta = std::ldexp(1.0, x.dtype() == kFloat16 ? -25 : -134);
  const Tensor y = ops::reduce(op, x, dims, keepdim);
  ASSERT_EQ(y.shape(), r.out_shape);
  ASSERT_EQ(y.dtype(), x.dtype());
  const std::vector<double> got = to_vector(y);
  int failures = 0;
  for (std::size_t o = 0; o < num_outputs; ++o) {
    const double n = count[o];
    const double gamma = (n - 1) * u / (1 - (n - 1) * u);
    const double e = gamma * sum_abs[o];
    double expected = sum[o], bound = e + u16 * (std::fabs(sum[o]) + e) + eta;
    if (op == ReduceOp::Mean) {
      expected = sum[o] / n;
      bound = e / n + (u + u16 * (1 + u)) * (std::fabs(sum[o]) + e) / n + eta;
    }
    if (!(std::fabs(got[o] - expected) <= bound) && failures++ < 5) {
      ADD_FAILURE() << "output " << o << ": got " << got[o] << ", expected " << expected
                    << " within " << bound << " (off by " << std::fabs(got[o] - expected) << ")";
    }
  }
  EXPECT_EQ(failures, 0) << "of " << num_outputs << " outputs";
}

// ---- Dims, keepdim, dtypes -------------------------------------------------------------------

const std::vector<std::vector<std::int64_t>> kDimLists = {
    {}, {0}, {1}, {2}, {-1}, {-3}, {0, 2}, {2, 0}, {1, 2}, {-1, 0}, {0, 1, 2}};

TEST(Reduce, MatchesReferenceOverEveryDimList) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = make_tensor(random_values(2 * 3 * 5, 1), {2, 3, 5}, dtype);
    for (ReduceOp op : kReduceOps) {
      for (const auto& dims : kDimLists) {
        for (bool keepdim : {false, true})
          expect_reduce_matches(op, x, dims, keepdim);
      }
    }
  }
}

TEST(Reduce, EveryDtype) {
  for (DType dtype : kAllDTypes) {
    const Tensor x = make_tensor(exact_values(4 * 6, dtype, 2), {4, 6}, dtype);
    for (ReduceOp op : kReduceOps) {
      if (op == ReduceOp::Mean && !is_floating(dtype)) continue;
      for (const auto& dims : std::vector<std::vector<std::int64_t>>{{}, {0}, {1}}) {
        expect_reduce_matches(op, x, dims, false);
      }
    }
  }
}

TEST(Reduce, OutputDtypes) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = make_tensor({1, 0, 1, 1}, {2, 2}, dtype);
    EXPECT_EQ(ops::reduce(ReduceOp::Sum, x, {}, false).dtype(),
              is_floating(dtype) ? dtype : kInt64);
    EXPECT_EQ(ops::reduce(ReduceOp::Max, x, {0}, false).dtype(), dtype);
    EXPECT_EQ(ops::argmax(x, 1, false).dtype(), kInt64);
    if (is_floating(dtype)) {
      EXPECT_EQ(ops::reduce(ReduceOp::Mean, x, {}, false).dtype(), dtype);
    } else {
      EXPECT_THROW(ops::reduce(ReduceOp::Mean, x, {}, false), DTypeError);
    }
  }
  // bool sums count the true elements.
  EXPECT_TRUE(
      all_close(ops::reduce(ReduceOp::Sum, make_tensor({1, 0, 1, 1}, {2, 2}, kBool), {1}, false),
                {1, 2}, 0, 0));
}

TEST(Reduce, SixteenBitFloatsAccumulateInFloat) {
  // 4096 ones: a float16 accumulator would stop at 2048 (2048 + 1 rounds back to 2048).
  for (DType dtype : {kFloat16, kBFloat16}) {
    const Tensor x = make_tensor(std::vector<double>(4096, 1.0), {4096}, dtype);
    EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Sum, x, {}, false), {4096}, 0, 0));
    EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Mean, x, {}, false), {1}, 0, 0));
  }
}

// A float16 tensor reduces as its float32 widening does, rounded once (Note [float16 reductions
// read float] in kernels/cpu/reduce.cpp): the same float sums in the same order, the same maxima,
// bit for bit. Runs around the leaf size and past one parallel chunk, columns wider than one
// block of columns, and NaN and infinities for the maxima; argmax too.
TEST(Reduce, Float16ReadsAsItsFloat32Widening) {
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.0f, 300.0f);  // beyond float16's 1,024 integers
  const auto random_half = [&](const Shape& shape) {
    Tensor t = zeros(shape, kFloat16);
    auto* p = static_cast<Half*>(t.data_ptr());
    for (std::int64_t i = 0; i < t.numel(); ++i)
      p[i] = Half(normal(rng));
    return t;
  };
  const auto bits = [](const Tensor& t) {
    std::vector<std::uint16_t> v(static_cast<std::size_t>(t.numel()));
    std::memcpy(v.data(), t.data_ptr(), t.nbytes());
    return v;
  };
  struct Case {
    Shape shape;
    std::vector<std::int64_t> dims;
  };
  const Case cases[] = {
      {{3, 70001}, {1}},   // runs: past one chunk of 32,768, a tail leaf
      {{129}, {0}},        // one leaf of 128 and one more
      {{1000, 100}, {0}},  // columns: a block of 64 and one of 36
      {{7, 300, 70}, {1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("shape " + shape_str(c.shape));
    const Tensor x = random_half(c.shape);
    // Other values with NaN, -inf and +inf in a few places, for the maximum (their sums are not
    // finite).
    const Tensor specials = random_half(c.shape);
    auto* p = static_cast<Half*>(specials.data_ptr());
    p[5] = Half::from_bits(0x7e01);
    p[specials.numel() / 2] = Half::from_bits(0xfc00);
    p[specials.numel() - 1] = Half::from_bits(0x7c00);
    const auto expect_widening = [&](ReduceOp op, const Tensor& input) {
      SCOPED_TRACE(op_name(op));
      const Tensor got = ops::reduce(op, input, c.dims, false);
      const Tensor want = ops::reduce(op, input.to(kFloat32), c.dims, false).to(kFloat16);
      ASSERT_EQ(got.dtype(), kFloat16);
      EXPECT_EQ(bits(got), bits(want));
    };
    expect_widening(ReduceOp::Sum, x);
    expect_widening(ReduceOp::Mean, x);
    expect_widening(ReduceOp::Max, x);
    expect_widening(ReduceOp::Max, specials);
    for (const Tensor& input : {x, specials}) {  // the first maximum's index
      const std::int64_t dim = c.dims[0];
      EXPECT_EQ(to_vector(ops::argmax(input, dim, false)),
                to_vector(ops::argmax(input.to(kFloat32), dim, false)));
    }
  }
}

TEST(Reduce, IntegerSumsDoNotOverflowTheInputDtype) {
  const Tensor x = make_tensor(std::vector<double>(1000, 200), {1000}, kUInt8);
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Sum, x, {}, false), {200000}, 0, 0));
  const Tensor y = make_tensor({2147483647.0, 2147483647.0}, {2}, kInt32);
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Sum, y, {}, false), {4294967294.0}, 0, 0));
}

// int64 sums wrap around as PyTorch's do (torch.tensor([2**63 - 1, 1]).sum() is -2**63 in
// PyTorch 1.13), in unsigned arithmetic: signed overflow would be undefined behaviour, which the
// sanitizer job reports (the lanes and the column loops once added int64s as such). Runs of
// 2^62 + i, long enough for the lanes, the pairwise tree and two threads, and the same values as
// columns, against the sum taken mod 2^64 here.
TEST(Reduce, Int64SumsWrapAround) {
  const Tensor pair = make_tensor({0, 1}, {2}, kInt64);
  pair.data_ptr<std::int64_t>()[0] = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(ops::reduce(ReduceOp::Sum, pair, {}, false).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::min());
  for (const std::int64_t n : {3, 37, 129, 1000, 70000}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Tensor x = empty({n, 3}, kInt64);
    std::uint64_t want = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t v = (std::uint64_t{1} << 62) + static_cast<std::uint64_t>(i);
      for (int j = 0; j < 3; ++j)
        x.data_ptr<std::int64_t>()[i * 3 + j] = static_cast<std::int64_t>(v);
      want += v;
    }
    const auto expected = static_cast<std::int64_t>(want);
    const Tensor columns = ops::reduce(ReduceOp::Sum, x, {0}, false);
    const Tensor runs = ops::reduce(ReduceOp::Sum, x.t().contiguous(), {1}, false);
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(columns.data_ptr<std::int64_t>()[j], expected);
      EXPECT_EQ(runs.data_ptr<std::int64_t>()[j], expected);
    }
  }
}

// ---- Layouts ---------------------------------------------------------------------------------

// Raw bytes of a contiguous CPU tensor.
std::vector<unsigned char> bytes_of(const Tensor& t) {
  std::vector<unsigned char> b(t.nbytes());
  if (!b.empty()) std::memcpy(b.data(), t.data_ptr(), b.size());
  return b;
}

TEST(Reduce, NonContiguousInputs) {
  const Tensor base = make_tensor(random_values(4 * 6 * 5, 3), {4, 6, 5}, kFloat32);
  const Tensor transposed = views::transpose(base, 0, 2);   // (5, 6, 4)
  const Tensor sliced = views::slice(base, 1, 1, 6, 2);     // (4, 3, 5), step 2
  const Tensor permuted = views::permute(base, {1, 2, 0});  // (6, 5, 4)
  const Tensor expanded = views::expand(views::slice(base, 0, 0, 1, 1), {3, 6, 5});  // stride 0
  for (const Tensor& x : {transposed, sliced, permuted, expanded}) {
    ASSERT_FALSE(x.is_contiguous());
    for (ReduceOp op : kReduceOps) {
      for (const auto& dims : kDimLists)
        expect_reduce_matches(op, x, dims, true);
    }
    for (std::int64_t d = -3; d < 3; ++d)
      expect_argmax_matches(x, d, false);
    expect_argmax_matches(x, std::nullopt, false);
  }
}

// Note [Strided inputs of a reduction]: a view with a step, reduced over adjacent dims, is copied
// in its own order and reduced as a contiguous tensor of its values is, to the same bits (random
// values, whose float32 sums round differently in another order); a (600, 80) slice of every
// other column, so that the sums over dim 0 take the column layout's chunks of rows. Over small
// integers, whose every partial sum is exact in float32, its results are the reference's exactly.
TEST(Reduce, AStridedViewReducesAsItsContiguousCopy) {
  for (bool integral : {false, true}) {
    const Tensor base =
        make_tensor(random_values(600 * 160, 8, -4.0, 4.0, integral), {600, 160}, kFloat32);
    const Tensor every_other = views::slice(base, 1, 0, 160, 2);
    const Tensor copy = ops::contiguous(every_other);
    ASSERT_FALSE(every_other.is_contiguous());
    for (ReduceOp op : kReduceOps) {
      for (const std::vector<std::int64_t>& dims :
           {std::vector<std::int64_t>{0}, std::vector<std::int64_t>{1},
            std::vector<std::int64_t>{}}) {
        SCOPED_TRACE(std::string(op_name(op)) + " over " + shape_str(dims) +
                     (integral ? ", integers" : ""));
        const Tensor got = ops::reduce(op, every_other, dims, false);
        EXPECT_EQ(bytes_of(got), bytes_of(ops::reduce(op, copy, dims, false)));
        if (integral && op != ReduceOp::Mean) {  // a mean divides: one rounding
          EXPECT_TRUE(all_close(
              got, reference_reduce(op, to_vector(every_other), {600, 80}, dims, false).values, 0,
              0));
        }
      }
    }
  }
}

// An expanded input reduces over index 0 of its kept broadcast dims, and of its reduced ones for
// a maximum or a minimum (Note [Broadcast dims of a reduction]). Integer-valued floats, so every
// sum is exact: the values must be the reference loop's over the expanded elements (a mean's
// within its one rounding); maxima and minima, with zeros of both signs and NaNs among the
// values, the bits of the input's contiguous copy; every output along a kept broadcast dim the
// same bits; and the expanded input is not copied.
TEST(Reduce, BroadcastDimsReduceOnce) {
  struct Case {
    Shape source, expanded;
    std::vector<std::vector<std::int64_t>> dim_lists;
  };
  const std::vector<Case> cases = {
      {{1, 300}, {200, 300}, {{1}, {0}, {}}},
      {{200, 1}, {200, 300}, {{0}, {1}, {}}},
      {{3, 1, 7}, {3, 5, 7}, {{1}, {2}, {0, 2}, {0}, {0, 1}}},
      {{1, 1}, {4, 6}, {{0}, {1}}},
      {{2, 1, 1, 9}, {2, 4, 3, 9}, {{3}, {0, 3}, {1, 2}}},
  };
  const Device cpu = Device::cpu();
  for (const Case& c : cases) {
    std::vector<double> values = random_values(numel_of(c.source), 17, -9.0, 9.0, true);
    values[0] = -0.0;
    if (values.size() > 4) {
      values[2] = 0.0;
      values[3] = kNaN;
    }
    std::vector<double> finite = values;
    std::replace_if(
        finite.begin(), finite.end(), [](double v) { return std::isnan(v); }, 5.0);
    for (const Tensor& s :
         {make_tensor(values, c.source, kFloat32), make_tensor(finite, c.source, kFloat32)}) {
      const Tensor x = views::expand(s, c.expanded);
      const Tensor copy = ops::contiguous(x);
      for (ReduceOp op : kReduceOps) {
        for (const std::vector<std::int64_t>& dims : c.dim_lists) {
          SCOPED_TRACE(std::string(op_name(op)) + " of " + shape_str(c.source) + " expanded to " +
                       shape_str(c.expanded) + " over " + shape_str(dims));
          const Tensor got = ops::reduce(op, x, dims, false);
          const Tensor full = ops::reduce(op, copy, dims, false);
          if (op == ReduceOp::Max || op == ReduceOp::Min) {
            EXPECT_EQ(bytes_of(got), bytes_of(full));
          } else {
            const Expected e = reference_reduce(op, to_vector(copy), c.expanded, dims, false);
            EXPECT_TRUE(all_close(got, e.values, op == ReduceOp::Mean ? 1e-6 : 0, 0));
          }
        }
      }
    }
  }
  // Along a kept broadcast dim every output is the same; the input is not copied.
  const Tensor row = make_tensor(random_values(3000, 18), {1, 3000}, kFloat32);
  const Tensor wide = views::expand(row, {2000, 3000});
  for (ReduceOp op : kReduceOps) {
    SCOPED_TRACE(op_name(op));
    const std::int64_t before = memory::stats(cpu).allocated;
    memory::reset_peak(cpu);
    const Tensor y = ops::reduce(op, wide, {1}, true);
    const std::int64_t extra = memory::stats(cpu).peak_allocated - before;
    EXPECT_LT(extra, 2000 * 3000 * 4 / 8) << "peak grew by " << extra << " bytes";
    ASSERT_EQ(y.shape(), (Shape{2000, 1}));
    const std::vector<unsigned char> first = bytes_of(views::slice(y, 0, 0, 1, 1));
    for (std::int64_t i : {1, 999, 1999})
      EXPECT_EQ(bytes_of(views::slice(y, 0, i, i + 1, 1)), first) << "output " << i;
  }
  // Over a reduced broadcast dim too: a sum is the row times 2000 (exact in double, so one
  // rounding to the dtype: float16's through float32, once), a mean the row itself, a maximum
  // and a minimum the row; no copy either.
  for (const DType dtype : {kFloat32, kFloat16, kInt64}) {
    const Tensor r = make_tensor(random_values(3000, 19, -4, 4, dtype == kInt64), {1, 3000}, dtype);
    const Tensor tall = views::expand(r, {2000, 3000});
    const std::vector<double> v = to_vector(r);
    for (ReduceOp op : kReduceOps) {
      if (op == ReduceOp::Mean && dtype == kInt64) continue;
      SCOPED_TRACE(std::string(op_name(op)) + " over dim 0 of " + dtype_name(dtype));
      const std::int64_t before = memory::stats(cpu).allocated;
      memory::reset_peak(cpu);
      const Tensor y = ops::reduce(op, tall, {0}, false);
      const std::int64_t extra = memory::stats(cpu).peak_allocated - before;
      EXPECT_LT(extra, 2000 * 3000 * 2 / 8) << "peak grew by " << extra << " bytes";
      std::vector<double> want = v;
      if (op == ReduceOp::Sum) {
        for (double& x : want)
          x *= 2000;  // exact: a float16, float32 or small integer times 2^11 at most
      }
      const Tensor rounded = op == ReduceOp::Sum && dtype != kInt64
                                 ? make_tensor(want, {3000}, dtype)  // one rounding of the exact
                                 : Tensor();
      EXPECT_TRUE(all_close(y, rounded.defined() ? to_vector(rounded) : want, 0, 0));
    }
  }
}

// Reduced dims split by kept ones ({0, 2, 3} of (N, C, H, W): a conv bias gradient) are reduced
// in stages, one run at a time (Note [Reducing separated dims in stages]), float16 and bfloat16
// with float32 partials; non-contiguous inputs take the permuting copy. Both must give the
// reference's values; 16-bit sums and means within the bound of one float32 accumulation and one
// rounding, which partials rounded to 16 bits would exceed.
TEST(Reduce, SeparatedRunsOfDims) {
  struct Case {
    Shape shape;
    std::vector<std::int64_t> dims;
  };
  const std::vector<Case> cases = {
      {{3, 4, 5, 6}, {0, 2, 3}},    {{3, 4, 5, 6}, {0, 2}},    {{3, 4, 5, 6}, {1, 3}},
      {{2, 3, 4, 5, 3}, {0, 2, 4}}, {{2, 1, 4, 1, 3}, {0, 4}}, {{3, 1, 5, 6}, {0, 1, 3}},
      {{4, 5, 1, 6}, {0, 2, 3}}};  // the reduced size-1 dim is skipped: runs {0} and {3}
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kBool}) {
    for (const Case& c : cases) {
      const std::int64_t n = numel_of(c.shape);
      const Tensor x = make_tensor(
          is_floating(dtype) ? random_values(n, 11) : exact_values(n, dtype, 11), c.shape, dtype);
      for (ReduceOp op : kReduceOps) {
        if (op == ReduceOp::Mean && !is_floating(dtype)) continue;
        for (bool keepdim : {false, true})
          expect_reduce_matches(op, x, c.dims, keepdim);
      }
    }
  }
  // Many outputs of many terms each, with cancellation: some sums end far smaller than their
  // partials, where a 16-bit rounding of the partials would show.
  const std::vector<Case> sixteen_bit_cases = {
      {{16, 32, 12, 12}, {0, 2, 3}}, {{24, 8, 40, 3}, {0, 2}}, {{6, 20, 7, 50}, {1, 3}}};
  for (DType dtype : {kFloat16, kBFloat16}) {
    for (const Case& c : cases) {
      const Tensor x = make_tensor(random_values(numel_of(c.shape), 11), c.shape, dtype);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean})
        expect_sixteen_bit_sum_within_bound(op, x, c.dims, false);
    }
    for (const Case& c : sixteen_bit_cases) {
      const Tensor x = make_tensor(random_values(numel_of(c.shape), 13), c.shape, dtype);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean}) {
        for (bool keepdim : {false, true})
          expect_sixteen_bit_sum_within_bound(op, x, c.dims, keepdim);
      }
      expect_reduce_matches(ReduceOp::Max, x, c.dims, false);
    }
  }
}

// The staged form's point: a bias-gradient sum allocates only the small partials, not a copy of
// its input (the permuting form's temporary is the input's size). Float16 and bfloat16 too: their
// float32 partials are N * C elements.
TEST(Reduce, SeparatedRunsDoNotCopyTheInput) {
  const Shape shape = {8, 16, 32, 32};
  const std::vector<double> values = random_values(numel_of(shape), 12);
  const Device cpu = Device::cpu();
  for (DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    const Tensor x = make_tensor(values, shape, dtype);
    const auto input_bytes = static_cast<std::int64_t>(x.nbytes());
    for (ReduceOp op : kReduceOps) {
      SCOPED_TRACE(std::string(op_name(op)) + " of " + dtype_name(dtype));
      const std::int64_t before = memory::stats(cpu).allocated;
      memory::reset_peak(cpu);
      const Tensor y = ops::reduce(op, x, {0, 2, 3}, false);
      const std::int64_t extra = memory::stats(cpu).peak_allocated - before;
      EXPECT_LT(extra, input_bytes / 8)
          << "peak grew by " << extra << " bytes for an input of " << input_bytes;
      EXPECT_TRUE(
          all_close(y, reference_reduce(op, to_vector(x), x.shape(), {0, 2, 3}, false).values));
    }
  }
  // The same sum over a transposed view is reduced through its dims in memory order (Note [Dense
  // inputs in memory order]): no copy either, and it agrees.
  const Tensor xt = views::transpose(make_tensor(values, shape, kFloat32), 2, 3);
  const std::int64_t before = memory::stats(cpu).allocated;
  memory::reset_peak(cpu);
  expect_reduce_matches(ReduceOp::Sum, xt, {0, 2, 3}, false);
  EXPECT_LT(memory::stats(cpu).peak_allocated - before, static_cast<std::int64_t>(xt.nbytes()) / 8);
}

// The cases of Reduce.DenseInputsInMemoryOrder over random values or small integers.
void expect_dense_reductions_in_memory_order(bool integral) {
  const Shape shape = {6, 40, 50};
  const Tensor source =
      make_tensor(random_values(numel_of(shape), 13, -4.0, 4.0, integral), shape, kFloat32);
  const Tensor nhwc_like = views::permute(source, {0, 2, 1});  // (6, 50, 40), strides (2000, 1, 50)
  const Tensor reversed = views::permute(source, {2, 1, 0});   // (50, 40, 6)
  struct Case {
    const Tensor* view;
    std::vector<std::int64_t> dims, source_dims;
  };
  const std::vector<Case> cases = {
      {&reversed, {}, {}},           // everything: the source's memory in order
      {&reversed, {0, 1}, {2, 1}},   // kept: the view's 2, the source's 0
      {&reversed, {2}, {0}},         // kept: 0 and 1 of the view, 2 and 1 of the source: swapped
      {&nhwc_like, {1}, {2}},        // kept 0 and 2 of the view, 0 and 1 of the source
      {&nhwc_like, {0, 1}, {0, 2}},  // separated in the view, one run in memory order
      {&nhwc_like, {2}, {1}},        // kept 0 and 1, 0 and 2 of the source
  };
  const Device cpu = Device::cpu();
  for (const Case& c : cases) {
    for (ReduceOp op : kReduceOps) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(op_name(op)) + " of " + shape_str(c.view->shape()) + " over " +
                     shape_str(c.dims) + (keepdim ? " keepdim" : ""));
        const std::int64_t before = memory::stats(cpu).allocated;
        memory::reset_peak(cpu);
        const Tensor got = ops::reduce(op, *c.view, c.dims, keepdim);
        const std::int64_t extra = memory::stats(cpu).peak_allocated - before;
        const Expected e =
            reference_reduce(op, to_vector(*c.view), c.view->shape(), c.dims, keepdim);
        EXPECT_EQ(got.shape(), e.shape);
        if (integral) {
          EXPECT_TRUE(all_close(got, e.values));
        }
        if (c.dims == std::vector<std::int64_t>{2} && c.view == &reversed) {
          EXPECT_GE(extra, static_cast<std::int64_t>(source.nbytes()));  // kept dims swap: copies
          continue;
        }
        EXPECT_LT(extra, static_cast<std::int64_t>(source.nbytes()) / 8);
        EXPECT_EQ(bytes_of(got), bytes_of(ops::reduce(op, source, c.source_dims, false)));
      }
    }
  }
}

// Note [Dense inputs in memory order]: a dense block with its dims permuted reduces through the
// view in memory order when that keeps the kept dims' order, to the bits of the same reduction
// of the contiguous source over the matching dims (random values, whose sums round differently
// in another order), with the original's shape (keepdim too) and no copy; where the kept dims
// would change order (a permute that swaps two kept dims) it copies. Over small integers, whose
// every partial sum is exact in float32 (a mean then one rounding), every case gives the
// reference's values.
TEST(Reduce, DenseInputsInMemoryOrder) {
  for (bool integral : {false, true}) {
    SCOPED_TRACE(integral ? "integers" : "random values");
    expect_dense_reductions_in_memory_order(integral);
  }
}

TEST(Reduce, ZeroDim) {
  const Tensor x = make_tensor({2.5}, {}, kFloat32);
  for (ReduceOp op : kReduceOps) {
    for (const auto& dims : std::vector<std::vector<std::int64_t>>{{}, {0}, {-1}}) {
      for (bool keepdim : {false, true}) {
        const Tensor y = ops::reduce(op, x, dims, keepdim);
        EXPECT_EQ(y.shape(), Shape{});
        EXPECT_TRUE(all_close(y, {2.5}, 0, 0));
      }
    }
  }
  EXPECT_TRUE(all_close(ops::argmax(x, std::nullopt, false), {0}, 0, 0));
  EXPECT_TRUE(all_close(ops::argmax(x, 0, true), {0}, 0, 0));
  EXPECT_THROW(ops::reduce(ReduceOp::Sum, x, {1}, false), ShapeError);
}

TEST(Reduce, EmptyTensors) {
  const Tensor x = empty({0, 3}, kFloat32);
  auto check = [](const Tensor& y, const Shape& shape, const std::vector<double>& values) {
    EXPECT_EQ(y.shape(), shape);
    EXPECT_TRUE(all_close(y, values, 0, 0));
  };
  check(ops::reduce(ReduceOp::Sum, x, {0}, false), {3}, {0, 0, 0});
  check(ops::reduce(ReduceOp::Sum, x, {}, false), {}, {0});
  check(ops::reduce(ReduceOp::Sum, x, {1}, false), {0}, {});
  check(ops::reduce(ReduceOp::Sum, x, {0}, true), {1, 3}, {0, 0, 0});
  check(ops::reduce(ReduceOp::Mean, x, {0}, false), {3}, {kNaN, kNaN, kNaN});
  check(ops::reduce(ReduceOp::Mean, x, {}, false), {}, {kNaN});
  check(ops::reduce(ReduceOp::Max, x, {1}, false), {0}, {});  // nothing to reduce per output
  check(ops::argmax(x, 1, false), {0}, {});
  check(ops::reduce(ReduceOp::Sum, empty({0}, kInt32), {}, false), {}, {0});
  for (const auto& dims : std::vector<std::vector<std::int64_t>>{{}, {0}, {0, 1}}) {
    try {
      ops::reduce(ReduceOp::Max, x, dims, false);
      ADD_FAILURE() << "max over a zero-size dimension did not throw";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("max: cannot reduce over a zero-size dimension"),
                std::string::npos)
          << e.message();
    }
  }
  EXPECT_THROW(ops::argmax(x, 0, false), Error);
  EXPECT_THROW(ops::argmax(x, std::nullopt, false), Error);
}

// ---- NaN, infinities, ties -------------------------------------------------------------------

TEST(Reduce, MaxPropagatesNaN) {
  const Tensor x = make_tensor({1, kNaN, 3, -kInf, -kInf, -kInf, 2, 5, kNaN}, {3, 3}, kFloat32);
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Max, x, {1}, false), {kNaN, -kInf, kNaN}, 0, 0));
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Max, x, {0}, false), {2, kNaN, kNaN}, 0, 0));
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Max, x, {}, false), {kNaN}, 0, 0));
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Sum, x, {1}, false), {kNaN, -kInf, kNaN}, 0, 0));
}

TEST(Reduce, ArgmaxNaNCountsAsMaximumAndTiesTakeTheFirst) {
  const Tensor x = make_tensor({1, kNaN, 3, kNaN,            //
                                -kInf, -kInf, -kInf, -kInf,  //
                                2, 7, 7, 1,                  //
                                5, 5, 5, 5},
                               {4, 4}, kFloat32);
  EXPECT_TRUE(all_close(ops::argmax(x, 1, false), {1, 0, 1, 0}, 0, 0));
  EXPECT_TRUE(all_close(ops::argmax(x, 0, false), {3, 0, 2, 0}, 0, 0));
  EXPECT_TRUE(all_close(ops::argmax(x, std::nullopt, false), {1}, 0, 0));
  const Tensor ints = make_tensor({3, 9, 9, 2, 9}, {5}, kInt32);
  EXPECT_TRUE(all_close(ops::argmax(ints, std::nullopt, false), {1}, 0, 0));
  const Tensor bools = make_tensor({0, 0, 1, 1}, {4}, kBool);
  EXPECT_TRUE(all_close(ops::argmax(bools, 0, false), {2}, 0, 0));
}

TEST(Reduce, ArgmaxShapesAndDtypes) {
  for (DType dtype : kAllDTypes) {
    const Tensor x = make_tensor(exact_values(3 * 4 * 5, dtype, 4), {3, 4, 5}, dtype);
    for (std::int64_t d = -3; d < 3; ++d) {
      for (bool keepdim : {false, true})
        expect_argmax_matches(x, d, keepdim);
    }
    expect_argmax_matches(x, std::nullopt, false);
    expect_argmax_matches(x, std::nullopt, true);  // shape (1, 1, 1)
  }
}

// ---- Long runs: accuracy, chunked paths, determinism ------------------------------------------

TEST(Reduce, LongFloat32SumIsAccurate) {
  constexpr std::int64_t n = 10'000'000;
  Tensor x = full({n}, 0.1, kFloat32);
  const double exact = static_cast<double>(0.1f) * static_cast<double>(n);
  const double sum = ops::reduce(ReduceOp::Sum, x, {}, false).item<double>();
  EXPECT_NEAR(sum, exact, 1e-5 * exact);  // naive float accumulation gives ~1.09e6
  const double mean = ops::reduce(ReduceOp::Mean, x, {}, false).item<double>();
  EXPECT_NEAR(mean, static_cast<double>(0.1f), 1e-5 * 0.1);
  // Two long rows, split into chunks across threads.
  const Tensor rows = views::view(x, {2, n / 2});
  const Tensor row_sums = ops::reduce(ReduceOp::Sum, rows, {1}, false);
  EXPECT_TRUE(all_close(row_sums, {exact / 2, exact / 2}, 1e-5, 0));
}

TEST(Reduce, LongColumnsMatchReference) {
  // Sum over dim 0 of a tall contiguous matrix: the column layout, rows split in chunks.
  const std::int64_t rows = 100'003, cols = 70;
  std::vector<double> values = random_values(rows * cols, 9);
  values[40'000 * cols + 3] = 100;
  values[90'000 * cols + 5] = kNaN;
  const Tensor x = make_tensor(values, {rows, cols}, kFloat32);
  values = to_vector(x);
  for (ReduceOp op : kReduceOps) {
    SCOPED_TRACE(op_name(op));
    const Expected e = reference_reduce(op, values, {rows, cols}, {0}, false);
    EXPECT_TRUE(all_close(ops::reduce(op, x, {0}, false), e.values, 1e-5, 1e-3));
  }
  const Tensor x3 = views::view(x, {rows, 7, 10});  // (outer 1, R, inner 70) over dims {0}
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Max, x3, {0}, false),
                        reference_reduce(ReduceOp::Max, values, {rows, 7, 10}, {0}, false).values,
                        0, 0));
}

TEST(Reduce, LongRunsMatchReference) {
  // Runs longer than one parallel chunk (32768 elements), not a multiple of it, few outputs.
  const std::int64_t rows = 3, cols = 100'003;
  std::vector<double> values = random_values(rows * cols, 5);
  values[1 * cols + 40'000] = 100;  // the maximum of row 1, tied later on
  values[1 * cols + 70'000] = 100;
  values[2 * cols + 90'000] = kNaN;  // row 2: NaN late in the run
  const Tensor x = make_tensor(values, {rows, cols}, kFloat32);
  values = to_vector(x);  // as stored: rounded to float32
  const Expected sum = reference_reduce(ReduceOp::Sum, values, {rows, cols}, {1}, false);
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Sum, x, {1}, false), sum.values, 1e-5, 1e-3));
  EXPECT_TRUE(all_close(ops::reduce(ReduceOp::Max, x, {1}, false),
                        reference_reduce(ReduceOp::Max, values, {rows, cols}, {1}, false).values, 0,
                        0));
  const Tensor idx = ops::argmax(x, 1, false);
  const std::vector<double> got = to_vector(idx);
  EXPECT_EQ(got[1], 40'000);
  EXPECT_EQ(got[2], 90'000);
  EXPECT_TRUE(all_close(idx, reference_argmax(values, {rows, cols}, {1}, false).values, 0, 0));
}

// Note [Pairwise summation]'s order written as its definition, a recursion, in Acc: leaves of
// 128 elements whose element i goes to accumulator i % (4 * lanes), four accumulators added
// (a0 + a1) + (a2 + a3) lane by lane; a longer range cut at the largest power-of-two multiple
// of 128 below its length and its halves added lane by lane; the root's lanes added pairwise,
// neighbours first. Lanes: 32 bytes of Acc.
template <typename Acc>
std::vector<Acc> reference_lanes(const Acc* x, std::int64_t n) {
  constexpr std::int64_t kLeaf = 128, kLanes = 32 / sizeof(Acc);
  std::vector<Acc> out(kLanes, Acc(0));
  if (n <= kLeaf) {
    std::vector<Acc> acc(4 * kLanes, Acc(0));
    for (std::int64_t i = 0; i < n; ++i)
      acc[i % (4 * kLanes)] += x[i];
    for (std::int64_t l = 0; l < kLanes; ++l)
      out[l] = (acc[l] + acc[l + kLanes]) + (acc[l + 2 * kLanes] + acc[l + 3 * kLanes]);
    return out;
  }
  std::int64_t h = kLeaf;
  while (2 * h < n)
    h *= 2;
  const std::vector<Acc> left = reference_lanes(x, h), right = reference_lanes(x + h, n - h);
  for (std::int64_t l = 0; l < kLanes; ++l)
    out[l] = left[l] + right[l];
  return out;
}

template <typename Acc>
Acc reference_pairwise_sum(const Acc* x, std::int64_t n) {
  std::vector<Acc> lanes = reference_lanes(x, n);
  for (std::size_t width = lanes.size() / 2; width >= 1; width /= 2)
    for (std::size_t l = 0; l < width; ++l)
      lanes[l] = lanes[2 * l] + lanes[2 * l + 1];
  return lanes[0];
}

// The kernel's sums of runs are that order's bits, for runs of every length around the leaf,
// the lanes and the binary counter's carries, at one thread and at two (where a long run is
// cut into chunks whose partials merge above them), in float32 and float64. Values of mixed
// magnitudes, so that another association of the same numbers would round differently.
TEST(Reduce, SumsFollowThePairwiseTreeOfLanes) {
  const int saved_threads = get_num_threads();
  std::mt19937 rng(41);
  std::vector<std::int64_t> lengths;
  for (std::int64_t n = 0; n <= 1100; ++n)
    lengths.push_back(n);
  for (std::int64_t n : {2047, 2048, 2049, 7 * 128 - 5, 15 * 128 + 1, 32768 + 3, 3 * 32768 + 129})
    lengths.push_back(n);
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    for (std::int64_t n : lengths) {
      std::vector<double> values(static_cast<std::size_t>(n));
      std::uniform_real_distribution<double> unit(-1.0, 1.0);
      for (double& v : values)
        v = std::ldexp(unit(rng), static_cast<int>(rng() % 40) - 20);
      const Tensor x = make_tensor(values, {1, n}, dtype);
      double want = 0;
      if (dtype == kFloat32) {
        want = reference_pairwise_sum(x.data_ptr<float>(), n);
      } else {
        want = reference_pairwise_sum(x.data_ptr<double>(), n);
      }
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const double got = ops::reduce(ReduceOp::Sum, x, {1}, false).to(kFloat64).item<double>();
        ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want))
            << "n " << n << " threads " << threads << ": " << got << " vs " << want;
      }
    }
  }
  set_num_threads(saved_threads);
}

// One floating dtype's elements as bits (Bits), their exact values, and what a maximum stores:
// the element widened to the type the kernel compares in and rounded back (a 16-bit NaN's payload
// does not survive core/half.h's narrowing, as it does not survive the kernel's).
template <typename Bits>
struct FloatBits {
  DType dtype;
  double (*value)(Bits);
  Bits (*stored)(Bits);
  Bits (*of)(double);      // an exactly representable value's bits
  std::vector<Bits> nans;  // distinct NaNs, both signs, some with payloads
};

const FloatBits<std::uint64_t> kFloat64Bits = {
    kFloat64,
    [](std::uint64_t b) { return std::bit_cast<double>(b); },
    [](std::uint64_t b) { return b; },
    [](double v) { return std::bit_cast<std::uint64_t>(v); },
    {0x7ff8000000000000u, 0xfff8000000000003u, 0x7ff8000000000011u, 0x7ff0000000000001u}};
const FloatBits<std::uint32_t> kFloat32Bits = {
    kFloat32,
    [](std::uint32_t b) { return static_cast<double>(std::bit_cast<float>(b)); },
    [](std::uint32_t b) { return b; },
    [](double v) { return std::bit_cast<std::uint32_t>(static_cast<float>(v)); },
    {0x7fc00000u, 0xffc00003u, 0x7fc00011u, 0x7f800001u}};
const FloatBits<std::uint16_t> kFloat16Bits = {
    kFloat16,
    [](std::uint16_t b) { return static_cast<double>(detail::half_bits_to_float(b)); },
    [](std::uint16_t b) { return detail::float_to_half_bits(detail::half_bits_to_float(b)); },
    [](double v) { return detail::float_to_half_bits(static_cast<float>(v)); },
    {0x7e00u, 0xfe03u, 0x7e11u}};
const FloatBits<std::uint16_t> kBFloat16Bits = {
    kBFloat16,
    [](std::uint16_t b) { return static_cast<double>(detail::bfloat16_bits_to_float(b)); },
    [](std::uint16_t b) {
      return detail::float_to_bfloat16_bits(detail::bfloat16_bits_to_float(b));
    },
    [](double v) { return detail::float_to_bfloat16_bits(static_cast<float>(v)); },
    {0x7fc0u, 0xffc3u, 0x7fd1u}};

// Note [Maxima in lanes] (kernels/cpu/reduce.cpp): the maximum of each row has the bits the one
// loop `best = (isnan(v) || v > best) ? v : best` gives (the first of equal zeros, the last NaN),
// and argmax its first index (the first NaN), on rows of every length around the lanes' 32 and
// one longer than a parallel chunk, whose maximum tied zero or NaN each take every position
// class: ties of the maximum, zeros of both signs as the maximum, NaNs with payloads, all equal.
// The minimum likewise (v < best), over the same rows mirrored.
template <typename Bits>
void expect_maxima_of_the_one_loop(const FloatBits<Bits>& f, ReduceOp op) {
  SCOPED_TRACE(std::string(dtype_name(f.dtype)) + " " + op_name(op));
  const double sign = op == ReduceOp::Max ? 1.0 : -1.0;  // min: each case mirrored
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> sixty_fourths(-128, 127);
  for (std::int64_t n : {1, 2, 31, 32, 33, 64, 95, 513, 1000, 70'001}) {
    const std::int64_t rows = n > 1000 ? 4 : 24;
    std::vector<Bits> bits(static_cast<std::size_t>(rows * n));
    for (std::int64_t r = 0; r < rows; ++r) {
      Bits* row = bits.data() + r * n;
      const auto anywhere = [&] {
        return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
      };
      for (std::int64_t i = 0; i < n; ++i)  // multiples of 1/64 in [-2, 2): exact in every dtype
        row[i] = f.of(sixty_fourths(rng) / 64.0);
      switch (r % 4) {
        case 0:  // the maximum, 3, at up to three places (the minimum, -3)
          for (int k = 0; k < 3; ++k)
            row[anywhere()] = f.of(sign * 3.0);
          break;
        case 1:  // every element negative (positive) but zeros of either sign
          for (std::int64_t i = 0; i < n; ++i)
            row[i] = f.of(sign * (-std::abs(f.value(row[i])) - 1.0));
          for (int k = 0; k < 4; ++k)
            row[anywhere()] = f.of(rng() % 2 ? 0.0 : -0.0);
          break;
        case 2:  // NaNs with their own bits
          for (Bits nan : f.nans)
            row[anywhere()] = nan;
          break;
        default:  // every element equal
          std::fill(row, row + n, f.of(r % 8 == 3 ? -0.0 : 0.5));
      }
    }
    Tensor x = empty({rows, n}, f.dtype);
    std::memcpy(x.data_ptr(), bits.data(), bits.size() * sizeof(Bits));
    const Tensor maxima = ops::reduce(op, x, {1}, false);
    const Tensor argmaxima = ops::argmax(x, 1, false);
    const Tensor whole_max = ops::reduce(op, x.select(0, 0), {}, false);
    for (std::int64_t r = 0; r < rows; ++r) {
      SCOPED_TRACE("length " + std::to_string(n) + ", row " + std::to_string(r));
      const Bits* row = bits.data() + r * n;
      std::int64_t best = -1;  // the one loop, in double, which holds every value exactly
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = f.value(row[i]);
        if (best < 0 || std::isnan(v) || sign * v > sign * f.value(row[best])) best = i;
      }
      std::int64_t first = 0;  // argmax: the first NaN, else the first element equal to the best
      const double top = f.value(row[best]);
      while (!(std::isnan(top) ? std::isnan(f.value(row[first])) : f.value(row[first]) == top))
        ++first;
      Bits got;
      std::memcpy(&got, static_cast<const char*>(maxima.data_ptr()) + r * sizeof(Bits),
                  sizeof(Bits));
      EXPECT_EQ(got, f.stored(row[best]));
      if (op == ReduceOp::Max) {
        EXPECT_EQ(argmaxima.data_ptr<std::int64_t>()[r], first);
      }
      if (r == 0) {
        std::memcpy(&got, whole_max.data_ptr(), sizeof(Bits));
        EXPECT_EQ(got, f.stored(row[best]));
      }
    }
  }
}

TEST(Reduce, MaximaInLanesGiveTheOneLoopsBits) {
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    expect_maxima_of_the_one_loop(kFloat32Bits, op);
    expect_maxima_of_the_one_loop(kFloat64Bits, op);
    expect_maxima_of_the_one_loop(kFloat16Bits, op);
    expect_maxima_of_the_one_loop(kBFloat16Bits, op);
  }
}

TEST(Reduce, ResultsDoNotDependOnTheThreadCount) {
  const int saved_threads = get_num_threads();
  const std::int64_t n = 3 * (1 << 20) + 17;
  const Tensor x = make_tensor(random_values(n, 6, -1, 1), {n}, kFloat32);
  const Tensor h = make_tensor(random_values(n, 7, -1, 1), {n}, kFloat16);
  struct Case {
    const Tensor* input;
    Shape shape;
    std::vector<std::int64_t> dims;
  };
  const std::vector<Case> cases = {
      {&x, {n}, {}},                 // one output: chunks across threads
      {&x, {1, n}, {1}},             // same, through a dim
      {&h, {n}, {}},                 // float16 input, float accumulation
      {&x, {n / 64, 64}, {1}},       // many short runs: split over outputs
      {&x, {64, n / 64}, {0}},       // reduce the leading dim: columns, split over columns
      {&x, {n / 64, 64}, {0}},       // few long columns: chunks of rows across threads
      {&x, {n / 64, 64}, {0, 1}},    // all dims
      {&h, {64, 16, 3072}, {0, 2}},  // float16 in stages, float32 partials
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("shape " + shape_str(c.shape) + " dims " + shape_str(c.dims));
    const std::int64_t used = numel_of(c.shape);
    const Tensor in = views::view(views::slice(*c.input, 0, 0, used, 1), c.shape);
    std::vector<std::vector<unsigned char>> results[2];
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto& r = results[threads - 1];
      for (ReduceOp op : kReduceOps)
        r.push_back(bytes_of(ops::reduce(op, in, c.dims, false)));
      if (c.dims.size() == 1) r.push_back(bytes_of(ops::argmax(in, c.dims[0], false)));
    }
    set_num_threads(saved_threads);
    EXPECT_EQ(results[0], results[1]);
  }
}

// ---- Bad input -------------------------------------------------------------------------------

TEST(Reduce, BadDimsAreShapeErrorsNamingDimAndShape) {
  const Tensor x = empty({2, 3}, kFloat32);
  for (ReduceOp op : kReduceOps) {
    try {
      ops::reduce(op, x, {2}, false);
      ADD_FAILURE() << "out-of-range dim did not throw";
    } catch (const ShapeError& e) {
      EXPECT_NE(e.message().find("dim 2"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("[2, 3]"), std::string::npos) << e.message();
      EXPECT_EQ(e.message().rfind(op_name(op), 0), 0u) << e.message();
    }
    EXPECT_THROW(ops::reduce(op, x, {-3}, false), ShapeError);
    EXPECT_THROW(ops::reduce(op, x, {1, 1}, false), ShapeError);   // repeated
    EXPECT_THROW(ops::reduce(op, x, {0, -2}, false), ShapeError);  // repeated after wrapping
    EXPECT_THROW(ops::reduce(op, Tensor(), {}, false), Error);
  }
  try {
    ops::argmax(x, -3, false);
    ADD_FAILURE() << "out-of-range dim did not throw";
  } catch (const ShapeError& e) {
    EXPECT_NE(e.message().find("dim -3"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[2, 3]"), std::string::npos) << e.message();
  }
  EXPECT_THROW(ops::argmax(Tensor(), std::nullopt, false), Error);
}

// The launchers write float32 only for Sum and Mean of 16-bit floats (the staged partials); any
// other out_dtype is refused with the op and both dtypes named, before anything is written.
TEST(Reduce, LauncherOutDtypes) {
  // Every value and every float32 result exact; bfloat16 (8 significant bits) would round
  // 1 + 2^-8 to 1 and 4 + 2^-8 to 4.
  const Tensor x = make_tensor({1, 0.00390625, -0.5, 4}, {2, 2}, kBFloat16);
  float out[2] = {-1, -1};
  kernels::cpu::reduce(ReduceOp::Sum, kBFloat16, kFloat32, out, x.data_ptr(), 2, 2, 1);
  EXPECT_EQ(out[0], 1.00390625f);
  EXPECT_EQ(out[1], 3.5f);
  kernels::cpu::reduce(ReduceOp::Mean, kBFloat16, kFloat32, out, x.data_ptr(), 1, 2, 2);
  EXPECT_EQ(out[0], 0.25f);
  EXPECT_EQ(out[1], 2.001953125f);
  const Tensor f = make_tensor({1, 2}, {2}, kFloat32);
  double wide = 0;
  struct Bad {
    ReduceOp op;
    DType in, out;
    const void* data;
  };
  for (const Bad& b : {Bad{ReduceOp::Max, kBFloat16, kFloat32, x.data_ptr()},
                       Bad{ReduceOp::Sum, kFloat32, kFloat64, f.data_ptr()},
                       Bad{ReduceOp::Mean, kBFloat16, kFloat64, x.data_ptr()}}) {
    try {
      kernels::cpu::reduce(b.op, b.in, b.out, &wide, b.data, 1, 2, 1);
      ADD_FAILURE() << op_name(b.op) << " wrote " << dtype_name(b.out) << " from "
                    << dtype_name(b.in);
    } catch (const DTypeError& e) {
      EXPECT_EQ(e.message().rfind(op_name(b.op), 0), 0u) << e.message();
      EXPECT_NE(e.message().find(dtype_name(b.in)), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(dtype_name(b.out)), std::string::npos) << e.message();
    }
    EXPECT_EQ(wide, 0);
  }
}

// ---- CUDA against the CPU --------------------------------------------------------------------

TEST(Reduce, CudaMatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    Shape shape;
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> perm = {};  // a permute of the contiguous tensor, if any
    Shape expanded = {};                  // the contiguous tensor expanded to it, if any
  };
  const std::vector<Case> cases = {
      {{2, 3, 5}, {}},
      {{2, 3, 5}, {1}},
      {{2, 3, 5}, {0, 2}},
      {{1000, 7}, {1}},
      {{7, 1000}, {1}},
      {{300, 5000}, {1}},  // thread / block per run
      {{3, 100'003}, {1}},
      {{1 << 22}, {}},
      {{1 << 20, 3}, {0}},  // split runs
      {{5000, 300}, {0}},
      {{3, 1000, 7}, {1}},
      {{100'003, 3}, {0}},  // columns
      {{0, 3}, {0}},
      {{}, {}},
      {{8, 16, 9, 9}, {0, 2, 3}},     // separated runs: reduced in stages
      {{4, 3, 130, 130}, {0, 2, 3}},  // stages: runs of 16900 > one block's segment
      {{64, 6, 300, 5}, {0, 2}},      // stages: columns of 300 > one thread's segment
      // Note [Dense inputs in memory order]: reduced through the memory-order view, no copy
      {{40, 50}, {1}, {1, 0}},
      {{6, 40, 50}, {}, {2, 1, 0}},
      {{6, 40, 50}, {2}, {2, 1, 0}},             // the kept dims would swap: copied
      {{8, 9, 9, 16}, {0, 2, 3}, {0, 3, 1, 2}},  // NHWC seen as NCHW
      // Note [Broadcast dims of a reduction]: kept broadcast dims reduced at index 0
      {{1, 3000}, {1}, {}, {2000, 3000}},
      {{300, 1}, {0}, {}, {300, 400}},
      {{3, 1, 7}, {0, 2}, {}, {3, 5, 7}},
      // and reduced ones (a sum multiplied by their sizes; a product multiplies every copy)
      {{3, 1, 7}, {1}, {}, {3, 5, 7}},
      {{1, 3000}, {0}, {}, {2000, 3000}},
      {{1, 3000}, {}, {}, {2000, 3000}},
  };
  for (DType dtype : kAllDTypes) {
    for (const Case& c : cases) {
      const std::int64_t source_numel = numel_of(c.shape);
      const Tensor dense = make_tensor(is_floating(dtype) ? random_values(source_numel, 8, -2, 2)
                                                          : exact_values(source_numel, dtype, 8),
                                       c.shape, dtype);
      const auto view = [&](const Tensor& t) {
        if (!c.expanded.empty()) return views::expand(t, c.expanded);
        return c.perm.empty() ? t : views::permute(t, c.perm);
      };
      const Tensor x = view(dense);
      const Tensor xc = view(dense.to(Device::cuda()));
      const std::int64_t n = x.numel();
      for (ReduceOp op : kReduceOps) {
        if (op == ReduceOp::Mean && !is_floating(dtype)) continue;
        if ((op == ReduceOp::Max || op == ReduceOp::Min) && n == 0) continue;
        SCOPED_TRACE(std::string(op_name(op)) + " " + dtype_name(dtype) + " " + shape_str(c.shape) +
                     " permuted " + shape_str(c.perm) + " expanded " + shape_str(c.expanded) +
                     " dims " + shape_str(c.dims));
        const Tensor expected = ops::reduce(op, x, c.dims, false);
        const Tensor got = ops::reduce(op, xc, c.dims, false);
        EXPECT_EQ(got.shape(), expected.shape());
        EXPECT_EQ(got.dtype(), expected.dtype());
        // The GPU adds in a different order: allow for rounding growing with the run length in a
        // sum, that bound over the run in a mean. A maximum is one of the values: exact.
        const double run = static_cast<double>(n) / std::max<double>(1, expected.numel());
        const double sum_atol = 1e-4 + 1e-6 * run;
        double rtol = dtype == kFloat32 ? 1e-5 : test::tolerance_for(got.dtype()).rtol;
        double atol = 0;
        if (op == ReduceOp::Max || op == ReduceOp::Min) {
          rtol = 0;
        } else if (is_floating(dtype)) {
          atol = op == ReduceOp::Sum ? sum_atol : sum_atol / std::max(1.0, run);
        }
        EXPECT_TRUE(all_close(got, to_vector(expected), rtol, atol));
      }
      if (n > 0 && c.dims.size() <= 1) {
        const std::optional<std::int64_t> dim =
            c.dims.empty() ? std::nullopt : std::optional<std::int64_t>(c.dims[0]);
        EXPECT_TRUE(
            all_close(ops::argmax(xc, dim, false), to_vector(ops::argmax(x, dim, false)), 0, 0));
      }
    }
  }
}

// Float16 and bfloat16 sums and means over separated dims on the GPU: the first stage's kernels
// read 16-bit input and write float32 partials (the thread-, block- and column-per-output kernels
// and their segmented forms), later stages add float32, one rounding at the end. Against the
// float64 reference within the bound of that arithmetic (expect_sixteen_bit_sum_within_bound),
// and with no temporary of the input's size on the device.
TEST(Reduce, CudaSixteenBitStagesStayInFloat32) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    Shape shape;
    std::vector<std::int64_t> dims;
  };
  const std::vector<Case> cases = {
      {{8, 16, 3, 3}, {0, 2, 3}},     // runs of 9: a thread per output
      {{8, 16, 9, 9}, {0, 2, 3}},     // runs of 81: a block per output
      {{4, 3, 130, 130}, {0, 2, 3}},  // runs of 16900: segments, then a second pass
      {{64, 6, 300, 5}, {0, 2}},      // columns of 300 rows: segments, then a second pass
      {{6, 20, 7, 50}, {1, 3}},
  };
  const Device gpu = Device::cuda();
  for (DType dtype : {kFloat16, kBFloat16}) {
    for (const Case& c : cases) {
      const Tensor x = make_tensor(random_values(numel_of(c.shape), 14), c.shape, dtype).to(gpu);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean})
        expect_sixteen_bit_sum_within_bound(op, x, c.dims, false);
      // The permuting copy would add the input's size; the partials are hundreds of times
      // smaller (each allocation rounds up to 512 bytes: inputs under 16 KiB tell nothing).
      if (x.nbytes() < 16 * 1024) continue;
      const std::int64_t before = memory::stats(gpu).allocated;
      memory::reset_peak(gpu);
      const Tensor y = ops::reduce(ReduceOp::Sum, x, c.dims, false);
      cuda::synchronize();
      const std::int64_t extra = memory::stats(gpu).peak_allocated - before;
      EXPECT_LT(extra, static_cast<std::int64_t>(x.nbytes()) / 8)
          << dtype_name(dtype) << " " << shape_str(c.shape) << ": peak grew by " << extra
          << " bytes for an input of " << x.nbytes();
    }
  }
}

}  // namespace
}  // namespace leangrad
