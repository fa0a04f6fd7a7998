// amp::GradScaler (optim/grad_scaler.h). Every step-time call only queues work on the device:
//   scale      loss * scale_ (a multiply recorded for backward)
//   unscale_   ops::unscale_and_check_finite per device: g *= 1 / scale, found_inf |= any NaN/Inf
//   step       optimizer.step_unless(found_inf): the kernels skip the step where it is set
//   update     ops::update_scale from the flags of every device (summed on the scale's device),
//              then the flags are zeroed for the next step
// Only get_scale() and load_state_dict() read values on the host. The flags are kept per
// optimizer and device and reused, so a step's tensors are the same from one step to the next.
// With gradients on several devices the flags are summed across them (copies between devices,
// which core/host_sync.h counts where they wait): an Inf anywhere skips the step everywhere.
#include <leangrad/optim/grad_scaler.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::amp {
namespace {

// The ranges the options must be in (the constructor's and load_state_dict's checks).
void check_options(const char* op, double init_scale, double growth_factor, double backoff_factor,
                   std::int64_t growth_interval) {
  const float scale = static_cast<float>(init_scale);
  LG_CHECK(std::isfinite(scale) && scale > 0.0f, op,
           ": init_scale must be a finite positive float32, got ", init_scale);
  LG_CHECK(std::isfinite(growth_factor) && growth_factor > 1.0, op,
           ": growth_factor must be finite and > 1, got ", growth_factor);
  LG_CHECK(backoff_factor > 0.0 && backoff_factor < 1.0, op,
           ": backoff_factor must be in (0, 1), got ", backoff_factor);
  LG_CHECK(growth_interval >= 1 && growth_interval <= std::numeric_limits<std::int32_t>::max(), op,
           ": growth_interval must be in [1, 2^31), got ", growth_interval);
}

// The one number a state-dict entry holds (a host read), checked to be finite and, for
// `integral`, a whole number.
double number_of(const std::string& key, const Tensor& value, bool integral) {
  const char* op = "GradScaler.load_state_dict";
  LG_CHECK(value.defined(), op, ": '", key, "' is an undefined tensor");
  LG_CHECK(value.numel() == 1, op, ": '", key, "' must hold one value, got shape ", value.shape());
  const double v = value.to(Device::cpu()).to(kFloat64).item<double>();
  LG_CHECK(std::isfinite(v), op, ": '", key, "' is ", v, ", not a finite number");
  LG_CHECK(!integral || (v == std::floor(v) && std::fabs(v) < 9.2e18), op, ": '", key, "' = ", v,
           " is not an integer");
  return v;
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  check_options("GradScaler", options.init_scale(), options.growth_factor(),
                options.backoff_factor(), options.growth_interval());
}

Tensor GradScaler::scale_on(Device device) const {
  return scale_.device() == device ? scale_ : scale_.to(device);
}

Tensor GradScaler::scale(const Tensor& loss) {
  if (!options_.enabled()) return loss;
  LG_CHECK(loss.defined(), "GradScaler.scale: the loss is an undefined tensor");
  LG_CHECK_DTYPE(is_floating(loss.dtype()), "GradScaler.scale: the loss must be floating, got ",
                 loss.dtype(), " (shape ", loss.shape(), ")");
  if (!scale_.defined()) {
    NoGradGuard no_grad;
    scale_ = full({}, options_.init_scale(), TensorOptions(kFloat32).device(loss.device()));
    growth_tracker_ = full({}, init_growth_tracker_, TensorOptions(kInt32).device(loss.device()));
  }
  return loss * scale_on(loss.device());
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled()) return;
  const char* op = "GradScaler.unscale_";
  LG_CHECK(scale_.defined(), op,
           ": there is no scale yet; call scale(loss) and backward before unscale_ or step");
  OptimizerRecord& record = records_[&optimizer];
  LG_CHECK(record.stage != Stage::Unscaled, op,
           ": unscale_() has already been called on this optimizer since the last update()");
  LG_CHECK(record.stage != Stage::Stepped, op,
           ": unscale_() is being called after step(); call update() first");
  NoGradGuard no_grad;
  // The gradients by device, all checked before any is changed.
  std::vector<Device> devices;
  std::vector<std::vector<Tensor>> grads;
  std::size_t index = 0;
  for (const optim::ParamGroup& group : optimizer.param_groups()) {
    for (const Tensor& p : group.params) {
      const std::size_t i = index++;
      const Tensor g = p.grad();
      if (!g.defined()) continue;
      // float16/bfloat16 gradients (pure half-precision training) are refused as PyTorch refuses
      // "Attempting to unscale FP16 gradients": unscaled in their own dtype, the small gradients
      // that loss scaling kept representable would underflow again (docs/optimizers.md).
      LG_CHECK_DTYPE(g.dtype() == kFloat32, op, ": the gradient of parameter ", i, " is ",
                     g.dtype(), "; only float32 gradients can be unscaled (loss scaling is for ",
                     is_floating(g.dtype()) && g.dtype() != kFloat64
                         ? "float16/bfloat16 autocast over float32 parameters: unscaled in "
                           "float16, a float16 model's gradients would underflow again, and a "
                           "bfloat16 model, of float32's range, needs no scaler; keep float32 "
                           "parameters under amp::AutocastGuard, or step a bfloat16 model "
                           "directly)"
                         : "float16/bfloat16 autocast over float32 parameters; a float64 model "
                           "needs none: step the optimizer directly)");
      LG_CHECK(g.is_contiguous(), op, ": the gradient of parameter ", i, " (shape ", g.shape(),
               ") must be contiguous: it is unscaled in place");
      std::size_t d = 0;
      while (d < devices.size() && devices[d] != g.device())
        ++d;
      if (d == devices.size()) {
        devices.push_back(g.device());
        grads.emplace_back();
      }
      grads[d].push_back(g);
    }
  }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    Tensor found_inf;
    for (const Tensor& flag : record.found_inf)
      if (flag.device() == devices[d]) found_inf = flag;
    if (!found_inf.defined()) {
      found_inf = zeros({}, TensorOptions(kInt32).device(devices[d]));
      record.found_inf.push_back(found_inf);
    }
    ops::unscale_and_check_finite(grads[d], scale_on(devices[d]), found_inf);
  }
  record.stage = Stage::Unscaled;
}

