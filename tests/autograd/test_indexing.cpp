// Tests of the indexing and splitting functions (autograd/indexing_functions.h): index_select,
// gather and scatter_add against reference loops written here (every dtype, strided inputs,
// repeated indices, a 0-d input) and against PyTorch's values (tests/data/indexing.json), their
// first and second derivatives by finite differences, scatter_add's sums the same on any number
// of threads; narrow, split, split_with_sizes, chunk and unbind as torch's. Their errors are the
// misuse suite's (tests/misuse/test_misuse_indexing.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad {
namespace {

using test::all_close;
using test::gradcheck;
using test::gradgradcheck;
using test::make_tensor;
using test::to_vector;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// ---- Reference loops over row-major multi-indices --------------------------------------------

std::vector<std::int64_t> unravel(std::int64_t k, const Shape& shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = k % shape[d];
    k /= shape[d];
  }
  return c;
}

std::int64_t ravel(const std::vector<std::int64_t>& c, const Shape& shape) {
  std::int64_t k = 0;
  for (std::size_t d = 0; d < shape.size(); ++d)
    k = k * shape[d] + c[d];
  return k;
}

std::vector<double> reference_index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  const std::vector<double> xv = to_vector(x), iv = to_vector(index);
  Shape out_shape = x.shape();
  out_shape[dim] = index.numel();
  std::vector<double> out(shape_numel(out_shape));
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<std::int64_t> c = unravel(static_cast<std::int64_t>(k), out_shape);
    c[dim] = static_cast<std::int64_t>(iv[c[dim]]);
    out[k] = xv[ravel(c, x.shape())];
  }
  return out;
}

std::vector<double> reference_gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  const std::vector<double> xv = to_vector(x), iv = to_vector(index);
  std::vector<double> out(iv.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<std::int64_t> c = unravel(static_cast<std::int64_t>(k), index.shape());
    c[dim] = static_cast<std::int64_t>(iv[k]);
    out[k] = xv[ravel(c, x.shape())];
  }
  return out;
}

std::vector<double> reference_scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index,
                                          const Tensor& src) {
  std::vector<double> out = to_vector(x);
  const std::vector<double> iv = to_vector(index), sv = to_vector(src);
  for (std::size_t k = 0; k < iv.size(); ++k) {
    std::vector<std::int64_t> c = unravel(static_cast<std::int64_t>(k), index.shape());
    const double value = sv[ravel(c, src.shape())];
    c[dim] = static_cast<std::int64_t>(iv[k]);
    out[ravel(c, x.shape())] += value;
  }
  return out;
}

// Small integers (exact in every dtype, and so are their sums here): the kernels' results must
// equal the reference loops' exactly. uint8 takes the non-negative ones (a negative double
// converted to an unsigned type is undefined).
Tensor small_integers(const Shape& shape, DType dtype, std::uint64_t seed, int low = -8,
                      int high = 8) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(dtype == kUInt8 ? std::max(low, 0) : low, high);
  std::vector<double> v(shape_numel(shape));
  for (double& e : v)
    e = dtype == kBool ? static_cast<double>(dist(rng) > 0) : dist(rng);
  return make_tensor(v, shape, dtype);
}

Tensor indices(const Shape& shape, std::int64_t bound, std::uint64_t seed, DType dtype = kInt64) {
  return small_integers(shape, dtype, seed, 0, static_cast<int>(bound) - 1);
}

constexpr DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16,
                                kInt64,   kInt32,   kUInt8,   kBool};

// ---- index_select ----------------------------------------------------------------------------

