// The rest of LibTorch's Tensor methods (core/tensor.h): the view ops done in place, alias,
// detach_, resize_, set_, data(), the accessors, the metadata tests, the comparisons and logic
// written into self, put, the in-place matrix products, and the methods over linalg's
// decompositions; with angle, put and ormqr, the free functions they forward to. Values and
// gradients against PyTorch's (tests/data/tensor_methods.json, make_tensor_methods.py), against
// the out-of-place ops, loops and finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/pointwise_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::matches_within_roundoff;
using test::RoundoffMatch;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// make_tensor_methods.py's chain of view ops done in place.
Tensor view_chain(const Tensor& x) {
  Tensor y = x * 1.5;
  y.squeeze_(1);
  y.t_();
  y.unsqueeze_(0);
  y.transpose_(0, 2);
  y.swapdims_(1, 2);
  return y;
}

Tensor apply_case(const test::ReferenceCase& rc, const test::ReferenceInputs& in) {
  const nlohmann::json& p = rc.params;
  const std::string op = p.at("op").get<std::string>();
  const std::vector<Tensor>& t = in.tensors;
  if (op == "angle") return angle(t[0]);
  if (op == "put") return t[0].put(t[1], t[2], p.at("accumulate").get<bool>());
  if (op == "ormqr") {
    return ormqr(t[0], t[1], t[2], p.at("left").get<bool>(), p.at("transpose").get<bool>());
  }
  if (op == "triangular_solve") {
    auto [X, copy] =
        t[0].triangular_solve(t[1], p.at("upper").get<bool>(), p.at("transpose").get<bool>(),
                              p.at("unitriangular").get<bool>());
    EXPECT_TRUE(copy.equal(t[1]));
    EXPECT_FALSE(copy.shares_storage(t[1]));
    return X;
  }
  if (op == "predicate") {
    Tensor self = t[0].clone();
    const std::string method = p.at("method").get<std::string>();
    if (method == "logical_not_") return self.logical_not_();
    const bool scalar = p.contains("scalar");
    const double s = scalar ? p.at("scalar").get<double>() : 0.0;
    const Tensor other = scalar ? Tensor() : t[1];
    if (method == "eq_") return scalar ? self.eq_(s) : self.eq_(other);
    if (method == "ne_") return scalar ? self.ne_(s) : self.ne_(other);
    if (method == "lt_") return scalar ? self.lt_(s) : self.lt_(other);
    if (method == "le_") return scalar ? self.le_(s) : self.le_(other);
    if (method == "gt_") return scalar ? self.gt_(s) : self.gt_(other);
    if (method == "ge_") return scalar ? self.ge_(s) : self.ge_(other);
    if (method == "logical_and_") return self.logical_and_(other);
    if (method == "logical_or_") return self.logical_or_(other);
    EXPECT_EQ(method, "logical_xor_");
    return self.logical_xor_(other);
  }
  if (op == "view_chain") {
    Tensor y = view_chain(t[0]);
    EXPECT_EQ(y.strides(), p.at("strides").get<Strides>());
    return y;
  }
  EXPECT_EQ(op, "as_strided_");
  Tensor y = t[0] * 2.0;
  y.as_strided_({3, 2}, {1, 3}, 1);
  return y;
}

// angle, the predicates and the views are exact (PyTorch's pi rounded to the dtype; 0 and 1; the
// elements themselves), as are put's writes; put's accumulation adds at most three values to an
// element in either side's order (4 units of roundoff). ormqr applies k <= 4 reflections of
// vectors of at most 5 elements, each a dot product and an update (O(k m) roundings of values
// near 1: 64 units); triangular_solve's diagonals dominate (|d| >= 2 against off-diagonal
// entries below 1), so its error stays within a small multiple of the roundings of each
// substitution: 64 units for X, 256 for the gradients (a second solve and a product).
TEST(TensorMethodsReference, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("tensor_methods.json");
  ASSERT_EQ(cases.size(), 37u);  // make_tensor_methods.py's count
  for (const test::ReferenceCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    const test::ReferenceInputs in = test::reference_inputs(rc);
    const std::string op = rc.params.at("op").get<std::string>();
    const Tensor y = apply_case(rc, in);
    const Tensor& want = rc.at("y");
    ASSERT_EQ(y.shape(), want.shape());
    ASSERT_EQ(y.dtype(), want.dtype());
    const bool exact = op == "angle" || op == "predicate" || op == "view_chain" ||
                       op == "as_strided_" ||
                       (op == "put" && !rc.params.at("accumulate").get<bool>());
    if (exact) {
      EXPECT_TRUE(matches_within_roundoff(y.detach(), want, {}, {.bitwise = true}));
    } else {
      const double ulps = op == "put" ? 4 : 64;
      EXPECT_TRUE(matches_within_roundoff(y.detach(), want, {}, {.ulps = ulps}));
    }
    test::expect_reference_gradients(rc, in, y, op == "triangular_solve" ? 256 : 4);
  }
}

