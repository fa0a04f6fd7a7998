// The NCCL process group (distributed/nccl/) in one process on one GPU: every collective, the
// stream order (a result read on the caller's stream right after an async collective), staged
// non-contiguous tensors, and the errors. SKIPPED without a GPU or without NCCL in the build.
// NCCL refuses two ranks on one GPU, so a group of several ranks needs a machine with several
// GPUs; the lent machines have one, and no test here runs one yet.
#include <gtest/gtest.h>

#include <leangrad/core/cuda.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/leangrad.h>
#include "testing/tensor_testing.h"

namespace leangrad::distributed {
namespace {

class NcclGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_nccl_available()) GTEST_SKIP() << "built without NCCL";
    if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    init_process_group(InitOptions()
                           .backend(Backend::NCCL)
                           .rank(0)
                           .world_size(1)
                           .local_rank(0)
                           .timeout(std::chrono::seconds(60)));
  }
  void TearDown() override {
    if (is_initialized()) destroy_process_group();
  }
};

const Device kGpu = Device::cuda(0);

// Same dtype, shape and values, exactly: a group of one reduces nothing with anything.
void expect_equal(const Tensor& got, const Tensor& expected) {
  EXPECT_EQ(got.dtype(), expected.dtype());
  EXPECT_EQ(got.shape(), expected.shape());
  EXPECT_EQ(test::to_vector(got.cpu()), test::to_vector(expected.cpu()));
}

// i + 1 for i in 0..n-1, on the GPU, made by a kernel on the current stream.
Tensor ramp(std::int64_t n, DType dtype = kFloat32) {
  return (arange(0, static_cast<double>(n)).to(kGpu) + 1.0).to(dtype);
}

TEST_F(NcclGroupTest, EveryCollectiveOfAGroupOfOne) {
  EXPECT_EQ(default_process_group().device(), kGpu);
  EXPECT_STREQ(default_process_group().backend_name(), "nccl");
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64}) {
    SCOPED_TRACE(dtype_name(dtype));
    for (std::int64_t n : {0, 1, 7, 4099}) {
      const Tensor expected = ramp(n, dtype).cpu();
      Tensor t = ramp(n, dtype);
      all_reduce(t, ReduceOp::Sum);
      expect_equal(t.cpu(), expected);
      if (is_floating(dtype)) {
        all_reduce(t, ReduceOp::Avg);
        expect_equal(t.cpu(), expected);
      }
      all_reduce(t, ReduceOp::Max);
      broadcast(t, 0);
      expect_equal(t.cpu(), expected);
      const std::vector<Tensor> gathered = all_gather(t);
      ASSERT_EQ(gathered.size(), 1u);
      expect_equal(gathered[0].cpu(), expected);
      Tensor out = zeros({n}, TensorOptions(dtype).device(kGpu));
      reduce_scatter(out, {t});
      expect_equal(out.cpu(), expected);
    }
  }
  barrier();
}

// The caller's stream waits for the collective (Note [Stream order]): reading the result right
// after an async collective, without wait(), sees it, and wait() returns. In a group of one an
// all_reduce leaves its tensor as it was, so the collective here writes another tensor: a
// reduce_scatter into zeros, which read too early are still zeros.
TEST_F(NcclGroupTest, TheCallersStreamIsOrderedAfterTheCollective) {
  const Tensor input = ramp(1 << 20);
  Tensor out = zeros({1 << 20}, TensorOptions(kFloat32).device(kGpu));
  auto work = reduce_scatter_async(out, {input});
  Tensor doubled = out * 2.0;  // queued on the caller's stream after the collective
  expect_equal(doubled.cpu(), ramp(1 << 20).cpu() * 2.0);
  work->wait();
  EXPECT_TRUE(work->is_completed());
}

// A non-contiguous output goes through a contiguous staging tensor and is written back: into
// zeros, so that a missing write-back leaves them.
TEST_F(NcclGroupTest, NonContiguousTensorsAreStagedAndWrittenBack) {
  Tensor columns = zeros({3, 4}, TensorOptions(kFloat32).device(kGpu)).transpose(0, 1);
  ASSERT_FALSE(columns.is_contiguous());
  const Tensor input = ramp(12).view({4, 3});
  const auto version = columns.version();
  reduce_scatter(columns, {input});
  expect_equal(columns.cpu(), input.cpu());
  EXPECT_GT(columns.version(), version);
}

TEST_F(NcclGroupTest, CpuTensorsAreRefusedNamingTheBackend) {
  try {
    all_reduce(ones({3}));
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_CONTAINS(e.message(),
                    "all_reduce: the nccl process group takes tensors on cuda:0, "
                    "got one on cpu (CPU tensors take Backend::Gloo)");
  }
}

// Parameters that offload::ParameterOffload keeps in host memory cannot be reduced by NCCL: the
// DistributedDataParallel constructor says so before any collective, and names Gloo.
TEST_F(NcclGroupTest, DdpOverOffloadedParametersIsRefusedNamingGloo) {
  manual_seed(3);
  auto model = nn::Sequential(nn::Linear(4, 3));
  model->to(kGpu);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(kGpu));
  try {
    DistributedDataParallel ddp(model);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_CONTAINS(e.message(),
                    "DistributedDataParallel: parameter 'module.0.weight' (float32 [3, 4]) "
                    "is on cpu, but the nccl process group reduces tensors on cuda:0 "
                    "only");
    EXPECT_CONTAINS(e.message(), "are reduced there by a Gloo process group");
  }
}

TEST(NcclAvailability, ABuildWithoutNcclSaysSo) {
  if (is_nccl_available()) GTEST_SKIP() << "built with NCCL";
  try {
    init_process_group(InitOptions().backend(Backend::NCCL).rank(0).world_size(1));
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.message(), "built without NCCL");
  }
  EXPECT_FALSE(is_initialized());
}

}  // namespace
}  // namespace leangrad::distributed