TEST(IndexSelect, EveryDimAndDTypeAsTheReferenceLoop) {
  for (DType dtype : kAllDTypes) {
    const Tensor x = small_integers({4, 5, 3}, dtype, 1);
    for (std::int64_t dim = 0; dim < 3; ++dim) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim " + std::to_string(dim));
      // Repeated and reordered indices, more than the dim's size.
      const Tensor index = indices({7}, x.size(dim), 10 + dim);
      const Tensor y = index_select(x, dim, index);
      Shape want = x.shape();
      want[dim] = 7;
      EXPECT_EQ(y.shape(), want);
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(to_vector(y), reference_index_select(x, dim, index));
      EXPECT_EQ(to_vector(index_select(x, dim - 3, index)), to_vector(y));
    }
  }
}

TEST(IndexSelect, StridedInputInt32And0dIndex) {
  const Tensor x = small_integers({6, 4}, kFloat32, 2).t();  // (4, 6), strides (1, 4)
  const Tensor index = indices({5}, 6, 3, kInt32);
  EXPECT_EQ(to_vector(x.index_select(1, index)), reference_index_select(x, 1, index.to(kInt64)));
  // A 0-d index keeps the dim, of size 1 (as torch's).
  const Tensor one = make_tensor({2}, {}, kInt64);
  const Tensor y = index_select(x, 0, one);
  EXPECT_EQ(y.shape(), Shape({1, 6}));
  EXPECT_EQ(to_vector(y), to_vector(x.select(0, 2)));
  // A 0-d input takes one index.
  const Tensor s = make_tensor({3.5}, {});
  EXPECT_EQ(to_vector(index_select(s, 0, make_tensor({0}, {1}, kInt64))), std::vector<double>{3.5});
  // No indices: an empty result.
  EXPECT_EQ(index_select(x, 1, make_tensor({}, {0}, kInt64)).shape(), Shape({4, 0}));
}

TEST(IndexSelect, GradientsTwice) {
  const Tensor x = uniform_input({4, 5, 3}, -1, 1, 21);
  const Tensor index = make_tensor({4, 0, 4, 2, 4}, {5}, kInt64);
  for (std::int64_t dim : {0, 1, 2}) {
    const Tensor idx = dim == 2 ? make_tensor({2, 0, 2}, {3}, kInt64)
                                : (dim == 0 ? make_tensor({3, 3, 1}, {3}, kInt64) : index);
    const auto fn = [dim, idx](const Inputs& in) { return index_select(in[0], dim, idx); };
    EXPECT_TRUE(gradcheck(fn, {x})) << "dim " << dim;
    // Cubed, so that the first derivative's upstream gradient depends on x and the second
    // goes through the recorded backward's own backward (the op is linear).
    const auto cubed = [fn](const Inputs& in) { return fn(in).pow(3.0); };
    EXPECT_TRUE(gradgradcheck(cubed, {x})) << "dim " << dim;
  }
}

// ---- gather ----------------------------------------------------------------------------------

TEST(Gather, EveryDimAndDTypeAsTheReferenceLoop) {
  for (DType dtype : kAllDTypes) {
    const Tensor x = small_integers({4, 5, 3}, dtype, 4);
    for (std::int64_t dim = 0; dim < 3; ++dim) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim " + std::to_string(dim));
      // The index is smaller than x in the other dims and larger in dim.
      Shape index_shape = {3, 4, 2};
      index_shape[dim] = 6;
      const Tensor index = indices(index_shape, x.size(dim), 20 + dim);
      const Tensor y = x.gather(dim, index);
      EXPECT_EQ(y.shape(), index_shape);
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(to_vector(y), reference_gather(x, dim, index));
    }
  }
}

