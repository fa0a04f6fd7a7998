// In-place writes through views (Note [In-place writes through views] in autograd/graph.cpp):
// gradients of programs that write a slice, a select, a transposed or reshaped view, or a view of
// a view of a tensor in the graph, checked against central differences in float64; the base's
// other views following the write; a buffer that does not require grad filled from tensors that
// do; index_put_ with basic and tensor indices on a non-leaf; and the writes that stay refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/indexing.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using autograd::grad;
using indexing::Slice;

// y = exp(x) * 1.5, a non-leaf of x's shape (4, 3) whose every element depends on x.
Tensor base_of(const Tensor& x) {
  return exp(x) * 1.5;
}

// Each in-place family written through a column of y: the function's gradients in x and in the
// operand against central differences. The out-of-place composition is the reference for the
// values.
TEST(InPlaceThroughViews, EachKindOfWriteThroughAColumn) {
  const Tensor x = test::uniform_input({4, 3}, -0.8, 0.8, 61);
  const Tensor o = test::away_from_zero_input({4}, 0.3, 0.9, 62);
  struct Write {
    const char* name;
    std::function<void(Tensor&, const Tensor&)> write;  // (the column view, the operand)
  };
  const std::vector<Write> writes = {
      {"copy_", [](Tensor& v, const Tensor& b) { v.copy_(b * b); }},
      {"add_", [](Tensor& v, const Tensor& b) { v.add_(b, 2.0); }},
      {"sub_", [](Tensor& v, const Tensor& b) { v.sub_(b); }},
      {"mul_ (operand requires grad)", [](Tensor& v, const Tensor& b) { v.mul_(b); }},
      {"div_ (operand requires grad)", [](Tensor& v, const Tensor& b) { v.div_(b); }},
      {"mul_ (operand constant)",
       [](Tensor& v, const Tensor& b) {
         v.mul_(test::make_tensor({0.5, -2.0, 3.0, 0.25}, {4}, kFloat64)).add_(b);
       }},
      {"exp_ (saves its output)", [](Tensor& v, const Tensor& b) { v.add_(b).exp_(); }},
      {"sin_ (saves its input)", [](Tensor& v, const Tensor& b) { v.sin_().mul_(b); }},
      {"clamp_", [](Tensor& v, const Tensor& b) { v.clamp_(0.5, 2.0).add_(b); }},
      {"relu_", [](Tensor& v, const Tensor& b) { v.sub_(1.2).add_(b).relu_(); }},
      {"atan2_", [](Tensor& v, const Tensor& b) { v.atan2_(b); }},
      {"masked_fill_",
       [](Tensor& v, const Tensor& b) {
         v.masked_fill_(test::make_tensor({1, 0, 0, 1}, {4}, kBool), b.sum());
       }},
      {"fill_ then add_", [](Tensor& v, const Tensor& b) { v.fill_(0.25).add_(b); }},
      {"zero_", [](Tensor& v, const Tensor&) { v.zero_(); }},
  };
  for (const Write& w : writes) {
    SCOPED_TRACE(w.name);
    const auto fn = [&w](const std::vector<Tensor>& in) {
      Tensor y = base_of(in[0]);
      Tensor column = y.select(1, 1);
      w.write(column, in[1]);
      return y * 1.0;  // y's gradient reaches the CopySlices node through a use of y
    };
    EXPECT_TRUE(test::gradcheck(fn, {x, o}));
    // The values: the write on a copy of y, out of the graph.
    Tensor expected = base_of(x).detach().clone();
    {
      NoGradGuard no_grad;
      Tensor column = expected.select(1, 1);
      w.write(column, o.detach());
    }
    EXPECT_TRUE(fn({x, o}).equal(expected));
  }
}

// The base takes CopySlices as its history, the written view an as_strided view of it, and the
// values are those of the write.
TEST(InPlaceThroughViews, TheBaseTakesTheWrite) {
  const Tensor x = test::uniform_input({3, 4}, -1.0, 1.0, 63);
  Tensor y = x * 2.0;
  Tensor row = y.select(0, 2);
  row.mul_(3.0);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  ASSERT_NE(row.grad_fn(), nullptr);
  EXPECT_EQ(row.grad_fn()->name(), "AsStridedBackward");
  y.sum().backward();
  // d/dx of sum(2x), with the last row's 2 tripled.
  Tensor expected = full({3, 4}, 2.0, kFloat64);
  expected.select(0, 2).fill_(6.0);
  EXPECT_TRUE(x.grad().equal(expected));
}

