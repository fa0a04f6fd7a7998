// LibTorch's torch::nn::utils::parameters_to_vector and vector_to_parameters: a model's
// parameters as one flat vector and back (second-order optimizers, parameter averaging, weight
// perturbation).
//   Tensor flat = nn::utils::parameters_to_vector(model->parameters());
//   nn::utils::vector_to_parameters(add(flat, noise), model->parameters());
#pragma once

#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::nn::utils {

// The parameters flattened (row-major) and concatenated in order into one 1-d tensor, a copy
// recorded by autograd (its gradient flows back to each parameter), as
// torch.nn.utils.parameters_to_vector. At least one parameter; one dtype and one device.
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);

// Each parameter given the next numel() elements of vec, in order, as its data (set_data: it
// then views vec's memory, keeping its identity and autograd state), as LibTorch's
// vector_to_parameters. vec is 1-d with exactly as many elements as the parameters hold, of
// their dtype and on their device.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace leangrad::nn::utils
