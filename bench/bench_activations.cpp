// CPU time of the activation functions and their transcendental building blocks on a (4096, 4096)
// float32 tensor, through the public API (leangrad.h), forward alone (under NoGradGuard) and
// forward plus backward (y.backward(g) into x.grad): tanh, erf, log, expm1 and log1p, and gelu
// (both forms), silu, mish, elu, softplus, selu, leaky_relu, hardtanh, clamp and relu; and the
// in-place elu_, selu_, leaky_relu_, hardtanh_ and relu_ on a non-leaf, forward plus backward.
// bench/compare/activations_vs_libtorch.sh runs it beside LibTorch's twin
// (bench/compare/libtorch/libtorch_activations.cpp: the same names, shapes and byte counts).
//
// Each benchmark first checks its result against the function (and its derivative) in double at
// every 4099th element, within 2^-16 relative plus 2^-20 absolute: loose enough for any float
// formula, tight enough that a wrong op or a missing backward is caught before it is timed.
// log and log1p take |x| (their domain); the others x ~ N(0, 1).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <functional>

#include <leangrad/leangrad.h>

namespace {

using leangrad::Tensor;

constexpr std::int64_t kRows = 4096, kCols = 4096, k16M = kRows * kCols;

enum class Work {
  Tanh,
  Erf,
  Log,
  Expm1,
  Log1p,
  Gelu,
  GeluTanh,
  Silu,
  Mish,
  Elu,
  Softplus,
  Selu,
  LeakyRelu,
  Hardtanh,
  Clamp,
  Relu
};

Tensor run_work(Work work, const Tensor& x) {
  switch (work) {
    case Work::Tanh:
      return leangrad::tanh(x);
    case Work::Erf:
      return leangrad::erf(x);
    case Work::Log:
      return leangrad::log(x);
    case Work::Expm1:
      return leangrad::expm1(x);
    case Work::Log1p:
      return leangrad::log1p(x);
    case Work::Gelu:
      return leangrad::gelu(x);
    case Work::GeluTanh:
      return leangrad::gelu(x, "tanh");
    case Work::Silu:
      return leangrad::silu(x);
    case Work::Mish:
      return leangrad::mish(x);
    case Work::Elu:
      return leangrad::elu(x, 1.0);
    case Work::Softplus:
      return leangrad::softplus(x, 1.0, 20.0);
    case Work::Selu:
      return leangrad::selu(x);
    case Work::LeakyRelu:
      return leangrad::leaky_relu(x, 0.01);
    case Work::Hardtanh:
      return leangrad::hardtanh(x, -1.0, 1.0);
    case Work::Clamp:
      return leangrad::clamp(x, -0.5, 0.5);
    case Work::Relu:
      return leangrad::relu(x);
  }
  return {};
}

// f(x) and f'(x) in double.
struct Exact {
  double value;
  double slope;
};

Exact exact(Work work, double x) {
  constexpr double kPi = 3.14159265358979323846;
  const double sigmoid = 1 / (1 + std::exp(-x));
  const double softplus = x > 20 ? x : std::log1p(std::exp(x));
  switch (work) {
    case Work::Tanh:
      return {std::tanh(x), 1 - std::tanh(x) * std::tanh(x)};
    case Work::Erf:
      return {std::erf(x), 2 / std::sqrt(kPi) * std::exp(-x * x)};
    case Work::Log:
      return {std::log(x), 1 / x};
    case Work::Expm1:
      return {std::expm1(x), std::exp(x)};
    case Work::Log1p:
      return {std::log1p(x), 1 / (1 + x)};
    case Work::Gelu: {
      const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
      return {x * cdf, cdf + x * std::exp(-x * x / 2) / std::sqrt(2 * kPi)};
    }
    case Work::GeluTanh: {
      const double k = std::sqrt(2 / kPi);
      const double t = std::tanh(k * (x + 0.044715 * x * x * x));
      return {0.5 * x * (1 + t),
              0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)};
    }
    case Work::Silu:
      return {x * sigmoid, sigmoid * (1 + x * (1 - sigmoid))};
    case Work::Mish: {
      const double t = std::tanh(softplus);
      return {x * t, t + x * (1 - t * t) * sigmoid};
    }
    case Work::Elu:
      return {x > 0 ? x : std::expm1(x), x > 0 ? 1 : std::exp(x)};
    case Work::Softplus:
      return {softplus, x > 20 ? 1 : sigmoid};
    case Work::Selu: {
      constexpr double kAlpha = 1.6732632423543772848170429916717;
      constexpr double kScale = 1.0507009873554804934193349852946;
      return {kScale * (x > 0 ? x : kAlpha * std::expm1(x)),
              kScale * (x > 0 ? 1 : kAlpha * std::exp(x))};
    }
    case Work::LeakyRelu:
      return {x > 0 ? x : 0.01 * x, x > 0 ? 1 : 0.01};
    case Work::Hardtanh:
      return {std::fmax(-1.0, std::fmin(1.0, x)), x > -1 && x < 1 ? 1.0 : 0.0};
    case Work::Clamp:
      return {std::fmax(-0.5, std::fmin(0.5, x)), x >= -0.5 && x <= 0.5 ? 1.0 : 0.0};
    case Work::Relu:
      return {x > 0 ? x : 0.0, x > 0 ? 1.0 : 0.0};
  }
  return {};
}