// A view made before the write, of the same base, reads the new values and must pass its gradient
// to the new history: an unwritten row, the written one, and the whole base through a reshape.
TEST(InPlaceThroughViews, OtherViewsOfTheBaseFollowTheWrite) {
  const Tensor x = test::uniform_input({3, 4}, -1.0, 1.0, 64);
  const Tensor b = test::uniform_input({4}, -1.0, 1.0, 65);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        const Tensor first = y.select(0, 0);          // left alone by the write
        const Tensor second = y.select(0, 1);         // written through another view below
        const Tensor whole = y.view({12});            // overlaps the write
        const Tensor columns = y.t().slice(0, 1, 4);  // a view of a view
        Tensor target = y.select(0, 1);
        target.mul_(in[1]);
        return cat({first * 1.0, second * 2.0, whole * 3.0, columns.reshape({-1})}, 0);
      },
      {x, b}));
  // An in-place op on the base itself also moves its views to its new history.
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        const Tensor column = y.select(1, 2);
        y.mul_(in[0]);
        return column * 1.0;
      },
      {x}));
}

// The view reads the written values through a chain of views: a transposed, then sliced, then
// reshaped view written, and the base read through another chain.
TEST(InPlaceThroughViews, ViewsOfViews) {
  const Tensor x = test::uniform_input({2, 3, 4}, -1.0, 1.0, 66);
  const Tensor b = test::uniform_input({2, 2}, -1.0, 1.0, 67);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        Tensor v = y.transpose(0, 2).slice(0, 1, 3).select(1, 0);  // (2, 2): y[:, 0, 1:3]^T
        v.add_(exp(in[1]));
        v.t().mul_(in[1]);
        return y.permute({2, 0, 1}) * 1.0;
      },
      {x, b}));
}

// The pattern of filling a buffer that does not require grad: the buffer comes to require it,
// and each row's gradient goes to the tensor written there.
TEST(InPlaceThroughViews, ABufferFilledFromTensorsThatRequireGrad) {
  const Tensor a = test::uniform_input({3}, -1.0, 1.0, 68);
  const Tensor b = test::uniform_input({3}, -1.0, 1.0, 69);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor out = zeros({3, 3}, TensorOptions(kFloat64));
        out.select(0, 0).copy_(in[0] * in[1]);
        out.select(0, 2).copy_(exp(in[1]));
        out.select(1, 1).add_(in[0]);  // crosses both rows written and the one left zero
        return out;
      },
      {a, b}));
  Tensor out = zeros({2, 3}, TensorOptions(kFloat64));
  EXPECT_FALSE(out.requires_grad());
  const Tensor earlier = out.select(0, 1);  // made before the write, of the row written
  out.select(0, 1).copy_(a);
  EXPECT_TRUE(out.requires_grad());
  EXPECT_TRUE(earlier.requires_grad());
  (earlier * 2.0).sum().backward();
  EXPECT_TRUE(a.grad().equal(full({3}, 2.0, kFloat64)));
}

// index_put_ on a non-leaf: basic indices write through a view, tensor indices through copy_.
TEST(InPlaceThroughViews, IndexPutOnANonLeaf) {
  const Tensor x = test::uniform_input({4, 3}, -1.0, 1.0, 70);
  const Tensor v = test::uniform_input({4}, -1.0, 1.0, 71);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        y.index_put_({Slice(), 0}, in[1]);                           // y[:, 0] = v
        y.index_put_({Slice(1, 3), 2}, in[1].slice(0, 0, 2), true);  // y[1:3, 2] += v[:2]
        y.index_put_({"...", 1}, 0.5);                               // y[..., 1] = 0.5
        return y;
      },
      {x, v}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        y.index_put_({test::make_tensor({3, 0}, {2}, kInt64)}, in[1].slice(0, 0, 3));
        return y.select(1, 2).index_put_({test::make_tensor({1}, {1}, kInt64)}, in[1].sum()) * 1.0;
      },
      {x, v}));
  Tensor z = base_of(x);
  z.fill_diagonal_(0.0);  // advanced indices, through copy_
  z.sum().backward();
  Tensor expected = exp(x.detach()) * 1.5;
  expected.fill_diagonal_(0.0);
  EXPECT_TRUE(x.grad().equal(expected));
}

