// autograd::grad and higher-order gradients (Note [Capturing gradients] and Note [Double backward]
// in autograd/engine.cpp): gradients returned instead of accumulated, second derivatives checked
// against central differences of the first (a gradcheck of the gradient, in float64), and the
// places that cannot be differentiated twice refusing by name. Also LibTorch's spellings of the
// grad-mode guards.
#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using autograd::grad;

// d/dx sum(f(x)), itself differentiable (create_graph). gradcheck evaluates its function under
// NoGradGuard for the finite differences; a first derivative needs the graph of f, so grad mode
// is switched back on inside (LibTorch's AutoGradMode).
Tensor gradient_of_sum(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  AutoGradMode enable(true);
  return grad({f(x).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
}

// A function whose forward and backward count their calls: shows which nodes ran.
struct CountingIdentity : autograd::Function<CountingIdentity> {
  static inline int backward_calls = 0;
  static Tensor forward(autograd::Context*, const Tensor& x) { return x.clone(); }
  static std::vector<Tensor> backward(autograd::Context*, std::vector<Tensor> grads) {
    ++backward_calls;
    return {grads[0]};
  }
};

// exp as a custom function that saves its output: under create_graph the saved output must
// point back at this function's node (SavedTensor::mark_if_output), or the second derivative
// would miss the e^x * e^x term... and be wrong.
struct ExpSavingOutput : autograd::Function<ExpSavingOutput> {
  static Tensor forward(autograd::Context* ctx, const Tensor& x) {
    Tensor y = exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->saved()[0]};
  }
};

TEST(AutogradGrad, MatchesBackwardAndLeavesEveryGradAlone) {
  Tensor x = test::uniform_input({3, 4}, -1.0, 1.0, 1);
  Tensor w = test::uniform_input({4, 2}, -1.0, 1.0, 2);
  Tensor y = tanh(matmul(x, w)).square().sum();
  std::vector<Tensor> g = grad({y}, {x, w}, {}, /*retain_graph=*/true);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(g[0].requires_grad());
  y.backward();
  // The same nodes run in the same order on the same values: the same bits.
  EXPECT_TRUE(g[0].equal(x.grad()));
  EXPECT_TRUE(g[1].equal(w.grad()));
}

TEST(AutogradGrad, OfAnIntermediateTensorAndWithGradOutputs) {
  Tensor x = test::uniform_input({5}, 0.5, 1.5, 3);
  Tensor h = x * x;
  Tensor y = h * 3.0;
  Tensor v = test::uniform_input({5}, -1.0, 1.0, 4).detach();
  std::vector<Tensor> g = grad({y}, {h, x}, {v});
  // dy/dh = 3 v, dy/dx = 6 x v, from the formulas by hand.
  const std::vector<double> xs = test::to_vector(x), vs = test::to_vector(v);
  std::vector<double> dh, dx;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    dh.push_back(3.0 * vs[i]);
    dx.push_back(6.0 * xs[i] * vs[i]);
  }
  test::expect_close(g[0], dh, 1e-15, 0.0);
  test::expect_close(g[1], dx, 1e-15, 0.0);
}

TEST(AutogradGrad, RunsOnlyTheNodesThatLeadToItsInputs) {
  Tensor a = test::uniform_input({4}, -1.0, 1.0, 5);
  Tensor b = test::uniform_input({4}, -1.0, 1.0, 6);
  CountingIdentity::backward_calls = 0;
  Tensor y = (CountingIdentity::apply(a) + b * b).sum();
  Tensor gb = grad({y}, {b}, {}, /*retain_graph=*/true)[0];
  EXPECT_EQ(CountingIdentity::backward_calls, 0);  // a's branch leads to no input
  test::expect_close(gb, test::to_vector(b * 2.0), 0.0, 0.0);
  Tensor ga = grad({y}, {a})[0];
  EXPECT_EQ(CountingIdentity::backward_calls, 1);
  test::expect_close(ga, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0);
}

