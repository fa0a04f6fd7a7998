// The optimizer base (optim/optimizer.h): parameter groups, the step loop shared by every
// optimizer (plain, or gated on the device by found_inf), zero_grad, and the state dict as named
// tensors.
#include <leangrad/optim/optimizer.h>

#include <cmath>
#include <map>
#include <type_traits>
#include <utility>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::optim {

bool ParamState::contains(const std::string& name) const {
  for (const auto& named : tensors)
    if (named.first == name) return true;
  return false;
}

const Tensor& ParamState::at(const std::string& name) const {
  for (const auto& [key, value] : tensors)
    if (key == name) return value;
  LG_THROW(Error, "optimizer state has no tensor '", name,
           "' (a state dict that was loaded without it?)");
}

Optimizer::Optimizer(std::string name, std::vector<ParamGroup> groups, double default_lr,
                     double default_weight_decay, std::string float32_only)
    : name_(std::move(name)),
      default_lr_(default_lr),
      default_weight_decay_(default_weight_decay),
      float32_only_(std::move(float32_only)),
      groups_(std::move(groups)) {
  LG_CHECK(default_lr >= 0, name_, ": invalid learning rate ", default_lr);
  LG_CHECK(default_weight_decay >= 0, name_, ": invalid weight_decay ", default_weight_decay);
  std::vector<const void*> seen;  // parameters by identity: one given twice would step twice
  for (ParamGroup& group : groups_) {
    check_group(group, seen.size(), seen);
  }
  steps_.assign(seen.size(), 0);
  skipped_.resize(seen.size());
  LG_CHECK(!steps_.empty(), name_, ": got an empty parameter list");
}

void Optimizer::check_group(ParamGroup& group, std::size_t first_index,
                            std::vector<const void*>& seen) const {
  if (!group.lr) group.lr = default_lr_;
  if (!group.weight_decay) group.weight_decay = default_weight_decay_;
  LG_CHECK(*group.lr >= 0, name_, ": invalid learning rate ", *group.lr, " in a group");
  LG_CHECK(*group.weight_decay >= 0, name_, ": invalid weight_decay ", *group.weight_decay,
           " in a group");
  for (std::size_t k = 0; k < group.params.size(); ++k) {
    const Tensor& p = group.params[k];
    const std::size_t index = first_index + k;
    LG_CHECK(p.defined(), name_, ": parameter ", index, " is an undefined tensor");
    LG_CHECK(p.is_leaf(), name_, ": parameter ", index, " (shape ", p.shape(),
             ") is not a leaf: it was computed by ", p.grad_fn() ? p.grad_fn()->name() : "",
             "; optimize the leaf tensors it was computed from");
    if (float32_only_.empty()) {
      LG_CHECK_DTYPE(is_floating(p.dtype()), name_, ": parameter ", index,
                     " must be float32, float64, float16 or bfloat16, got ", p.dtype());
    } else {
      LG_CHECK_DTYPE(p.dtype() == kFloat32, name_, ": parameter ", index, " must be float32, got ",
                     p.dtype(), " (", float32_only_, ")");
    }
    LG_CHECK(p.is_contiguous(), name_, ": parameter ", index, " (shape ", p.shape(),
             ") must be contiguous: it is updated in place");
    const void* identity = &p.impl();
    for (std::size_t j = 0; j < seen.size(); ++j)
      LG_CHECK(seen[j] != identity, name_, ": parameters ", j, " and ", index,
               " are the same tensor; each parameter may appear once");
    seen.push_back(identity);
  }
}

void Optimizer::add_param_group(ParamGroup group) {
  LG_CHECK(!group.params.empty(), "add_param_group: got an empty parameter list");
  std::vector<const void*> seen;
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params)
      seen.push_back(&p.impl());
  const std::size_t first_index = seen.size();
  check_group(group, first_index, seen);  // throws before anything changes
  const std::size_t count = group.params.size();
  grow_states(count);
  steps_.resize(steps_.size() + count, 0);
  skipped_.resize(skipped_.size() + count);
  groups_.push_back(std::move(group));
}

