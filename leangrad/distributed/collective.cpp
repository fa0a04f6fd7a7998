// Describing, checking and comparing collective calls (collective.h).
//
// Note [Signatures]
// A collective only works when every rank calls the same one: the same operation, dtype and
// shape (and reduction, or root), as the same call in sequence. Gloo cannot tell when they do
// not: a size mismatch hangs or fails deep inside its ring with a message about byte counts,
// and a float32 [2] paired with a float64 [1] silently exchanges garbage. So before moving any
// data the ranks all-gather a signature of their call, kSignatureWords int64:
//
//   [0] kSignatureMagic  [1] seq  [2] kind  [3] reduce op  [4] root  [5] dtype  [6] ndim
//   [7] unused (0)       [8 .. 8 + kMaxCollectiveDims) the dims, zero-padded
//
// Fields a kind does not use are 0, so two calls agree exactly when their signatures are equal.
// Every rank receives the same signatures and so reaches the same verdict: all ranks raise the
// same error together and none moves data, which leaves the group usable for the next call.
// The exchange costs one small all-gather per collective (tens of microseconds on one machine);
// it also makes barrier() free, since no rank leaves an all-gather before every rank entered it.
#include <leangrad/distributed/collective.h>

#include <map>
#include <sstream>

#include <leangrad/core/error.h>

namespace leangrad::distributed {
namespace {

constexpr std::int64_t kSignatureMagic = 0x4c470001;  // "LG", version 1

bool uses_reduce_op(CollectiveKind k) {
  return k == CollectiveKind::AllReduce || k == CollectiveKind::ReduceScatter;
}
bool writes_in_place(CollectiveKind k) {
  return k == CollectiveKind::AllReduce || k == CollectiveKind::Broadcast ||
         k == CollectiveKind::ReduceScatter;
}

Collective decode_signature(const std::int64_t* words) {
  Collective c;
  c.seq = static_cast<std::uint64_t>(words[1]);
  c.kind = static_cast<CollectiveKind>(words[2]);
  c.op = static_cast<ReduceOp>(words[3]);
  c.root = static_cast<int>(words[4]);
  c.dtype = static_cast<DType>(words[5]);
  const std::int64_t ndim = std::min<std::int64_t>(words[6], kMaxCollectiveDims);
  c.shape.assign(words + 8, words + 8 + ndim);
  return c;
}

// "ranks 0, 2" / "rank 1".
std::string rank_list(const std::vector<int>& ranks) {
  std::ostringstream out;
  out << (ranks.size() == 1 ? "rank " : "ranks ");
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out << (i > 0 ? ", " : "") << ranks[i];
  return out.str();
}

// What to add when a tensor is on the wrong kind of device for `backend`.
const char* backend_hint(const Device& got) {
  return got.is_cuda() ? " (CUDA tensors take Backend::NCCL)" : " (CPU tensors take Backend::Gloo)";
}

}  // namespace

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "all_reduce";
    case CollectiveKind::Broadcast:
      return "broadcast";
    case CollectiveKind::AllGather:
      return "all_gather";
    case CollectiveKind::ReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::Barrier:
      return "barrier";
  }
  return "unknown collective";
}

std::string Collective::describe() const {
  std::ostringstream out;
  out << collective_name(kind);
  if (kind == CollectiveKind::Barrier) return out.str();
  if (uses_reduce_op(kind)) out << "(" << reduce_op_name(op) << ")";
  if (kind == CollectiveKind::Broadcast) out << " from rank " << root;
  out << " of " << dtype << " " << shape;
  return out.str();
}

