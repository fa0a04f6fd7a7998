// ZeroRedundancyOptimizer (zero_redundancy_optimizer.h): the partition, the step of this rank's
// share followed by the broadcasts, and the state dict spread over the ranks.
#include <leangrad/distributed/zero_redundancy_optimizer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/distributed/tensor_lists.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::distributed {

namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;

std::unique_ptr<optim::Optimizer> make_inner(std::vector<optim::ParamGroup> groups,
                                             const OptimizerFactory& make) {
  LG_CHECK(static_cast<bool>(make), "ZeroRedundancyOptimizer: the optimizer factory is empty");
  std::unique_ptr<optim::Optimizer> inner = make(std::move(groups));
  LG_CHECK(inner != nullptr, "ZeroRedundancyOptimizer: the optimizer factory returned null");
  return inner;
}

}  // namespace

std::vector<int> partition_parameters(const std::vector<std::int64_t>& numels, int world_size) {
  LG_CHECK(world_size >= 1, "partition_parameters: world_size must be positive, got ", world_size);
  std::vector<std::size_t> order(numels.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; equal sizes in index order, so every rank sorts alike.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return numels[a] > numels[b]; });
  std::vector<std::int64_t> load(static_cast<std::size_t>(world_size), 0);
  std::vector<int> owner(numels.size(), 0);
  for (std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end());  // the first of the least
    owner[i] = static_cast<int>(least - load.begin());
    *least += numels[i];
  }
  return owner;
}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<Tensor> params, OptimizerFactory make,
                                                 const ZeroOptions& options)
    : ZeroRedundancyOptimizer(std::vector<optim::ParamGroup>{optim::ParamGroup(std::move(params))},
                              std::move(make), options) {}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<optim::ParamGroup> groups,
                                                 OptimizerFactory make, const ZeroOptions& options)
    : ZeroRedundancyOptimizer(make_inner(std::move(groups), make), options) {}

// The groups are the wrapped optimizer's once it filled in its defaults (and checked every
// parameter by its own rules); this object's base keeps the step counts and the learning rates.
ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::unique_ptr<optim::Optimizer> inner,
                                                 const ZeroOptions& options)
    : Optimizer("ZeroRedundancyOptimizer", inner->param_groups(), inner->default_lr_,
                inner->default_weight_decay_, inner->float32_only_),
      inner_(std::move(inner)),
      options_(options) {
  LG_CHECK(std::isfinite(options.bucket_cap_mb()) && options.bucket_cap_mb() > 0,
           "ZeroRedundancyOptimizer: bucket_cap_mb must be positive, got ",
           options.bucket_cap_mb());
  group_ = options.process_group() ? options.process_group() : default_process_group_handle();
  std::vector<Tensor> params;
  std::vector<std::int64_t> numels;
  for (const optim::ParamGroup& group : param_groups()) {
    for (const Tensor& p : group.params) {
      params.push_back(p);
      numels.push_back(p.numel());
    }
  }
  // Every rank must optimize the same parameters: a rank with other ones would pair its
  // broadcasts with other tensors (Note [Signatures] catches that later, NCCL would not).
  const std::vector<std::vector<std::int64_t>> counts =
      all_gather_counts(*group_, {static_cast<std::int64_t>(params.size())});
  std::string ranks;
  bool differ = false;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    differ = differ || counts[r][0] != static_cast<std::int64_t>(params.size());
    ranks += detail::str_cat(r ? "; " : "", "rank ", r, ": ", counts[r][0]);
  }
  LG_CHECK(!differ, "ZeroRedundancyOptimizer: the ranks optimize different numbers of parameters (",
           ranks, "). Every rank must pass the same model's parameters");
  if (const std::optional<TensorMismatch> m = first_mismatch(*group_, params)) {
    LG_THROW(Error, "ZeroRedundancyOptimizer: the ranks optimize different parameters: parameter ",
             m->index, " is ", m->expected, " on rank 0 but ", m->theirs, " on rank ", m->rank,
             ". Every rank must pass the same model's parameters");
  }
  owner_ = partition_parameters(numels, group_->size());
}

int ZeroRedundancyOptimizer::owner(std::size_t i) const {
  LG_CHECK(i < owner_.size(), "ZeroRedundancyOptimizer::owner: parameter ", i, " out of range (",
           owner_.size(), " parameters)");
  return owner_[i];
}

std::size_t ZeroRedundancyOptimizer::index_of(const Tensor& param) const {
  std::size_t index = 0;
  for (const optim::ParamGroup& group : param_groups()) {
    for (const Tensor& p : group.params) {
      if (p.is_same(param)) return index;
      ++index;
    }
  }
  LG_THROW(Error, "ZeroRedundancyOptimizer: a tensor of shape ", param.shape(),
           " is not one of its parameters");
}