TEST(AutogradGrad, UnusedAndNonDifferentiableInputs) {
  Tensor x = test::uniform_input({3}, -1.0, 1.0, 7);
  Tensor z = test::uniform_input({3}, -1.0, 1.0, 8);
  Tensor y = (x * 2.0).sum();
  try {
    grad({y}, {x, z}, {}, /*retain_graph=*/true);
    ADD_FAILURE() << "expected an error for an unused input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("allow_unused"), std::string::npos) << e.what();
  }
  std::vector<Tensor> g =
      grad({y}, {x, z}, {}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
  EXPECT_TRUE(g[0].defined());
  EXPECT_FALSE(g[1].defined());
  Tensor constant = ones({3}, kFloat64);
  EXPECT_THROW(grad({y}, {constant}), Error);
  EXPECT_THROW(grad({constant.sum()}, {x}), Error);
}

// Second derivatives of single functions, through the backward formulas of functions.cpp: the
// gradient of d/dx sum(f(x)) is checked against central differences of it.
TEST(HigherOrder, SecondDerivativesMatchFiniteDifferences) {
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> cases = {
      {"cube", [](const Tensor& x) { return x * x * x; }},
      {"exp (saves its output)", [](const Tensor& x) { return exp(x); }},
      {"tanh (saves its output)", [](const Tensor& x) { return tanh(x); }},
      {"sigmoid (saves its output)", [](const Tensor& x) { return sigmoid(x); }},
      {"log", [](const Tensor& x) { return log(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }},
      {"pow 2.5", [](const Tensor& x) { return pow(x, 2.5); }},
      {"reciprocal", [](const Tensor& x) { return 1.0 / x; }},
      {"x exp(-x^2)", [](const Tensor& x) { return x * exp(-(x * x)); }},
      {"softplus-like log(1 + e^x)", [](const Tensor& x) { return log(exp(x) + 1.0); }},
      {"mean of squares", [](const Tensor& x) { return (x * x).mean(); }},
      {"custom function saving its output",
       [](const Tensor& x) { return ExpSavingOutput::apply(x); }},
      // The views' backwards place the gradient into zeros: that must differentiate again.
      {"cube of a slice",
       [](const Tensor& x) { return x.slice(1, 0, 2).pow(3.0).sum() + (x * x).sum(); }},
      {"cube of a select",
       [](const Tensor& x) { return x.select(1, 1).pow(3.0).sum() + (x * x).sum(); }},
      {"cube of a slice alone", [](const Tensor& x) { return x.slice(0, 1, 2).pow(3.0); }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    Tensor x = test::uniform_input({2, 3}, 0.5, 1.5, 11);  // > 0: log, sqrt, pow, 1/x
    EXPECT_TRUE(test::gradcheck(
        [f = f](const std::vector<Tensor>& in) { return gradient_of_sum(f, in[0]); }, {x}));
  }
}

// Mixed second derivatives of a two-input function with matmul, where and a reduction in it: the
// gradcheck differentiates both first derivatives with respect to both inputs.
TEST(HigherOrder, MixedSecondDerivativesThroughMatmulAndWhere) {
  Tensor a = test::uniform_input({3, 4}, -1.0, 1.0, 12);
  Tensor b = test::uniform_input({4, 2}, -1.0, 1.0, 13);
  auto f = [](const Tensor& a, const Tensor& b) {
    Tensor h = tanh(matmul(a, b));
    Tensor picked = where(h.gt(0.0), h * h, sigmoid(h));
    return (picked.sum(1) * exp(b.sum())).sum() + (a * a * b.sum()).sum();
  };
  EXPECT_TRUE(test::gradcheck(
      [&f](const std::vector<Tensor>& in) {
        AutoGradMode enable(true);  // as in gradient_of_sum
        std::vector<Tensor> g = grad({f(in[0], in[1])}, {in[0], in[1]}, {}, std::nullopt,
                                     /*create_graph=*/true);
        return cat({g[0].flatten(), g[1].flatten()}, 0);
      },
      {a, b}));
}

// A gradient penalty, the common use: the parameters' gradient of |d loss/d x|^2.
TEST(HigherOrder, GradientPenaltyThroughBackwardWithCreateGraph) {
  const Tensor x = test::uniform_input({4, 3}, -1.0, 1.0, 14);
  Tensor w = test::uniform_input({3, 2}, -1.0, 1.0, 15);
  auto loss = [&x](const Tensor& w) { return tanh(matmul(x, w)).square().sum(); };
  EXPECT_TRUE(test::gradcheck(
      [&](const std::vector<Tensor>& in) {
        AutoGradMode enable(true);  // as in gradient_of_sum
        Tensor gx = grad({loss(in[0])}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
        return (gx * gx).sum();
      },
      {w}));
  // backward(create_graph) leaves a .grad with a graph of its own, accumulating out of place.
  Tensor leaf = test::uniform_input({4}, 0.5, 1.5, 16);
  (leaf * leaf * leaf).sum().backward({}, std::nullopt, /*create_graph=*/true);
  (leaf * leaf * leaf).sum().backward({}, std::nullopt, /*create_graph=*/true);
  ASSERT_TRUE(leaf.grad().requires_grad());
  const std::vector<double> xs = test::to_vector(leaf);
  std::vector<double> twice_3x2, twice_6x;
  for (double v : xs) {
    twice_3x2.push_back(2.0 * 3.0 * v * v);
    twice_6x.push_back(2.0 * 6.0 * v);
  }
  test::expect_close(leaf.grad(), twice_3x2, 1e-15, 0.0);
  Tensor second = grad({leaf.grad().sum()}, {leaf})[0];
  test::expect_close(second, twice_6x, 1e-15, 0.0);
  // A .grad with a graph refers to the leaf through its nodes' saved tensors, and the leaf holds
  // its .grad: a reference cycle, as in PyTorch (which warns about it). Dropping the gradient, as
  // zero_grad() does, breaks it (LeakSanitizer checks that nothing is left).
  leaf.mutable_grad() = Tensor();
}

// The fused backwards recorded as ops of their own (Note [Fused backwards that differentiate
// again] in autograd/nn_functions.cpp): second derivatives against central differences of the
// first, with respect to every input, and tanhexp's third.
TEST(HigherOrder, FusedKernelBackwardsDifferentiateAgain) {
  // Fixed weights: the sum of a softmax row is 1 whatever x, so its plain sum has no gradient.
  const Tensor weights = test::uniform_input({3, 5}, -2.0, 2.0, 30).detach();
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> cases = {
      {"softmax along dim 1", [&](const Tensor& x) { return softmax(x, 1) * weights; }},
      {"softmax along dim 0", [&](const Tensor& x) { return softmax(x, 0) * weights; }},
      {"log_softmax along dim 1", [&](const Tensor& x) { return log_softmax(x, 1) * weights; }},
      {"log_softmax along dim -2",
       [&](const Tensor& x) { return log_softmax(x, -2) * weights * weights; }},
      // Both sides of the bend, and past e^x = 20 where sech^2(e^x) underflows.
      {"tanhexp", [](const Tensor& x) { return tanhexp(x * 3.0) * x; }},
      {"dropout (one mask for every evaluation)",
       [](const Tensor& x) {
         manual_seed(5);
         return dropout(x, 0.4, /*training=*/true).pow(3.0);
       }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    Tensor x = test::uniform_input({3, 5}, -1.5, 1.5, 31);
    EXPECT_TRUE(test::gradcheck(
        [f = f](const std::vector<Tensor>& in) { return gradient_of_sum(f, in[0]); }, {x}));
  }
  // tanhexp's second derivative far out on both sides (e^x overflows float64 beyond 709; the
  // clamp at 20 keeps it finite, and 0 where it underflows), then its third derivative.
  Tensor wide = test::make_tensor({-30.0, -4.0, -0.7, 0.3, 1.1, 2.5, 25.0, 800.0}, {8}, kFloat64);
  wide.requires_grad_();
  Tensor first = gradient_of_sum([](const Tensor& x) { return tanhexp(x); }, wide);
  Tensor second = grad({first.sum()}, {wide})[0];
  for (double v : test::to_vector(second))
    EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_EQ(test::to_vector(second).back(), 0.0);
  Tensor near = test::uniform_input({6}, -2.0, 2.0, 32);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        AutoGradMode enable(true);
        Tensor d1 = grad({tanhexp(in[0]).sum()}, {in[0]}, {}, std::nullopt, true)[0];
        return grad({d1.sum()}, {in[0]}, {}, std::nullopt, true)[0];
      },
      {near}));
}

// conv2d's gradients, bilinear in (grad, weight) and (grad, input), differentiated again with
// respect to both the input and the weight: a gradient penalty through a convolution, with
// stride, padding, dilation, groups and a bias.
TEST(HigherOrder, Conv2dGradientsDifferentiateAgain) {
  Tensor x = test::uniform_input({1, 4, 5, 4}, -1.0, 1.0, 33);
  Tensor w = test::uniform_input({4, 2, 3, 2}, -1.0, 1.0, 34);
  Tensor b = test::uniform_input({4}, -1.0, 1.0, 35);
  auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return tanh(conv2d(x, w, b, {2, 1}, {1, 1}, {1, 2}, 2)).square().sum();
  };
  EXPECT_TRUE(test::gradcheck(
      [&f](const std::vector<Tensor>& in) {
        AutoGradMode enable(true);  // as in gradient_of_sum
        std::vector<Tensor> g = grad({f(in[0], in[1], in[2])}, {in[0], in[1]}, {}, std::nullopt,
                                     /*create_graph=*/true);
        return cat({g[0].flatten(), g[1].flatten()}, 0);
      },
      {x, w, b}));
}

// The linear fused backwards, whose derivatives with respect to the upstream gradient are their
// adjoints (interpolation's forward, the embedding lookup, conv2d for conv_transpose2d): cubes
// make the first derivative's upstream gradient depend on the input, so the second derivative
// goes through the recorded backward's own backward.
TEST(HigherOrder, LinearFusedBackwardsDifferentiateAgain) {
  for (const bool bilinear : {false, true}) {
    SCOPED_TRACE(bilinear ? "bilinear" : "nearest");
    Tensor x = test::uniform_input({1, 2, 3, 4}, -1.0, 1.0, 38);
    EXPECT_TRUE(test::gradcheck(
        [bilinear](const std::vector<Tensor>& in) {
          return gradient_of_sum(
              [bilinear](const Tensor& x) {
                return interpolate(x, Size2{5, 7}, std::nullopt, bilinear ? kBilinear : kNearest)
                    .pow(3.0);
              },
              in[0]);
        },
        {x}));
  }
  // Pooling: max (its windows' argmax fixed by inputs spaced apart) with padding, dilation and
  // ceil_mode; avg without the padding in its divisor.
  Tensor planes = test::make_tensor(
      {0.31, -0.72, 0.05,  0.88, -0.14, 0.47, -0.95, 0.63,  0.22, -0.38, 0.79, -0.51,
       0.13, 0.96,  -0.27, 0.58, -0.83, 0.36, 0.69,  -0.06, 0.41, -0.66, 0.92, -0.19},
      {1, 2, 3, 4}, kFloat64);
  planes.requires_grad_();
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return gradient_of_sum(
            [](const Tensor& x) {
              return max_pool2d(x, {2, 2}, {1, 2}, {1, 1}, {1, 2}, /*ceil_mode=*/true).pow(3.0) +
                     max_pool2d(x, {2, 2}, {2, 2}, {1, 1}, {3, 3}).pow(3.0).sum();
            },
            in[0]);
      },
      {planes}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return gradient_of_sum(
            [](const Tensor& x) {
              return avg_pool2d(x, {2, 3}, {2, 1}, {1, 1}, /*ceil_mode=*/true,
                                /*count_include_pad=*/false)
                  .pow(3.0);
            },
            in[0]);
      },
      {planes}));
  // Repeated indices. The sum reaches w outside the embedding as well.
  const Tensor indices = test::make_tensor({1.0, 3.0, 1.0, 0.0, 3.0, 2.0}, {2, 3}, kInt64);
  Tensor table = test::uniform_input({4, 3}, -1.0, 1.0, 39);
  auto cubic = [](const Tensor& e, const Tensor& w) { return e.pow(3.0) + e * w.sum(); };
  EXPECT_TRUE(test::gradcheck(
      [&](const std::vector<Tensor>& in) {
        return gradient_of_sum([&](const Tensor& w) { return cubic(embedding(indices, w), w); },
                               in[0]);
      },
      {table}));
  // padding_idx gives the padding row no gradient, which is not the derivative of the lookup:
  // central differences cannot check it. Its second derivative must be that of the same function
  // with the padding row read through detach() and no padding_idx.
  const Tensor not_padding = test::make_tensor({1.0, 0.0, 1.0, 1.0}, {4, 1}, kFloat64);
  auto padded = [&](const Tensor& w) { return cubic(embedding(indices, w, 1), w); };
  auto detached = [&](const Tensor& w) {
    const Tensor rows = w * not_padding + w.detach() * (1.0 - not_padding);
    return cubic(embedding(indices, rows), w);
  };
  const Tensor v = test::uniform_input({4, 3}, -1.0, 1.0, 43).detach();
  Tensor first_padded = gradient_of_sum(padded, table);
  Tensor first_detached = gradient_of_sum(detached, table);
  test::expect_close(first_padded, test::to_vector(first_detached), 1e-14, 1e-14);
  test::expect_close(grad({first_padded}, {table}, {v})[0],
                     test::to_vector(grad({first_detached}, {table}, {v})[0]), 1e-14, 1e-14);
  Tensor x = test::uniform_input({1, 4, 3, 3}, -1.0, 1.0, 40);
  Tensor w = test::uniform_input({4, 3, 3, 2}, -1.0, 1.0, 41);
  Tensor b = test::uniform_input({6}, -1.0, 1.0, 42);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        AutoGradMode enable(true);  // as in gradient_of_sum
        Tensor y = conv_transpose2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
        std::vector<Tensor> g =
            grad({tanh(y).square().sum()}, {in[0], in[1]}, {}, std::nullopt, true);
        return cat({g[0].flatten(), g[1].flatten()}, 0);
      },
      {x, w, b}));
}

