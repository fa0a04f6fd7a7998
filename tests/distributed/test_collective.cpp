// The single-process pieces of the collectives: the reduction loops of every dtype
// (distributed/reduce_op.h) against plain arithmetic, and what collective.h checks alone
// (arguments) and across ranks (signatures, fed here with made-up ranks' signatures).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/distributed/collective.h>
#include <leangrad/distributed/reduce_op.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad::distributed {
namespace {

TEST(ReduceBuffers, EveryOpOnFloat32AndInt64) {
  const std::vector<float> a = {1.5f, -2.0f, 3.0f, 0.0f};
  const std::vector<float> b = {0.25f, 5.0f, -3.0f, -0.0f};
  std::vector<float> out(4);
  reduce_buffers(ReduceOp::Sum, DType::Float32, out.data(), a.data(), b.data(), 4);
  EXPECT_EQ(out, (std::vector<float>{1.75f, 3.0f, 0.0f, 0.0f}));
  reduce_buffers(ReduceOp::Max, DType::Float32, out.data(), a.data(), b.data(), 4);
  EXPECT_EQ(out, (std::vector<float>{1.5f, 5.0f, 3.0f, 0.0f}));
  reduce_buffers(ReduceOp::Min, DType::Float32, out.data(), a.data(), b.data(), 4);
  EXPECT_EQ(out, (std::vector<float>{0.25f, -2.0f, -3.0f, 0.0f}));

  const std::int64_t big = std::int64_t{1} << 60;
  std::vector<std::int64_t> x = {big, -7, 3};
  const std::vector<std::int64_t> y = {big, 2, -3};
  reduce_buffers(ReduceOp::Sum, DType::Int64, x.data(), x.data(), y.data(), 3);  // in place
  EXPECT_EQ(x, (std::vector<std::int64_t>{2 * big, -5, 0}));
}

TEST(ReduceBuffers, MaxAndMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> a = {nan, 1.0};
  const std::vector<double> b = {2.0, nan};
  std::vector<double> out(2);
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    reduce_buffers(op, DType::Float64, out.data(), a.data(), b.data(), 2);
    EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1])) << reduce_op_name(op);
  }
}

// 16-bit floats compute in float and round once per pair: 2048 + 1 is 2049 in float, which
// float16 rounds to even (2048); bfloat16 likewise keeps 256 for 256 + 1.
TEST(ReduceBuffers, SixteenBitFloatsRoundOncePerPair) {
  const std::vector<Half> a = {Half(2048.0f), Half(0.5f)};
  const std::vector<Half> b = {Half(1.0f), Half(0.25f)};
  std::vector<Half> out(2);
  reduce_buffers(ReduceOp::Sum, DType::Float16, out.data(), a.data(), b.data(), 2);
  EXPECT_EQ(static_cast<float>(out[0]), 2048.0f);
  EXPECT_EQ(static_cast<float>(out[1]), 0.75f);
  const std::vector<BFloat16> c = {BFloat16(256.0f), BFloat16(-1.5f)};
  const std::vector<BFloat16> d = {BFloat16(1.0f), BFloat16(4.0f)};
  std::vector<BFloat16> bout(2);
  reduce_buffers(ReduceOp::Sum, DType::BFloat16, bout.data(), c.data(), d.data(), 2);
  EXPECT_EQ(static_cast<float>(bout[0]), 256.0f);
  EXPECT_EQ(static_cast<float>(bout[1]), 2.5f);
  reduce_buffers(ReduceOp::Max, DType::BFloat16, bout.data(), c.data(), d.data(), 2);
  EXPECT_EQ(static_cast<float>(bout[1]), 4.0f);
  divide_buffer(DType::BFloat16, bout.data(), 2, 4);
  EXPECT_EQ(static_cast<float>(bout[0]), 64.0f);
  EXPECT_EQ(static_cast<float>(bout[1]), 1.0f);
}

TEST(ReduceBuffers, WhichOpsReduceWhichDtypes) {
  EXPECT_TRUE(reduce_op_supports(ReduceOp::Sum, DType::Int64));
  EXPECT_TRUE(reduce_op_supports(ReduceOp::Avg, DType::BFloat16));
  EXPECT_FALSE(reduce_op_supports(ReduceOp::Avg, DType::Int64));
  EXPECT_FALSE(reduce_op_supports(ReduceOp::Max, DType::Bool));
}