void Optimizer::check_state_fits(const ParamRef& ref) const {
  const Tensor& p = ref.param;
  const std::size_t i = ref.index;
  const bool any_floating = float32_only_.empty();
  LG_CHECK_DTYPE(
      p.dtype() == kFloat32 || (any_floating && is_floating(p.dtype())), name_, " step: parameter ",
      i, " is ", p.dtype(), " (changed by set_data?); ",
      any_floating ? "float32, float64, float16 or bfloat16 parameters only" : float32_only_);
  LG_CHECK(p.is_contiguous(), name_, " step: parameter ", i, " (shape ", p.shape(),
           ") must be contiguous: it is updated in place (changed by set_data?)");
  for (const auto& [name, state] : named_state(i)) {
    LG_CHECK_SHAPE(valid_state(p, name, state.shape()), name_, " step: state '", name,
                   "' of parameter ", i, " has shape ", state.shape(),
                   ", which does not fit the parameter's shape ", p.shape(),
                   " (changed by set_data after the state was made?)");
    LG_CHECK_DTYPE(state.dtype() == state_dtype(p, name), name_, " step: state '", name,
                   "' of parameter ", i, " is ", state.dtype(), " but the parameter is ", p.dtype(),
                   " (changed by set_data after the state was made?)");
    LG_CHECK_DEVICE(state.device() == p.device(), name_, " step: state '", name, "' of parameter ",
                    i, " is on ", state.device(), " but the parameter on ", p.device());
  }
}

ops::DeviceStep Optimizer::ParamRef::device_step() const {
  return ops::DeviceStep{skipped, lr, weight_decay, step};
}

std::int64_t Optimizer::steps_taken(std::size_t i) const {
  if (!skipped_[i].defined()) return steps_[i];
  return steps_[i] - skipped_[i].item<std::int32_t>();
}

ParamState Optimizer::state(std::size_t i) const {
  LG_CHECK(i < steps_.size(), name_, " state: parameter ", i, " out of range (", steps_.size(),
           " parameters)");
  return ParamState{steps_taken(i), named_state(i)};
}

void Optimizer::step() {
  run_step(nullptr);
}

void Optimizer::step_unless(const std::vector<Tensor>& found_inf) {
  for (std::size_t k = 0; k < found_inf.size(); ++k) {
    const Tensor& flag = found_inf[k];
    LG_CHECK(flag.defined(), "step_unless: found_inf ", k, " is an undefined tensor");
    LG_CHECK_DTYPE(flag.dtype() == kInt32 && flag.numel() == 1, "step_unless: found_inf ", k,
                   " must be one int32, got ", flag.dtype(), " of shape ", flag.shape());
    for (std::size_t j = 0; j < k; ++j)
      LG_CHECK_DEVICE(found_inf[j].device() != flag.device(), "step_unless: found_inf ", j, " and ",
                      k, " are both on ", flag.device(), "; give one per device");
  }
  run_step(&found_inf);
}

void Optimizer::run_step(const std::vector<Tensor>* found_inf) {
  const profiler::Span span("optimizer.step", profiler::Category::Optimizer);
  NoGradGuard no_grad;
  // Parameters with a gradient, grouped by device (one multi-tensor launch per device).
  std::map<std::pair<int, int>, std::vector<ParamRef>> by_device;
  std::vector<Device> devices;
  std::size_t index = 0;
  for (ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      const std::size_t i = index++;
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      // set_grad checked these; what mutable_grad() assigned was not (Note [What .grad holds]
      // in autograd/tensor_autograd.cpp).
      LG_CHECK_SHAPE(grad.shape() == p.shape(), name_, " step: a gradient of shape ", grad.shape(),
                     " for parameter ", i, " of shape ", p.shape());
      LG_CHECK_DTYPE(grad.dtype() == p.dtype(), name_, " step: a gradient of dtype ", grad.dtype(),
                     " for parameter ", i, " of dtype ", p.dtype());
      LG_CHECK_DEVICE(grad.device() == p.device(), name_, " step: a gradient on ", grad.device(),
                      " for parameter ", i, " on ", p.device());
      grad = grad.contiguous();
      const auto key = std::make_pair(static_cast<int>(p.device().type), p.device().index);
      if (by_device.find(key) == by_device.end()) devices.push_back(p.device());
      by_device[key].push_back(
          ParamRef{p, grad, i, steps_[i] + 1, *group.lr, *group.weight_decay, skipped_[i]});
    }
  }
  // A gated step: each device's flag, found before anything changes; each parameter's skip count
  // made on its first gated step (zeros: a fill on the device, nothing waits).
  std::vector<Tensor> flags(devices.size());
  if (found_inf != nullptr) {
    for (std::size_t d = 0; d < devices.size(); ++d) {
      for (const Tensor& flag : *found_inf)
        if (flag.device() == devices[d]) flags[d] = flag;
      LG_CHECK_DEVICE(flags[d].defined(), "step_unless: parameters on ", devices[d],
                      " have gradients but no found_inf is on ", devices[d]);
    }
    for (const Device& device : devices) {
      for (ParamRef& ref : by_device[std::make_pair(static_cast<int>(device.type), device.index)]) {
        if (!skipped_[ref.index].defined())
          skipped_[ref.index] = zeros({}, TensorOptions(kInt32).device(device));
        ref.skipped = skipped_[ref.index];
      }
    }
  }
  // Every state checked before any launch, so that a step is all or nothing across devices and
  // dtypes; the ops entries check every parameter and state tensor again (shape, dtype, device,
  // contiguity) and bump the versions of what they update. Step counts advance once every update
  // succeeded.
  for (const auto& [key, refs] : by_device)
    for (const ParamRef& ref : refs)
      check_state_fits(ref);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const Device& device = devices[d];
    update(device, by_device[std::make_pair(static_cast<int>(device.type), device.index)],
           flags[d]);
  }
  after_updates();
  for (const auto& [key, refs] : by_device)
    for (const ParamRef& ref : refs)
      steps_[ref.index] = ref.step;
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else {
        grad.zero_();
      }
    }
  }
}