// The recorded backwards on CUDA: Hessian-vector products in float64 on the GPU against the same
// products on the CPU (whose formulas the gradchecks above check). Both run the same formulas on
// the same values, summing in other orders: in float64 they agree to about n u (n <= 200 terms,
// u = 2^-53) relative to the terms' magnitudes, far inside 1e-9, while a wrong formula or a
// kernel reading the wrong operand is off by O(1).
TEST(HigherOrder, CudaSecondDerivativesMatchTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor indices = test::make_tensor({1.0, 3.0, 1.0, 0.0, 3.0, 2.0}, {2, 3}, kInt64);
  const Tensor classes = test::make_tensor({0.0, 3.0, 8.0, 1.0, 5.0, 2.0, 7.0, 5.0}, {8}, kInt64);
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&, const Tensor&)>>>
      cases = {
          {"conv2d",
           [](const Tensor& x, const Tensor& w) {
             return tanh(conv2d(x, w, Tensor(), {2, 1}, {1, 1}, {1, 1}, 2)).square();
           }},
          {"conv_transpose2d",
           [](const Tensor& x, const Tensor& w) {
             return tanh(conv_transpose2d(x, w, Tensor(), {2, 1}, {1, 0}, {1, 0}, 2)).square();
           }},
          {"tanhexp and softmax",
           [](const Tensor& x, const Tensor& w) {
             return softmax(tanhexp(x * 2.0), 1) * w.sum() + log_softmax(x, 3).pow(3.0);
           }},
          {"interpolate",
           [](const Tensor& x, const Tensor& w) {
             return interpolate(x, Size2{7, 5}, std::nullopt, kBilinear).pow(3.0) * w.sum();
           }},
          {"max_pool2d and avg_pool2d",
           [](const Tensor& x, const Tensor& w) {
             return max_pool2d(x, {2, 2}, {1, 1}, {1, 1}).pow(3.0) * w.sum() +
                    avg_pool2d(x, {2, 2}, {1, 1}, {1, 1}, true, false).pow(3.0);
           }},
          {"cross_entropy and nll_loss",
           [&classes](const Tensor& x, const Tensor& w) {
             const Tensor logits = x.reshape({8, 9});
             const Tensor target = classes.to(x.device());
             const Tensor factor = tanh(logits.sum(1));
             return cross_entropy(logits, target, Reduction::None) * factor * w.sum() +
                    nll_loss(log_softmax(logits, 1), target, Reduction::None, 5) * factor;
           }},
          {"group_norm and batch_norm",
           [](const Tensor& x, const Tensor& w) {
             const Tensor gamma = w.flatten().slice(0, 0, 4);
             return tanh(group_norm(x, 2, gamma, Tensor(), 1e-3)) +
                    batch_norm(x, Tensor(), Tensor(), gamma, Tensor(), true).pow(3.0);
           }},
          {"embedding",
           [&indices](const Tensor& x, const Tensor& w) {
             const Tensor table = x.reshape({8, 9});
             const Tensor e = embedding(indices.to(x.device()), table, 1);
             return e.pow(3.0) + e * w.sum();
           }},
      };
  const Tensor x = test::uniform_input({2, 4, 3, 3}, -1.0, 1.0, 44).detach();
  const Tensor w = test::uniform_input({4, 2, 3, 2}, -1.0, 1.0, 45).detach();
  const Tensor v = test::uniform_input({2, 4, 3, 3}, -1.0, 1.0, 46).detach();
  // v^T d/dx (d sum f / dx), and its mixed part with respect to w.
  auto hvp = [](const std::function<Tensor(const Tensor&, const Tensor&)>& f, Tensor x, Tensor w,
                const Tensor& v) {
    x.requires_grad_();
    w.requires_grad_();
    const Tensor gx = grad({f(x, w).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    std::vector<Tensor> h = grad({gx}, {x, w}, {v}, std::nullopt, false, /*allow_unused=*/true);
    return cat({gx.detach().flatten(), h[0].flatten(),
                h[1].defined() ? h[1].flatten() : zeros({1}, x.options())},
               0)
        .to(Device::cpu());
  };
  const Device gpu = Device::cuda(0);
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    const Tensor on_cpu = hvp(f, x.clone(), w.clone(), v);
    const Tensor on_gpu = hvp(f, x.to(gpu), w.to(gpu), v.to(gpu));
    const std::vector<double> expected = test::to_vector(on_cpu);
    double scale = 0;
    for (double e : expected)
      scale = std::max(scale, std::abs(e));
    test::expect_close(on_gpu, expected, 0.0, 1e-9 * scale);
  }
}