// Second derivatives through CopySlices: its backward is made of differentiable ops.
TEST(InPlaceThroughViews, SecondDerivatives) {
  const Tensor x = test::uniform_input({3, 3}, -0.8, 0.8, 72);
  const Tensor b = test::uniform_input({3}, -0.8, 0.8, 73);
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        y.select(1, 0).mul_(in[1]);
        y.select(0, 2).sin_();
        return y * y;
      },
      {x, b}));
  // A write that saves its result (exp_), the base saved after it: the double backward reaches
  // exp_'s node only through CopySlices, whose history the unpacked result takes.
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = base_of(in[0]);
        y.select(0, 1).exp_();
        return y * y;
      },
      {x}));
}

// Writes autograd does not record leave a view's history alone: a view of a parameter made in
// grad mode keeps its node across an optimizer-like update.
TEST(InPlaceThroughViews, UnrecordedWritesKeepTheViewsHistory) {
  Tensor w = test::uniform_input({2, 3}, -1.0, 1.0, 74);
  const Tensor wt = w.t();
  {
    NoGradGuard no_grad;
    w.add_(1.0);
  }
  ASSERT_NE(wt.grad_fn(), nullptr);
  EXPECT_EQ(wt.grad_fn()->name(), "TransposeBackward");
  (wt * 3.0).sum().backward();
  EXPECT_TRUE(w.grad().equal(full({2, 3}, 3.0, kFloat64)));
}

// Refused with the op's name: a view of a leaf that requires grad, a view made with grad mode
// off, a view of a base that is not contiguous, a view whose elements share memory, a view past
// its base's elements; the base is left as it was.
TEST(InPlaceThroughViews, RefusedWhereAutogradCannotFollow) {
  const Tensor x = test::uniform_input({2, 3}, -1.0, 1.0, 75);
  const Tensor one = ones({3}, TensorOptions(kFloat64)).requires_grad_();
  std::string m = test::error_message([&] { x.select(0, 0).add_(1.0); });
  EXPECT_NE(m.find("add_"), std::string::npos) << m;
  EXPECT_NE(m.find("view"), std::string::npos) << m;
  EXPECT_NE(m.find("leaf"), std::string::npos) << m;

  Tensor y = x * 2.0;
  Tensor outside;
  {
    NoGradGuard no_grad;
    outside = y.select(0, 1);
  }
  const Tensor y_before = y.detach().clone();
  m = test::error_message([&] { outside.mul_(one); });
  EXPECT_NE(m.find("mul_"), std::string::npos) << m;
  EXPECT_NE(m.find("grad mode was off"), std::string::npos) << m;
  // Its views are outside too.
  m = test::error_message([&] { outside.slice(0, 0, 2).add_(one.slice(0, 0, 2)); });
  EXPECT_NE(m.find("grad mode was off"), std::string::npos) << m;
  EXPECT_TRUE(y.equal(y_before));

  Tensor transposed_base = zeros({3, 2}, TensorOptions(kFloat64)).t().detach();  // strides (1, 2)
  m = test::error_message([&] { transposed_base.select(0, 0).copy_(one); });
  EXPECT_NE(m.find("copy_"), std::string::npos) << m;
  EXPECT_NE(m.find("not contiguous"), std::string::npos) << m;

  Tensor windows = (x * 1.0).view({6}).as_strided({2, 3}, {2, 1}, 0);  // rows overlap
  m = test::error_message([&] { windows.mul_(one); });
  EXPECT_NE(m.find("share memory"), std::string::npos) << m;

  // A root over part of a storage (a detached slice), viewed past its elements.
  Tensor part = zeros({8}, TensorOptions(kFloat64)).slice(0, 2, 5).detach();  // elements 2-4
  const Tensor part_before = part.clone();
  Tensor past = part.as_strided({3}, {1}, 4);  // elements 4-6 of the storage
  m = test::error_message([&] { past.copy_(one); });
  EXPECT_NE(m.find("outside its base"), std::string::npos) << m;
  EXPECT_TRUE(part.equal(part_before));
}