NamedTensors Optimizer::state_dict() const {
  NamedTensors out;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const NamedTensors tensors = named_state(i);
    const std::int64_t steps = steps_taken(i);
    if (steps == 0 && tensors.empty()) continue;
    const std::string prefix = "state." + std::to_string(i) + ".";
    out.emplace_back(prefix + "step", full({}, static_cast<double>(steps), kInt64));
    for (const auto& [name, value] : tensors)
      out.emplace_back(prefix + name, value);
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    out.emplace_back(prefix + "lr", full({}, *groups_[g].lr, kFloat64));
    out.emplace_back(prefix + "weight_decay", full({}, *groups_[g].weight_decay, kFloat64));
  }
  return out;
}

namespace {

// Whether `t` holds a value below 0 (a host read).
bool has_negative(const Tensor& t) {
  return t.numel() > 0 && sum(lt(t, 0.0).to(kInt64)).item<std::int64_t>() > 0;
}

// "state.<i>.<name>" -> (i, name); "param_groups.<g>.<name>" likewise.
bool split_key(const std::string& key, const std::string& head, std::size_t* index,
               std::string* name) {
  if (key.rfind(head, 0) != 0) return false;
  const std::size_t dot = key.find('.', head.size());
  LG_CHECK(dot != std::string::npos && dot > head.size(), "load_state_dict: malformed key '", key,
           "'");
  const std::string number = key.substr(head.size(), dot - head.size());
  for (char c : number)
    LG_CHECK(c >= '0' && c <= '9', "load_state_dict: malformed key '", key, "'");
  LG_CHECK(number.size() <= 18, "load_state_dict: index out of range in key '", key, "'");
  *index = std::stoull(number);
  *name = key.substr(dot + 1);
  return true;
}

// The one finite value of a 0-d (or one-element) state entry, in [low, high]; an error naming
// the key otherwise. A step stored as NaN or 1e300 in a hostile file is refused, not cast.
template <typename T>
T scalar_of(const std::string& key, const Tensor& value, T low, std::optional<T> high) {
  LG_CHECK(value.numel() == 1, "load_state_dict: '", key, "' must hold one value, got shape ",
           value.shape());
  const double v = value.to(Device::cpu()).to(kFloat64).item<double>();
  LG_CHECK(std::isfinite(v), "load_state_dict: '", key, "' is ", v, ", not a finite number");
  LG_CHECK(v >= static_cast<double>(low) && (!high || v <= static_cast<double>(*high)),
           "load_state_dict: '", key, "' = ", v, " is out of range");
  if constexpr (std::is_integral_v<T>) {
    LG_CHECK(v == std::floor(v) && v < 9.2e18, "load_state_dict: '", key, "' = ", v,
             " is not a step count");
  }
  return static_cast<T>(v);
}

}  // namespace