// group_norm's backward under create_graph (Note [Normalizations differentiated twice] in
// autograd/nn_functions.cpp), and layer_norm and batch_norm in training, which run on it: second
// derivatives with respect to the input and the weight (the bias enters the gradient of nothing
// but itself), and a third for group_norm.
TEST(HigherOrder, NormalizationsDifferentiateAgain) {
  using Norm = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
  const std::vector<std::pair<const char*, Norm>> cases = {
      {"group_norm", [](const Tensor& x, const Tensor& w,
                        const Tensor& b) { return group_norm(x, 2, w, b, 1e-3); }},
      {"layer_norm",
       [](const Tensor& x, const Tensor& w, const Tensor& b) {
         // Over (H, C) of an (N, W, H, C) view: the weight repeated along H.
         const Tensor wide_w = w.reshape({1, 4}).expand({3, 4}) * 1.0;
         const Tensor wide_b = b.reshape({1, 4}).expand({3, 4}) * 1.0;
         return layer_norm(x.transpose(1, 3), {3, 4}, wide_w, wide_b);
       }},
      {"batch_norm in training",
       [](const Tensor& x, const Tensor& w, const Tensor& b) {
         return batch_norm(x, Tensor(), Tensor(), w, b, /*training=*/true);
       }},
  };
  const Tensor upstream = test::uniform_input({2, 4, 3, 3}, -1.0, 1.0, 47).detach();
  for (const auto& [name, norm] : cases) {
    SCOPED_TRACE(name);
    Tensor x = test::uniform_input({2, 4, 3, 3}, -1.0, 1.0, 48);
    Tensor w = test::uniform_input({4}, 0.5, 1.5, 49);
    Tensor b = test::uniform_input({4}, -1.0, 1.0, 50);
    EXPECT_TRUE(test::gradcheck(
        [&, norm = norm](const std::vector<Tensor>& in) {
          AutoGradMode enable(true);  // as in gradient_of_sum
          const Tensor y = norm(in[0], in[1], in[2]);
          // A nonlinear use of y, so that the gradient depends on y through more than its sum.
          const Tensor loss = (tanh(y) * upstream.reshape(y.shape())).sum();
          std::vector<Tensor> g = grad({loss}, {in[0], in[1]}, {}, std::nullopt, true);
          return cat({g[0].flatten(), g[1].flatten()}, 0);
        },
        {x, w, b}));
    // The gradcheck holds the composite to its own derivatives; this holds it to the kernel's
    // function: the create_graph first derivative is the kernel's to rounding (float64, sums of
    // at most 36 terms of magnitude below 10).
    auto first = [&, norm = norm](bool create_graph) {
      const Tensor y = norm(x, w, b);
      const Tensor loss = (tanh(y) * upstream.reshape(y.shape())).sum();
      std::vector<Tensor> g = grad({loss}, {x, w}, {}, std::nullopt, create_graph);
      return cat({g[0].detach().flatten(), g[1].detach().flatten()}, 0);
    };
    test::expect_close(first(true), test::to_vector(first(false)), 1e-12, 1e-12);
  }
  // The third derivative.
  Tensor small = test::uniform_input({1, 2, 2, 2}, -1.0, 1.0, 52);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        AutoGradMode enable(true);
        const Tensor y = group_norm(in[0], 1, Tensor(), Tensor(), 1e-3);
        const Tensor d1 = grad({y.pow(3.0).sum()}, {in[0]}, {}, std::nullopt, true)[0];
        return grad({d1.square().sum()}, {in[0]}, {}, std::nullopt, true)[0];
      },
      {small}));
}