void GradScaler::step(optim::Optimizer& optimizer) {
  if (!options_.enabled()) {
    optimizer.step();
    return;
  }
  LG_CHECK(records_[&optimizer].stage != Stage::Stepped,
           "GradScaler.step: step() has already been called since the last update()");
  if (records_[&optimizer].stage == Stage::Ready) unscale_(optimizer);
  OptimizerRecord& record = records_[&optimizer];
  // An Inf on any device skips the step on every device (as PyTorch): with several devices each
  // gets the sum of all the flags (copies between devices; one device needs none).
  std::vector<Tensor> found_inf = record.found_inf;
  if (found_inf.size() > 1) {
    NoGradGuard no_grad;
    for (Tensor& combined : found_inf) {
      const Device device = combined.device();
      combined = zeros({}, TensorOptions(kInt32).device(device));
      for (const Tensor& flag : record.found_inf)
        combined.add_(flag.device() == device ? flag : flag.to(device));
    }
  }
  optimizer.step_unless(found_inf);
  record.stage = Stage::Stepped;
}

void GradScaler::update() {
  if (!options_.enabled()) return;
  const char* op = "GradScaler.update";
  LG_CHECK(scale_.defined(), op, ": there is no scale yet; call scale(loss) first");
  bool recorded = false;
  std::vector<Tensor> flags;
  for (const auto& [optimizer, record] : records_) {
    if (record.stage == Stage::Ready) continue;
    recorded = true;
    flags.insert(flags.end(), record.found_inf.begin(), record.found_inf.end());
  }
  LG_CHECK(recorded, op,
           ": no inf checks were recorded since the last update(); call step(optimizer) (or "
           "unscale_) first");
  NoGradGuard no_grad;
  // The flags of every device together, on the scale's device (PyTorch sums them too).
  Tensor found_inf;
  if (flags.size() == 1 && flags[0].device() == scale_.device()) {
    found_inf = flags[0];
  } else {
    found_inf = zeros({}, TensorOptions(kInt32).device(scale_.device()));
    for (const Tensor& flag : flags)
      found_inf.add_(flag.device() == scale_.device() ? flag : flag.to(scale_.device()));
  }
  ops::update_scale(scale_, growth_tracker_, found_inf, options_.growth_factor(),
                    options_.backoff_factor(), options_.growth_interval());
  for (auto& [optimizer, record] : records_) {
    for (Tensor& flag : record.found_inf)
      flag.zero_();  // queued after update_scale read it: no host wait
    record.stage = Stage::Ready;
  }
}

