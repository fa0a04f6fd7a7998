// In-place ops on tensors autograd records (Note [In-place ops in the graph] in
// autograd/tensor_methods.cpp): gradients through relu_, add_, sub_, mul_, div_, copy_, fill_ and
// zero_ checked against central differences in float64, a ResNet-style block with ReLU(inplace)
// and `out += identity`, and the cases that stay refused. The in-place activations, the bit-for-bit
// comparisons with the out-of-place ops and the memory the graph keeps are in
// test_inplace_activations.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using autograd::grad;

TEST(InPlaceRecorded, ReluOnANonLeafMatchesTheOutOfPlaceOp) {
  Tensor x = test::away_from_zero_input({3, 4}, 0.2, 1.0, 31);
  Tensor y = x * 1.5;
  Tensor& same = y.relu_();
  EXPECT_EQ(&same, &y);
  EXPECT_TRUE(y.equal(relu(x * 1.5)));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "ReluBackward");
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.5;
        h.relu_();
        return h * h;
      },
      {x}));
}

TEST(InPlaceRecorded, ArithmeticWithTensorsAndNumbers) {
  Tensor x = test::uniform_input({2, 3}, -1.0, 1.0, 32);
  Tensor w = test::uniform_input({3}, 0.5, 1.5, 33);  // broadcast over rows; kept away from 0
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.0;  // a non-leaf
        h.mul_(in[1]);           // saves self: computed on a copy of h
        h.add_(in[1], 0.5);
        h.sub_(in[0]);
        h.div_(in[1] + 2.0);  // saves self too
        h.mul_(3.0);
        h.add_(1.0);
        h.sub_(0.25);
        h.div_(2.0);
        h *= h;
        return h;
      },
      {x, w}));
}

TEST(InPlaceRecorded, AGradientWrittenIntoABufferMakesItRequireGrad) {
  Tensor w = test::uniform_input({3}, -1.0, 1.0, 34);
  Tensor buffer = zeros({2, 3}, kFloat64);
  buffer += w;  // broadcast; buffer did not require grad
  ASSERT_TRUE(buffer.requires_grad());
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor b = zeros({2, 3}, kFloat64);
        b.copy_(in[0]);  // broadcast copy: the gradient sums over the rows
        b += in[0] * 2.0;
        b.mul_(in[0]);
        return b;
      },
      {w}));
}

TEST(InPlaceRecorded, FillAndZeroCutTheGradientOfWhatWasThere) {
  Tensor x = test::uniform_input({4}, -1.0, 1.0, 35);
  Tensor y = x * 2.0;
  y.zero_();
  ASSERT_TRUE(y.requires_grad());
  (y + x * 3.0).sum().backward();
  test::expect_close(x.grad(), {3.0, 3.0, 3.0, 3.0}, 0.0, 0.0);
  Tensor z = x * 2.0;
  z.fill_(5.0);
  test::expect_close(z, {5.0, 5.0, 5.0, 5.0}, 0.0, 0.0);
  // x still reaches z's graph, with a zero gradient (PyTorch's FillBackward gives zeros too).
  test::expect_close(grad({z.sum()}, {x})[0], {0.0, 0.0, 0.0, 0.0}, 0.0, 0.0);
}

// A residual block as ResNets write it: ReLU(inplace) twice and `out += identity`.
TEST(InPlaceRecorded, ResidualBlockWithInPlaceReluAndAdd) {
  Tensor x = test::uniform_input({1, 2, 5, 5}, -1.0, 1.0, 36);
  Tensor w1 = test::uniform_input({2, 2, 3, 3}, -0.5, 0.5, 37);
  Tensor w2 = test::uniform_input({2, 2, 3, 3}, -0.5, 0.5, 38);
  auto block = [](const std::vector<Tensor>& in) {
    Tensor out = conv2d(in[0], in[1], Tensor(), {1, 1}, {1, 1});
    out.relu_();
    out = conv2d(out, in[2], Tensor(), {1, 1}, {1, 1});
    out += in[0];
    out.relu_();
    return out;
  };
  EXPECT_TRUE(test::gradcheck(block, {x, w1, w2}));
  // The same block written out of place gives the same gradients, bit for bit.
  Tensor y = block({x, w1, w2});
  const std::vector<Tensor> g_in_place = grad({y.sum()}, {x, w1, w2});
  Tensor h = relu(conv2d(x, w1, Tensor(), {1, 1}, {1, 1}));
  Tensor y2 = relu(conv2d(h, w2, Tensor(), {1, 1}, {1, 1}) + x);
  const std::vector<Tensor> g_out_of_place = grad({y2.sum()}, {x, w1, w2});
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(g_in_place[i].equal(g_out_of_place[i])) << "input " << i;
}