// The losses' fused backwards: nll_loss's is linear in its upstream gradient (its adjoint is
// nll_loss itself), cross_entropy's is recorded with its derivatives in both the upstream
// gradient and the logits. Class weights, an ignored target and each reduction; the upstream
// gradient made to depend on the logits, so that the second derivative goes through both.
TEST(HigherOrder, LossBackwardsDifferentiateAgain) {
  const Tensor target = test::make_tensor({0.0, 3.0, 1.0, 3.0, 2.0}, {5}, kInt64);
  const Tensor weight = test::make_tensor({0.5, 1.5, 2.0, 0.75}, {4}, kFloat64);
  for (const Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    for (const bool weighted : {false, true}) {
      SCOPED_TRACE(std::string(weighted ? "weighted, " : "") +
                   (reduction == Reduction::Mean  ? "mean"
                    : reduction == Reduction::Sum ? "sum"
                                                  : "none"));
      const Tensor w = weighted ? weight : Tensor();
      Tensor logits = test::uniform_input({5, 4}, -1.5, 1.5, 53);
      auto scaled = [](const Tensor& loss, const Tensor& x) {
        // A per-sample loss times something of the logits: its gradient depends on them twice.
        const Tensor factor = tanh(x.sum(1));
        return loss.dim() == 0 ? loss * factor.sum() : (loss * factor).sum();
      };
      EXPECT_TRUE(test::gradcheck(
          [&](const std::vector<Tensor>& in) {
            return gradient_of_sum(
                [&](const Tensor& x) {
                  return scaled(cross_entropy(x, target, reduction, /*ignore_index=*/1, w), x);
                },
                in[0]);
          },
          {logits}));
      EXPECT_TRUE(test::gradcheck(
          [&](const std::vector<Tensor>& in) {
            return gradient_of_sum(
                [&](const Tensor& x) {
                  return scaled(nll_loss(log_softmax(x, 1), target, reduction, 1, w), x);
                },
                in[0]);
          },
          {logits}));
    }
  }
}

