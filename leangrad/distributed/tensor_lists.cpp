// The list collectives of tensor_lists.h: the record check of every rank's tensors, and the
// coalesced broadcast.
#include <leangrad/distributed/tensor_lists.h>

#include <algorithm>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/bucket_assignment.h>
#include <leangrad/distributed/collective.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::distributed {

namespace {

// What first_mismatch compares of one tensor: its dtype, whether it requires grad, and its shape
// (numel, then the dims).
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

}  // namespace

std::vector<std::vector<std::int64_t>> all_gather_counts(ProcessGroup& group,
                                                         const std::vector<std::int64_t>& counts) {
  Tensor mine = zeros({static_cast<std::int64_t>(counts.size())}, TensorOptions(kInt64));
  std::copy(counts.begin(), counts.end(), mine.data_ptr<std::int64_t>());
  // On the group's device (NCCL's collectives take CUDA tensors only), read back on the CPU.
  const std::vector<Tensor> all = group.all_gather(mine.to(group.device()));
  std::vector<std::vector<std::int64_t>> out;
  for (const Tensor& t : all) {
    const Tensor host = t.cpu().contiguous();
    const auto* c = host.data_ptr<std::int64_t>();
    out.emplace_back(c, c + counts.size());
  }
  return out;
}

std::optional<TensorMismatch> first_mismatch(ProcessGroup& group,
                                             const std::vector<Tensor>& tensors) {
  const std::size_t n = tensors.size();
  if (n == 0) return std::nullopt;
  Tensor records = zeros({static_cast<std::int64_t>(n), static_cast<std::int64_t>(kRecordWords)},
                         TensorOptions(kInt64));  // (tensors, kRecordWords)
  auto* mine = records.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < n; ++i)
    write_record(mine + i * kRecordWords, tensors[i]);
  std::vector<Tensor> gathered = group.all_gather(records.to(group.device()));
  for (Tensor& g : gathered)
    g = g.cpu().contiguous();
  const auto* rank0 = gathered[0].data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t* expected = rank0 + i * kRecordWords;
    for (std::size_t r = 1; r < gathered.size(); ++r) {
      const std::int64_t* theirs = gathered[r].data_ptr<std::int64_t>() + i * kRecordWords;
      if (std::equal(expected, expected + kRecordWords, theirs)) continue;
      const bool say_grad = expected[1] != theirs[1];
      return TensorMismatch{i, static_cast<int>(r), describe_record(expected, say_grad),
                            describe_record(theirs, say_grad), say_grad};
    }
  }
  return std::nullopt;
}

void broadcast_coalesced(
    ProcessGroup& group, const std::vector<Tensor>& tensors, int root, std::int64_t bucket_bytes,
    const std::function<std::string(const std::vector<std::size_t>&)>& describe) {
  NoGradGuard no_grad;
  std::vector<BucketCandidate> candidates;
  for (const Tensor& t : tensors)
    candidates.push_back({t.dtype(), t.device(), static_cast<std::int64_t>(t.nbytes())});
  for (const std::vector<std::size_t>& bucket : assign_buckets(candidates, {bucket_bytes})) {
    const bool alone = bucket.size() == 1 && tensors[bucket.front()].is_contiguous();
    Tensor flat;
    if (alone) {
      flat = tensors[bucket.front()].detach();
    } else if (group.rank() == root) {
      std::vector<Tensor> pieces;
      for (std::size_t i : bucket)
        pieces.push_back(tensors[i].detach().reshape({-1}));
      flat = ops::cat(pieces, 0).contiguous();
    } else {
      std::int64_t numel = 0;
      for (std::size_t i : bucket)
        numel += tensors[i].numel();
      const Tensor& first = tensors[bucket.front()];
      flat = empty({numel}, TensorOptions(first.dtype()).device(first.device()));
    }
    try {
      group.broadcast(flat, root);
    } catch (const Error& e) {
      LG_THROW(Error, describe(bucket), ": ", e.message());
    }
    if (alone || group.rank() == root) continue;  // the root's tensors are what it sent
    std::int64_t offset = 0;
    for (std::size_t i : bucket) {
      Tensor t = tensors[i].detach();
      const std::int64_t n = t.numel();
      t.copy_(flat.slice(0, offset, offset + n).view(t.shape()));
      offset += n;
    }
  }
}

}  // namespace leangrad::distributed
