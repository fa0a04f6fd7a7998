// A custom autograd function, written the way a PyTorch user writes a torch.autograd.Function:
// TanhExp, y = x tanh(e^x), whose forward saves its input and whose backward builds the derivative
// from ordinary tensor ops. The program checks it against the built-in tanhexp
// (autograd/nn_functions.h) and against finite differences, then trains a small model with it.
// ctest runs it (examples/CMakeLists.txt); it exits 1 when an error exceeds its tolerance.
#include <leangrad/leangrad.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace leangrad;

// f(x) = x tanh(u) and f'(x) = tanh(u) - x u (tanh^2(u) - 1), with u = e^x.
// e^x overflows float32 for x > ~88.7 (float64: ~709.8), and f' would then be x * inf * 0 = NaN.
// But tanh(e^x) is already 1 (to float64 precision) for x > ~3, so clamping the exponent at 20
// changes nothing else: f = x and f' = 1 beyond, the limits. The built-in tanhexp clamps the same
// way (Note [Stable TanhExp] in kernels/tanhexp_math.h), and it computes tanh^2(u) - 1 without
// the cancellation this version keeps where tanh(u) is close to 1: in float32 the two gradients
// differ by about 1e-6.
struct TanhExpFunction : autograd::Function<TanhExpFunction> {
  static Tensor forward(autograd::Context* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * tanh(clamped_exp(x));
  }

  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const Tensor x = ctx->saved()[0];
    const Tensor u = clamped_exp(x);
    const Tensor t = tanh(u);
    // u (t^2 - 1) first: it is 0 where u is large, so x * u cannot overflow for a huge x.
    return {grads[0] * (t - x * (u * (t * t - 1.0)))};
  }

  // e^min(x, 20).
  static Tensor clamped_exp(const Tensor& x) {
    const Tensor max_exponent = full({}, 20.0, TensorOptions(x.dtype()).device(x.device()));
    return exp(minimum(x, max_exponent));
  }
};

// Prints the largest |a - b| and whether it is within `tolerance` (a NaN anywhere fails).
bool check(const char* what, const Tensor& a, const Tensor& b, double tolerance) {
  const Tensor difference = (a.to(kFloat64) - b.to(kFloat64)).abs().contiguous();
  const double* d = difference.data_ptr<double>();
  double max_error = 0;
  for (std::int64_t i = 0; i < difference.numel(); ++i) {
    if (!(d[i] <= max_error)) max_error = d[i];  // also takes a NaN, and keeps it
  }
  const bool ok = max_error <= tolerance;
  std::printf("%-60s max abs error %.3g (tolerance %g) %s\n", what, max_error, tolerance,
              ok ? "ok" : "FAILED");
  return ok;
}

// y = f(x) and dy/dx, by backward of y.sum() (f is elementwise), with TanhExpFunction or the
// built-in. x becomes a fresh leaf, so calls do not add into each other's gradients.
std::pair<Tensor, Tensor> value_and_gradient(Tensor x, bool built_in) {
  x = x.detach().requires_grad_();
  const Tensor y = built_in ? tanhexp(x) : TanhExpFunction::apply(x);
  y.sum().backward();
  return {y.detach(), x.grad()};
}

// Against the built-in tanhexp, in float32: values and gradients.
bool check_against_built_in(const Tensor& x) {
  const auto [y, dy] = value_and_gradient(x, /*built_in=*/false);
  const auto [y_ref, dy_ref] = value_and_gradient(x, /*built_in=*/true);
  const bool values_ok =
      check("values vs tanhexp, float32, x in [-10, 10], |x| to 1e4:", y, y_ref, 1e-5);
  return check("gradients vs tanhexp, float32, x in [-10, 10], |x| to 1e4:", dy, dy_ref, 1e-5) &&
         values_ok;
}

// Where e^x overflows float32 (x > 88.7) or underflows to 0 (x < -103.3), the results must be
// the limits, exactly: f = x and f' = 1 for large x, f = 0 and f' = 0 for very negative x.
bool check_limits() {
  const Tensor x = tensor(std::vector<float>{-3e38f, -1e20f, -1e4f, -200, 89, 1e4f, 1e20f, 3e38f});
  const auto [y, dy] = value_and_gradient(x, /*built_in=*/false);
  const Tensor positive = x.gt(0.0);
  const bool values_ok = check("values vs limits, float32, |x| in [89, 3e38]:", y,
                               where(positive, x, zeros_like(x)), 0);
  return check("gradients vs limits, float32, |x| in [89, 3e38]:", dy, positive.to(kFloat32), 0) &&
         values_ok;
}

// Central differences in float64: f'(x) ~ (f(x + h) - f(x - h)) / 2h. The function is
// elementwise, so one pair of forward passes perturbing every element gives every derivative.
bool check_against_finite_differences() {
  const Tensor x = rand({1000}, kFloat64) * 20.0 - 10.0;  // in [-10, 10]
  const double h = 1e-6;
  const Tensor numeric = (TanhExpFunction::apply(x + h) - TanhExpFunction::apply(x - h)) / (2 * h);
  const Tensor analytic = value_and_gradient(x, /*built_in=*/false).second;
  return check("gradients vs central differences, float64, x in [-10, 10]:", analytic, numeric,
               1e-6);
}

// The function inside a model: Linear(1, 32), TanhExp, Linear(32, 1), fitted to x^2.
struct Regressor : nn::Module {
  Regressor() : nn::Module("Regressor") {}
  nn::Linear fc1 = register_module("fc1", nn::Linear(1, 32));
  nn::Linear fc2 = register_module("fc2", nn::Linear(32, 1));

  Tensor forward(const Tensor& x) override {  // (B, 1) -> (B, 1)
    return fc2->forward(TanhExpFunction::apply(fc1->forward(x)));
  }
};

bool train_small_model() {
  auto model = std::make_shared<Regressor>();
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-2));
  const Tensor x = (arange(64) / 16.0 - 2.0).reshape({64, 1});  // (B, 1) in [-2, 2)
  const Tensor target = x * x;
  double first_loss = 0, loss_value = 0;
  for (int step = 0; step < 300; ++step) {
    optimizer.zero_grad();
    const Tensor loss = mse_loss(model->forward(x), target);
    loss.backward();  // through TanhExpFunction::backward
    optimizer.step();
    loss_value = loss.item<double>();
    if (step == 0) first_loss = loss_value;
  }
  const bool ok = loss_value < 0.05 * first_loss;
  std::printf("%-60s mse %.4f at step 1, %.4f at step 300 %s\n",
              "a small model using it, fitted to x^2:", first_loss, loss_value,
              ok ? "ok" : "FAILED");
  return ok;
}

int main() {
  try {
    manual_seed(0);
    // 10000 random points in [-10, 10], then a few where e^x overflows float32.
    const Tensor large = tensor(std::vector<float>{-1e4f, -100, -89, 89, 100, 1e4f});
    bool ok = check_against_built_in(cat({rand({10000}) * 20.0 - 10.0, large}));
    ok = check_limits() && ok;
    ok = check_against_finite_differences() && ok;
    ok = train_small_model() && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom_function: %s\n", e.what());
    return 1;
  }
}
