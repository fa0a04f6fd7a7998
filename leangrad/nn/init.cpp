// nn::init (nn/init.h): the formulas are PyTorch's torch.nn.init, written from its documentation;
// the random fills are ops::uniform_ / ops::normal_ on the tensor's device generator.
#include <leangrad/nn/init.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::nn::init {

namespace {

void check_defined(const Tensor& tensor, const char* fn) {
  LG_CHECK(tensor.defined(), "nn::init::", fn, ": the tensor is undefined");
}

void check_floating(const Tensor& tensor, const char* fn) {
  check_defined(tensor, fn);
  LG_CHECK_TYPED(DTypeError, is_floating(tensor.dtype()), "nn::init::", fn,
                 ": expected a floating tensor, got ", tensor.dtype(), " of shape ", tensor.shape(),
                 " on ", tensor.device());
}

// Whether the fan-based initialisers (xavier_*, kaiming_*) have nothing to do: a tensor of no
// elements is left as it is, as PyTorch's ("initializing zero-element tensors is a no-op"),
// though one of its fans is 0. Fewer than 2 dims have no fans.
bool nothing_to_fill(const Tensor& tensor, const char* fn) {
  check_defined(tensor, fn);
  LG_CHECK(tensor.dim() >= 2, "nn::init::", fn,
           ": fan in and fan out need a tensor of at least 2 dimensions, got shape ",
           tensor.shape());
  return tensor.numel() == 0;
}

// The fan of a tensor nothing_to_fill has passed (> 0: its empty tensors were taken away).
std::int64_t fan(const Tensor& tensor, FanMode mode) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == FanMode::FanIn ? fan_in : fan_out;
}

Tensor fill_uniform(Tensor tensor, double low, double high) {
  NoGradGuard no_grad;
  ops::uniform_(tensor, low, high, default_generator(tensor.device()));
  tensor.bump_version();
  return tensor;
}

Tensor fill_normal(Tensor tensor, double mean, double std) {
  NoGradGuard no_grad;
  ops::normal_(tensor, mean, std, default_generator(tensor.device()));
  tensor.bump_version();
  return tensor;
}

Tensor fill_constant(Tensor tensor, double value, const char* fn) {
  check_defined(tensor, fn);
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv1D:
    case Nonlinearity::Conv2D:
    case Nonlinearity::Conv3D:
    case Nonlinearity::ConvTranspose1D:
    case Nonlinearity::ConvTranspose2D:
    case Nonlinearity::ConvTranspose3D:
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3.0;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU:
      LG_CHECK(std::isfinite(param), "nn::init::calculate_gain: leaky_relu's negative slope must ",
               "be finite, got ", param);
      return std::sqrt(2.0 / (1.0 + param * param));
    case Nonlinearity::SELU:
      return 3.0 / 4.0;
  }
  LG_THROW(Error, "nn::init::calculate_gain: unknown nonlinearity ",
           static_cast<int>(nonlinearity));
}

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  check_defined(tensor, "calculate_fan_in_and_fan_out");
  LG_CHECK(tensor.dim() >= 2,
           "nn::init::calculate_fan_in_and_fan_out: expected a tensor of at least 2 dimensions, "
           "got shape ",
           tensor.shape());
  std::int64_t receptive_field = 1;
  for (std::int64_t d = 2; d < tensor.dim(); ++d)
    receptive_field *= tensor.size(d);  // <= numel: cannot overflow
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

std::tuple<std::int64_t, std::int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return {fan_in, fan_out};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  check_floating(tensor, "uniform_");
  return fill_uniform(std::move(tensor), low, high);
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_floating(tensor, "normal_");
  return fill_normal(std::move(tensor), mean, std);
}

Tensor constant_(Tensor tensor, double value) {
  return fill_constant(std::move(tensor), value, "constant_");
}

Tensor zeros_(Tensor tensor) {
  return fill_constant(std::move(tensor), 0.0, "zeros_");
}

Tensor ones_(Tensor tensor) {
  return fill_constant(std::move(tensor), 1.0, "ones_");
}

