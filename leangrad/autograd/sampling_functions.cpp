// bernoulli, multinomial and normal with tensor parameters, composed of rand / randn and tensor
// functions.
//
// Note [Sampling by composition]
//   Each sampler is a few tensor functions over uniforms or normals from the default generator of
//   the input's device, so it needs no kernel of its own on any device:
//   - bernoulli: u < p, u uniform in [0, 1) in float64 for a float64 p and in float32 otherwise
//     (a 16-bit uniform would round up to 1 and lose the resolution of p): P(u < p) is p to within
//     2^-24 (float32 u, multiples of 2^-24) or 2^-53. p = 0 never gives 1 and p = 1 always does.
//   - multinomial with replacement, by the inverse of the distribution function: c = cumsum(w) /
//     sum(w) in float64 (non-decreasing, as a running sum of non-negative terms is, and exactly 1
//     from the last positive weight on), u uniform in [0, 1), and the index is the number of c_k
//     <= u: index j is drawn for c_(j-1) <= u < c_j, with probability w_j / sum(w); a zero weight
//     makes its interval empty and u < 1 never counts the trailing ones. The comparisons are a
//     (N, samples, K) tensor, taken in chunks of samples of at most kComparisonsPerChunk elements.
//   - multinomial without replacement (Efraimidis and Spirakis, "Weighted random sampling with a
//     reservoir", 2006): the num_samples largest keys w_k / E_k, E_k = -log(u_k) standard
//     exponentials, in float64. Sorting by them is drawing one index after another with
//     probability proportional to the weights left (the exponentials' race), so the order is the
//     draws' order, as torch.multinomial's. Zero weights get key -1, below every positive
//     weight's (>= 0), and are never among the first num_samples: the check asks for that many
//     positive weights.
//   - normal: mean + std randn, with the autograd functions, so that it differentiates in mean
//     (gradient g) and std (g z) as torch.normal's reparameterised sample.
//   The checks on values (p in [0, 1], non-negative finite weights, std >= 0) reduce on the
//   input's device and read one bool back, as PyTorch's do.
//
// Note [In-place samplers]
//   Tensor::uniform_ and normal_ are the rand / randn kernels on self (the same numbers as
//   rand(shape) after the same seed). The others draw in float64 (int64 for random_) on self's
//   device and copy the draws into self, so the float64 uniforms' 53 bits reach the tails:
//   - exponential_: E = -log(1 - u) / lambd, u in [0, 1); u = 0 would give E = 0, outside the
//     distribution's support, so log(1 - u) is at most -eps/2 (float64's eps), as PyTorch's CUDA
//     kernel does with its own dtype's: every value is > 0 (it rounds to 0 only when lambd
//     exceeds about 1e29 for float32). -log(E) is then finite, which gumbel_softmax needs.
//   - geometric_: k = ceil(log(1 - u) / log(1 - p)), at least 1: P(k) = (1 - p)^(k-1) p, as
//     1 - u is uniform in (0, 1] (k is the first k with (1 - p)^k <= 1 - u).
//   - cauchy_: median + sigma tan(pi (u - 1/2)), finite in float64 (tan(-pi/2 rounded) is about
//     -1.6e16).
//   - log_normal_: exp(mean + std z), z standard normal in float64.
//   - bernoulli_: u < p, drawn as bernoulli(p) draws (float32 u, float64 for a float64 self).
//   - random_: randint's integers (kernels/creation.h) in [from, to), ranges of at most 2^53
//     values; random_() of an int64 self is [0, 2^63), two draws as 2^32 hi + lo.
//   The values are clamped to self's dtype's largest finite value where they can exceed it
//   (geometric_'s tail), and to the bounds random_ checks; casting to float32 or lower rounds.
#include <leangrad/autograd/sampling_functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/discrete_samplers.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