bool close(double actual, double expected) {
  return std::fabs(actual - expected) <= 0x1p-16 * std::fabs(expected) + 0x1p-20;
}

// The input: N(0, 1), or its magnitude for log and log1p.
Tensor input_for(Work work) {
  const Tensor x = leangrad::randn({kRows, kCols});
  return work == Work::Log || work == Work::Log1p ? leangrad::abs(x) : x;
}

// Forward only: reads x, writes y.
void BM_Activation_16M(benchmark::State& state, Work work) {
  const Tensor x = input_for(work);
  {
    leangrad::NoGradGuard no_grad;
    const Tensor y = run_work(work, x);
    const auto* xs = static_cast<const float*>(x.data_ptr());
    const auto* ys = static_cast<const float*>(y.data_ptr());
    for (std::int64_t i = 0; i < k16M; i += 4099) {
      if (!close(ys[i], exact(work, xs[i]).value)) {
        state.SkipWithError("the op differs from the function in double");
        return;
      }
    }
  }
  for (auto _ : state) {
    leangrad::NoGradGuard no_grad;
    Tensor y = run_work(work, x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 8);
}

// Times forward(x).backward(g) into x.grad, after checking the gradient against g * slope(x) at
// every 4099th element. Both backward benchmarks below.
template <typename Forward, typename Slope>
void time_backward(benchmark::State& state, Tensor& x, const Forward& forward, const Slope& slope) {
  const Tensor g = leangrad::randn({kRows, kCols});
  const auto step = [&] {
    Tensor y = forward(x);
    y.backward(g);
    Tensor grad = x.grad();
    x.mutable_grad() = Tensor();
    return grad;
  };
  const Tensor grad = step();
  const auto* xs = static_cast<const float*>(x.data_ptr());
  const auto* gs = static_cast<const float*>(g.data_ptr());
  const auto* dx = static_cast<const float*>(grad.data_ptr());
  for (std::int64_t i = 0; i < k16M; i += 4099) {
    if (!close(dx[i], gs[i] * slope(xs[i]))) {
      state.SkipWithError("the gradient differs from the derivative in double");
      return;
    }
  }
  for (auto _ : state) {
    Tensor dx_step = step();
    benchmark::DoNotOptimize(dx_step.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 16);
}

// Forward and backward: y = f(x), y.backward(g) into x.grad (reads x and g, writes y and the
// gradient: the least an unfused implementation must move).
void BM_ActivationBackward_16M(benchmark::State& state, Work work) {
  Tensor x = input_for(work).requires_grad_(true);
  time_backward(
      state, x, [work](const Tensor& v) { return run_work(work, v); },
      [work](double v) { return exact(work, v).slope; });
}

#define LEANGRAD_ACTIVATION_BENCHMARKS(work)                     \
  BENCHMARK_CAPTURE(BM_Activation_16M, work, Work::work)         \
      ->Unit(benchmark::kMillisecond)                            \
      ->UseRealTime();                                           \
  BENCHMARK_CAPTURE(BM_ActivationBackward_16M, work, Work::work) \
      ->Unit(benchmark::kMillisecond)                            \
      ->UseRealTime()
LEANGRAD_ACTIVATION_BENCHMARKS(Tanh);
LEANGRAD_ACTIVATION_BENCHMARKS(Erf);
LEANGRAD_ACTIVATION_BENCHMARKS(Log);
LEANGRAD_ACTIVATION_BENCHMARKS(Expm1);
LEANGRAD_ACTIVATION_BENCHMARKS(Log1p);
LEANGRAD_ACTIVATION_BENCHMARKS(Gelu);
LEANGRAD_ACTIVATION_BENCHMARKS(GeluTanh);
LEANGRAD_ACTIVATION_BENCHMARKS(Silu);
LEANGRAD_ACTIVATION_BENCHMARKS(Mish);
LEANGRAD_ACTIVATION_BENCHMARKS(Elu);
LEANGRAD_ACTIVATION_BENCHMARKS(Softplus);
LEANGRAD_ACTIVATION_BENCHMARKS(Selu);
LEANGRAD_ACTIVATION_BENCHMARKS(LeakyRelu);
LEANGRAD_ACTIVATION_BENCHMARKS(Hardtanh);
LEANGRAD_ACTIVATION_BENCHMARKS(Clamp);
LEANGRAD_ACTIVATION_BENCHMARKS(Relu);

// The in-place form of `work` on h = x * 1 (a non-leaf, as in a network), where it has one.
void run_in_place(Work work, Tensor& h) {
  switch (work) {
    case Work::Elu:
      leangrad::elu_(h, 1.0);
      return;
    case Work::Selu:
      leangrad::selu_(h);
      return;
    case Work::LeakyRelu:
      leangrad::leaky_relu_(h, 0.01);
      return;
    case Work::Hardtanh:
      leangrad::hardtanh_(h, -1.0, 1.0);
      return;
    case Work::Relu:
      h.relu_();
      return;
    default:
      return;
  }
}

// In place, forward and backward: h = x * 1, f_(h), h.backward(g) into x.grad. The backward is
// the in-place op's, written from the output, and mul's (one pass each); subtract
// BM_InPlaceActivationBackward_16M/Identity, which runs the mul alone, for the op's own time.
void BM_InPlaceActivationBackward_16M(benchmark::State& state, Work work, bool identity) {
  Tensor x = input_for(work).requires_grad_(true);
  time_backward(
      state, x,
      [work, identity](const Tensor& v) {
        Tensor h = v * 1.0;
        if (!identity) run_in_place(work, h);
        return h;
      },
      [work, identity](double v) { return identity ? 1.0 : exact(work, v).slope; });
}

#define LEANGRAD_IN_PLACE_BENCHMARK(work)                                      \
  BENCHMARK_CAPTURE(BM_InPlaceActivationBackward_16M, work, Work::work, false) \
      ->Unit(benchmark::kMillisecond)                                          \
      ->UseRealTime()
LEANGRAD_IN_PLACE_BENCHMARK(Elu);
LEANGRAD_IN_PLACE_BENCHMARK(Selu);
LEANGRAD_IN_PLACE_BENCHMARK(LeakyRelu);
LEANGRAD_IN_PLACE_BENCHMARK(Hardtanh);
LEANGRAD_IN_PLACE_BENCHMARK(Relu);
BENCHMARK_CAPTURE(BM_InPlaceActivationBackward_16M, Identity, Work::Relu, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
