// The composed ops as Tensor methods (core/tensor.h; autograd/tensor_methods.cpp), and
// LibTorch's methods over other free functions (addmm .. take, the in-place tril_ .. div_ with a
// rounding mode, to(options)): each method is its free function bit for bit (those are checked
// against torch and by finite differences in their own tests), each in-place form leaves in self
// what the out-of-place op returns, bit for bit, in self's own memory with its version bumped;
// its gradients, recorded, are checked by central differences in float64; a result that would
// grow self, a leaf that requires grad and wrong operands are Errors naming the op.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

Tensor index_of(const std::vector<double>& values) {
  return test::make_tensor(values, {static_cast<std::int64_t>(values.size())}, kInt64);
}

// One in-place form against its out-of-place op: the same values, in self's memory, version
// bumped, self returned.
void expect_in_place(const Tensor& start, const std::function<Tensor&(Tensor&)>& in_place,
                     const std::function<Tensor(const Tensor&)>& out_of_place) {
  const Tensor want = out_of_place(start);
  Tensor self = start.clone();
  const void* memory = self.data_ptr();
  const std::uint32_t version = self.version();
  Tensor& returned = in_place(self);
  EXPECT_EQ(&returned, &self);
  EXPECT_EQ(self.data_ptr(), memory);
  EXPECT_GT(self.version(), version);
  EXPECT_TRUE(self.equal(want));
}

TEST(ComposedMethods, AreTheFreeFunctions) {
  const Tensor x = test::uniform_input({3, 4}, -2, 2, 1).detach();
  const Tensor end = test::uniform_input({3, 4}, -2, 2, 2).detach();
  const Tensor w = test::uniform_input({4}, 0, 1, 3).detach();
  EXPECT_TRUE(x.lerp(end, 0.3).equal(lerp(x, end, 0.3)));
  EXPECT_TRUE(x.lerp(end, w).equal(lerp(x, end, w)));
  EXPECT_TRUE(x.addcmul(end, w, 0.5).equal(addcmul(x, end, w, 0.5)));
  EXPECT_TRUE(x.addcdiv(end, add(w, 1.0), 2.0).equal(addcdiv(x, end, add(w, 1.0), 2.0)));
  EXPECT_TRUE(x.logaddexp(end).equal(logaddexp(x, end)));
  const Tensor index = index_of({2, 0, 2});
  const Tensor source = test::uniform_input({3, 3}, -1, 1, 4).detach();
  EXPECT_TRUE(x.index_add(1, index, source, 2.0).equal(index_add(x, 1, index, source, 2.0)));
  EXPECT_TRUE(x.index_fill(0, index_of({1}), 7.0).equal(index_fill(x, 0, index_of({1}), 7.0)));
  EXPECT_TRUE(x.tile({2, 1}).equal(tile(x, {2, 1})));
  EXPECT_TRUE(x.repeat_interleave(2, 1).equal(repeat_interleave(x, 2, 1)));
  const Tensor sparse = test::make_tensor({0, 1, 0, 2, 0, 0}, {2, 3});
  EXPECT_TRUE(sparse.nonzero().equal(nonzero(sparse)));
  EXPECT_TRUE(sparse.argwhere().equal(argwhere(sparse)));
  EXPECT_TRUE(sparse.count_nonzero({1}).equal(count_nonzero(sparse, {1})));
  const Tensor mask = gt(x, 0.0);
  EXPECT_TRUE(x.masked_select(mask).equal(masked_select(x, mask)));
}

TEST(ComposedMethods, InPlaceFormsWriteTheOutOfPlaceResult) {
  const Tensor x = test::uniform_input({3, 4}, -2, 2, 5).detach();
  const Tensor end = test::uniform_input({3, 4}, -2, 2, 6).detach();
  const Tensor w = test::uniform_input({4}, 0, 1, 7).detach();
  const Tensor row = test::uniform_input({4}, 0.5, 1.5, 8).detach();
  // Both lerp forms (|weight| < 0.5 and not).
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.lerp_(end, 0.25); },
      [&](const Tensor& s) { return lerp(s, end, 0.25); });
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.lerp_(end, 0.75); },
      [&](const Tensor& s) { return lerp(s, end, 0.75); });
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.lerp_(end, w); },
      [&](const Tensor& s) { return lerp(s, end, w); });
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.addcmul_(end, row, -0.5); },
      [&](const Tensor& s) { return addcmul(s, end, row, -0.5); });
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.addcdiv_(end, row, 3.0); },
      [&](const Tensor& s) { return addcdiv(s, end, row, 3.0); });
  const Tensor index = index_of({3, 1, 3});
  const Tensor source = test::uniform_input({3, 3}, -1, 1, 9).detach();
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.index_add_(1, index, source.t(), 0.5); },
      [&](const Tensor& s) { return index_add(s, 1, index, source.t(), 0.5); });
  expect_in_place(
      x,
      [&](Tensor& s) -> Tensor& {
        return s.index_fill_(0, index_of({0, 2}), -3.0);
      },
      [&](const Tensor& s) {
        return index_fill(s, 0, index_of({0, 2}), -3.0);
      });
  // The optimizer idiom, on a leaf that requires grad under NoGradGuard.
  Tensor state = test::uniform_input({4}, 0, 1, 10);
  const Tensor before = state.detach().clone();
  const Tensor g = row;
  {
    NoGradGuard no_grad;
    state.mul_(0.999).addcmul_(g, g, 0.001);
  }
  EXPECT_TRUE(state.detach().equal(addcmul(mul(before, 0.999), g, g, 0.001)));
}