namespace {

// The comparisons of one chunk of multinomial's inverse-distribution draws, at most.
constexpr std::int64_t kComparisonsPerChunk = std::int64_t{1} << 24;

// The dtype bernoulli draws its uniforms in for probabilities of `dtype`.
DType uniform_dtype_for(DType dtype) {
  return dtype == kFloat64 ? kFloat64 : kFloat32;
}

void check_floating(const char* op, const char* what, const Tensor& t) {
  LG_CHECK(t.defined(), op, ": ", what, " is an undefined tensor");
  LG_CHECK_DTYPE(is_floating(t.dtype()), op, ": expected a floating ", what, ", got dtype ",
                 t.dtype(), " (shape ", t.shape(), ", device ", t.device(), ")");
}

// True when every element of the bool tensor `condition` is true (one value read back).
bool all_true(const Tensor& condition) {
  return all(condition).item<bool>();
}

// What an in-place sampler writes into: defined, and floating when `floating_only`.
void check_target(const char* op, const Tensor& self, bool floating_only) {
  LG_CHECK(self.defined(), op, ": self is an undefined tensor");
  LG_CHECK_DTYPE(!floating_only || is_floating(self.dtype()), op,
                 ": expected a floating tensor, got dtype ", self.dtype(), " (shape ", self.shape(),
                 ", device ", self.device(), ")");
}

// A parameter check naming self, as every in-place sampler's Error does.
#define LG_CHECK_SAMPLER(cond, op, self, ...)                                           \
  LG_CHECK(cond, op, ": ", __VA_ARGS__, " (self of shape ", (self).shape(), ", dtype ", \
           (self).dtype(), ", device ", (self).device(), ")")

TensorOptions draws_on(const Tensor& self, DType dtype = kFloat64) {
  return TensorOptions(dtype).device(self.device());
}

// The dtype bernoulli_ draws its uniforms in for a self of `dtype` (as bernoulli's for p).
DType bernoulli_draw_dtype(DType dtype) {
  return dtype == kFloat64 ? kFloat64 : kFloat32;
}

}  // namespace

Tensor bernoulli(const Tensor& p) {
  LG_PROFILE_OP(p);
  const char* op = "bernoulli";
  check_floating(op, "p", p);
  const Tensor probabilities = p.detach();
  LG_CHECK(all_true(logical_and(ge(probabilities, 0.0), le(probabilities, 1.0))), op,
           ": expected every p in [0, 1] (no NaN), got p of shape ", p.shape(), ", dtype ",
           p.dtype(), ", device ", p.device());
  const DType draw = uniform_dtype_for(p.dtype());
  const Tensor u = rand(p.shape(), TensorOptions(draw).device(p.device()));
  return lt(u, probabilities.to(draw)).to(p.dtype());
}

Tensor bernoulli(const Tensor& input, double p) {
  LG_PROFILE_OP(input);
  const char* op = "bernoulli";
  check_floating(op, "input", input);
  LG_CHECK(p >= 0.0 && p <= 1.0, op, ": expected p in [0, 1], got ", p);
  const DType draw = uniform_dtype_for(input.dtype());
  const Tensor u = rand(input.shape(), TensorOptions(draw).device(input.device()));
  return lt(u, p).to(input.dtype());
}

namespace {

// The host samplers' operands: contiguous CPU copies in float32, or float64 for float64.
Tensor host_operand(const Tensor& t) {
  return t.detach().to(Device::cpu()).to(uniform_dtype_for(t.dtype())).contiguous();
}

// Runs a host sampler over `n` elements into a new host tensor of `like`'s shape and dtype, from
// n counters of the default generator of `device` (kernels/discrete_samplers.h).
template <typename Draw>
Tensor draw_on_host(const Tensor& like, Device device, Draw draw) {
  Tensor out = empty(like.shape(), like.dtype());
  const Generator::State state =
      default_generator(device).reserve(static_cast<std::uint64_t>(out.numel()));
  if (like.dtype() == kFloat64) {
    draw(double{}, out, state);
  } else {
    draw(float{}, out, state);
  }
  return out;
}

}  // namespace

