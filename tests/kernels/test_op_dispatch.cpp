// kernels/op_dispatch.h: with_op turns each op enum's every value into its template argument,
// and refuses a value past the enum's last.
#include <gtest/gtest.h>

#include <string>

#include <leangrad/core/error.h>
#include <leangrad/kernels/op_dispatch.h>

namespace leangrad {
namespace {

using kernels::kOpCount;
using kernels::with_op;

// Every value from 0 to the last reaches f as itself, and has a name of its own; the value past
// the last has none (op_name's "unknown_..."), so an op added after kLast...Op without moving it
// fails here, as it would fail in every kernel.
template <typename Op>
void expect_every_op_dispatched() {
  for (int i = 0; i < kOpCount<Op>; ++i) {
    const auto op = static_cast<Op>(i);
    SCOPED_TRACE(op_name(op));
    int reached = -1;
    with_op(op, [&]<Op kOp>() { reached = static_cast<int>(kOp); });
    EXPECT_EQ(reached, i);
    EXPECT_EQ(std::string(op_name(op)).rfind("unknown", 0), std::string::npos);
  }
  const auto past = static_cast<Op>(kOpCount<Op>);
  EXPECT_EQ(std::string(op_name(past)).rfind("unknown", 0), 0u) << op_name(past);
  bool called = false;
  EXPECT_THROW(with_op(past, [&]<Op>() { called = true; }), Error);
  EXPECT_FALSE(called);
}

TEST(OpDispatch, WithOpReachesEveryOpAndRefusesTheRest) {
  expect_every_op_dispatched<BinaryOp>();
  expect_every_op_dispatched<UnaryOp>();
  expect_every_op_dispatched<CompareOp>();
}

}  // namespace
}  // namespace leangrad