TEST(ComposedMethods, InPlaceGradientsByFiniteDifferences) {
  const Tensor x = test::uniform_input({2, 3}, -1, 1, 11);
  const Tensor end = test::uniform_input({2, 3}, -1, 1, 12);
  const Tensor w = test::uniform_input({3}, 0, 1, 13);
  const Tensor t1 = test::uniform_input({2, 3}, -1, 1, 14);
  const Tensor t2 = test::uniform_input({3}, 0.5, 1.5, 15);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;  // a non-leaf, written in place
        return h.lerp_(in[1], in[2]) * 1.0;
      },
      {x, end, w}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.lerp_(in[1], 0.8);
        return h;
      },
      {x, end}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.addcmul_(in[1], in[2], 0.5);
        return h;
      },
      {x, t1, t2}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.addcdiv_(in[1], in[2], -2.0);
        return h;
      },
      {x, t1, t2}));
  const Tensor source = test::uniform_input({2, 2}, -1, 1, 16);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.index_add_(1, index_of({2, 2}), in[1], 3.0);  // a repeated index adds twice
        return h;
      },
      {x, source}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.index_fill_(1, index_of({0}), 4.0);
        return h;
      },
      {x}));
  // Only an operand requires grad: self (a constant) takes the history.
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = zeros({2, 3}, kFloat64);
        h.index_add_(1, index_of({1, 0}), in[0]);
        return h;
      },
      {source}));
}

TEST(ComposedMethods, InPlaceRefusals) {
  Tensor x = zeros({3});
  const Tensor wide = ones({2, 3});
  EXPECT_THROW_MSG(x.addcmul_(wide, wide),
                   "addcmul_: the result of shape [2, 3] does not fit in "
                   "self of shape [3] (in-place ops do not grow self)");
  EXPECT_THROW_MSG(x.lerp_(wide, 0.5), "lerp_: the result of shape [2, 3] does not fit");
  Tensor leaf = ones({3}).requires_grad_();
  EXPECT_THROW_MSG(leaf.addcdiv_(ones({3}), ones({3})),
                   "addcdiv_: in-place operation on a leaf tensor that requires grad");
  EXPECT_THROW_MSG(leaf.index_fill_(0, index_of({0}), 1.0),
                   "index_fill_: in-place operation on a leaf tensor that requires grad");
  // The out-of-place op's own checks name it.
  Tensor y = zeros({3});
  EXPECT_THROW_MSG(y.index_add_(0, index_of({5}), ones({1})), "index_add");
  EXPECT_THROW_MSG(y.lerp_(zeros({3}, kFloat64), 0.5), "lerp");
  EXPECT_TRUE(y.equal(zeros({3})));  // nothing written by a refused op
}

// ---- LibTorch's methods over free functions, their in-place forms, to(options) -----------