// ---- View ops in place ----

// Each in-place view op gives self the geometry of the out-of-place view, in self's memory and
// TensorImpl (another handle sees it), its version unchanged.
void expect_view_in_place(const Tensor& start, const std::function<Tensor&(Tensor&)>& in_place,
                          const std::function<Tensor(const Tensor&)>& out_of_place) {
  const Tensor want = out_of_place(start);
  Tensor self = start;  // the same TensorImpl as start's copy below
  const Tensor other_handle = self;
  const std::uint32_t version = self.version();
  Tensor& returned = in_place(self);
  EXPECT_EQ(&returned, &self);
  EXPECT_EQ(other_handle.shape(), want.shape());
  EXPECT_EQ(other_handle.strides(), want.strides());
  EXPECT_EQ(other_handle.storage_offset(), want.storage_offset());
  EXPECT_TRUE(other_handle.shares_storage(want));
  EXPECT_EQ(self.version(), version);
  EXPECT_TRUE(self.equal(want));
}

TEST(InPlaceViews, TakeTheOutOfPlaceViewsGeometry) {
  const Tensor x = uniform_input({2, 1, 3}, -1, 1, 1).detach();
  expect_view_in_place(
      x.squeeze().clone(), [](Tensor& s) -> Tensor& { return s.t_(); },
      [](const Tensor& s) { return s.t(); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.transpose_(0, 2); },
      [](const Tensor& s) { return s.transpose(0, 2); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.swapdims_(-1, 0); },
      [](const Tensor& s) { return s.swapdims(-1, 0); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.swapaxes_(1, 2); },
      [](const Tensor& s) { return s.swapaxes(1, 2); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.squeeze_(); },
      [](const Tensor& s) { return s.squeeze(); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.squeeze_(1); },
      [](const Tensor& s) { return s.squeeze(1); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.squeeze_(0); },  // size 2: unchanged
      [](const Tensor& s) { return s.squeeze(0); });
  expect_view_in_place(
      x.clone(), [](Tensor& s) -> Tensor& { return s.unsqueeze_(-1); },
      [](const Tensor& s) { return s.unsqueeze(-1); });
  expect_view_in_place(
      x.clone(),
      [](Tensor& s) -> Tensor& {
        return s.as_strided_({2, 2}, {1, 2}, 1);
      },
      [](const Tensor& s) {
        return s.as_strided({2, 2}, {1, 2}, 1);
      });
  // A view stays a view of its base's memory.
  const Tensor base = x.clone();
  Tensor slice = base.slice(2, 1, 3);
  slice.transpose_(0, 2);
  EXPECT_TRUE(slice.is_view());
  EXPECT_TRUE(slice.equal(base.slice(2, 1, 3).transpose(0, 2)));
}

TEST(InPlaceViews, GradientsFlowThroughTheNewGeometry) {
  const Tensor x = uniform_input({2, 1, 3}, -1, 1, 2);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return view_chain(in[0]); }, {x}));
  const Tensor w = uniform_input({4, 3}, -1, 1, 3);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        Tensor y = in[0] * 2.0;
        y.as_strided_({3, 2}, {1, 3}, 1);  // elements of the storage, as PyTorch's
        return y;
      },
      {w}));
  // The history is the view's: its node's name.
  Tensor y = uniform_input({2, 3}, -1, 1, 35) * 2.0;
  y.t_();
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(autograd::grad_fn_name(y), "TransposeBackward");
}

