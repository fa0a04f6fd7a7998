// The composed ops as Tensor methods (core/tensor.h; autograd/tensor_methods.cpp): each method is
// its free function bit for bit (those are checked against torch and by finite differences in
// test_arithmetic_indexing.cpp), each in-place form leaves in self what the out-of-place op
// returns, bit for bit, in self's own memory with its version bumped; its gradients, recorded,
// are checked by central differences in float64; a result that would grow self, a leaf that
// requires grad and wrong operands are Errors naming the op.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
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

}  // namespace
}  // namespace leangrad
