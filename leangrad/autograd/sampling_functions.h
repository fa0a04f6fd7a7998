// Sampling from distributions with tensor parameters, as torch's: bernoulli, multinomial,
// poisson, binomial, and normal with tensors of means and standard deviations. Each draws from
// the default generator of its input's device (rand's and randn's, so manual_seed and
// snapshot_rng cover them); all but poisson and binomial are composed of rand / randn and tensor
// functions (Note [Sampling by composition] in
// sampling_functions.cpp), so it runs on every device. randperm is in kernels/creation.h beside
// randint.
//   Tensor mask = bernoulli(full({4, 4}, 0.3));            // 1 with probability 0.3
//   Tensor next = multinomial(softmax(logits, -1), 1);    // (N, 1) class indices, int64
//   Tensor z = normal(mu, sigma);                          // differentiable in mu and sigma
//   Tensor y = gumbel_softmax(logits, 0.5, /*hard=*/true);  // one-hot, soft sample's gradient
// The in-place fills (x.uniform_(), x.exponential_(), x.random_(0, 10), ...) are Tensor methods
// (core/tensor.h) drawn by the detail functions below.
#pragma once

#include <cstdint>
#include <optional>

#include <leangrad/core/shape.h>
#include <leangrad/core/tensor.h>
#include <leangrad/core/tensor_options.h>

namespace leangrad {

// 1 with probability p and 0 otherwise, elementwise, in p's dtype and on its device: p a floating
// tensor of probabilities in [0, 1] (checked: a CUDA p is read back for the check). The second
// form gives input's shape, dtype and device, every element with probability p. Not
// differentiable (PyTorch's gradient is zero).
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& input, double p);

// num_samples category indices (int64) from each row of probs, a 1-d (K) or 2-d (N, K) tensor of
// non-negative, finite weights with a positive sum (normalised here), as torch.multinomial:
// without replacement, num_samples <= the row's positive weights and each index at most once,
// the order that of the draws; with replacement, any index any number of times. Result
// (num_samples) or (N, num_samples).
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement = false);

// Poisson(rate) draws, elementwise, in rates' dtype and on its device: rates floating, each >= 0
// and finite (checked; a CUDA tensor is read back for the check), as torch.poisson. The gradient
// is zero, as PyTorch's. Drawn on the host (Note [Discrete samplers] in
// kernels/discrete_samplers.cpp) from counters of the device's default generator, so a CUDA
// tensor's values take a round trip and equal the CPU's for the same seed.
Tensor poisson(const Tensor& rates);
// Binomial(count, prob) draws, elementwise with count and prob broadcast together, in their dtype
// (floating, one for both) and on their device: each count a non-negative integer, each prob in
// [0, 1] (checked; PyTorch's takes any count and clamps prob), as torch.binomial. Not
// differentiable (PyTorch's gradient is not implemented). Drawn as poisson is.
Tensor binomial(const Tensor& count, const Tensor& prob);

// Normal samples with means `mean` and standard deviations `std` (each >= 0, checked), broadcast
// together: mean + std * randn, differentiable in both (the reparameterisation), as
// torch.normal. A double stands for a 0-d tensor of the other's dtype and device; the last form
// draws `size` samples of one N(mean, std^2).
Tensor normal(const Tensor& mean, const Tensor& std);
Tensor normal(const Tensor& mean, double std = 1.0);
Tensor normal(double mean, const Tensor& std);
Tensor normal(double mean, double std, const Shape& size, const TensorOptions& options = {});

// A sample of the Gumbel-softmax (Concrete) distribution over dim, as
// torch.nn.functional.gumbel_softmax: softmax((logits + g) / tau, dim), g standard Gumbel noise
// (-log of exponential_ draws in float32 or float64, on logits' device, cast to logits'
// dtype). With hard, the one-hot of each sample's
// argmax, whose gradient is the soft sample's (straight-through: y_hard - y_soft.detach() +
// y_soft; its largest element is 1 to within 2 rounding errors). tau > 0 (checked; PyTorch's
// gives NaN for 0). PyTorch's deprecated eps is not taken (LibTorch's has none).
Tensor gumbel_softmax(const Tensor& logits, double tau = 1.0, bool hard = false,
                      std::int64_t dim = -1);

namespace detail {
// The in-place samplers' draws (Tensor::uniform_, exponential_, ...; Note [In-place samplers]):
// each checks self and its parameters (an Error naming the op, self's shape, dtype and device),
// then fills self (uniform_, normal_) or returns the values to copy into it, of self's shape on
// its device. Not recorded by autograd; the Tensor methods do that.
void sample_uniform_(const Tensor& self, double from, double to);
void sample_normal_(const Tensor& self, double mean, double stddev);
Tensor exponential_draws(const Tensor& self, double lambd);
Tensor geometric_draws(const Tensor& self, double p);
Tensor cauchy_draws(const Tensor& self, double median, double sigma);
Tensor log_normal_draws(const Tensor& self, double mean, double stddev);
Tensor bernoulli_draws(const Tensor& self, double p);
Tensor bernoulli_draws(const Tensor& self, const Tensor& p);
Tensor random_draws(const Tensor& self, std::int64_t from, std::optional<std::int64_t> to);
}  // namespace detail

}  // namespace leangrad