TEST(InPlaceRecorded, RefusedWhereTheGraphWouldBeWrong) {
  Tensor x = test::uniform_input({2}, -1.0, 1.0, 39);
  std::string m = test::error_message([&] { x.relu_(); });  // a leaf that requires grad
  EXPECT_NE(m.find("leaf"), std::string::npos) << m;
  Tensor z = x * 2.0;
  Tensor saved_by_mul = z * z;  // MulBackward saves z
  z.add_(1.0);
  m = test::error_message([&] { saved_by_mul.sum().backward(); });
  EXPECT_NE(m.find("MulBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("in-place"), std::string::npos) << m;
}

// atan2_ beside atan2: values and both gradients bit for bit (the same kernel and formula), other
// broadcast to self; float64 gradchecks of first and second order; x.atan2_(x); the copy of self
// the node keeps (a later write to self leaves the gradient right), and other, saved before the
// write, caught when written afterwards.
TEST(InPlaceRecorded, Atan2MatchesTheOutOfPlaceOp) {
  const Tensor x = test::away_from_zero_input({3, 4}, 0.2, 1.0, 41);
  const Tensor w = test::away_from_zero_input({4}, 0.2, 1.0, 42);  // broadcast over the rows
  const Tensor v = test::uniform_input({3, 4}, -2.0, 2.0, 43).detach();
  Tensor h = x * 1.0;
  const void* memory = h.data_ptr();
  const std::uint32_t version = h.version();
  Tensor& same = h.atan2_(w);
  EXPECT_EQ(&same, &h);
  EXPECT_EQ(h.data_ptr(), memory);
  EXPECT_GT(h.version(), version);
  ASSERT_NE(h.grad_fn(), nullptr);
  EXPECT_EQ(h.grad_fn()->name(), "Atan2Backward");
  const Tensor twin = atan2(x * 1.0, w);
  EXPECT_TRUE(h.equal(twin));
  const std::vector<Tensor> g = grad({(h * v).sum()}, {x, w});
  const std::vector<Tensor> g_twin = grad({(twin * v).sum()}, {x, w});
  EXPECT_TRUE(g[0].equal(g_twin[0]));
  EXPECT_TRUE(g[1].equal(g_twin[1]));
  const auto f = [](const std::vector<Tensor>& in) {
    Tensor a = in[0] * 1.0;
    a.atan2_(in[1]);
    a.mul_(3.0);  // writes self after the node saved its copy: the gradient stays atan2's
    return a * in[0];
  };
  EXPECT_TRUE(test::gradcheck(f, {x, w}));
  const auto first_derivative = [](const std::vector<Tensor>& in) {
    AutoGradMode enable(true);
    Tensor a = in[0] * 1.0;
    a.atan2_(in[1]);
    return grad({(a * a).sum()}, {in[0], in[1]}, {}, std::nullopt, /*create_graph=*/true)[1];
  };
  EXPECT_TRUE(test::gradcheck(first_derivative, {x, w}));
  // x.atan2_(x): both operands are the copy of self before the write (atan2(x, x) = pi / 4 for
  // x > 0, -3 pi / 4 for x < 0; its gradient (x - x) / (2 x^2) is 0).
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor a = in[0] * 1.0;
        a.atan2_(a);
        return a * in[0];
      },
      {x}));
  // other is saved before the write: writing it afterwards is caught at backward.
  Tensor other = w * 1.0;
  Tensor b = x * 1.0;
  b.atan2_(other);
  other.add_(1.0);
  const std::string m = test::error_message([&] { b.sum().backward(); });
  EXPECT_NE(m.find("Atan2Backward"), std::string::npos) << m;
  EXPECT_NE(m.find("modified by an in-place operation"), std::string::npos) << m;
}

