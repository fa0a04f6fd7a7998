// DistributedDataParallel (ddp.h): construction (the shape check and the broadcast from rank 0),
// forward arming the reducer, and the no_sync guard. The buckets and hooks are reducer.cpp.
#include <leangrad/distributed/ddp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/distributed/tensor_lists.h>

namespace leangrad::distributed {

namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;

// Each distinct tensor once (a parameter shared by two modules is listed under both names).
NamedTensors distinct(const NamedTensors& tensors) {
  std::unordered_set<const TensorImpl*> seen;
  NamedTensors out;
  for (const auto& [name, t] : tensors)
    if (seen.insert(t.impl_ptr().get()).second) out.emplace_back(name, t);
  return out;
}

// Every rank must wrap the same model: as many parameters and buffers, each of the same dtype and
// shape, and the same parameters frozen. Compared before any broadcast, as PyTorch's DDP does:
// a mismatch is named instead of pairing one rank's broadcast with another's all-reduce, or, where
// no signatures are exchanged (LEANGRAD_DIST_SIGNATURES=0, NCCL), instead of broadcasting rank 0's
// bytes into another shape of as many elements, or reducing buckets that hold other parameters.
// Two all-gathers: the counts, then (they agree, so the records have one shape everywhere) one
// record per tensor; every rank compares every rank's records with rank 0's and raises the same
// error.
void check_same_model(ProcessGroup& group, const NamedTensors& params,
                      const NamedTensors& buffers) {
  const std::vector<std::vector<std::int64_t>> all = all_gather_counts(
      group, {static_cast<std::int64_t>(params.size()), static_cast<std::int64_t>(buffers.size())});
  std::string ranks;
  bool differ = false;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::vector<std::int64_t>& c = all[r];
    differ = differ || c[0] != static_cast<std::int64_t>(params.size()) ||
             c[1] != static_cast<std::int64_t>(buffers.size());
    ranks += detail::str_cat(r ? "; " : "", "rank ", r, ": ", c[0], " parameters and ", c[1],
                             " buffers");
  }
  LG_CHECK(!differ, "DistributedDataParallel: the ranks wrap different models (", ranks,
           "). Every rank must build the same model before wrapping it");

  std::vector<Tensor> tensors;
  for (const auto& [name, t] : params)
    tensors.push_back(t);
  for (const auto& [name, t] : buffers)
    tensors.push_back(t);
  const std::optional<TensorMismatch> mismatch = first_mismatch(group, tensors);
  if (!mismatch) return;
  const std::size_t i = mismatch->index;
  const bool is_parameter = i < params.size();
  const std::string& name = is_parameter ? params[i].first : buffers[i - params.size()].first;
  LG_THROW(Error, "DistributedDataParallel: the ranks wrap different models: ",
           is_parameter ? "parameter '" : "buffer '", name, "' is ", mismatch->expected,
           " on rank 0 but ", mismatch->theirs, " on rank ", mismatch->rank,
           ". Every rank must build the same model (and freeze the same parameters) before "
           "wrapping it");
}

// A group whose collectives take one GPU's tensors (NCCL) cannot reduce parameters elsewhere:
// refused before any collective, on every rank that wraps such a model, with what to do. A Gloo
// group takes CPU tensors and stages CUDA ones. See Note [Offloaded parameters] in reducer.cpp.
void check_devices(const ProcessGroup& group, const NamedTensors& params) {
  if (!group.device().is_cuda()) return;
  for (const auto& [name, p] : params) {
    LG_CHECK_DEVICE(p.device() == group.device(), "DistributedDataParallel: parameter '", name,
                    "' (", p.dtype(), " ", p.shape(), ") is on ", p.device(), ", but the ",
                    group.backend_name(), " process group reduces tensors on ", group.device(),
                    " only. Move the module to ", group.device(),
                    " before wrapping it; parameters kept in host memory by "
                    "offload::ParameterOffload are reduced there by a Gloo process group");
  }
}

void broadcast_from_rank0(ProcessGroup& group, const NamedTensors& tensors, const char* kind) {
  NoGradGuard no_grad;
  for (const auto& [name, t] : tensors) {
    try {
      group.broadcast(t.detach(), 0);
    } catch (const Error& e) {
      LG_THROW(Error, "DistributedDataParallel: broadcasting ", kind, " '", name, "' (", t.dtype(),
               " ", t.shape(), " on rank ", group.rank(), ") from rank 0 failed: ", e.message());
    }
  }
}