// Note [A ZeRO step]
// The base's step loop hands over every parameter with a gradient, with its step count, its
// group's learning rate and weight decay, and found_inf (amp::GradScaler's step, decided on the
// device). The wrapped optimizer updates the ones this rank owns, through its own update(): the
// same kernel launch as a plain step of that optimizer, over fewer tensors (each tensor's update
// depends on its own elements only, so the result is bitwise the plain step's). Its states are
// made at that first update, so only the owned parameters ever have any. Then (after_updates,
// which the base calls on every step, gradients or not) each rank's parameters, all it owns, are
// broadcast from it in buckets (broadcast_coalesced) that the partition alone decides: ranks
// whose gradients differ still pair the same tensors, and take the owner's values.
// A skipped step (found_inf) leaves the owner's parameters as they were, and broadcasting those
// changes nothing; the skip is counted on the device for every parameter (the kernels count it
// for the owned ones), so step counts agree on every rank without the host reading the flag.
void ZeroRedundancyOptimizer::update(Device device, const std::vector<ParamRef>& params,
                                     const Tensor& found_inf) {
  consolidated_to_.reset();
  consolidated_.clear();
  std::vector<ParamRef> mine;
  std::vector<Tensor> others_skipped;  // the skip counts of the parameters other ranks update
  for (const ParamRef& ref : params) {
    if (owns(ref.index)) {
      mine.push_back(ref);
    } else if (ref.skipped.defined()) {
      others_skipped.push_back(ref.skipped);
    }
  }
  if (!mine.empty()) inner_->update(device, mine, found_inf);
  // A gated step counts a skip on the device for every parameter, as the kernels do for those
  // they update: the step counts (state(i).step, the state dict) stay those of the steps taken.
  if (found_inf.defined() && !others_skipped.empty()) {
    const Tensor skip = ops::cast(ops::compare(CompareOp::Ne, found_inf, 0.0), kInt32).reshape({});
    for (const Tensor& skipped : others_skipped)
      ops::binary_(BinaryOp::Add, skipped, skip);
  }
}

// Every parameter each rank owns goes out from it, whether it had a gradient anywhere or not, as
// torch's ZeroRedundancyOptimizer broadcasts them: the buckets depend on the partition alone, the
// same on every rank, so ranks whose gradients differ (a parameter unused on one of them, a
// zero_grad on one rank only) still pair the same tensors. A parameter its owner did not update
// goes out unchanged, and every replica takes the owner's value.
void ZeroRedundancyOptimizer::after_updates() {
  if (group_->size() == 1) return;
  const auto cap =
      static_cast<std::int64_t>(std::clamp(options_.bucket_cap_mb() * kBytesPerMb, 1.0, 9.0e18));
  for (int r = 0; r < group_->size(); ++r) {
    std::vector<Tensor> tensors;
    std::vector<std::size_t> indices;
    std::size_t index = 0;
    for (const optim::ParamGroup& group : param_groups()) {
      for (const Tensor& p : group.params) {
        if (owner_[index] == r) {
          tensors.push_back(p);
          indices.push_back(index);
        }
        ++index;
      }
    }
    if (tensors.empty()) continue;  // a rank that owns nothing: the same on every rank
    broadcast_coalesced(*group_, tensors, r, cap, [&](const std::vector<std::size_t>& bucket) {
      return detail::str_cat("ZeroRedundancyOptimizer: broadcasting the ", bucket.size(),
                             " parameter", bucket.size() == 1 ? "" : "s", " that rank ", r,
                             " owns (among them parameter ", indices[bucket.front()], ", ",
                             tensors[bucket.front()].dtype(), " ", tensors[bucket.front()].shape(),
                             ") failed on rank ", group_->rank());
    });
  }
}

NamedTensors ZeroRedundancyOptimizer::named_state(std::size_t i) const {
  if (owns(i)) return inner_->named_state(i);
  if (consolidated_to_) return consolidated_[i];
  return {};
}

void ZeroRedundancyOptimizer::replace_states(std::vector<NamedTensors> states) {
  for (std::size_t i = 0; i < states.size(); ++i)
    if (!owns(i)) states[i].clear();  // another rank's to keep
  inner_->replace_states(std::move(states));
  consolidated_to_.reset();
  consolidated_.clear();
}

bool ZeroRedundancyOptimizer::valid_state(const Tensor& param, const std::string& name,
                                          const Shape& shape) const {
  return inner_->valid_state(param, name, shape);
}

// Another rank's parameter needs no state here: a whole state dict and this rank's local one both
// load. The parameters this rank owns need all of theirs, as in the wrapped optimizer.
std::vector<std::string> ZeroRedundancyOptimizer::required_state(const Tensor& param) const {
  if (!owns(index_of(param))) return {};
  return inner_->required_state(param);
}

void ZeroRedundancyOptimizer::grow_states(std::size_t /*count*/) {
  LG_THROW(Error,
           "ZeroRedundancyOptimizer: add_param_group is not supported: the parameters are "
           "partitioned over the ranks at construction. Build the optimizer with every "
           "group (PyTorch's ZeroRedundancyOptimizer repartitions instead)");
}

DType ZeroRedundancyOptimizer::state_dtype(const Tensor& param, const std::string& name) const {
  return inner_->state_dtype(param, name);
}

