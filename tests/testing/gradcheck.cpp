// Implementation of gradcheck (tests/testing/gradcheck.h): validate the inputs, take the
// analytical vector-Jacobian product with one backward(v), then perturb each element of each
// input in place and compare with central differences. Values are read back with to_vector
// (tensor_testing.h), not with the kernels under test.
#include "testing/gradcheck.h"

#include <cmath>
#include <exception>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

constexpr std::uint64_t kUpstreamGradSeed = 0x5eed;

std::vector<double> uniform_values(std::int64_t n, double low, double high, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  std::vector<double> values(static_cast<std::size_t>(n));
  for (double& value : values)
    value = distribution(generator);
  return values;
}

// "input 1 (shape [3, 4], strides [1, 3])"
std::string describe_input(std::size_t i, const Tensor& t) {
  std::ostringstream out;
  out << "input " << i << " (shape " << shape_str(t.shape()) << ", strides "
      << shape_str(t.strides()) << ")";
  return out.str();
}

// sum_j out[j] * v[j], read through out's strides.
double dot(const Tensor& out, const std::vector<double>& v) {
  const std::vector<double> values = to_vector(out);
  double total = 0.0;
  for (std::size_t j = 0; j < values.size(); ++j)
    total += values[j] * v[j];
  return total;
}

// Steps a row-major multi-index through `shape` (an odometer); false after the last element.
bool next_index(std::vector<std::int64_t>& index, const Shape& shape) {
  for (std::size_t d = index.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Why `x` cannot be checked (a non-empty message), or nothing.
std::optional<std::string> unsupported_reason(const Tensor& x) {
  std::ostringstream why;
  if (x.dtype() != kFloat64) {
    why << "has dtype " << dtype_name(x.dtype()) << "; gradients are checked in float64";
  } else if (!x.device().is_cpu()) {
    why << "is on " << x.device() << "; gradients are checked on the CPU";
  } else if (!x.is_leaf()) {
    why << "is not a leaf (it was produced by " << x.grad_fn()->name()
        << "); pass x.detach() with requires_grad_()";
  } else {
    for (std::int64_t d = 0; d < x.dim(); ++d) {
      if (x.stride(d) == 0 && x.size(d) > 1) {
        why << "has stride 0 in dim " << d << " (an expanded tensor): its elements share memory";
        break;
      }
    }
  }
  if (why.str().empty()) return std::nullopt;
  return why.str();
}

// Puts back the .grad() each checked input had before gradcheck, even when fn throws.
class GradRestorer {
 public:
  void remember(const Tensor& t) { saved_.emplace_back(t, t.grad()); }
  ~GradRestorer() {
    for (auto& [tensor, grad] : saved_)
      tensor.set_grad(grad);
  }

 private:
  std::vector<std::pair<Tensor, Tensor>> saved_;
};

::testing::AssertionResult run_gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                         double eps, double atol, double rtol) {
  // ---- Which inputs are checked ----
  std::vector<std::size_t> checked;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    if (auto why = unsupported_reason(inputs[i])) {
      return ::testing::AssertionFailure()
             << "gradcheck: " << describe_input(i, inputs[i]) << " requires grad but " << *why;
    }
    checked.push_back(i);
  }
  if (checked.empty()) {
    return ::testing::AssertionFailure() << "gradcheck: no input requires grad";
  }

  // ---- Analytical: one backward of a random upstream gradient v ----
  GradRestorer restorer;
  std::vector<Tensor> grads_before(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) grads_before[i] = inputs[i].grad();
  }
  for (std::size_t i : checked) {
    restorer.remember(inputs[i]);
    inputs[i].set_grad(Tensor());
  }
  std::vector<double> v;
  Shape output_shape;
  std::string output_node;
  {
    const Tensor out = fn(inputs);
    if (!out.defined()) return ::testing::AssertionFailure() << "gradcheck: fn returned Tensor()";
    if (out.dtype() != kFloat64) {
      return ::testing::AssertionFailure()
             << "gradcheck: fn returned dtype " << dtype_name(out.dtype())
             << "; return float64 so the finite differences are precise";
    }
    if (!out.requires_grad()) {
      return ::testing::AssertionFailure()
             << "gradcheck: fn's output (shape " << shape_str(out.shape())
             << ") does not require grad although an input does: the op recorded no graph";
    }
    output_shape = out.shape();
    output_node = out.grad_fn() ? out.grad_fn()->name() : "a leaf";
    v = uniform_values(out.numel(), -1.0, 1.0, kUpstreamGradSeed);
    out.backward(make_tensor(v, out.shape(), kFloat64));
  }

  std::vector<std::vector<double>> analytical(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined()) continue;
    const Tensor g = x.grad();
    if (!x.requires_grad()) {
      const bool unchanged = grads_before[i].defined() ? g.is_same(grads_before[i]) : !g.defined();
      if (!unchanged) {
        return ::testing::AssertionFailure()
               << "gradcheck: " << describe_input(i, x)
               << " does not require grad but backward gave it a .grad()";
      }
      continue;
    }
    if (!g.defined()) {  // backward did not reach it: the gradient is zero
      analytical[i].assign(static_cast<std::size_t>(x.numel()), 0.0);
      continue;
    }
    if (g.shape() != x.shape() || g.dtype() != x.dtype()) {
      return ::testing::AssertionFailure()
             << "gradcheck: " << describe_input(i, x) << " got a gradient of shape "
             << shape_str(g.shape()) << " and dtype " << dtype_name(g.dtype())
             << ", expected its own shape and dtype " << dtype_name(x.dtype());
    }
    analytical[i] = to_vector(g);
  }

  // ---- Numerical: central differences, perturbing each element through the input's strides --
  NoGradGuard no_grad;
  bool failed = false;
  std::ostringstream message;
  message.precision(10);
  for (std::size_t i : checked) {
    const Tensor& x = inputs[i];
    if (x.numel() == 0) continue;
    double* base = static_cast<double*>(x.data_ptr());
    std::vector<std::int64_t> index(static_cast<std::size_t>(x.dim()), 0);
    std::int64_t mismatches = 0;
    std::size_t flat = 0;
    do {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < index.size(); ++d)
        offset += index[d] * x.strides()[d];
      double& element = base[offset];
      const double original = element;
      element = original + eps;
      const double plus = dot(fn(inputs), v);
      element = original - eps;
      const double minus = dot(fn(inputs), v);
      element = original;
      const double numerical = (plus - minus) / (2.0 * eps);
      const double computed = analytical[i][flat];
      const bool close = std::fabs(computed - numerical) <= atol + rtol * std::fabs(numerical);
      if (!close) {
        if (mismatches == 0) {
          message << (failed ? "\n" : "") << "gradcheck: " << describe_input(i, x) << " element "
                  << shape_str(index) << ": analytical " << computed << " vs numerical "
                  << numerical << " (atol " << atol << ", rtol " << rtol << ", eps " << eps << ")";
        }
        ++mismatches;
      }
      ++flat;
    } while (next_index(index, x.shape()));
    if (mismatches > 0) {
      failed = true;
      message << "; " << mismatches << " of " << x.numel() << " elements differ";
    }
  }
  if (!failed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << message.str() << "\n(output shape " << shape_str(output_shape) << ", produced by "
         << output_node << ")";
}

}  // namespace