void Optimizer::load_state_dict(const NamedTensors& state) {
  std::vector<Tensor> params;
  for (const ParamGroup& group : groups_)
    for (const Tensor& p : group.params)
      params.push_back(p);
  std::vector<std::int64_t> steps(steps_.size(), 0);
  std::vector<bool> has_step(steps_.size(), false);
  std::vector<NamedTensors> tensors(steps_.size());
  std::vector<ParamGroup> groups = groups_;
  for (const auto& [key, value] : state) {
    std::size_t index = 0;
    std::string name;
    LG_CHECK(value.defined(), "load_state_dict: '", key, "' is an undefined tensor");
    if (split_key(key, "state.", &index, &name)) {
      LG_CHECK(index < params.size(), "load_state_dict: '", key, "' names parameter ", index,
               " but the optimizer has ", params.size());
      if (name == "step") {
        steps[index] = scalar_of<std::int64_t>(key, value, 0, std::nullopt);
        has_step[index] = true;
        continue;
      }
      if (!valid_state(params[index], name, value.shape())) {
        // The names this optimizer keeps for the parameter: a checkpoint of another optimizer,
        // or of other options (Adam8bit's min_8bit_size decides 8-bit or float32 moments), has
        // others, and a shape alone would not say so.
        std::string kept;
        for (const std::string& state_name : required_state(params[index]))
          kept += (kept.empty() ? "'" : ", '") + state_name + "'";
        LG_THROW(Error, "load_state_dict: '", key, "' (shape ", value.shape(),
                 ") is not a state of parameter ", index, " (shape ", params[index].shape(),
                 "): this optimizer keeps ", kept.empty() ? std::string("no state") : kept,
                 " for it (a checkpoint of another optimizer, or of other options?)");
      }
      const DType dtype = state_dtype(params[index], name);
      LG_CHECK_DTYPE(value.dtype() == dtype || (is_floating(dtype) && is_floating(value.dtype())),
                     "load_state_dict: '", key, "' has dtype ", value.dtype(), ", expected ",
                     dtype);
      const Tensor copy = value.to(dtype).to(params[index].device()).clone();
      LG_CHECK(!has_non_finite(copy), "load_state_dict: '", key, "' holds NaN or Inf values");
      // Squares (Adam's exp_avg_sq and max_exp_avg_sq) and magnitudes (Adam8bit's absmax1 and
      // absmax2) are never negative: a negative one (a damaged file) would make the next step's
      // square root NaN.
      if (name.ends_with("_sq") || name.starts_with("absmax")) {
        LG_CHECK(!has_negative(copy), "load_state_dict: '", key,
                 "' holds negative values; it is a square or a magnitude, never negative");
      }
      tensors[index].emplace_back(name, copy);
    } else if (split_key(key, "param_groups.", &index, &name)) {
      LG_CHECK(index < groups.size(), "load_state_dict: '", key, "' names group ", index,
               " but the optimizer has ", groups.size());
      if (name == "lr") {
        groups[index].lr = scalar_of<double>(key, value, 0.0, std::nullopt);
      } else if (name == "weight_decay") {
        groups[index].weight_decay = scalar_of<double>(key, value, 0.0, std::nullopt);
      } else {
        LG_THROW(Error, "load_state_dict: unknown group key '", key, "'");
      }
    } else {
      LG_THROW(Error, "load_state_dict: unknown key '", key,
               "' (expected state.<i>.<name> or param_groups.<g>.<name>)");
    }
  }
  // Each parameter's state whole or not at all, as state_dict() writes it (PyTorch fails the next
  // step with a KeyError): a state tensor needs the step count its bias corrections use, and a
  // step that has state the tensors it updates.
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (tensors[i].empty() && steps[i] == 0) continue;
    const std::string prefix = "state." + std::to_string(i) + ".";
    LG_CHECK(has_step[i], "load_state_dict: '", prefix, tensors[i].front().first,
             "' comes without '", prefix, "step'");
    for (const std::string& name : required_state(params[i])) {
      bool found = false;
      for (const auto& named : tensors[i])
        found = found || named.first == name;
      LG_CHECK(found, "load_state_dict: the state of parameter ", i, " (step ", steps[i],
               ") has no '", prefix, name, "'; a state must hold every tensor of its optimizer");
    }
  }
  replace_states(std::move(tensors));
  steps_ = std::move(steps);
  groups_ = std::move(groups);
  skipped_.assign(steps_.size(), Tensor());
}

}  // namespace leangrad::optim