// The same through input of any rank (Note [Class-index losses of any rank]: rows of a permuted,
// reshaped input): (N, C, d1) and (N, C, d1, d2) with ignored positions, and unbatched (C), with
// class weights and each reduction; cross_entropy with label smoothing too.
TEST(HigherOrder, LossBackwardsOfAnyRankDifferentiateAgain) {
  const Tensor weight = test::make_tensor({0.5, 1.5, 2.0, 0.75}, {4}, kFloat64);
  const std::vector<std::pair<Shape, Tensor>> cases = {
      {{2, 4, 3}, test::make_tensor({0, 3, -100, 1, 2, 3}, {2, 3}, kInt64)},
      {{1, 4, 2, 2}, test::make_tensor({2, -100, 0, 3}, {1, 2, 2}, kInt64)},
      {{4}, test::make_tensor({1}, {}, kInt64)}};
  for (const auto& [shape, target_of_case] : cases) {
    const Tensor& target = target_of_case;  // the lambdas capture it (clang 14: not a binding)
    for (const Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
      SCOPED_TRACE(shape_str(shape) + (reduction == Reduction::Mean  ? " mean"
                                       : reduction == Reduction::Sum ? " sum"
                                                                     : " none"));
      const Tensor logits = test::uniform_input(shape, -1.5, 1.5, 54);
      auto scaled = [](const Tensor& loss, const Tensor& x) {
        // The loss times something of the logits, in the loss's shape under None.
        const Tensor factor = tanh(x.sum(x.dim() == 1 ? 0 : 1));
        return loss.dim() == 0 && factor.dim() > 0 ? loss * factor.sum() : (loss * factor).sum();
      };
      const auto losses = std::vector<std::function<Tensor(const Tensor&)>>{
          [&](const Tensor& x) { return cross_entropy(x, target, reduction, -100, weight); },
          [&](const Tensor& x) {
            return cross_entropy(x, target, reduction, -100, weight, /*label_smoothing=*/0.2);
          },
          [&](const Tensor& x) {
            return nll_loss(log_softmax(x, x.dim() == 1 ? 0 : 1), target, reduction, -100, weight);
          }};
      for (const auto& loss : losses) {
        EXPECT_TRUE(test::gradcheck(
            [&](const std::vector<Tensor>& in) {
              return gradient_of_sum([&](const Tensor& x) { return scaled(loss(x), x); }, in[0]);
            },
            {logits}));
      }
    }
  }
}