TEST(InPlaceViews, LeavesAndHistoriesAreProtected) {
  Tensor leaf = uniform_input({2, 3}, -1, 1, 4);
  EXPECT_THROW(leaf.t_(), Error);  // a leaf that requires grad, under grad mode
  EXPECT_EQ(leaf.shape(), (Shape{2, 3}));
  {
    NoGradGuard no_grad;
    leaf.t_();  // allowed: it stays a leaf, its gradient of the new shape
  }
  EXPECT_TRUE(leaf.is_leaf());
  mul(leaf, 3.0).sum().backward();
  EXPECT_EQ(leaf.grad().shape(), (Shape{3, 2}));
  EXPECT_TRUE(leaf.grad().equal(full({3, 2}, 3.0, kFloat64)));
  Tensor y = mul(uniform_input({2, 3}, -1, 1, 5), 2.0);
  NoGradGuard no_grad;
  EXPECT_THROW(y.t_(), Error);  // its history would no longer match it
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
}

// ---- alias, detach_, data ----

TEST(TensorMethods, AliasDetachAndData) {
  const Tensor x = uniform_input({2, 3}, -1, 1, 6);
  const Tensor a = x.t().alias();
  EXPECT_TRUE(a.shares_storage(x));
  EXPECT_EQ(a.strides(), x.t().strides());
  mul(a, 2.0).sum().backward();  // recorded: the gradient reaches x
  EXPECT_TRUE(x.grad().equal(full({2, 3}, 2.0, kFloat64)));
  const Tensor expanded = uniform_input({3, 1}, -1, 1, 36).detach().expand({3, 4});
  EXPECT_EQ(expanded.alias().strides(), expanded.strides());

  Tensor y = mul(x, 3.0);
  const Tensor handle = y;
  y.detach_();
  EXPECT_FALSE(handle.requires_grad());
  EXPECT_TRUE(handle.is_leaf());
  EXPECT_EQ(handle.grad_fn(), nullptr);
  EXPECT_TRUE(y.equal(mul(x.detach(), 3.0)));

  const Tensor d = x.data();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.shares_storage(x));
  const std::uint32_t version = x.version();
  {
    Tensor w = d;
    w.add_(0.0);  // a write through data() is not seen by x's counter (PyTorch's x.data)
  }
  EXPECT_EQ(x.version(), version);
  Tensor shared = x.tensor_data();
  shared.add_(0.0);
  EXPECT_GT(x.version(), version);
}

// ---- resize_ and set_ ----