TEST(Gather, ReadsViewsThroughTheirStrides) {
  const Tensor base = small_integers({5, 6}, kFloat32, 5);
  const Tensor transposed = base.t();                                     // (6, 5)
  const Tensor sliced = base.slice(1, 1, 6, 2);                           // (5, 3)
  const Tensor expanded = make_tensor({1, 2, 3}, {3, 1}).expand({3, 4});  // stride 0
  for (const Tensor& x : {transposed, sliced, expanded}) {
    SCOPED_TRACE(::testing::PrintToString(x.shape()));
    for (std::int64_t dim : {0, 1}) {
      const Tensor index = indices({x.size(0), x.size(1)}, x.size(dim), 30 + dim);
      EXPECT_EQ(to_vector(gather(x, dim, index)), reference_gather(x, dim, index));
    }
  }
  // 0-d: the input and the index.
  const Tensor s = make_tensor({2.5}, {});
  EXPECT_EQ(to_vector(gather(s, 0, make_tensor({0}, {}, kInt64))), std::vector<double>{2.5});
  EXPECT_EQ(gather(make_tensor({1, 2}, {2}), 0, make_tensor({1}, {}, kInt64)).dim(), 0);
}

TEST(Gather, GradientsTwice) {
  const Tensor x = uniform_input({3, 4, 5}, -1, 1, 41);
  for (std::int64_t dim : {0, 1, 2}) {
    Shape index_shape = {2, 3, 4};
    index_shape[dim] = 7;  // every position picked about twice: the backward sums
    const Tensor index = indices(index_shape, x.size(dim), 50 + dim);
    const auto fn = [dim, index](const Inputs& in) { return gather(in[0], dim, index); };
    EXPECT_TRUE(gradcheck(fn, {x})) << "dim " << dim;
    const auto cubed = [fn](const Inputs& in) { return fn(in).pow(3.0); };  // as index_select's
    EXPECT_TRUE(gradgradcheck(cubed, {x})) << "dim " << dim;
  }
}

// ---- scatter_add -----------------------------------------------------------------------------

TEST(ScatterAdd, EveryDimAndDTypeAsTheReferenceLoop) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32}) {
    const Tensor x = small_integers({4, 5, 3}, dtype, 6);
    for (std::int64_t dim = 0; dim < 3; ++dim) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim " + std::to_string(dim));
      Shape index_shape = {3, 4, 2};
      index_shape[dim] = 9;
      const Tensor index = indices(index_shape, x.size(dim), 60 + dim);
      // src larger than the index in every dim: its other elements are not read.
      const Tensor src = small_integers({10, 10, 10}, dtype, 70 + dim);
      const Tensor y = x.scatter_add(dim, index, src);
      EXPECT_EQ(y.shape(), x.shape());
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(to_vector(y), reference_scatter_add(x, dim, index, src));
    }
  }
  // A 0-d index takes src's first element (as torch's; its gradient there, which torch 1.13
  // cannot take, and 0 for the rest).
  const Tensor src1 = make_tensor({7, 8}, {2}, kFloat64).requires_grad_();
  const Tensor y0 = scatter_add(zeros({3}, kFloat64), 0, make_tensor({2}, {}, kInt64), src1);
  EXPECT_EQ(to_vector(y0), (std::vector<double>{0, 0, 7}));
  y0.backward(make_tensor({1, 2, 3}, {3}, kFloat64));
  EXPECT_EQ(to_vector(src1.grad()), (std::vector<double>{3, 0}));
  EXPECT_EQ(to_vector(scatter_add(make_tensor({1}, {}), 0, make_tensor({0}, {1}, kInt64),
                                  make_tensor({5}, {}))),
            std::vector<double>{6});
  // The input is left as it was.
  const Tensor x = make_tensor({1, 2, 3}, {3});
  const Tensor y = scatter_add(x, 0, make_tensor({2, 2}, {2}, kInt64), make_tensor({5, 7}, {2}));
  EXPECT_EQ(to_vector(y), (std::vector<double>{1, 2, 15}));
  EXPECT_EQ(to_vector(x), (std::vector<double>{1, 2, 3}));
}

TEST(ScatterAdd, IntegersWrapAround) {
  const Tensor x = make_tensor({2147483647.0}, {1}, kInt32);
  const Tensor y = scatter_add(x, 0, make_tensor({0}, {1}, kInt64), make_tensor({1}, {1}, kInt32));
  EXPECT_EQ(to_vector(y), std::vector<double>{-2147483648.0});
}

