// nn::utils::parameters_to_vector and vector_to_parameters (nn/convert_parameters.h).
#include <leangrad/nn/convert_parameters.h>

#include <cstdint>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn::utils {

namespace {

// Every parameter defined, and of the first one's dtype and device.
void check_parameters(const char* op, const std::vector<Tensor>& parameters) {
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& p = parameters[i];
    LG_CHECK(p.defined(), op, ": parameter ", i, " is an undefined Tensor()");
    const Tensor& first = parameters.front();
    LG_CHECK_DTYPE(p.dtype() == first.dtype(), op, ": parameter ", i, " has dtype ", p.dtype(),
                   ", parameter 0 ", first.dtype());
    LG_CHECK_DEVICE(p.device() == first.device(), op, ": parameter ", i, " is on ", p.device(),
                    ", parameter 0 on ", first.device());
  }
}

}  // namespace

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  const char* op = "parameters_to_vector";
  LG_CHECK(!parameters.empty(), op, ": expected at least one parameter, got none");
  check_parameters(op, parameters);
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (const Tensor& p : parameters)
    flat.push_back(reshape(p, {-1}));
  return cat(flat, 0);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  const char* op = "vector_to_parameters";
  LG_CHECK(vec.defined(), op, ": expected a defined vec, got an undefined Tensor()");
  check_parameters(op, parameters);
  std::int64_t total = 0;
  for (const Tensor& p : parameters)
    total += p.numel();  // each fits in memory, so the sum fits in int64
  LG_CHECK_SHAPE(vec.dim() == 1 && vec.numel() == total, op,
                 ": expected a 1-d vec of the parameters' ", total, " elements, got shape ",
                 vec.shape());
  if (!parameters.empty()) {
    LG_CHECK_DTYPE(vec.dtype() == parameters.front().dtype(), op, ": vec has dtype ", vec.dtype(),
                   ", the parameters ", parameters.front().dtype());
    LG_CHECK_DEVICE(vec.device() == parameters.front().device(), op, ": vec is on ", vec.device(),
                    ", the parameters on ", parameters.front().device());
  }
  std::int64_t at = 0;
  for (const Tensor& p : parameters) {
    const std::int64_t n = p.numel();
    p.set_data(vec.detach().slice(0, at, at + n).view(p.shape()));
    at += n;
  }
}

}  // namespace leangrad::nn::utils