// A write autograd would not record (no operand requires grad: a unary op, a number, a constant
// tensor) into a view outside the graph of a base that requires grad is refused as well: the
// base's value would change where its graph does not look, and its gradient come out silently
// wrong (y.sum()'s gradient through an exp_ of y's view). Under NoGradGuard, or when the base
// does not require grad, the write goes through.
TEST(InPlaceThroughViews, UnrecordedWritesIntoViewsOutsideTheGraphAreRefused) {
  const Tensor x = test::uniform_input({2, 3}, -1.0, 1.0, 79);
  const Tensor y = x * 1.0;
  Tensor outside;
  Tensor detached = y.select(0, 0);
  {
    NoGradGuard no_grad;
    outside = y.select(0, 1);
  }
  detached.detach_();
  const Tensor y_before = y.detach().clone();
  const Tensor constant = full({3}, 2.0, kFloat64);
  const std::vector<std::pair<std::string, std::function<void()>>> writes = {
      {"exp_", [&] { outside.exp_(); }},
      {"mul_", [&] { outside.mul_(5.0); }},
      {"copy_", [&] { outside.copy_(constant); }},
      {"fill_", [&] { outside.slice(0, 0, 2).fill_(0.0); }},  // a view of the view
      {"add_", [&] { detached.add_(constant); }},
      {"clamp_", [&] { detached.clamp_(0.0, 0.5); }},
  };
  for (const auto& [op, write] : writes) {
    const std::string m = test::error_message(write);
    EXPECT_NE(m.find(op + ":"), std::string::npos) << m;
    EXPECT_NE(m.find("outside the graph"), std::string::npos) << m;
  }
  EXPECT_TRUE(y.equal(y_before));

  {
    NoGradGuard no_grad;
    outside.exp_();
  }
  EXPECT_TRUE(y.select(0, 1).equal(y_before.select(0, 1).exp()));
  Tensor plain = zeros({2, 3}, TensorOptions(kFloat64));
  Tensor plain_view;
  {
    NoGradGuard no_grad;
    plain_view = plain.select(0, 1);
  }
  plain_view.add_(constant);
  EXPECT_TRUE(plain.select(0, 1).equal(constant));
}

// A node that saves a view of a buffer, whose result is then written into the same buffer (a
// recurrence filling its outputs), is reached from the buffer's history: the graph must not keep
// itself alive once the program drops it, backward or not.
TEST(InPlaceThroughViews, AGraphThroughABufferIsFreedWithoutBackward) {
  const Tensor w = test::uniform_input({4}, -1.0, 1.0, 78);
  std::weak_ptr<Storage> buffer_memory;
  {
    Tensor out = zeros({3, 4}, TensorOptions(kFloat64));
    buffer_memory = out.storage();
    out.select(0, 0).fill_(1.0);
    for (std::int64_t t = 1; t < 3; ++t)
      out.select(0, t).copy_(out.select(0, t - 1) * w);  // MulBackward saves the row read
    ASSERT_EQ(out.grad_fn()->name(), "CopySlices");
  }
  EXPECT_TRUE(buffer_memory.expired());
}

// ---- Random programs ---------------------------------------------------------------------------
// Seeded programs of views, writes through them and reads of them, over y = exp(x) * 1.5 of shape
// (3, 4, 5): views of y or of earlier views (select, slice with a step, transpose, permute,
// unsqueeze, flatten where the layout allows), writes into any of them (add_, sub_ and copy_ of
// another view of the same shape, add_, mul_, div_, copy_ and masked_fill_ of a number that
// requires grad, mul_ by a constant, fill_, zero_, sin_, clamp_), and reads (a view times a
// constant, taken at that point of the program). The output is every read and y at the end; its
// gradient in x and in the numbers' source b is checked against central differences, and its
// value against the same program run without autograd on a copy (bitwise: the same kernels).
// The writes save nothing that a later write changes (no saved output is written again), so
// every program is one a PyTorch user may write.
struct ProgramStep {
  enum class Kind { View, Write, Read } kind;
  std::size_t target = 0;  // the handle viewed, written or read
  int op = 0;              // which view or write
  std::int64_t a = 0, b = 0, c = 0;
  std::vector<std::int64_t> dims;  // permute's order
  std::size_t other = 0;           // the handle read by add_, sub_ and copy_ of a view
  std::vector<double> mask;        // masked_fill_'s, of the target's shape
  double number = 0.0;
};

std::string describe(const std::vector<ProgramStep>& program) {
  static const char* const kViews[] = {"select",  "slice",     "transpose",
                                       "permute", "unsqueeze", "flatten"};
  static const char* const kWrites[] = {
      "add_ view",      "sub_ view",   "copy_ view", "add_ b", "mul_ b", "div_ b", "copy_ b",
      "masked_fill_ b", "mul_ number", "fill_",      "zero_",  "sin_",   "clamp_"};
  std::ostringstream out;
  for (const ProgramStep& s : program) {
    if (s.kind == ProgramStep::Kind::View) {
      out << "h" << s.target << "." << kViews[s.op] << "(" << s.a << ", " << s.b << ", " << s.c
          << "); ";
    } else if (s.kind == ProgramStep::Kind::Write) {
      out << "h" << s.target << " " << kWrites[s.op];
      if (s.op <= 2) out << " h" << s.other;
      out << "; ";
    } else {
      out << "read h" << s.target << "; ";
    }
  }
  return out.str();
}