// Each element's additions are made in index order on any number of threads (Note [Gather lines]
// in kernels/gather_geometry.h): the same bits at 1 and 3 threads, with values whose sums round.
TEST(ScatterAdd, SameSumsOnAnyNumberOfThreads) {
  const Tensor x = uniform_input({64, 300}, -1, 1, 81).detach().to(kFloat32);
  const Tensor src = uniform_input({500, 300}, -1, 1, 82).detach().to(kFloat32);
  const Tensor index = indices({500, 300}, 64, 83);
  Tensor one, three;
  {
    ThreadCount threads(1);
    one = scatter_add(x, 0, index, src);
  }
  {
    ThreadCount threads(3);
    three = scatter_add(x, 0, index, src);
  }
  EXPECT_TRUE(one.equal(three));
  // And within rounding of the sums in double: an element that adds k values of magnitude < 1
  // to |x| < 1 rounds k times, the i-th time by at most u (i + 1): k (k + 3) / 2 u in all.
  std::vector<int> count(64 * 300);
  const std::vector<double> iv = to_vector(index);
  for (std::size_t k = 0; k < iv.size(); ++k)
    ++count[static_cast<std::size_t>(iv[k]) * 300 + k % 300];
  const double most = *std::max_element(count.begin(), count.end());
  EXPECT_TRUE(
      all_close(one, reference_scatter_add(x, 0, index, src), 0, most * (most + 3) / 2 * 0x1p-24));
}

TEST(ScatterAdd, GradientsTwice) {
  const Tensor x = uniform_input({3, 4}, -1, 1, 91);
  const Tensor src = uniform_input({3, 6}, -1, 1, 92);  // one column more than the index
  const Tensor index = indices({3, 5}, 4, 93);
  const auto fn = [index](const Inputs& in) { return scatter_add(in[0], 1, index, in[1]); };
  EXPECT_TRUE(gradcheck(fn, {x, src}));
  const auto cubed = [fn](const Inputs& in) { return fn(in).pow(3.0); };  // as index_select's
  EXPECT_TRUE(gradgradcheck(cubed, {x, src}));
  const Tensor y = fn({x, src});
  y.backward(ones_like(y));
  // The column of src the index does not reach gets no gradient.
  EXPECT_EQ(to_vector(src.grad().select(1, 5)), (std::vector<double>{0, 0, 0}));
}

// ---- PyTorch's values ------------------------------------------------------------------------