Tensor eye_(Tensor tensor) {
  check_defined(tensor, "eye_");
  LG_CHECK(tensor.dim() == 2, "nn::init::eye_: expected a 2-D tensor, got shape ", tensor.shape());
  const std::int64_t rows = tensor.size(0);
  const std::int64_t cols = tensor.size(1);
  Tensor identity = empty({rows, cols}, TensorOptions(kFloat64));
  double* values = identity.data_ptr<double>();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      values[i * cols + j] = i == j ? 1.0 : 0.0;
  NoGradGuard no_grad;
  tensor.copy_(identity.to(tensor.dtype()).to(tensor.device()));
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  check_floating(tensor, "xavier_uniform_");
  if (nothing_to_fill(tensor, "xavier_uniform_")) return tensor;
  const double fan_sum =
      static_cast<double>(fan(tensor, FanMode::FanIn) + fan(tensor, FanMode::FanOut));
  const double bound = gain * std::sqrt(6.0 / fan_sum);  // sqrt(3) * std
  return fill_uniform(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  check_floating(tensor, "xavier_normal_");
  if (nothing_to_fill(tensor, "xavier_normal_")) return tensor;
  const double fan_sum =
      static_cast<double>(fan(tensor, FanMode::FanIn) + fan(tensor, FanMode::FanOut));
  return fill_normal(std::move(tensor), 0.0, gain * std::sqrt(2.0 / fan_sum));
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_floating(tensor, "kaiming_uniform_");
  if (nothing_to_fill(tensor, "kaiming_uniform_")) return tensor;
  const double std =
      calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  const double bound = std::sqrt(3.0) * std;
  return fill_uniform(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_floating(tensor, "kaiming_normal_");
  if (nothing_to_fill(tensor, "kaiming_normal_")) return tensor;
  const double std =
      calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  return fill_normal(std::move(tensor), 0.0, std);
}

Tensor orthogonal_(Tensor tensor, double gain) {
  check_floating(tensor, "orthogonal_");
  LG_CHECK_SHAPE(tensor.dim() >= 2, "nn::init::orthogonal_: expected a tensor of at least 2 ",
                 "dimensions, got shape ", tensor.shape());
  const std::int64_t rows = tensor.size(0);
  if (tensor.numel() == 0) return tensor;
  const std::int64_t cols = tensor.numel() / rows;
  NoGradGuard no_grad;
  // Q of a Gaussian matrix's QR, each column's sign made that of R's diagonal (so that Q is
  // uniform over the orthogonal matrices, Mezzadri 2007), the taller way round.
  const DType work = tensor.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor gaussian = empty({std::max(rows, cols), std::min(rows, cols)},
                          TensorOptions(work).device(tensor.device()));
  ops::normal_(gaussian, 0.0, 1.0, default_generator(tensor.device()));
  const auto [q, r] = linalg::qr(gaussian);
  Tensor ortho = mul(q, sign(diagonal(r)));
  if (rows < cols) ortho = ortho.t();
  tensor.copy_(mul(ortho, gain).reshape(tensor.shape()).to(tensor.dtype()));
  return tensor;
}

Tensor dirac_(Tensor tensor, std::int64_t groups) {
  check_defined(tensor, "dirac_");
  LG_CHECK_SHAPE(tensor.dim() >= 3 && tensor.dim() <= 5,
                 "nn::init::dirac_: expected a convolution weight of 3 to 5 dimensions, got shape ",
                 tensor.shape());
  LG_CHECK(groups >= 1 && tensor.size(0) % groups == 0,
           "nn::init::dirac_: expected groups >= 1 "
           "dividing the ",
           tensor.size(0), " output channels, got ", groups);
  const std::int64_t per_group = tensor.size(0) / groups;
  const std::int64_t channels = std::min(per_group, tensor.size(1));
  NoGradGuard no_grad;
  tensor.zero_();
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t d = 0; d < channels; ++d) {
      std::vector<indexing::TensorIndex> at{g * per_group + d, d};
      for (std::int64_t k = 2; k < tensor.dim(); ++k)
        at.emplace_back(tensor.size(k) / 2);
      tensor.index(at).fill_(1.0);
    }
  }
  return tensor;
}

Tensor sparse_(Tensor tensor, double sparsity, double std) {
  check_floating(tensor, "sparse_");
  LG_CHECK_SHAPE(tensor.dim() == 2, "nn::init::sparse_: expected a 2-D tensor, got shape ",
                 tensor.shape());
  LG_CHECK(sparsity >= 0.0 && sparsity <= 1.0,
           "nn::init::sparse_: expected sparsity in [0, 1], got ", sparsity);
  const std::int64_t rows = tensor.size(0);
  const auto zeros_per_column =
      static_cast<std::int64_t>(std::ceil(sparsity * static_cast<double>(rows)));
  fill_normal(tensor, 0.0, std);
  if (zeros_per_column == 0 || tensor.numel() == 0) return tensor;
  NoGradGuard no_grad;
  // Each column's first rows in a uniformly random order: the argsort of independent uniforms.
  const Tensor order =
      argsort(leangrad::rand(tensor.shape(), TensorOptions(kFloat32).device(tensor.device())), 0);
  tensor.scatter_(0, narrow(order, 0, 0, zeros_per_column), 0.0);
  return tensor;
}

}  // namespace leangrad::nn::init
