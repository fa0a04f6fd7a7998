// DistributedDataParallel (ddp.h): construction (the shape check and the broadcast from rank 0),
// forward arming the reducer, and the no_sync guard. The buckets and hooks are reducer.cpp.
#include <leangrad/distributed/ddp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/bucket_assignment.h>
#include <leangrad/distributed/collective.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

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

// What check_same_model compares of one parameter or buffer: its dtype, whether it is trained
// (requires grad: frozen ones have no bucket slot), and its shape (numel, then the dims).
constexpr std::size_t kRecordWords = 4 + kMaxCollectiveDims;

void write_record(std::int64_t* record, const Tensor& t) {
  record[0] = static_cast<std::int64_t>(t.dtype());
  record[1] = t.requires_grad() ? 1 : 0;
  record[2] = t.numel();
  record[3] = t.dim();
  for (std::int64_t d = 0; d < t.dim() && d < static_cast<std::int64_t>(kMaxCollectiveDims); ++d)
    record[4 + d] = t.size(d);
}

// "float32 [4, 6]", and with `say_grad` "requiring grad" or "frozen (requires_grad false)".
std::string describe_record(const std::int64_t* record, bool say_grad) {
  const std::int64_t ndim = std::clamp<std::int64_t>(record[3], 0, kMaxCollectiveDims);
  const Shape shape(record + 4, record + 4 + ndim);
  std::string text = detail::str_cat(static_cast<DType>(record[0]), " ", shape);
  if (say_grad) text += record[1] ? " requiring grad" : " frozen (requires_grad false)";
  return text;
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
  Tensor counts = zeros({2}, TensorOptions(kInt64));
  counts.data_ptr<std::int64_t>()[0] = static_cast<std::int64_t>(params.size());
  counts.data_ptr<std::int64_t>()[1] = static_cast<std::int64_t>(buffers.size());
  // On the group's device (NCCL's collectives take CUDA tensors only), read back on the CPU.
  std::vector<Tensor> all = group.all_gather(counts.to(group.device()));
  std::string ranks;
  bool differ = false;
  for (std::size_t r = 0; r < all.size(); ++r) {
    all[r] = all[r].cpu();
    const auto* c = all[r].data_ptr<std::int64_t>();
    differ = differ || c[0] != static_cast<std::int64_t>(params.size()) ||
             c[1] != static_cast<std::int64_t>(buffers.size());
    ranks += detail::str_cat(r ? "; " : "", "rank ", r, ": ", c[0], " parameters and ", c[1],
                             " buffers");
  }
  LG_CHECK(!differ, "DistributedDataParallel: the ranks wrap different models (", ranks,
           "). Every rank must build the same model before wrapping it");

  const std::size_t n = params.size() + buffers.size();
  if (n == 0) return;
  Tensor records = zeros({static_cast<std::int64_t>(n), static_cast<std::int64_t>(kRecordWords)},
                         TensorOptions(kInt64));  // (tensors, kRecordWords)
  auto* mine = records.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < n; ++i) {
    const Tensor& t = i < params.size() ? params[i].second : buffers[i - params.size()].second;
    write_record(mine + i * kRecordWords, t);
  }
  std::vector<Tensor> gathered = group.all_gather(records.to(group.device()));
  for (Tensor& g : gathered)
    g = g.cpu().contiguous();
  const auto* rank0 = gathered[0].data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t* expected = rank0 + i * kRecordWords;
    for (std::size_t r = 1; r < gathered.size(); ++r) {
      const std::int64_t* theirs = gathered[r].data_ptr<std::int64_t>() + i * kRecordWords;
      if (std::equal(expected, expected + kRecordWords, theirs)) continue;
      const bool is_parameter = i < params.size();
      const bool say_grad = expected[1] != theirs[1];
      const std::string& name = is_parameter ? params[i].first : buffers[i - params.size()].first;
      LG_THROW(Error, "DistributedDataParallel: the ranks wrap different models: ",
               is_parameter ? "parameter '" : "buffer '", name, "' is ",
               describe_record(expected, say_grad), " on rank 0 but ",
               describe_record(theirs, say_grad), " on rank ", r,
               ". Every rank must build the same model (and freeze the same parameters) before "
               "wrapping it");
    }
  }
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
// limit (assign_buckets), and copied back into place bitwise.
void broadcast_buffers_coalesced(ProcessGroup& group, const NamedTensors& buffers) {
  NoGradGuard no_grad;
  std::vector<BucketCandidate> candidates;
  for (const auto& [name, b] : buffers)
    candidates.push_back({b.dtype(), b.device(), static_cast<std::int64_t>(b.nbytes())});
  const std::vector<std::vector<std::size_t>> groups =
      assign_buckets(candidates, {std::numeric_limits<std::int64_t>::max()});
  for (const std::vector<std::size_t>& g : groups) {
    std::vector<Tensor> pieces;
    for (std::size_t i : g)
      pieces.push_back(buffers[i].second.detach().reshape({-1}));
    const Tensor flat = ops::cat(pieces, 0).contiguous();
    try {
      group.broadcast(flat, 0);
    } catch (const Error& e) {
      const Tensor& first = buffers[g.front()].second;
      LG_THROW(Error, "DistributedDataParallel: broadcasting rank 0's ", g.size(), " ",
               first.dtype(), " buffer", g.size() == 1 ? "" : "s", " (", flat.numel(),
               " elements, among them '", buffers[g.front()].first,
               "') before forward failed on rank ", group.rank(), ": ", e.message());
    }
    if (group.rank() == 0) continue;  // its buffers are what it sent
    std::int64_t offset = 0;
    for (std::size_t i : g) {
      Tensor b = buffers[i].second.detach();
      const std::int64_t n = b.numel();
      b.copy_(flat.slice(0, offset, offset + n).view(b.shape()));
      offset += n;
    }
  }
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