TEST(TensorMethods, ResizeKeepsTheBytesAndGrowsTheStorage) {
  Tensor t = arange(6.0, TensorOptions(kFloat64));
  const Tensor sharer = t.slice(0, 0, 6);
  t.resize_({2, 2});  // shrink: the same storage, its first four elements
  EXPECT_TRUE(t.equal(test::make_tensor({0, 1, 2, 3}, {2, 2})));
  t.resize_({3, 3});  // grow: the first six bytes' elements kept, seen by the sharer
  EXPECT_EQ(t.shape(), (Shape{3, 3}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_GE(t.storage()->nbytes(), 9 * sizeof(double));
  EXPECT_TRUE(t.reshape({-1}).slice(0, 0, 6).equal(arange(6.0, TensorOptions(kFloat64))));
  EXPECT_TRUE(sharer.equal(arange(6.0, TensorOptions(kFloat64))));
  EXPECT_EQ(sharer.storage(), t.storage());
  // The same sizes keep their strides; resize_as_ takes another's sizes.
  Tensor tt = arange(6.0).reshape({2, 3}).t();
  tt.resize_({3, 2});
  EXPECT_EQ(tt.strides(), (Strides{1, 3}));
  tt.resize_as_(zeros({6}));
  EXPECT_EQ(tt.strides(), (Strides{1}));
  EXPECT_TRUE(tt.equal(arange(6.0)));
  // From an offset: the storage grows to the offset plus the elements.
  Tensor tail = arange(4.0).slice(0, 3, 4);
  tail.resize_({5});
  EXPECT_EQ(tail.storage_offset(), 3);
  EXPECT_EQ(tail.storage()->nbytes(), 8 * sizeof(float));
  EXPECT_EQ(tail[0].item<float>(), 3.0f);
}

TEST(TensorMethods, ResizeAndSetRefuse) {
  Tensor leaf = uniform_input({2}, -1, 1, 7);
  EXPECT_THROW(leaf.resize_({4}), Error);
  Tensor t = zeros({2});
  EXPECT_THROW(t.resize_({-1}), ShapeError);
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_THROW(t.resize_({big, big}), ShapeError);  // overflow, named, no allocation
  EXPECT_EQ(t.shape(), (Shape{2}));
  EXPECT_THROW(t.set_(zeros({2}, kFloat64)), DTypeError);
  EXPECT_THROW(t.set_(uniform_input({2}, -1, 1, 8).to(kFloat32)), Error);
}

TEST(TensorMethods, SetSharesTheSourcesStorageAndGeometry) {
  const Tensor source = arange(12.0).reshape({3, 4}).t();
  Tensor t = zeros({5});
  const std::uint32_t version = t.version();
  t.set_(source);
  EXPECT_TRUE(t.is_set_to(source));
  EXPECT_TRUE(source.is_set_to(t));
  EXPECT_FALSE(t.is_set_to(source.contiguous()));
  EXPECT_TRUE(t.equal(source));
  EXPECT_GT(t.version(), version);
  t.set_();
  EXPECT_EQ(t.shape(), (Shape{0}));
  EXPECT_EQ(t.storage()->nbytes(), 0u);
  // Under NoGradGuard a tensor that requires grad may be set_.
  Tensor p = uniform_input({2}, -1, 1, 9);
  NoGradGuard no_grad;
  p.set_(zeros({3}, kFloat64));
  EXPECT_EQ(p.shape(), (Shape{3}));
}

// numel() is kept beside the sizes (TensorImpl::set_geometry): after every change of shape it is
// still their product, counted here.
TEST(TensorMethods, NumelFollowsEveryChangeOfShape) {
  const auto product = [](const Tensor& t) {
    std::int64_t n = 1;
    for (const std::int64_t size : t.shape())
      n *= size;
    return n;
  };
  const auto expect_numel = [&](const Tensor& t, std::int64_t expected) {
    EXPECT_EQ(product(t), expected) << t.shape();
    EXPECT_EQ(t.numel(), expected) << t.shape();
  };
  expect_numel(Tensor(std::make_shared<TensorImpl>()), 1);  // 0-d
  expect_numel(zeros({}), 1);
  expect_numel(zeros({3, 0, 5}), 0);
  Tensor t = arange(24.0).reshape({2, 3, 4});
  expect_numel(t.slice(1, 0, 2), 16);
  expect_numel(t.select(0, 1), 12);
  expect_numel(t.unsqueeze(1).expand({2, 5, 3, 4}), 120);
  expect_numel(t.as_strided({2, 2}, {1, 1}), 4);
  t.resize_({5, 2});
  expect_numel(t, 10);
  t.resize_as_(zeros({7}));
  expect_numel(t, 7);
  t.unsqueeze_(0);
  t.transpose_(0, 1);
  expect_numel(t, 7);
  t.as_strided_({3, 2}, {1, 1});
  expect_numel(t, 6);
  t.set_(zeros({4, 4}));
  expect_numel(t, 16);
  t.set_();
  expect_numel(t, 0);
  Tensor other = zeros({9});
  t.set_data(zeros({2, 3}));
  expect_numel(t, 6);
  t.swap_data(other);
  expect_numel(t, 9);
  expect_numel(other, 6);
}

// ---- Accessors and metadata ----

TEST(TensorMethods, AccessorsReadAndWriteThroughTheStrides) {
  const Tensor base = arange(24.0).reshape({2, 3, 4});
  const Tensor x = base.permute({2, 0, 1}).slice(0, 1, 4);  // (3, 2, 3), offset 1
  const auto a = x.accessor<float, 3>();
  const auto p64 = x.packed_accessor64<float, 3>();
  const auto p32 = x.packed_accessor32<float, 3>();
  EXPECT_EQ(a.size(0), 3);
  EXPECT_EQ(p32.stride(2), 4);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      for (std::int64_t k = 0; k < 3; ++k) {
        const float want = static_cast<float>(j * 12 + k * 4 + (i + 1));  // base's value
        EXPECT_EQ(a[i][j][k], want);
        EXPECT_EQ(p64[i][j][k], want);
        EXPECT_EQ(p32[static_cast<std::int32_t>(i)][static_cast<std::int32_t>(j)]
                     [static_cast<std::int32_t>(k)],
                  want);
      }
  a[2][1][0] = -5.0f;
  EXPECT_EQ(base.index({1, 0, 3}).item<float>(), -5.0f);
  EXPECT_THROW((x.accessor<double, 3>()), DTypeError);
  EXPECT_THROW((x.accessor<float, 2>()), ShapeError);
  // Sizes past int32 (no memory: one element expanded).
  const Tensor wide = zeros({1}).expand({std::int64_t{1} << 32});
  EXPECT_THROW((wide.packed_accessor32<float, 1>()), ShapeError);
  EXPECT_EQ((wide.packed_accessor64<float, 1>().size(0)), std::int64_t{1} << 32);
}

TEST(TensorMethods, MetadataTests) {
  const Tensor x = zeros({2, 3});
  EXPECT_EQ(x.scalar_type(), kFloat32);
  EXPECT_EQ(x.itemsize(), 4u);
  EXPECT_TRUE(x.is_floating_point());
  EXPECT_FALSE(zeros({1}, kInt64).is_floating_point());
  for (const DType d : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32})
    EXPECT_TRUE(zeros({1}, d).is_signed()) << d;
  EXPECT_FALSE(zeros({1}, kUInt8).is_signed());
  EXPECT_FALSE(zeros({1}, kBool).is_signed());
  EXPECT_FALSE(x.is_complex());
  EXPECT_TRUE(x.is_cpu());
  EXPECT_TRUE(x.has_storage());
  EXPECT_FALSE(Tensor().has_storage());
  EXPECT_FALSE(x.is_view());
  EXPECT_TRUE(x.t().is_view());
  EXPECT_TRUE(x.t().is_alias_of(x));
  EXPECT_FALSE(x.clone().is_alias_of(x));
  EXPECT_TRUE(x.is_non_overlapping_and_dense());
  EXPECT_TRUE(x.t().is_non_overlapping_and_dense());
  EXPECT_TRUE(zeros({2, 3, 4}).permute({1, 2, 0}).is_non_overlapping_and_dense());
  EXPECT_FALSE(x.slice(1, 0, 3, 2).is_non_overlapping_and_dense());
  EXPECT_FALSE(zeros({3, 1}).expand({3, 2}).is_non_overlapping_and_dense());
  EXPECT_TRUE(x.conj().is_same(x));
  EXPECT_TRUE(x.resolve_conj().is_same(x));
}

// ---- Comparisons and logic written into self ----

TEST(TensorMethods, PredicatesInPlaceRecordAZeroGradient) {
  const Tensor x = uniform_input({2, 3}, -1, 1, 10);
  const Tensor other = uniform_input({3}, -1, 1, 11);
  Tensor y = mul(x, 1.0);
  y.lt_(other);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_TRUE(y.detach().equal(lt(x, other).to(kFloat64)));
  mul(y, 5.0).sum().backward();
  EXPECT_TRUE(x.grad().equal(zeros({2, 3}, kFloat64)));
  EXPECT_TRUE(other.grad().equal(zeros({3}, kFloat64)));
  // The result must fit self, as in-place ops' must.
  Tensor small = zeros({3});
  EXPECT_THROW(small.eq_(zeros({2, 3})), ShapeError);
  Tensor aliases = test::make_tensor({1, 2, 3}, {3});
  EXPECT_TRUE(aliases.clone().greater_equal_(2.0).equal(ge(aliases, 2.0).to(kFloat32)));
  EXPECT_TRUE(aliases.clone().less_(2.0).equal(lt(aliases, 2.0).to(kFloat32)));
  EXPECT_TRUE(aliases.clone().not_equal_(2.0).equal(ne(aliases, 2.0).to(kFloat32)));
}

// ---- put ----

TEST(TensorMethods, PutMatchesALoopAndDifferentiates) {
  const Tensor a = uniform_input({3, 4}, -1, 1, 12).detach();
  const Tensor index = test::make_tensor({7, -1, 0, 7}, {2, 2}, kInt64);
  const Tensor source = uniform_input({4}, -1, 1, 13).detach();
  // accumulate: every value added at its position, in order; a loop over a flat copy.
  Tensor want = a.clone().reshape({-1});
  const std::vector<std::int64_t> positions{7, 11, 0, 7};
  for (std::size_t i = 0; i < positions.size(); ++i)
    want.data_ptr<double>()[positions[i]] += source.data_ptr<double>()[i];
  // Position 7 takes two additions, in either order: within 4 units of roundoff.
  EXPECT_TRUE(
      matches_within_roundoff(a.put(index, source, true), want.reshape({3, 4}), {}, {.ulps = 4}));
  Tensor self = a.clone();
  self.put_(index.slice(0, 0, 1), source.slice(0, 0, 2));
  Tensor expected = a.clone();
  expected.reshape({-1}).slice(0, 7, 8).copy_(source.slice(0, 0, 1));
  expected.reshape({-1}).slice(0, 11, 12).copy_(source.slice(0, 1, 2));
  EXPECT_TRUE(self.equal(expected));
  const Tensor x = uniform_input({3, 4}, -1, 1, 14);
  const Tensor s = uniform_input({4}, -1, 1, 15);
  EXPECT_TRUE(gradcheck(
      [&](const Inputs& in) {
        Tensor h = mul(in[0], 1.0);
        h.put_(test::make_tensor({7, -1, 0, 2}, {4}, kInt64), in[1], true);
        return h;
      },
      {x, s}));
  EXPECT_TRUE(gradcheck(
      [&](const Inputs& in) {
        return put(in[0], test::make_tensor({3, 5}, {2}, kInt64), in[1]);
      },
      {x, uniform_input({2}, -1, 1, 16)}));
}

// ---- Matrix products written into self ----

TEST(TensorMethods, MatrixProductsInPlaceWriteTheOutOfPlaceResult) {
  const Tensor m = uniform_input({3, 4}, -1, 1, 17).detach();
  const Tensor m1 = uniform_input({3, 5}, -1, 1, 18).detach();
  const Tensor m2 = uniform_input({5, 4}, -1, 1, 19).detach();
  const Tensor v = uniform_input({4}, -1, 1, 20).detach();
  const Tensor u = uniform_input({3}, -1, 1, 21).detach();
  const Tensor b1 = uniform_input({2, 3, 5}, -1, 1, 22).detach();
  const Tensor b2 = uniform_input({2, 5, 4}, -1, 1, 23).detach();
  EXPECT_TRUE(m.clone().addmm_(m1, m2, 0.5, 2.0).equal(addmm(m, m1, m2, 0.5, 2.0)));
  EXPECT_TRUE(u.clone().addmv_(m, v, 2.0, -1.0).equal(addmv(u, m, v, 2.0, -1.0)));
  EXPECT_TRUE(m.clone().addr_(u, v, 1.0, 3.0).equal(addr(m, u, v, 1.0, 3.0)));
  EXPECT_TRUE(m.clone().addbmm_(b1, b2).equal(addbmm(m, b1, b2)));
  const Tensor batched = uniform_input({2, 3, 4}, -1, 1, 24).detach();
  EXPECT_TRUE(batched.clone().baddbmm_(b1, b2, 0.0).equal(baddbmm(batched, b1, b2, 0.0)));
  Tensor vector = zeros({4}, kFloat64);
  EXPECT_THROW(vector.addmm_(m1, m2), ShapeError);  // the (3, 4) result does not fit
  const Tensor x = uniform_input({3, 4}, -1, 1, 25);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        Tensor h = mul(in[0], 1.0);
        h.addmm_(in[1], in[2], 0.5, 2.0);
        return h;
      },
      {x, uniform_input({3, 5}, -1, 1, 26), uniform_input({5, 4}, -1, 1, 27)}));
}