// Note [Buffers at every forward]
// Buffers are not reduced: BatchNorm's running statistics are updated by each rank's forward from
// its own batch, so the replicas would drift apart. As PyTorch's broadcast_buffers (its default),
// every synchronised forward (sync on, grad mode on) first copies rank 0's buffers to every rank;
// the forward then updates them from the local batch, and the next forward makes them rank 0's
// again, so rank 0's statistics are the model's (what rank 0 checkpoints and evaluates). The
// buffers go as one flat tensor per dtype and device (a model has many small ones: one collective
// each would cost a round trip apiece), grouped as the gradients' buckets are but without a size
// limit (broadcast_coalesced in tensor_lists.h), and copied back into place bitwise.
void broadcast_buffers_coalesced(ProcessGroup& group, const NamedTensors& buffers) {
  std::vector<Tensor> tensors;
  for (const auto& [name, b] : buffers)
    tensors.push_back(b);
  broadcast_coalesced(group, tensors, 0, std::numeric_limits<std::int64_t>::max(),
                      [&](const std::vector<std::size_t>& bucket) {
                        std::int64_t numel = 0;
                        for (std::size_t i : bucket)
                          numel += tensors[i].numel();
                        const Tensor& first = tensors[bucket.front()];
                        return detail::str_cat(
                            "DistributedDataParallel: broadcasting rank 0's ", bucket.size(), " ",
                            first.dtype(), " buffer", bucket.size() == 1 ? "" : "s", " (", numel,
                            " elements, among them '", buffers[bucket.front()].first,
                            "') before forward failed on rank ", group.rank());
                      });
}

}  // namespace

NoSyncGuard::NoSyncGuard(DistributedDataParallel& ddp) : ddp_(ddp), previous_(ddp.require_sync_) {
  ddp_.require_sync_ = false;
}

NoSyncGuard::~NoSyncGuard() {
  ddp_.require_sync_ = previous_;
}

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 const DDPOptions& options)
    : Module("DistributedDataParallel"), module_(std::move(module)), options_(options) {
  LG_CHECK(module_ != nullptr, "DistributedDataParallel: the module is null");
  LG_CHECK(std::isfinite(options.bucket_cap_mb()) && options.bucket_cap_mb() > 0,
           "DistributedDataParallel: bucket_cap_mb must be positive, got ",
           options.bucket_cap_mb());
  LG_CHECK(std::isfinite(options.first_bucket_mb()) && options.first_bucket_mb() > 0,
           "DistributedDataParallel: first_bucket_mb must be positive, got ",
           options.first_bucket_mb());
  group_ = options.process_group() ? options.process_group() : default_process_group_handle();
  register_module("module", module_);

  const NamedTensors params = distinct(named_parameters().pairs());
  const NamedTensors buffers = distinct(named_buffers().pairs());
  check_devices(*group_, params);
  check_same_model(*group_, params, buffers);
  broadcast_from_rank0(*group_, params, "parameter");
  broadcast_from_rank0(*group_, buffers, "buffer");

  NamedTensors reduced;
  for (const auto& [name, p] : params) {
    if (!p.requires_grad()) {  // frozen: never reduced (forward checks it stays frozen)
      frozen_.emplace_back(name, p);
      continue;
    }
    LG_CHECK(p.is_leaf(), "DistributedDataParallel: parameter '", name,
             "' is not a leaf (it has a grad_fn); parameters must be leaf tensors");
    reduced.emplace_back(name, p);
  }
  // Clamped before rounding: llround of a byte count past int64 (a cap of 1e13 MB) is undefined,
  // and glibc's LLONG_MIN made every bucket one parameter.
  auto bucket_bytes = [](double mb) {
    return std::max<std::int64_t>(1, std::llround(std::min(mb * kBytesPerMb, 9.0e18)));
  };
  const std::vector<std::int64_t> limits = {bucket_bytes(options.first_bucket_mb()),
                                            bucket_bytes(options.bucket_cap_mb())};
  reducer_ = Reducer::make(std::move(reduced), group_, limits, options.find_unused_parameters());
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  if (require_sync_ && autograd::grad_mode_enabled()) {
    // A parameter frozen at construction has no bucket slot: trained now, its gradient would
    // stay this rank's own and the replicas would drift apart silently.
    for (const auto& [name, p] : frozen_) {
      LG_CHECK(!p.requires_grad(), "DistributedDataParallel: parameter '", name,
               "' was frozen (requires_grad false) when the module was wrapped and requires grad "
               "now; which parameters are trained is fixed at wrapping (they get bucket slots), so "
               "its gradient would not be averaged across the ranks. Wrap the module again after "
               "changing which parameters require grad");
    }
    if (options_.broadcast_buffers() && group_->size() > 1) {
      const NamedTensors buffers = distinct(named_buffers().pairs());
      if (!buffers.empty()) broadcast_buffers_coalesced(*group_, buffers);
    }
    reducer_->prepare_for_backward();
  } else {
    reducer_->disarm();
  }
  return (*module_)(input);
}

std::string DistributedDataParallel::extra_repr() const {
  return detail::str_cat("world_size=", group_->size(), ", buckets=", reducer_->buckets().size(),
                         ", bucket_cap_mb=", options_.bucket_cap_mb(), ", find_unused_parameters=",
                         options_.find_unused_parameters() ? "true" : "false");
}

}  // namespace leangrad::distributed