// The refusal for a backward recorded as not differentiable (DoubleBackward::NotImplemented in
// graph.h): no built-in op uses it since every fused backward differentiates again, but a fused
// kernel added later may; its results get a node that throws when a second backward reaches it.
TEST(HigherOrder, ABackwardRecordedAsNotDifferentiableRefusesASecondBackwardByName) {
  Tensor x = test::uniform_input({3}, -1.0, 1.0, 19);
  auto fused_square = [](const Tensor& a) {
    return autograd::record_op(
        "fused_square", a * a, {a}, {a},
        [](const autograd::BackwardContext& c) -> std::vector<Tensor> {
          return {c.grad * c.saved[0] * 2.0};
        },
        autograd::DoubleBackward::NotImplemented);
  };
  Tensor gx = grad({fused_square(x).sum() * x.sum()}, {x}, {}, std::nullopt, true)[0];
  ASSERT_TRUE(gx.requires_grad());
  try {
    grad({gx.sum()}, {x});
    ADD_FAILURE() << "expected double backward through fused_square to throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fused_square"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("double backward"), std::string::npos) << e.what();
  }
  // A first backward through it is unaffected.
  Tensor g1 = grad({fused_square(x).sum()}, {x})[0];
  EXPECT_FALSE(g1.requires_grad());
  test::expect_close(g1, test::to_vector(x * 2.0), 0.0, 0.0);
}