// ---- Linear algebra methods ----

// |a - b| within n u |a| |b|-sized bounds: the products below sum n terms near 1.
void expect_near_matrix(const Tensor& got, const Tensor& want, double bound) {
  EXPECT_LE(amax(abs(sub(got, want))).item<double>(), bound);
}

TEST(TensorMethods, DecompositionMethods) {
  const Tensor A = uniform_input({4, 3}, -1, 1, 28).detach();
  const double u = std::numeric_limits<double>::epsilon();
  auto [a, tau] = A.geqrf();
  auto [a_free, tau_free] = geqrf(A);
  EXPECT_TRUE(a.equal(a_free));
  EXPECT_TRUE(tau.equal(tau_free));
  EXPECT_TRUE(a.orgqr(tau).equal(linalg::householder_product(a, tau)));
  // ormqr by Q formed: Q of the complete reflections is ormqr of the identity.
  const Tensor Q = a.ormqr(tau, eye(4, TensorOptions(kFloat64)));
  expect_near_matrix(matmul(Q.mT(), Q), eye(4, TensorOptions(kFloat64)), 64 * u);
  expect_near_matrix(Q.slice(1, 0, 3), linalg::householder_product(a, tau), 64 * u);

  auto [Qr, R] = A.qr(/*some=*/false);
  EXPECT_EQ(Qr.shape(), (Shape{4, 4}));
  EXPECT_EQ(R.shape(), (Shape{4, 3}));
  expect_near_matrix(matmul(Qr, R), A, 64 * u);
  auto [Qs, Rs] = A.qr();
  EXPECT_EQ(Qs.shape(), (Shape{4, 3}));
  expect_near_matrix(matmul(Qs, Rs), A, 64 * u);

  auto [U, S, V] = A.svd();
  EXPECT_EQ(V.shape(), (Shape{3, 3}));  // V, not V^T
  expect_near_matrix(matmul(mul(U, S), V.mT()), A, 64 * u);
  auto [Uf, Sf, Vf] = A.svd(/*some=*/false);
  EXPECT_EQ(Uf.shape(), (Shape{4, 4}));
  auto [U0, S0, V0] = A.svd(true, /*compute_uv=*/false);
  EXPECT_TRUE(U0.equal(zeros({4, 4}, kFloat64)));
  EXPECT_TRUE(V0.equal(zeros({3, 3}, kFloat64)));
  EXPECT_TRUE(S0.equal(linalg::svdvals(A)));
  const Tensor leaf = uniform_input({4, 3}, -1, 1, 29);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) { return std::get<1>(in[0].svd(true, /*compute_uv=*/false)); }, {leaf}));

  // b.lu_solve(LU, pivots) is linalg::lu_solve(LU, pivots, b).
  const Tensor square =
      add(uniform_input({3, 3}, -1, 1, 30).detach(), mul(eye(3, TensorOptions(kFloat64)), 3.0));
  auto [LU, pivots] = linalg::lu_factor(square);
  const Tensor b = uniform_input({3, 2}, -1, 1, 31).detach();
  EXPECT_TRUE(b.lu_solve(LU, pivots).equal(linalg::lu_solve(LU, pivots, b)));
}