// The program's output for y's source x and the numbers' source b.
Tensor run_program(const std::vector<ProgramStep>& program, const Tensor& x, const Tensor& b) {
  std::vector<Tensor> handles{base_of(x)};
  std::vector<Tensor> reads;
  const auto number = [&b](std::size_t k, double scale) {
    return b.select(0, static_cast<std::int64_t>(k % 3)) * scale + 1.25;  // in [0.25, 2.25]
  };
  for (std::size_t i = 0; i < program.size(); ++i) {
    const ProgramStep& s = program[i];
    Tensor& h = handles[s.target];
    switch (s.kind) {
      case ProgramStep::Kind::View:
        switch (s.op) {
          case 0:
            handles.push_back(h.select(s.a, s.b));
            break;
          case 1:
            handles.push_back(h.slice(s.a, s.b, s.c, 2));
            break;
          case 2:
            handles.push_back(h.transpose(s.a, s.b));
            break;
          case 3:
            handles.push_back(h.permute(s.dims));
            break;
          case 4:
            handles.push_back(h.unsqueeze(s.a));
            break;
          default:
            handles.push_back(h.view({-1}));
            break;
        }
        break;
      case ProgramStep::Kind::Write:
        switch (s.op) {
          case 0:
            h.add_(handles[s.other], 0.5);
            break;
          case 1:
            h.sub_(handles[s.other]);
            break;
          case 2:
            h.copy_(handles[s.other]);
            break;
          case 3:
            h.add_(number(i, 0.75));
            break;
          case 4:
            h.mul_(number(i, 0.5));
            break;
          case 5:
            h.div_(number(i, 0.5));
            break;
          case 6:
            h.copy_(number(i, 1.0));
            break;
          case 7:
            h.masked_fill_(test::make_tensor(s.mask, h.shape(), kBool).to(h.device()),
                           number(i, 1.0));
            break;
          case 8:
            h.mul_(s.number);
            break;
          case 9:
            h.fill_(s.number);
            break;
          case 10:
            h.zero_();
            break;
          case 11:
            h.sin_();
            break;
          default:
            h.clamp_(-0.75, 2.5);
            break;
        }
        break;
      case ProgramStep::Kind::Read:
        reads.push_back((h * s.number).reshape({-1}));
        break;
    }
  }
  reads.push_back(handles[0].reshape({-1}) * 1.0);
  return cat(reads, 0);
}

// A program of `length` steps drawn from `rng`. Shapes are followed on a scratch tensor.
std::vector<ProgramStep> random_program(std::mt19937_64& rng, int length) {
  const auto below = [&rng](std::int64_t n) {
    return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
  };
  std::vector<Tensor> shapes{zeros({3, 4, 5}, TensorOptions(kFloat64))};
  std::vector<ProgramStep> program;
  while (static_cast<int>(program.size()) < length) {
    ProgramStep s;
    const std::int64_t roll = below(10);
    const auto handles = static_cast<std::int64_t>(shapes.size());
    // Writes go through a view three times in four once there is one.
    const bool through_a_view = roll >= 3 && roll < 8 && handles > 1 && below(4) != 0;
    s.target = static_cast<std::size_t>(through_a_view ? 1 + below(handles - 1) : below(handles));
    const Tensor& t = shapes[s.target];
    const std::int64_t dims = t.dim();
    if (roll < 3) {
      s.kind = ProgramStep::Kind::View;
      s.op = static_cast<int>(below(6));
      if (dims == 0 && s.op != 4) continue;
      Tensor v;
      if (s.op == 0) {
        s.a = below(dims);
        s.b = below(t.size(s.a));
        v = t.select(s.a, s.b);
      } else if (s.op == 1) {
        s.a = below(dims);
        s.b = below(t.size(s.a));
        s.c = s.b + 1 + below(t.size(s.a) - s.b);
        v = t.slice(s.a, s.b, s.c, 2);
      } else if (s.op == 2) {
        s.a = below(dims);
        s.b = below(dims);
        v = t.transpose(s.a, s.b);
      } else if (s.op == 3) {
        for (std::int64_t d = 0; d < dims; ++d)
          s.dims.push_back(d);
        std::shuffle(s.dims.begin(), s.dims.end(), rng);
        v = t.permute(s.dims);
      } else if (s.op == 4) {
        s.a = below(dims + 1);
        v = t.unsqueeze(s.a);
      } else {
        if (!views::view_strides(t.shape(), t.strides(), {t.numel()})) continue;
        v = t.view({-1});
      }
      shapes.push_back(v);
    } else if (roll < 8) {
      s.kind = ProgramStep::Kind::Write;
      if (t.numel() == 0) continue;
      s.op = static_cast<int>(below(13));
      if (s.op <= 2) {  // another handle of the same shape, if any
        std::vector<std::size_t> same;
        for (std::size_t k = 0; k < shapes.size(); ++k)
          if (shapes[k].shape() == t.shape()) same.push_back(k);
        s.other = same[static_cast<std::size_t>(below(static_cast<std::int64_t>(same.size())))];
      }
      for (std::int64_t k = 0; k < t.numel(); ++k)
        s.mask.push_back(static_cast<double>(below(2)));
      s.number = static_cast<double>(below(7)) * 0.25 - 0.75;
    } else {
      s.kind = ProgramStep::Kind::Read;
      s.number = 0.5 + static_cast<double>(below(4));
    }
    program.push_back(std::move(s));
  }
  return program;
}