Collective all_reduce_of(DType dtype, Shape shape, ReduceOp op = ReduceOp::Sum) {
  Collective c;
  c.kind = CollectiveKind::AllReduce;
  c.op = op;
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.seq = 5;
  return c;
}

// The signatures of `calls`, one per rank, as the all-gather delivers them.
std::vector<std::int64_t> gathered(const std::vector<Collective>& calls) {
  std::vector<std::int64_t> all;
  for (const Collective& c : calls) {
    const Signature s = encode_signature(c);
    all.insert(all.end(), s.begin(), s.end());
  }
  return all;
}

TEST(Signatures, EqualCallsPass) {
  const Collective c = all_reduce_of(DType::Float32, {4, 5});
  EXPECT_NO_THROW(check_signatures(c, gathered({c, c, c}), 3));
  Collective barrier;
  barrier.seq = 2;
  EXPECT_NO_THROW(check_signatures(barrier, gathered({barrier, barrier}), 2));
}

TEST(Signatures, MismatchesNameWhoCalledWhat) {
  const Collective mine = all_reduce_of(DType::Float32, {4});
  try {
    check_signatures(mine, gathered({mine, all_reduce_of(DType::Float32, {5}), mine}), 3);
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_CONTAINS(e.message(), "the 3 ranks of the group disagree about collective #5");
    EXPECT_CONTAINS(e.message(), "ranks 0, 2: all_reduce(sum) of float32 [4]");
    EXPECT_CONTAINS(e.message(), "rank 1: all_reduce(sum) of float32 [5]");
  }
  EXPECT_THROW(check_signatures(mine, gathered({mine, all_reduce_of(DType::Float64, {4})}), 2),
               DTypeError);
  try {
    Collective broadcast = all_reduce_of(DType::Float32, {4});
    broadcast.kind = CollectiveKind::Broadcast;
    broadcast.root = 1;
    check_signatures(mine, gathered({mine, broadcast}), 2);
    ADD_FAILURE() << "no Error";
  } catch (const ShapeError&) {
    ADD_FAILURE() << "a different collective is not a shape error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.message(), "rank 1: broadcast from rank 1 of float32 [4]");
  }
  EXPECT_THROW(check_signatures(
                   mine, gathered({mine, all_reduce_of(DType::Float32, {4}, ReduceOp::Max)}), 2),
               Error);
}

TEST(CollectiveArguments, WhatOneRankChecksAlone) {
  auto check = [](Collective c, const Tensor& t, std::vector<Tensor> inputs = {}) {
    c.dtype = t.defined() ? t.dtype() : DType::Float32;
    check_arguments(c, t, inputs, 2, "gloo", Device::cpu());
  };
  const Tensor x = zeros({3});
  EXPECT_NO_THROW(check(all_reduce_of(kFloat32, {3}), x));
  EXPECT_THROW(check(all_reduce_of(kFloat32, {3}), Tensor()), Error);
  try {
    check(all_reduce_of(kInt64, {3}, ReduceOp::Avg), zeros({3}, kInt64));
    ADD_FAILURE() << "no DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_CONTAINS(e.message(), "all_reduce: cannot reduce int64 tensors with avg");
  }
  EXPECT_THROW(check(all_reduce_of(kBool, {3}), zeros({3}, kBool)), DTypeError);
  const std::string expanded = [&] {
    try {
      check(all_reduce_of(kFloat32, {4, 3}), x.expand({4, 3}));
    } catch (const Error& e) {
      return e.message();
    }
    return std::string();
  }();
  EXPECT_CONTAINS(expanded,
                  "all_reduce: writes its result into the tensor, but elements of this "
                  "one share memory");
  Collective broadcast;
  broadcast.kind = CollectiveKind::Broadcast;
  broadcast.root = 2;
  EXPECT_THROW(check(broadcast, x), Error);
  Collective scatter;
  scatter.kind = CollectiveKind::ReduceScatter;
  EXPECT_THROW(check(scatter, x, {zeros({3})}), Error);  // one input for 2 ranks
  EXPECT_THROW(check(scatter, x, {zeros({3}), zeros({4})}), ShapeError);
  EXPECT_THROW(check(scatter, x, {zeros({3}), zeros({3}, kFloat64)}), DTypeError);
  EXPECT_NO_THROW(check(scatter, x, {zeros({3}), zeros({3})}));
  Collective gather;
  gather.kind = CollectiveKind::AllGather;
  EXPECT_NO_THROW(check(gather, x.expand({4, 3})));  // only read: sharing is fine
}

}  // namespace
}  // namespace leangrad::distributed