// masked_fill_ beside masked_fill: values bit for bit in every dtype (bool self too), with a
// mask broadcast to self's shape, into a transposed view, with a value that is an element of
// self (read before the write) and with the mask being self; unrecorded under NoGradGuard.
TEST(InPlaceRecorded, MaskedFillMatchesTheOutOfPlaceOp) {
  const Tensor mask = test::make_tensor({1, 0, 0, 1}, {4}, kBool);  // broadcast over the rows
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = test::make_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4}, dtype);
    Tensor y = x.clone();
    y.masked_fill_(mask, 7.0);
    EXPECT_EQ(y.dtype(), dtype);
    test::expect_close(y, {7, 2, 3, 7, 7, 6, 7, 7, 7, 10, 11, 7}, 0.0, 0.0);
    EXPECT_TRUE(y.equal(masked_fill(x, mask, 7.0)));
    Tensor t = x.clone().t();  // (4, 3): a mask of shape (4, 1) broadcast over its columns
    t.masked_fill_(mask.view({4, 1}), full({}, -1.0, kFloat64));
    EXPECT_TRUE(t.equal(masked_fill(x.t(), mask.view({4, 1}), -1.0)));
  }
  Tensor b = test::make_tensor({1, 0, 1, 0}, {4}, kBool);
  b.masked_fill_(mask, 0.0);
  test::expect_close(b, {0, 0, 1, 0}, 0.0, 0.0);
  Tensor self_mask = test::make_tensor({1, 0, 1, 1}, {4}, kBool);
  self_mask.masked_fill_(self_mask, 0.0);  // the mask is self: read before each write
  test::expect_close(self_mask, {0, 0, 0, 0}, 0.0, 0.0);
  Tensor e = test::make_tensor({5, 6, 7, 8}, {4}, kFloat32);
  e.masked_fill_(mask, e[1]);  // the value is self's element 1, which the write leaves alone
  test::expect_close(e, {6, 6, 7, 6}, 0.0, 0.0);
  Tensor f = test::make_tensor({5, 6, 7, 8}, {4}, kFloat32);
  f.masked_fill_(mask, f[0]);  // the value is self's element 0, which the write overwrites
  test::expect_close(f, {5, 6, 7, 5}, 0.0, 0.0);
}