Tensor poisson(const Tensor& rates) {
  LG_PROFILE_OP(rates);
  const char* op = "poisson";
  check_floating(op, "rates", rates);
  const Tensor values = rates.detach();
  LG_CHECK(all_true(logical_and(ge(values, 0.0), isfinite(values))), op,
           ": expected every rate >= 0 and finite, got rates of shape ", rates.shape(), ", dtype ",
           rates.dtype(), ", device ", rates.device());
  const Tensor r = host_operand(values);
  const Tensor draws =
      draw_on_host(r, rates.device(), [&]<typename T>(T, Tensor& out, Generator::State state) {
        kernels::poisson<T>(r.data_ptr<T>(), out.data_ptr<T>(), out.numel(), state.seed,
                            state.offset);
      });
  const Tensor out = draws.to(rates.dtype()).to(rates.device());
  // PyTorch's gradient is zero (the draw is piecewise constant in the rate).
  return autograd::record_op(op, out, {rates}, {},
                             [](const autograd::BackwardContext& c) -> std::vector<Tensor> {
                               return {zeros_like(c.grad)};
                             });
}

Tensor binomial(const Tensor& count, const Tensor& prob) {
  LG_PROFILE_OP(count, prob);
  const char* op = "binomial";
  check_floating(op, "count", count);
  check_floating(op, "prob", prob);
  LG_CHECK_DTYPE(count.dtype() == prob.dtype(), op, ": expected count and prob of one dtype, got ",
                 count.dtype(), " and ", prob.dtype());
  LG_CHECK_DEVICE(count.device() == prob.device(), op,
                  ": expected count and prob on one device, got ", count.device(), " and ",
                  prob.device());
  const Shape shape = broadcast_shapes(count.shape(), prob.shape(), op);
  const Tensor n = count.detach();
  const Tensor p = prob.detach();
  LG_CHECK(all_true(logical_and(logical_and(ge(n, 0.0), isfinite(n)), eq(n, floor(n)))), op,
           ": expected every count to be a non-negative integer, got count of shape ",
           count.shape(), ", dtype ", count.dtype(), ", device ", count.device());
  LG_CHECK(all_true(logical_and(ge(p, 0.0), le(p, 1.0))), op,
           ": expected every prob in [0, 1] (no NaN), got prob of shape ", prob.shape(), ", dtype ",
           prob.dtype(), ", device ", prob.device());
  const Tensor n_host = host_operand(expand(n, shape));
  const Tensor p_host = host_operand(expand(p, shape));
  const Tensor draws =
      draw_on_host(n_host, count.device(), [&]<typename T>(T, Tensor& out, Generator::State state) {
        kernels::binomial<T>(n_host.data_ptr<T>(), p_host.data_ptr<T>(), out.data_ptr<T>(),
                             out.numel(), state.seed, state.offset);
      });
  return draws.to(count.dtype()).to(count.device());
}

Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement) {
  LG_PROFILE_OP(probs);
  const char* op = "multinomial";
  check_floating(op, "probs", probs);
  LG_CHECK_SHAPE(probs.dim() == 1 || probs.dim() == 2, op,
                 ": expected probs of 1 or 2 dims (K) or (N, K), got shape ", probs.shape());
  const std::int64_t categories = probs.size(-1);
  LG_CHECK_SHAPE(categories > 0, op, ": probs of shape ", probs.shape(), " has no categories");
  LG_CHECK(num_samples > 0, op, ": expected num_samples > 0, got ", num_samples);
  LG_CHECK(replacement || num_samples <= categories, op, ": cannot draw ", num_samples,
           " samples without replacement from ", categories, " categories (probs of shape ",
           probs.shape(), ")");
  const Tensor rows = probs.detach().to(kFloat64).reshape({-1, categories});
  const std::int64_t n = rows.size(0);
  LG_CHECK(all_true(logical_and(isfinite(rows), ge(rows, 0.0))), op,
           ": expected finite, non-negative weights, got probs of shape ", probs.shape(),
           ", dtype ", probs.dtype(), ", device ", probs.device());
  const Tensor positive = sum(gt(rows, 0.0).to(kInt64), {1});
  LG_CHECK(all_true(ge(positive, replacement ? 1.0 : static_cast<double>(num_samples))), op,
           ": every row needs ", replacement ? "a positive weight" : "as many positive weights",
           replacement ? "" : " as samples drawn without replacement", " (num_samples ",
           num_samples, ", probs of shape ", probs.shape(), ")");
  const TensorOptions draws = TensorOptions(kFloat64).device(probs.device());
  Tensor indices;
  if (!replacement) {
    // E = -log(u) > 0 (u < 1); u = 0 gives E = inf and key 0. Zero weights get key -1, below
    // every positive weight's.
    const Tensor exponentials = neg(log(rand({n, categories}, draws)));
    const Tensor keys = where(gt(rows, 0.0), div(rows, exponentials), full({}, -1.0, draws));
    indices = std::get<1>(topk(keys, num_samples, 1));
  } else {
    const Tensor cdf = unsqueeze(div(cumsum(rows, 1), sum(rows, {1}, true)), 1);  // (N, 1, K)
    const std::int64_t chunk =
        std::max<std::int64_t>(1, kComparisonsPerChunk / std::max<std::int64_t>(n * categories, 1));
    std::vector<Tensor> parts;
    for (std::int64_t first = 0; first < num_samples; first += chunk) {
      const std::int64_t count = std::min(chunk, num_samples - first);
      const Tensor u = unsqueeze(rand({n, count}, draws), 2);  // (N, count, 1)
      parts.push_back(sum(le(cdf, u).to(kInt64), {2}));
    }
    indices = parts.size() == 1 ? parts.front() : cat(parts, 1);
  }
  return probs.dim() == 1 ? indices.reshape({num_samples}) : indices;
}