::testing::AssertionResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                     double eps, double atol, double rtol) {
  try {
    return run_gradcheck(fn, inputs, eps, atol, rtol);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "gradcheck: an exception escaped: " << e.what();
  }
}

Tensor uniform_input(const Shape& shape, double low, double high, std::uint64_t seed) {
  Tensor t = make_tensor(uniform_values(shape_numel(shape), low, high, seed), shape, kFloat64);
  t.requires_grad_();
  return t;
}

Tensor away_from_zero_input(const Shape& shape, double min_abs, double max_abs,
                            std::uint64_t seed) {
  std::vector<double> values = uniform_values(shape_numel(shape), min_abs, max_abs, seed);
  std::mt19937_64 sign_generator(seed + 1);
  for (double& value : values) {
    if (sign_generator() % 2 == 0) value = -value;
  }
  Tensor t = make_tensor(values, shape, kFloat64);
  t.requires_grad_();
  return t;
}

::testing::AssertionResult gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs) {
  return gradcheck(
      [&fn](const std::vector<Tensor>& args) {
        AutoGradMode enable(true);
        const std::vector<Tensor> grads =
            autograd::grad({fn(args).sum()}, args, {}, std::nullopt, /*create_graph=*/true);
        Tensor all = grads[0].sum();
        for (std::size_t i = 1; i < grads.size(); ++i)
          all = all + grads[i].sum() * static_cast<double>(i + 1);
        return all;
      },
      inputs);
}

}  // namespace leangrad::test