// Recorded: self's gradient where the mask is false, the 0-d value's the sum where it is true
// (as masked_fill's where); float64 gradchecks of both; the mask saved (a later write to it is
// caught at backward, as PyTorch's).
TEST(InPlaceRecorded, MaskedFillGradients) {
  const Tensor x = test::uniform_input({3, 4}, -1.0, 1.0, 44);
  const Tensor value = test::uniform_input({}, -1.0, 1.0, 45);
  const Tensor mask = test::make_tensor({1, 0, 0, 1}, {4}, kBool);
  const Tensor v = test::uniform_input({3, 4}, -2.0, 2.0, 46).detach();
  Tensor h = x * 1.0;
  const std::uint32_t version = h.version();
  h.masked_fill_(mask, value);
  EXPECT_GT(h.version(), version);
  ASSERT_NE(h.grad_fn(), nullptr);
  EXPECT_EQ(h.grad_fn()->name(), "MaskedFillBackward");
  const Tensor twin = masked_fill(x * 1.0, mask, value);
  EXPECT_TRUE(h.equal(twin));
  const std::vector<Tensor> g = grad({(h * v).sum()}, {x, value});
  const std::vector<Tensor> g_twin = grad({(twin * v).sum()}, {x, value});
  EXPECT_TRUE(g[0].equal(g_twin[0]));
  EXPECT_TRUE(g[1].equal(g_twin[1]));
  EXPECT_TRUE(test::gradcheck(
      [&mask](const std::vector<Tensor>& in) {
        Tensor a = in[0] * 2.0;
        a.masked_fill_(mask, in[1]);
        a.masked_fill_(eq(mask, 0.0), 0.5);  // a number: self's gradient only
        return a * in[0];
      },
      {x, value}));
  // A value that needs a gradient makes a buffer that did not require grad require it.
  Tensor buffer = zeros({2, 4}, kFloat64);
  buffer.masked_fill_(mask, value);
  ASSERT_TRUE(buffer.requires_grad());
  test::expect_close(grad({buffer.sum()}, {value})[0], {4.0}, 0.0, 0.0);  // 2 rows x 2 true
  Tensor written_mask = mask.clone();
  Tensor c = x * 1.0;
  c.masked_fill_(written_mask, 0.0);
  written_mask.fill_(0.0);
  const std::string m = test::error_message([&] { c.sum().backward(); });
  EXPECT_NE(m.find("MaskedFillBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("modified by an in-place operation"), std::string::npos) << m;
}

// The new in-place methods on a leaf that requires grad and on a view of it: refused as the
// others are (Note [In-place ops in the graph]); allowed under NoGradGuard. (Writes through a view
// of a non-leaf are recorded: test_inplace_views.cpp.)
TEST(InPlaceRecorded, NewMethodsRefusedWhereTheGraphWouldBeWrong) {
  const Tensor x = test::uniform_input({2, 3}, 0.2, 0.8, 47);
  const Tensor mask = test::make_tensor({1}, {1}, kBool);  // broadcasts to (2, 3) and (3, 2)
  const std::vector<std::pair<std::string, std::function<void(Tensor&)>>> methods = {
      {"asin_", [](Tensor& t) { t.asin_(); }},
      {"exp2_", [](Tensor& t) { t.exp2_(); }},
      {"atan2_", [&x](Tensor& t) { t.atan2_(x.detach()); }},
      {"round_", [](Tensor& t) { t.round_(2); }},
      {"clamp_", [](Tensor& t) { t.clamp_(0.3, 0.6); }},
      {"masked_fill_", [&mask](Tensor& t) { t.masked_fill_(mask, 0.0); }},
  };
  for (const auto& row : methods) {
    const std::string& name = row.first;
    const std::function<void(Tensor&)>& method = row.second;
    SCOPED_TRACE(name);
    Tensor leaf = x.detach().clone().requires_grad_();
    std::string m = test::error_message([&] { method(leaf); });
    EXPECT_NE(m.find(name), std::string::npos) << m;
    EXPECT_NE(m.find("leaf"), std::string::npos) << m;
    Tensor view_of_leaf = leaf.view({3, 2});
    m = test::error_message([&] { method(view_of_leaf); });
    EXPECT_NE(m.find(name), std::string::npos) << m;
    EXPECT_NE(m.find("view"), std::string::npos) << m;
    EXPECT_NE(m.find("leaf"), std::string::npos) << m;
    NoGradGuard no_grad;
    EXPECT_EQ(test::error_message([&] { method(leaf); }), "(no error)");
  }
}

}  // namespace
// Every in-place method refuses an expanded self (two elements in one memory location) with an
// error that names the method, not copy_ or whichever op writes for it (torch raises "unsupported
// operation: more than one element of the written-to tensor refers to a single memory location").
// fill_ and zero_ write one value everywhere and are allowed, as torch's.
TEST(InPlaceRecorded, AnExpandedSelfIsRefusedNamingTheMethod) {
  const Tensor index = tensor(std::vector<std::int64_t>{1}, {1});
  const Tensor index2d = zeros({1, 3}, kInt64);
  const Tensor row = full({1, 3}, 0.5);
  const Tensor mask = tensor(std::vector<std::uint8_t>{1, 0, 1}, {3}).to(kBool);
  using Call = std::function<void(Tensor&)>;
  const std::vector<std::pair<std::string, Call>> calls = {
      {"abs_", [](Tensor& t) { t.abs_(); }},
      {"add_", [&](Tensor& t) { t.add_(row); }},
      {"addmm_",
       [](Tensor& t) {
         t.addmm_(ones({4, 2}), ones({2, 3}));
       }},
      {"addcmul_", [&](Tensor& t) { t.addcmul_(row, row); }},
      {"clamp_", [](Tensor& t) { t.clamp_(0.0, 1.0); }},
      {"cumsum_", [](Tensor& t) { t.cumsum_(0); }},
      {"cumprod_", [](Tensor& t) { t.cumprod_(1); }},
      {"exp_", [](Tensor& t) { t.exp_(); }},
      {"frac_", [](Tensor& t) { t.frac_(); }},
      {"index_fill_", [&](Tensor& t) { t.index_fill_(0, index, 3.0); }},
      {"index_add_", [&](Tensor& t) { t.index_add_(0, index, row); }},
      {"index_put_", [&](Tensor& t) { t.index_put_({1}, row.squeeze(0)); }},
      {"lerp_", [&](Tensor& t) { t.lerp_(row, 0.5); }},
      {"masked_fill_", [&](Tensor& t) { t.masked_fill_(mask, 1.0); }},
      {"mul_", [](Tensor& t) { t.mul_(2.0); }},
      {"nan_to_num_", [](Tensor& t) { t.nan_to_num_(); }},
      {"normal_", [](Tensor& t) { t.normal_(); }},
      {"scatter_", [&](Tensor& t) { t.scatter_(0, index2d, row); }},
      {"sgn_", [](Tensor& t) { t.sgn_(); }},
      {"tril_", [](Tensor& t) { t.tril_(); }},
      {"triu_", [](Tensor& t) { t.triu_(); }},
      {"uniform_", [](Tensor& t) { t.uniform_(); }},
      {"xlogy_", [&](Tensor& t) { t.xlogy_(row); }},
  };
  for (const auto& [name, call] : calls) {
    Tensor expanded = zeros({1, 3}).expand({4, 3});
    try {
      call(expanded);
      ADD_FAILURE() << name << " wrote into an expanded tensor";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(name + ": cannot write in place into an expanded tensor", 0), 0u)
          << name << ": " << message;
    }
  }
  Tensor expanded = zeros({1, 3}).expand({4, 3});
  expanded.fill_(2.0);
  expanded.zero_();
  EXPECT_TRUE(test::all_close(expanded, std::vector<double>(12, 0.0), 0, 0));
}

}  // namespace leangrad