TEST(IndexingReference, AsPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("indexing.json")) {
    SCOPED_TRACE(rc.name);
    const std::string op = rc.params["op"].get<std::string>();
    const std::int64_t dim = rc.params["dim"].get<std::int64_t>();
    const Tensor x = rc.at("x").clone().requires_grad_();
    const Tensor index = rc.at("index");
    Tensor src, y;
    if (op == "index_select") {
      y = index_select(x, dim, index);
    } else if (op == "gather") {
      y = gather(x, dim, index);
    } else {
      src = rc.at("src").clone().requires_grad_();
      y = scatter_add(x, dim, index, src);
    }
    // index_select and gather copy: exact. The sums (scatter_add's output, the gradients of
    // index_select and gather) add at most L terms, L the index's length along dim, in float32
    // in some order on either side: two orders differ by at most 2 (L - 1) u times the sum of
    // the terms' magnitudes, below 2 L^2 u max|term| (scatter_add's output adds x: L + 1).
    const double length = static_cast<double>(index.dim() == 1 ? index.numel() : index.size(dim));
    const double u = 0x1p-24;
    const double sum_atol = 2 * (length + 1) * (length + 1) * u;
    const double y_atol =
        op == "scatter_add" ? sum_atol * std::max(test::max_abs(x), test::max_abs(src)) : 0;
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), 0, y_atol));
    y.backward(rc.at("g"));
    const double g_atol = sum_atol * test::max_abs(rc.at("g"));
    EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), 0, op == "scatter_add" ? 0 : g_atol));
    if (src.defined()) {
      EXPECT_TRUE(all_close(src.grad(), to_vector(rc.at("dsrc")), 0, 0));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// ---- Splitting -------------------------------------------------------------------------------

std::vector<Shape> shapes(const std::vector<Tensor>& pieces) {
  std::vector<Shape> s;
  for (const Tensor& p : pieces)
    s.push_back(p.shape());
  return s;
}

TEST(Splitting, PiecesAsTorchs) {
  const Tensor x = small_integers({7, 3}, kFloat32, 100);
  EXPECT_EQ(shapes(x.chunk(4)), (std::vector<Shape>{{2, 3}, {2, 3}, {2, 3}, {1, 3}}));
  EXPECT_EQ(shapes(x.slice(0, 0, 6).chunk(4)), (std::vector<Shape>{{2, 3}, {2, 3}, {2, 3}}));
  EXPECT_EQ(shapes(x.chunk(2, -1)), (std::vector<Shape>{{7, 2}, {7, 1}}));
  EXPECT_EQ(shapes(x.split(3)), (std::vector<Shape>{{3, 3}, {3, 3}, {1, 3}}));
  EXPECT_EQ(shapes(x.split(10)), (std::vector<Shape>{{7, 3}}));
  EXPECT_EQ(shapes(x.split_with_sizes({1, 0, 2}, 1)), (std::vector<Shape>{{7, 1}, {7, 0}, {7, 2}}));
  EXPECT_EQ(shapes(x.unbind(1)), (std::vector<Shape>{{7}, {7}, {7}}));
  EXPECT_EQ(shapes(zeros({0, 2}).split(2)), (std::vector<Shape>{{0, 2}}));
  EXPECT_EQ(shapes(zeros({0, 2}).chunk(3)), (std::vector<Shape>{{0, 2}, {0, 2}, {0, 2}}));
  // The pieces are views of x's rows, in order.
  std::vector<double> joined;
  std::int64_t row = 0;
  for (const Tensor& p : x.split_with_sizes({2, 4, 1})) {
    EXPECT_EQ(p.data_ptr<float>(), x.data_ptr<float>() + row * 3);
    row += p.size(0);
    for (double v : to_vector(p))
      joined.push_back(v);
  }
  EXPECT_EQ(joined, to_vector(x));
  EXPECT_EQ(to_vector(x.narrow(0, -2, 2)), to_vector(x.slice(0, 5, 7)));
  EXPECT_EQ(to_vector(x.narrow(1, 1, 2)), to_vector(x.slice(1, 1, 3)));
  EXPECT_EQ(x.narrow(0, 7, 0).shape(), Shape({0, 3}));
}

TEST(Splitting, GradientsThroughThePieces) {
  const Tensor x = uniform_input({5, 4}, -1, 1, 110);
  // Each piece scaled differently, so a gradient sent to the wrong place shows.
  const auto scaled_cat = [](const std::vector<Tensor>& pieces, std::int64_t dim) {
    std::vector<Tensor> scaled;
    for (std::size_t i = 0; i < pieces.size(); ++i)
      scaled.push_back(mul(pieces[i], static_cast<double>(i + 1)));
    return cat(scaled, dim);
  };
  EXPECT_TRUE(gradcheck([&](const Inputs& in) { return scaled_cat(in[0].chunk(3, 0), 0); }, {x}));
  EXPECT_TRUE(gradcheck(
      [&](const Inputs& in) {
        return scaled_cat(in[0].split_with_sizes({3, 1}, 1), 1);
      },
      {x}));
  EXPECT_TRUE(gradcheck([&](const Inputs& in) { return scaled_cat(in[0].unbind(1), 0); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].narrow(1, -3, 2); }, {x}));
}

}  // namespace
}  // namespace leangrad
