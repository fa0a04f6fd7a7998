// optim::Adam8bit (optim/adam8bit.h): parameters below min_8bit_size go through the fused float32
// Adam (ops::adam_step), the others through the block-wise 8-bit one (ops::adam8bit_step); both
// skip NaN/Inf gradient elements (and those whose second moment overflows) and raise the
// skipped_nonfinite flag on the device.
#include <leangrad/optim/adam8bit.h>

#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/quantization_math.h>

namespace leangrad::optim {
namespace {

std::int64_t num_quant_blocks(std::int64_t numel) {
  return (numel + kernels::kQuantBlockSize - 1) / kernels::kQuantBlockSize;
}

}  // namespace

Adam8bit::Adam8bit(std::vector<Tensor> params, Adam8bitOptions options)
    : Adam8bit(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adam8bit::Adam8bit(std::vector<ParamGroup> groups, Adam8bitOptions options)
    : OptimizerWithState("Adam8bit", std::move(groups), options.lr(), options.weight_decay(),
                         "Adam8bit keeps 8-bit and float32 states, as bitsandbytes, which has no "
                         "float64 optimizer; use Adam for float64 parameters"),
      options_(options) {
  const auto [beta1, beta2] = options.betas();
  LG_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "Adam8bit: invalid betas (", beta1,
           ", ", beta2, "): each must be in [0, 1)");
  LG_CHECK(options.eps() >= 0, "Adam8bit: invalid eps ", options.eps());
  LG_CHECK(options.min_8bit_size() >= 0, "Adam8bit: invalid min_8bit_size ",
           options.min_8bit_size());
}

void Adam8bit::update(Device device, const std::vector<ParamRef>& params, const Tensor& found_inf) {
  const auto [beta1, beta2] = options_.betas();
  const kernels::AdamUpdate update =
      kernels::AdamUpdate::make(beta1, beta2, options_.eps(), /*amsgrad=*/false,
                                options_.decoupled_weight_decay(), /*skip_nonfinite=*/true);
  if (!skipped_nonfinite_.defined() || skipped_nonfinite_.device() != device)
    skipped_nonfinite_ = zeros({}, TensorOptions(kInt32).device(device));
  skipped_nonfinite_.zero_();  // on the device's stream: no host wait
  std::vector<ops::OptimParam<kernels::AdamUpdate>> small;
  std::vector<ops::Adam8bitParam> large;
  for (const ParamRef& ref : params) {
    Adam8bitState& state = state_of(ref.index);
    const std::int64_t n = ref.param.numel();
    if (quantized(ref.param) && !state.state1.defined()) {
      const auto codes = TensorOptions(kUInt8).device(device);
      // Codes of 0: 127 in the signed map, 0 in the unsigned one (absmax 0 makes any code 0).
      state.state1 = full(ref.param.shape(), 127, codes);
      state.state2 = zeros(ref.param.shape(), codes);
      state.absmax1 = zeros({num_quant_blocks(n)}, TensorOptions(kFloat32).device(device));
      state.absmax2 = zeros({num_quant_blocks(n)}, TensorOptions(kFloat32).device(device));
    } else if (!quantized(ref.param) && !state.exp_avg.defined()) {
      state.exp_avg = zeros_like(ref.param);
      state.exp_avg_sq = zeros_like(ref.param);
    }
    const kernels::AdamUpdate::TensorScalars scalars =
        update.scalars_at(ref.lr, ref.weight_decay, ref.step);
    if (quantized(ref.param)) {
      large.push_back({ref.param, ref.grad, state.state1, state.state2, state.absmax1,
                       state.absmax2, scalars, ref.device_step()});
    } else {
      small.push_back(
          {ref.param, ref.grad, {state.exp_avg, state.exp_avg_sq}, scalars, ref.device_step()});
    }
  }
  const ops::StepFlags flags{.found_inf = found_inf, .skipped_nonfinite = skipped_nonfinite_};
  ops::adam_step(update, small, flags);
  ops::adam8bit_step(update, large, flags);
}

bool Adam8bit::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  if (!quantized(param))
    return (name == "exp_avg" || name == "exp_avg_sq") && shape == param.shape();
  if (name == "state1" || name == "state2") return shape == param.shape();
  if (name == "absmax1" || name == "absmax2")
    return shape == Shape{num_quant_blocks(param.numel())};
  return false;
}

DType Adam8bit::state_dtype(const Tensor& /*param*/, const std::string& name) const {
  return name == "state1" || name == "state2" ? kUInt8 : kFloat32;
}

std::vector<std::string> Adam8bit::required_state(const Tensor& param) const {
  if (!quantized(param)) return {"exp_avg", "exp_avg_sq"};
  return {"state1", "state2", "absmax1", "absmax2"};
}

}  // namespace leangrad::optim