void GradScaler::update(double new_scale) {
  if (!options_.enabled()) return;
  const char* op = "GradScaler.update";
  LG_CHECK(scale_.defined(), op, ": there is no scale yet; call scale(loss) first");
  const float as_float = static_cast<float>(new_scale);
  LG_CHECK(std::isfinite(as_float) && as_float > 0.0f, op,
           ": new_scale must be a finite positive float32, got ", new_scale);
  NoGradGuard no_grad;
  scale_.fill_(new_scale);
  for (auto& [optimizer, record] : records_) {
    for (Tensor& flag : record.found_inf)
      flag.zero_();
    record.stage = Stage::Ready;
  }
}

double GradScaler::get_scale() const {
  if (!options_.enabled()) return 1.0;
  if (!scale_.defined()) return options_.init_scale();
  return static_cast<double>(scale_.item<float>());
}

NamedTensors GradScaler::state_dict() const {
  if (!options_.enabled()) return {};
  NoGradGuard no_grad;
  NamedTensors out;
  out.emplace_back("scale",
                   scale_.defined() ? scale_.clone() : full({}, options_.init_scale(), kFloat32));
  out.emplace_back("growth_factor", full({}, options_.growth_factor(), kFloat64));
  out.emplace_back("backoff_factor", full({}, options_.backoff_factor(), kFloat64));
  out.emplace_back("growth_interval",
                   full({}, static_cast<double>(options_.growth_interval()), kInt64));
  out.emplace_back("_growth_tracker", growth_tracker_.defined()
                                          ? growth_tracker_.clone()
                                          : full({}, init_growth_tracker_, kInt32));
  return out;
}

void GradScaler::load_state_dict(const NamedTensors& state) {
  if (!options_.enabled()) return;
  const char* op = "GradScaler.load_state_dict";
  LG_CHECK(!state.empty(), op,
           ": the state dict is empty (was it saved from a disabled GradScaler?)");
  std::optional<double> scale, growth_factor, backoff_factor, growth_interval, tracker;
  for (const auto& [key, value] : state) {
    if (key == "scale") {
      scale = number_of(key, value, false);
    } else if (key == "growth_factor") {
      growth_factor = number_of(key, value, false);
    } else if (key == "backoff_factor") {
      backoff_factor = number_of(key, value, false);
    } else if (key == "growth_interval") {
      growth_interval = number_of(key, value, true);
    } else if (key == "_growth_tracker") {
      tracker = number_of(key, value, true);
    } else {
      LG_THROW(Error, op, ": unknown key '", key,
               "' (expected scale, growth_factor, backoff_factor, growth_interval, "
               "_growth_tracker)");
    }
  }
  for (const auto& [name, found] : {std::pair<const char*, bool>{"scale", scale.has_value()},
                                    {"growth_factor", growth_factor.has_value()},
                                    {"backoff_factor", backoff_factor.has_value()},
                                    {"growth_interval", growth_interval.has_value()},
                                    {"_growth_tracker", tracker.has_value()}})
    LG_CHECK(found, op, ": the state dict has no '", name, "'");
  const auto interval = static_cast<std::int64_t>(*growth_interval);
  check_options(op, *scale, *growth_factor, *backoff_factor, interval);
  LG_CHECK(*tracker >= 0 && *tracker < *growth_interval, op, ": _growth_tracker = ", *tracker,
           " is outside [0, growth_interval = ", interval, ")");
  options_.init_scale(*scale)
      .growth_factor(*growth_factor)
      .backoff_factor(*backoff_factor)
      .growth_interval(interval);
  init_growth_tracker_ = static_cast<std::int32_t>(*tracker);
  if (scale_.defined()) {
    NoGradGuard no_grad;
    scale_.fill_(*scale);
    growth_tracker_.fill_(*tracker);
  }
}

}  // namespace leangrad::amp