Tensor normal(const Tensor& mean, const Tensor& std) {
  LG_PROFILE_OP(mean, std);
  const char* op = "normal";
  check_floating(op, "mean", mean);
  check_floating(op, "std", std);
  LG_CHECK_DTYPE(mean.dtype() == std.dtype(), op, ": expected mean and std of one dtype, got ",
                 mean.dtype(), " and ", std.dtype());
  LG_CHECK_DEVICE(mean.device() == std.device(), op, ": expected mean and std on one device, got ",
                  mean.device(), " and ", std.device());
  const Shape shape = broadcast_shapes(mean.shape(), std.shape(), op);
  LG_CHECK(all_true(ge(std.detach(), 0.0)), op,
           ": expected every std >= 0 (no NaN), got std of shape ", std.shape(), ", dtype ",
           std.dtype(), ", device ", std.device());
  const Tensor z = randn(shape, TensorOptions(mean.dtype()).device(mean.device()));
  return add(mean, mul(std, z));
}

Tensor normal(const Tensor& mean, double std) {
  check_floating("normal", "mean", mean);
  return normal(mean, full({}, std, TensorOptions(mean.dtype()).device(mean.device())));
}

Tensor normal(double mean, const Tensor& std) {
  check_floating("normal", "std", std);
  return normal(full({}, mean, TensorOptions(std.dtype()).device(std.device())), std);
}

Tensor normal(double mean, double std, const Shape& size, const TensorOptions& options) {
  LG_CHECK(std >= 0.0, "normal: expected std >= 0, got ", std);
  const Tensor z = randn(size, options.requires_grad(false));
  Tensor out = add(mul(z, std), mean).detach();
  if (options.requires_grad()) out.requires_grad_(true);
  return out;
}

