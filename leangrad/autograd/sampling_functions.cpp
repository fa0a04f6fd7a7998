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
#include <leangrad/autograd/sampling_functions.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>

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

}  // namespace leangrad
