// One collective call as data: what it is (all_reduce, broadcast, ...), on which dtype and shape,
// with which reduction or root, and its sequence number in the group. Backends use it three ways:
// - check_arguments: what one rank can check alone, before anything is queued;
// - encode_signature / check_signatures: what only all ranks together can check. Before each
//   collective's data moves, the ranks all-gather their signatures (a few int64), so a rank that
//   calls a different collective, dtype, shape, reduction or root is reported by every rank at
//   once, naming who called what, instead of corrupting data or hanging.
//   See Note [Signatures] in collective.cpp;
// - describe: how errors name it, "all_reduce(sum) of float32 [4, 5]".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/core/dtype.h>
#include <leangrad/core/shape.h>
#include <leangrad/core/tensor.h>
#include <leangrad/distributed/reduce_op.h>

namespace leangrad::distributed {

enum class CollectiveKind : std::int64_t {
  AllReduce = 1,
  Broadcast = 2,
  AllGather = 3,
  ReduceScatter = 4,
  Barrier = 5,
};

// "all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier".
const char* collective_name(CollectiveKind kind);

struct Collective {
  CollectiveKind kind = CollectiveKind::Barrier;
  ReduceOp op = ReduceOp::Sum;  // all_reduce, reduce_scatter
  int root = 0;                 // broadcast
  DType dtype = DType::Float32;
  Shape shape;            // the tensor's; reduce_scatter: the output's (each input has it too)
  std::uint64_t seq = 0;  // 1, 2, ... in call order within the group

  // "all_reduce(sum) of float32 [4, 5]", "broadcast from rank 1 of int64 [3]", "barrier".
  std::string describe() const;
};

// The checks one rank can make alone; throws (ShapeError, DTypeError, DeviceError or Error)
// naming the collective. `inputs` are reduce_scatter's (one per rank), empty otherwise; every
// tensor must be on `device`, the group's (the CPU for Gloo, the group's GPU for NCCL).
void check_arguments(const Collective& c, const Tensor& tensor, const std::vector<Tensor>& inputs,
                     int group_size, const char* backend, const Device& device);

// A collective's signature: a fixed number of int64 the ranks exchange (Note [Signatures]).
// Tensors of collectives have at most kMaxCollectiveDims dims (check_arguments says so).
constexpr std::size_t kMaxCollectiveDims = 16;
constexpr std::size_t kSignatureWords = 8 + kMaxCollectiveDims;
using Signature = std::array<std::int64_t, kSignatureWords>;
Signature encode_signature(const Collective& c);

// Compares every rank's signature (`all` holds group_size of them, rank by rank) with
// `mine`; when they differ throws an Error (a ShapeError when only shapes differ, a DTypeError
// when only dtypes do) that lists which ranks called what.
void check_signatures(const Collective& mine, const std::vector<std::int64_t>& all, int group_size);

}  // namespace leangrad::distributed