void check_arguments(const Collective& c, const Tensor& tensor, const std::vector<Tensor>& inputs,
                     int group_size, const char* backend, const Device& device) {
  const char* name = collective_name(c.kind);
  if (c.kind == CollectiveKind::Barrier) return;
  LG_CHECK(tensor.defined(), name, ": got an undefined tensor (Tensor())");
  LG_CHECK_DEVICE(tensor.device() == device, name, ": the ", backend,
                  " process group takes tensors on ", device, ", got one on ", tensor.device(),
                  tensor.device().type != device.type ? backend_hint(tensor.device()) : "");
  LG_CHECK_SHAPE(tensor.dim() <= static_cast<std::int64_t>(kMaxCollectiveDims), name,
                 ": tensors of at most ", kMaxCollectiveDims, " dims, got ", tensor.shape());
  if (uses_reduce_op(c.kind)) {
    LG_CHECK_DTYPE(reduce_op_supports(c.op, tensor.dtype()), name, ": cannot reduce ",
                   tensor.dtype(), " tensors with ", reduce_op_name(c.op),
                   c.op == ReduceOp::Avg ? " (avg needs a floating dtype; sum, then divide)" : "");
  }
  if (writes_in_place(c.kind)) {
    for (std::int64_t d = 0; d < tensor.dim(); ++d) {
      LG_CHECK(tensor.size(d) <= 1 || tensor.stride(d) != 0, name,
               ": writes its result into the tensor, but elements of this one share memory "
               "(an expanded tensor: shape ",
               tensor.shape(), ", strides ", tensor.strides(), "); pass a contiguous tensor");
    }
  }
  if (c.kind == CollectiveKind::Broadcast) {
    LG_CHECK(c.root >= 0 && c.root < group_size, "broadcast: root ", c.root,
             " is not a rank of this group of ", group_size, " (0..", group_size - 1, ")");
  }
  if (c.kind == CollectiveKind::ReduceScatter) {
    LG_CHECK(static_cast<int>(inputs.size()) == group_size, "reduce_scatter: expected one input ",
             "per rank (", group_size, "), got ", inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      LG_CHECK(inputs[i].defined(), "reduce_scatter: input ", i, " is undefined (Tensor())");
      LG_CHECK_DEVICE(inputs[i].device() == device, "reduce_scatter: the ", backend,
                      " process group takes tensors on ", device, ", input ", i, " is on ",
                      inputs[i].device());
      LG_CHECK_DTYPE(inputs[i].dtype() == tensor.dtype(), "reduce_scatter: input ", i, " is ",
                     inputs[i].dtype(), " but the output is ", tensor.dtype());
      LG_CHECK_SHAPE(inputs[i].shape() == tensor.shape(), "reduce_scatter: input ", i,
                     " has shape ", inputs[i].shape(), " but the output has ", tensor.shape());
    }
  }
}

Signature encode_signature(const Collective& c) {
  Signature s{};
  s[0] = kSignatureMagic;
  s[1] = static_cast<std::int64_t>(c.seq);
  s[2] = static_cast<std::int64_t>(c.kind);
  if (c.kind == CollectiveKind::Barrier) return s;
  if (uses_reduce_op(c.kind)) s[3] = static_cast<std::int64_t>(c.op);
  if (c.kind == CollectiveKind::Broadcast) s[4] = c.root;
  s[5] = static_cast<std::int64_t>(c.dtype);
  s[6] = static_cast<std::int64_t>(c.shape.size());
  for (std::size_t d = 0; d < c.shape.size() && d < kMaxCollectiveDims; ++d)
    s[8 + d] = c.shape[d];
  return s;
}

void check_signatures(const Collective& mine, const std::vector<std::int64_t>& all,
                      int group_size) {
  LG_INTERNAL_ASSERT(all.size() == kSignatureWords * static_cast<std::size_t>(group_size));
  const Signature expected = encode_signature(mine);
  // Group the ranks by what they called, noting which fields differ from this rank's call. The
  // sequence numbers (word 1) need no comparing: Gloo matches messages by tags made from them.
  std::map<std::string, std::vector<int>> callers;
  bool shapes_differ = false;
  bool dtypes_differ = false;
  bool others_differ = false;  // kind, reduction or root
  for (int r = 0; r < group_size; ++r) {
    const std::int64_t* words = all.data() + static_cast<std::size_t>(r) * kSignatureWords;
    LG_INTERNAL_ASSERT(words[0] == kSignatureMagic, "(rank ", r, " sent no signature)");
    callers[decode_signature(words).describe()].push_back(r);
    others_differ |= words[2] != expected[2] || words[3] != expected[3] || words[4] != expected[4];
    dtypes_differ |= words[5] != expected[5];
    shapes_differ |= !std::equal(expected.begin() + 6, expected.end(), words + 6);
  }
  if (!shapes_differ && !dtypes_differ && !others_differ) return;

  std::ostringstream calls;
  const char* separator = "";
  for (const auto& [what, ranks] : callers) {
    calls << separator << rank_list(ranks) << ": " << what;
    separator = "; ";
  }
  const std::string message = detail::str_cat(
      "distributed: the ", group_size, " ranks of the group disagree about collective #", mine.seq,
      " (", calls.str(),
      "). Every rank must call the same collectives in the same order, with tensors of the same "
      "dtype and shape and the same reduction and root");
  if (!others_differ && !dtypes_differ) LG_THROW(ShapeError, message);
  if (!others_differ && !shapes_differ) LG_THROW(DTypeError, message);
  LG_THROW(Error, message);
}

}  // namespace leangrad::distributed