// Programs 0-39, or 40 others from LEANGRAD_INPLACE_VIEWS_SEED when set (a search for rarer
// programs: for s in $(seq 50); do LEANGRAD_INPLACE_VIEWS_SEED=$s build/tests/leangrad_tests
// --gtest_filter='InPlaceThroughViews.RandomPrograms' --gtest_brief=1 || echo "seed $s"; done).
TEST(InPlaceThroughViews, RandomPrograms) {
  const Tensor x = test::uniform_input({3, 4, 5}, -1.0, 1.0, 76);
  const Tensor b = test::uniform_input({3}, -1.0, 1.0, 77);
  const char* extra = std::getenv("LEANGRAD_INPLACE_VIEWS_SEED");
  const std::uint64_t first = extra != nullptr ? std::strtoull(extra, nullptr, 10) * 1000 : 0;
  for (std::uint64_t seed = first; seed < first + 40; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<ProgramStep> program = random_program(rng, 12);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + describe(program));
    const auto fn = [&program](const std::vector<Tensor>& in) {
      return run_program(program, in[0], in[1]);
    };
    EXPECT_TRUE(test::gradcheck(fn, {x, b}));
    Tensor expected;
    {
      NoGradGuard no_grad;
      expected = run_program(program, x.detach().clone(), b.detach());
    }
    EXPECT_TRUE(fn({x, b}).equal(expected));
  }
}

// The same programs on CUDA: values and gradients as the CPU's, within the roundings of the
// transcendental functions each side computes its own way (exp, sin: a few ulps each, a dozen
// steps), bounded by 256 units of float64 roundoff of each element's magnitude.
TEST(InPlaceThroughViews, RandomProgramsOnCudaMatchTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = test::uniform_input({3, 4, 5}, -1.0, 1.0, 76);
  const Tensor b = test::uniform_input({3}, -1.0, 1.0, 77);
  const Tensor x_cuda = x.detach().to(Device::cuda(0)).requires_grad_();
  const Tensor b_cuda = b.detach().to(Device::cuda(0)).requires_grad_();
  const double bound = 256.0 * std::numeric_limits<double>::epsilon();
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<ProgramStep> program = random_program(rng, 12);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + describe(program));
    const Tensor want = run_program(program, x, b);
    const Tensor got = run_program(program, x_cuda, b_cuda);
    // (A program may not use b: its gradient is then undefined on both.)
    const std::vector<Tensor> want_grads = grad({want.sum()}, {x, b}, {}, {}, false, true);
    const std::vector<Tensor> got_grads = grad({got.sum()}, {x_cuda, b_cuda}, {}, {}, false, true);
    const auto close = [bound](const Tensor& g, const Tensor& w) {
      if (!g.defined() || !w.defined()) return g.defined() == w.defined();
      const Tensor scale = clamp_min(abs(w), 1.0);
      return (abs(g.to(Device::cpu()) - w) <= scale * bound).all().item<bool>();
    };
    EXPECT_TRUE(close(got.detach(), want.detach())) << "values";
    EXPECT_TRUE(close(got_grads[0], want_grads[0])) << "gradient in x";
    EXPECT_TRUE(close(got_grads[1], want_grads[1])) << "gradient in b";
  }
}

}  // namespace
}  // namespace leangrad