TEST(LibTorchMethods, AreTheFreeFunctions) {
  const Tensor x = test::uniform_input({3, 3}, -1, 1, 21).detach();
  const Tensor y = test::uniform_input({3, 3}, -1, 1, 22).detach();
  const Tensor v = test::uniform_input({3}, -1, 1, 23).detach();
  const Tensor b1 = test::uniform_input({2, 3, 4}, -1, 1, 24).detach();
  const Tensor b2 = test::uniform_input({2, 4, 3}, -1, 1, 25).detach();
  EXPECT_TRUE(x.addmm(y, x, 0.5, 2.0).equal(addmm(x, y, x, 0.5, 2.0)));
  EXPECT_TRUE(v.addmv(x, v, 2.0, -1.0).equal(addmv(v, x, v, 2.0, -1.0)));
  EXPECT_TRUE(x.addbmm(b1, b2).equal(addbmm(x, b1, b2)));
  EXPECT_TRUE(x.expand({2, 3, 3}).baddbmm(b1, b2, 0.5).equal(baddbmm(x, b1, b2, 0.5)));
  EXPECT_TRUE(x.cross(y, 1).equal(cross(x, y, 1)));
  EXPECT_TRUE(v.diag(1).equal(diag(v, 1)));
  EXPECT_TRUE(x.diagonal(-1).equal(diagonal(x, -1)));
  EXPECT_TRUE(x.diff(2, 0).equal(diff(x, 2, 0)));
  EXPECT_TRUE(x.kron(y).equal(kron(x, y)));
  EXPECT_TRUE(x.trace().equal(trace(x)));
  EXPECT_TRUE(x.matrix_exp().equal(matrix_exp(x)));
  EXPECT_TRUE(x.maximum(y).equal(maximum(x, y)));
  EXPECT_TRUE(x.minimum(y).equal(minimum(x, y)));
  EXPECT_TRUE(x.where(gt(x, 0.0), y).equal(where(gt(x, 0.0), x, y)));
  const Tensor counts = index_of({0, 3, 3, 1});
  EXPECT_TRUE(counts.bincount(Tensor(), 5).equal(bincount(counts, Tensor(), 5)));
  manual_seed(3);
  const Tensor drawn = abs(x).multinomial(2);
  manual_seed(3);
  EXPECT_TRUE(drawn.equal(multinomial(abs(x), 2)));
  EXPECT_TRUE(x.narrow_copy(1, 1, 2).equal(narrow(x, 1, 1, 2)));
  EXPECT_NE(x.narrow_copy(1, 1, 2).data_ptr(), narrow(x, 1, 1, 2).data_ptr());
  EXPECT_TRUE(x.is_same_size(y));
  EXPECT_FALSE(x.is_same_size(v));
}

TEST(LibTorchMethods, InnerTakeAndSumToSizeAgainstLoops) {
  const Tensor a = test::uniform_input({2, 3}, -1, 1, 26).detach();
  const Tensor b = test::uniform_input({4, 3}, -1, 1, 27).detach();
  // inner(a, b)[i, j] = sum_k a[i, k] b[j, k]: the loop in double over the float64 inputs.
  const Tensor got = a.inner(b);
  ASSERT_EQ(got.shape(), (Shape{2, 4}));
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 4; ++j) {
      double want = 0;
      for (std::int64_t k = 0; k < 3; ++k)
        want += a[i][k].item<double>() * b[j][k].item<double>();
      EXPECT_NEAR(got[i][j].item<double>(), want, 4 * 3 * 1.2e-16);
    }
  }
  EXPECT_TRUE(inner(a, full({}, 2.0, kFloat64)).equal(mul(a, 2.0)));
  EXPECT_THROW(inner(a, ones({2, 2}, kFloat64)), ShapeError);
  // take: the flattened elements at each index, negative ones from the end.
  const Tensor index = test::make_tensor({0, 5, -1, -6, 3, 3}, {2, 3}, kInt64);
  const Tensor taken = a.take(index);
  ASSERT_EQ(taken.shape(), (Shape{2, 3}));
  const std::vector<std::int64_t> flat = {0, 5, 5, 0, 3, 3};
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(taken.reshape({-1})[i].item<double>(),
              a.reshape({-1})[flat[static_cast<std::size_t>(i)]].item<double>());
  }
  EXPECT_THROW(a.take(index_of({6})), ShapeError);
  EXPECT_THROW(a.take(index_of({-7})), ShapeError);
  EXPECT_THROW(a.take(index_of({0}).to(kInt32)), DTypeError);
  // take's gradient: each element's count of appearances times the upstream 1.
  const Tensor leaf = a.clone().requires_grad_(true);
  sum(take(leaf, index)).backward();
  EXPECT_TRUE(leaf.grad().equal(test::make_tensor({2, 0, 0, 2, 0, 2}, {2, 3}, kFloat64)));
  // sum_to_size: the sums over the dims size broadcasts along.
  EXPECT_TRUE(a.sum_to_size({1, 3}).equal(sum(a, {0}, true)));
  EXPECT_TRUE(a.sum_to_size({3}).equal(sum(a, {0})));
  EXPECT_THROW(a.sum_to_size({2, 2}), ShapeError);
  // is_nonzero reads one element.
  EXPECT_TRUE(full({1}, -0.5).is_nonzero());
  EXPECT_FALSE(zeros({1, 1}).is_nonzero());
  EXPECT_THROW(zeros({2}).is_nonzero(), ShapeError);
}