Tensor gumbel_softmax(const Tensor& logits, double tau, bool hard, std::int64_t dim) {
  LG_PROFILE_OP(logits);
  const char* op = "gumbel_softmax";
  check_floating(op, "logits", logits);
  LG_CHECK(tau > 0.0 && std::isfinite(tau), op, ": expected a finite tau > 0, got ", tau,
           " (logits of shape ", logits.shape(), ")");
  const std::int64_t d = wrap_dim(dim, logits.dim(), op);
  // Standard Gumbel noise, -log E with E standard exponential (E > 0), drawn in float32 at
  // least: E can be as small as 2^-53, which float32 holds but a 16-bit dtype rounds to 0
  // (noise +inf, a NaN sample); -log E <= 37 fits every dtype.
  const DType noise_dtype = logits.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor exponentials = empty(logits.shape(), TensorOptions(noise_dtype).device(logits.device()));
  {
    NoGradGuard no_grad;
    exponentials.exponential_();
  }
  const Tensor gumbels = neg(log(exponentials)).to(logits.dtype());
  const Tensor y_soft = softmax(div(add(logits, gumbels), tau), d);
  if (!hard) return y_soft;
  // The one-hot of each argmax, with the soft sample's gradient (straight-through).
  const Tensor index = argmax(y_soft.detach(), d, /*keepdim=*/true);
  const Tensor y_hard =
      scatter_add(zeros_like(logits), d, index, ones_like(index).to(logits.dtype()));
  return add(sub(y_hard, y_soft.detach()), y_soft);
}

