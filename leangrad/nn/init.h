// nn::init: PyTorch's parameter initialisers (torch.nn.init, torch::nn::init in LibTorch), in
// place on any tensor and device, recording no autograd graph (a parameter stays a leaf).
//
//   nn::init::kaiming_normal_(conv->weight, 0.0, kFanOut, kReLU);
//   nn::init::xavier_uniform_(linear->weight);
//   nn::init::zeros_(linear->bias);
//
// Random ones draw from the default generator of the tensor's device (manual_seed), so a seed
// gives the same values on every run; the values are not PyTorch's (another random stream), their
// distributions are. Fans and gains are PyTorch's:
//   fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, where the receptive
//   field is the product of the sizes after the first two (1 for a matrix);
//   gain: linear, conv*, sigmoid 1; tanh 5/3; relu sqrt(2); leaky_relu sqrt(2 / (1 + a^2));
//   selu 3/4.
// kaiming_*: std = gain / sqrt(fan) (fan_in or fan_out by mode; uniform bound sqrt(3) std).
// xavier_*: std = gain sqrt(2 / (fan_in + fan_out)).
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#include <leangrad/core/enum_tags.h>
#include <leangrad/core/tensor.h>

namespace leangrad::nn::init {

enum class Nonlinearity : std::uint8_t {
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU,
  SELU,
};
enum class FanMode : std::uint8_t { FanIn, FanOut };

// The recommended gain for `nonlinearity`; `param` is leaky_relu's negative slope.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a tensor of at least two dimensions; _calculate_fan_in_and_fan_out is
// LibTorch's spelling.
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);
std::tuple<std::int64_t, std::int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

// Each fills `tensor` in place and returns it.
Tensor uniform_(Tensor tensor, double low = 0.0, double high = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
// The identity matrix (2-D tensors only; ones on the main diagonal of a rectangular one).
Tensor eye_(Tensor tensor);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// `a`: leaky_relu's negative slope (with nonlinearity LeakyReLU, the default, as in PyTorch).
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
// A (semi-)orthogonal matrix times gain, the tensor seen as (size(0), the product of the other
// sizes): Q of a Gaussian matrix's QR (linalg::qr), its columns' signs those of R's diagonal, so
// that it is uniformly distributed, as PyTorch's; rows or columns orthonormal, whichever are
// fewer. At least 2 dimensions.
Tensor orthogonal_(Tensor tensor, double gain = 1.0);
// The Dirac delta of a convolution's weight (out, in, k...) of 3 to 5 dimensions, as PyTorch's:
// zeros but a 1 at the kernel's centre (size / 2 in each spatial dim) of out channel
// g * (out / groups) + d and in channel d, for d below min(out / groups, in) in each group, so
// that the convolution passes min(out / groups, in) input channels through (groups divides out).
Tensor dirac_(Tensor tensor, std::int64_t groups = 1);
// A 2-D tensor (rows, cols) of N(0, std) values with ceil(sparsity * rows) of each column's
// rows, chosen uniformly at random, set to 0, as PyTorch's sparse_ (Martens 2010); sparsity in
// [0, 1].
Tensor sparse_(Tensor tensor, double sparsity, double std = 0.01);

}  // namespace leangrad::nn::init

namespace leangrad {
// LibTorch's spellings: torch::kFanIn, torch::kReLU, ... (kLinear: core/enum_tags.h, shared with
// interpolate's mode).
inline constexpr nn::init::FanMode kFanIn = nn::init::FanMode::FanIn;
inline constexpr nn::init::FanMode kFanOut = nn::init::FanMode::FanOut;
inline constexpr nn::init::Nonlinearity kConv1D = nn::init::Nonlinearity::Conv1D;
inline constexpr nn::init::Nonlinearity kConv2D = nn::init::Nonlinearity::Conv2D;
inline constexpr nn::init::Nonlinearity kConv3D = nn::init::Nonlinearity::Conv3D;
inline constexpr nn::init::Nonlinearity kConvTranspose1D = nn::init::Nonlinearity::ConvTranspose1D;
inline constexpr nn::init::Nonlinearity kConvTranspose2D = nn::init::Nonlinearity::ConvTranspose2D;
inline constexpr nn::init::Nonlinearity kConvTranspose3D = nn::init::Nonlinearity::ConvTranspose3D;
inline constexpr nn::init::Nonlinearity kSigmoid = nn::init::Nonlinearity::Sigmoid;
inline constexpr nn::init::Nonlinearity kTanh = nn::init::Nonlinearity::Tanh;
inline constexpr nn::init::Nonlinearity kReLU = nn::init::Nonlinearity::ReLU;
inline constexpr nn::init::Nonlinearity kLeakyReLU = nn::init::Nonlinearity::LeakyReLU;
inline constexpr nn::init::Nonlinearity kSELU = nn::init::Nonlinearity::SELU;
}  // namespace leangrad