TEST(LibTorchMethods, InPlaceFormsWriteTheOutOfPlaceResult) {
  const Tensor x = test::uniform_input({3, 4}, -2, 2, 28).detach();
  const Tensor positive = test::uniform_input({3, 4}, 0.5, 2, 29).detach();
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.tril_(1); },
      [](const Tensor& s) { return tril(s, 1); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.triu_(-1); },
      [](const Tensor& s) { return triu(s, -1); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.cumsum_(1); },
      [](const Tensor& s) { return cumsum(s, 1); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.cumprod_(0); },
      [](const Tensor& s) { return cumprod(s, 0); });
  expect_in_place(
      div(x, 0.0), [](Tensor& s) -> Tensor& { return s.nan_to_num_(1.0, 2.0, -3.0); },
      [](const Tensor& s) { return nan_to_num(s, 1.0, 2.0, -3.0); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.square_(); },
      [](const Tensor& s) { return square(s); });
  expect_in_place(
      positive, [&](Tensor& s) -> Tensor& { return s.pow_(x); },
      [&](const Tensor& s) { return pow(s, x); });
  expect_in_place(
      positive, [](Tensor& s) -> Tensor& { return s.pow_(1.5); },
      [](const Tensor& s) { return pow(s, 1.5); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.renorm_(2.0, 0, 1.0); },
      [](const Tensor& s) { return renorm(s, 2.0, 0, 1.0); });
  const Tensor source = test::uniform_input({12}, -1, 1, 30).detach();
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.masked_scatter_(gt(x, 0.0), source); },
      [&](const Tensor& s) { return masked_scatter(s, gt(x, 0.0), source); });
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.div_(positive, "floor"); },
      [&](const Tensor& s) { return div(s, positive, "floor"); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.div_(0.7, "trunc"); },
      [](const Tensor& s) { return div(s, 0.7, "trunc"); });
  expect_in_place(
      x, [](Tensor& s) -> Tensor& { return s.clip_(-1.0, 0.5); },
      [](const Tensor& s) { return clamp(s, -1.0, 0.5); });
  expect_in_place(
      mul(x, 0.4), [](Tensor& s) -> Tensor& { return s.arcsin_(); },
      [](const Tensor& s) { return asin(s); });
  expect_in_place(
      x, [&](Tensor& s) -> Tensor& { return s.subtract_(positive, 2.0); },
      [&](const Tensor& s) { return sub(s, positive, 2.0); });
  // An integral self keeps its dtype: div_ with a mode writes integers.
  Tensor ints = index_of({7, -7, 9});
  ints.div_(2.0, "floor");
  EXPECT_TRUE(ints.equal(index_of({3, -4, 4})));
  Tensor refused = index_of({7});
  EXPECT_THROW(refused.div_(2.0, std::nullopt), DTypeError);  // true division: float into int64
}

TEST(LibTorchMethods, InPlaceGradientsByFiniteDifferences) {
  const Tensor x = test::uniform_input({3, 3}, -1, 1, 31);
  const Tensor e = test::uniform_input({3, 3}, -1, 1, 32);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.tril_().cumsum_(0);
        return h;
      },
      {x}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = add(in[0], 2.0);
        h.pow_(in[1]).square_();
        return h;
      },
      {x, e}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.renorm_(2.0, 1, 0.5);
        return h;
      },
      {x}));
}

TEST(LibTorchMethods, ToWithOptions) {
  const Tensor x = test::uniform_input({2, 2}, -1, 1, 33);
  // Nothing to change: x itself (LibTorch's too), unless copy.
  EXPECT_TRUE(x.to(TensorOptions()).is_same(x));
  EXPECT_TRUE(x.to(TensorOptions(kFloat64).device(kCPU)).is_same(x));
  const Tensor copied = x.to(TensorOptions(), false, /*copy=*/true);
  EXPECT_NE(copied.data_ptr(), x.data_ptr());
  EXPECT_TRUE(copied.equal(x));
  // A dtype alone keeps the device; the gradient flows back through the cast.
  const Tensor f = x.to(TensorOptions(kFloat32));
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_TRUE(f.device().is_cpu());
  sum(f).backward();
  EXPECT_TRUE(x.grad().equal(ones({2, 2}, kFloat64)));
  // new_empty_strided merges options as new_empty does.
  const Tensor e = x.new_empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(e.dtype(), kFloat64);
  EXPECT_EQ(e.strides(), (Strides{1, 2}));
  EXPECT_EQ(x.new_empty_strided({2}, {1}, kInt32).dtype(), kInt32);
}

}  // namespace
}  // namespace leangrad