// Note [Consolidating the state]
// Each rank r in turn describes its states (one line per tensor: parameter index, name, dtype,
// shape), broadcast as a length and then the text's bytes, and then broadcasts each tensor, on
// its parameter's device. Every rank takes part in every broadcast (the collectives have no
// point-to-point form); rank `to` keeps what it receives, the others receive into a buffer they
// drop at once, so their peak grows by one state tensor, not by the other ranks' states.
void ZeroRedundancyOptimizer::consolidate_state_dict(int to) {
  LG_CHECK(to >= 0 && to < group_->size(), "ZeroRedundancyOptimizer::consolidate_state_dict: rank ",
           to, " is not in the group of ", group_->size());
  NoGradGuard no_grad;
  std::vector<Tensor> params;
  for (const optim::ParamGroup& group : param_groups())
    for (const Tensor& p : group.params)
      params.push_back(p);
  std::vector<NamedTensors> received(params.size());
  const Device host = Device::cpu();
  for (int r = 0; r < group_->size(); ++r) {
    // The description, from rank r.
    std::string text;
    if (group_->rank() == r) {
      std::ostringstream out;
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (!owns(i)) continue;
        for (const auto& [name, t] : inner_->named_state(i)) {
          out << i << ' ' << name << ' ' << static_cast<int>(t.dtype()) << ' ' << t.dim();
          for (std::int64_t d = 0; d < t.dim(); ++d)
            out << ' ' << t.size(d);
          out << '\n';
        }
      }
      text = out.str();
    }
    Tensor length =
        full({1}, static_cast<double>(text.size()), TensorOptions(kInt64)).to(group_->device());
    group_->broadcast(length, r);
    length = length.to(host);
    Tensor bytes = zeros({length.item<std::int64_t>()}, TensorOptions(kUInt8));
    if (group_->rank() == r) std::copy(text.begin(), text.end(), bytes.data_ptr<std::uint8_t>());
    if (bytes.numel() > 0) {
      Tensor on_group = bytes.to(group_->device());
      group_->broadcast(on_group, r);
      bytes = on_group.to(host);
    }
    if (group_->rank() != r) {
      const auto* b = bytes.data_ptr<std::uint8_t>();
      text.assign(b, b + bytes.numel());
    }
    // The tensors.
    std::istringstream in(text);
    std::size_t i = 0;
    std::string name;
    int dtype = 0;
    std::int64_t ndim = 0;
    while (in >> i >> name >> dtype >> ndim) {
      Shape shape(static_cast<std::size_t>(ndim));
      for (std::int64_t& d : shape)
        in >> d;
      LG_INTERNAL_ASSERT(i < params.size() && owner_[i] == r, "consolidate_state_dict: rank ", r,
                         " described parameter ", i);
      Tensor t;
      if (group_->rank() == r) {
        for (const auto& [n, state] : inner_->named_state(i))
          if (n == name) t = state.contiguous();
      } else {
        t = empty(shape, TensorOptions(static_cast<DType>(dtype)).device(params[i].device()));
      }
      if (t.numel() > 0) group_->broadcast(t, r);
      if (group_->rank() == to && r != to) received[i].emplace_back(name, t);
    }
  }
  consolidated_.clear();
  consolidated_to_.reset();
  if (group_->rank() == to) {
    consolidated_ = std::move(received);
    consolidated_to_ = to;
  }
}

NamedTensors ZeroRedundancyOptimizer::state_dict() const {
  LG_CHECK(group_->size() == 1 || consolidated_to_ == group_->rank(),
           "ZeroRedundancyOptimizer::state_dict on rank ", group_->rank(), " of ", group_->size(),
           ": this rank holds the state of its own parameters only. Call "
           "consolidate_state_dict(to) on every rank first, then state_dict() on rank `to` (after "
           "every step: a step drops the copies); or save local_state_dict() on every rank");
  return Optimizer::state_dict();
}

NamedTensors ZeroRedundancyOptimizer::local_state_dict() const {
  NamedTensors out;
  for (auto& [key, tensor] : Optimizer::state_dict()) {
    // "state.<i>.<name>" of a parameter another rank owns: a consolidated copy, left out.
    if (key.rfind("state.", 0) == 0) {
      const std::size_t dot = key.find('.', 6);
      const std::size_t i = std::stoull(key.substr(6, dot - 6));
      if (!owns(i) && key.compare(dot + 1, std::string::npos, "step") != 0) continue;
    }
    out.emplace_back(key, tensor);
  }
  return out;
}

std::string ZeroRedundancyOptimizer::repr() const {
  std::int64_t owned = 0;
  std::int64_t total = 0;
  std::size_t count = 0;
  std::size_t index = 0;
  for (const optim::ParamGroup& group : param_groups()) {
    for (const Tensor& p : group.params) {
      total += p.numel();
      if (owns(index++)) {
        owned += p.numel();
        ++count;
      }
    }
  }
  return detail::str_cat("ZeroRedundancyOptimizer(world_size=", group_->size(),
                         ", rank=", group_->rank(), ", owns ", count, " of ", owner_.size(),
                         " parameters, ", owned, " of ", total, " elements)");
}

}  // namespace leangrad::distributed