TEST(TensorMethods, OrmqrDifferentiatesInAllThree) {
  auto [a, tau] = geqrf(uniform_input({4, 3}, -1, 1, 32).detach());
  for (const bool left : {true, false})
    for (const bool transpose : {false, true}) {
      SCOPED_TRACE(std::string(left ? "left" : "right") + (transpose ? " transpose" : ""));
      const Tensor other = uniform_input(left ? Shape{4, 2} : Shape{2, 4}, -1, 1, 33);
      EXPECT_TRUE(
          gradcheck([=](const Inputs& in) { return ormqr(in[0], in[1], in[2], left, transpose); },
                    {a.clone().requires_grad_(), tau.clone().requires_grad_(), other}));
    }
}

// ---- The other forwards ----

TEST(TensorMethods, AreTheFreeFunctions) {
  const Tensor x = uniform_input({3, 4}, -2, 2, 34).detach();
  EXPECT_TRUE(x.hardshrink(0.7).equal(hardshrink(x, 0.7)));
  const Tensor weight = test::make_tensor({0.25}, {1}, kFloat64);
  EXPECT_TRUE(x.prelu(weight).equal(prelu(x, weight)));
  auto [hist, edges] = x.histogram(5, std::vector<double>{-2.0, 2.0});
  auto [hist_free, edges_free] = histogram(x, 5, std::vector<double>{-2.0, 2.0});
  EXPECT_TRUE(hist.equal(hist_free));
  EXPECT_TRUE(edges.equal(edges_free));
  auto [hist_edges, unused] = x.histogram(edges);
  EXPECT_TRUE(hist_edges.equal(hist_free));
  EXPECT_TRUE(x.angle().equal(angle(x)));
  const std::vector<Tensor> pieces = x.unsafe_split(3, 1);
  const std::vector<Tensor> want = x.split(3, 1);
  ASSERT_EQ(pieces.size(), want.size());
  for (std::size_t i = 0; i < pieces.size(); ++i)
    EXPECT_TRUE(pieces[i].equal(want[i]));
  EXPECT_EQ(x.unsafe_chunk(2, 0).size(), 2u);
  EXPECT_EQ(x.unsafe_split_with_sizes({1, 3}, 1)[1].shape(), (Shape{3, 3}));
}

}  // namespace
}  // namespace leangrad