// A plain backward through the ops that now record their backward records nothing and gives the
// kernels' values; with create_graph the first derivative is the same bits.
TEST(HigherOrder, RecordedBackwardsKeepTheKernelsFirstDerivative) {
  Tensor x = test::uniform_input({2, 3, 5, 5}, -1.0, 1.0, 36).detach().to(kFloat32);
  Tensor w = test::uniform_input({4, 3, 3, 3}, -1.0, 1.0, 37).detach().to(kFloat32);
  x.requires_grad_();
  w.requires_grad_();
  auto loss = [&] {
    return softmax(tanhexp(conv2d(x, w, Tensor(), {1, 1}, {1, 1})), 1).square().sum();
  };
  std::vector<Tensor> plain = grad({loss()}, {x, w});
  EXPECT_FALSE(plain[0].requires_grad());
  std::vector<Tensor> graphed = grad({loss()}, {x, w}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(graphed[0].requires_grad());
  EXPECT_TRUE(plain[0].equal(graphed[0].detach()));
  EXPECT_TRUE(plain[1].equal(graphed[1].detach()));
}

TEST(HigherOrder, RefusedThroughSavedTensorHooksAndCheckpoint) {
  Tensor x = test::uniform_input({3}, 0.5, 1.5, 20);
  {
    autograd::SavedTensorHooksGuard hooks(
        [](const Tensor& t) { return std::any(t.clone()); },
        [](const std::any& a) { return std::any_cast<Tensor>(a); });
    Tensor y = (x * x).sum();
    try {
      grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
      ADD_FAILURE() << "expected create_graph through hooked saved tensors to throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("saved-tensor hooks"), std::string::npos) << e.what();
    }
    Tensor z = (x * x).sum();
    test::expect_close(grad({z}, {x})[0], test::to_vector(x * 2.0), 0.0, 0.0);  // first order
  }
  Tensor y =
      autograd::checkpoint(
          [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[0]}; }, {x})[0]
          .sum();
  try {
    grad({y}, {x});
    ADD_FAILURE() << "expected autograd::grad through checkpoint to throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint"), std::string::npos) << e.what();
  }
}

TEST(GradModeSpellings, InferenceModeAutoGradModeGradModeAndDetectAnomalyGuard) {
  Tensor x = test::uniform_input({3}, 0.5, 1.5, 21);
  {
    InferenceMode inference;
    EXPECT_FALSE(GradMode::is_enabled());
    EXPECT_FALSE((x * 2.0).requires_grad());
    {
      AutoGradMode enable(true);
      EXPECT_TRUE((x * 2.0).requires_grad());
    }
    InferenceMode not_enabled(false);  // keeps the mode it finds
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
  Tensor zero = zeros({1}, kFloat64).requires_grad_(true);
  autograd::DetectAnomalyGuard anomaly;
  try {
    sqrt(zero).sum().backward();  // d sqrt(x)/dx at 0 is inf
    ADD_FAILURE() << "expected DetectAnomalyGuard to report the infinite gradient";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SqrtBackward"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace leangrad