namespace detail {

void sample_uniform_(const Tensor& self, double from, double to) {
  const char* op = "uniform_";
  check_target(op, self, true);
  LG_CHECK_SAMPLER(std::isfinite(from) && std::isfinite(to) && from <= to, op, self,
                   "expected finite from <= to, got from ", from, ", to ", to);
  LG_CHECK_SAMPLER(scalar_fits(from, self.dtype()) && scalar_fits(to, self.dtype()), op, self,
                   "from ", from, " and to ", to, " must lie within the dtype's range");
  ops::uniform_(self, from, to, default_generator(self.device()));
}

void sample_normal_(const Tensor& self, double mean, double stddev) {
  const char* op = "normal_";
  check_target(op, self, true);
  LG_CHECK_SAMPLER(std::isfinite(mean) && std::isfinite(stddev) && stddev >= 0.0, op, self,
                   "expected a finite mean and std >= 0, got mean ", mean, ", std ", stddev);
  ops::normal_(self, mean, stddev, default_generator(self.device()));
}

Tensor exponential_draws(const Tensor& self, double lambd) {
  const char* op = "exponential_";
  check_target(op, self, true);
  // lambd 0 gives inf and an infinite lambd 0, the limits of E / lambd, as PyTorch's.
  LG_CHECK_SAMPLER(lambd >= 0.0, op, self, "expected lambd >= 0, got ", lambd);
  const Tensor u = rand(self.shape(), draws_on(self));
  const double half_eps = std::numeric_limits<double>::epsilon() / 2;
  return div(clamp_max(log(rsub(u, 1.0)), -half_eps), -lambd);
}

Tensor geometric_draws(const Tensor& self, double p) {
  const char* op = "geometric_";
  check_target(op, self, false);
  LG_CHECK_DTYPE(self.dtype() != kBool, op,
                 ": expected a tensor of numbers, got dtype bool (shape ", self.shape(),
                 ", device ", self.device(), ")");
  LG_CHECK_SAMPLER(p > 0.0 && p < 1.0, op, self, "expected p in (0, 1), got ", p);
  const Tensor u = rand(self.shape(), draws_on(self));
  const Tensor k = ceil(div(log(rsub(u, 1.0)), std::log1p(-p)));
  return clamp(k, 1.0, dtype_max(self.dtype()));
}

Tensor cauchy_draws(const Tensor& self, double median, double sigma) {
  const char* op = "cauchy_";
  check_target(op, self, true);
  LG_CHECK_SAMPLER(std::isfinite(median) && sigma > 0.0 && std::isfinite(sigma), op, self,
                   "expected a finite median and sigma > 0, got median ", median, ", sigma ",
                   sigma);
  constexpr double kPi = 3.141592653589793238462643383279502884;
  const Tensor u = rand(self.shape(), draws_on(self));
  return add(mul(tan(mul(sub(u, 0.5), kPi)), sigma), median);
}

Tensor log_normal_draws(const Tensor& self, double mean, double stddev) {
  const char* op = "log_normal_";
  check_target(op, self, true);
  LG_CHECK_SAMPLER(std::isfinite(mean) && stddev > 0.0 && std::isfinite(stddev), op, self,
                   "expected a finite mean and std > 0, got mean ", mean, ", std ", stddev);
  return exp(add(mul(randn(self.shape(), draws_on(self)), stddev), mean));
}

Tensor bernoulli_draws(const Tensor& self, double p) {
  const char* op = "bernoulli_";
  check_target(op, self, false);
  LG_CHECK_SAMPLER(p >= 0.0 && p <= 1.0, op, self, "expected p in [0, 1], got ", p);
  return lt(rand(self.shape(), draws_on(self, bernoulli_draw_dtype(self.dtype()))), p);
}

Tensor bernoulli_draws(const Tensor& self, const Tensor& p) {
  const char* op = "bernoulli_";
  check_target(op, self, false);
  check_floating(op, "p", p);
  LG_CHECK_DEVICE(p.device() == self.device(), op, ": expected p on self's device ", self.device(),
                  ", got ", p.device());
  LG_CHECK_SHAPE(broadcasts_to(p.shape(), self.shape()), op, ": p of shape ", p.shape(),
                 " does not broadcast to self's shape ", self.shape());
  return bernoulli(p.detach().expand(self.shape()));
}

Tensor random_draws(const Tensor& self, std::int64_t from, std::optional<std::int64_t> to) {
  const char* op = "random_";
  check_target(op, self, false);
  const auto [lowest, highest] = exact_integer_bounds(self.dtype());
  // The last value drawn: to - 1, or the dtype's largest.
  LG_CHECK_SAMPLER(!to || from < *to, op, self, "expected from < to, got from ", from, ", to ",
                   *to);
  const std::int64_t last = to ? *to - 1 : highest;
  LG_CHECK_SAMPLER(from >= lowest && last <= highest && from <= last, op, self, "[", from, ", ",
                   last, "] is not within the integers the dtype holds exactly, [", lowest, ", ",
                   highest, "]");
  // The number of values less one, in unsigned arithmetic: last - from cannot overflow there.
  const std::uint64_t span = static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(from);
  const TensorOptions int64 = draws_on(self, kInt64);
  if (span >= (std::uint64_t{1} << 53)) {
    // Only [0, 2^63) of an int64 self gets here with from >= 0 (random_() and random_(0, {}));
    // others with more than 2^53 values are refused.
    LG_CHECK_SAMPLER(from == 0 && last == highest, op, self, "[", from, ", ", last,
                     "] has more than 2^53 values; of the wider ranges only [0, 2^63) "
                     "(random_() of an int64 tensor) is drawn");
    const Tensor high = randint(0, std::int64_t{1} << 31, self.shape(), int64);
    const Tensor low = randint(0, std::int64_t{1} << 32, self.shape(), int64);
    return add(mul(high, full({}, 4294967296.0, int64)), low);
  }
  // randint adds its low bound in double, exact within 2^53; past that, shift in int64 here.
  const bool exact_low = from >= -(std::int64_t{1} << 53) && from <= (std::int64_t{1} << 53);
  if (exact_low)
    return randint(from, from + static_cast<std::int64_t>(span) + 1, self.shape(), int64);
  const Tensor offsets = randint(0, static_cast<std::int64_t>(span) + 1, self.shape(), int64);
  return add(offsets, tensor(std::vector<std::int64_t>{from}, {}, int64));
}

}  // namespace detail

}  // namespace leangrad
