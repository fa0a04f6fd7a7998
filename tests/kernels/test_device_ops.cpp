// The device tests: every row of the op table (op_table.cpp) runs on the CPU, the reference, and
// on CUDA, and the outputs must agree within the row's tolerance. Below the
// table, the CUDA runtime itself: device queries, streams, events, pinned asynchronous copies.
// Without a GPU every CUDA test reports SKIPPED; the checks that need no GPU still run.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include "kernels/op_table.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {

// GoogleTest prints a parameter when a case fails: the row's name says it all.
void PrintTo(const OpCase& op_case, std::ostream* out) {
  *out << op_case.name;
}

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device"

// ---- The op table ----------------------------------------------------------------------------

class DeviceOpTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(DeviceOpTest, CudaMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  const OpCase& op_case = GetParam();
  Inputs cpu_inputs;
  Inputs cuda_inputs;
  for (std::size_t i = 0; i < op_case.inputs.size(); ++i) {
    const InputSpec& spec = op_case.inputs[i];
    const Tensor storage = make_input_storage(spec, /*seed=*/1000 + i);
    cpu_inputs.push_back(apply_layout(storage, spec));
    cuda_inputs.push_back(apply_layout(storage.to(Device::cuda()), spec));
  }

  const Outputs expected = op_case.fn(cpu_inputs);
  const Outputs actual = op_case.fn(cuda_inputs);

  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t k = 0; k < actual.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    ASSERT_TRUE(actual[k].is_cuda()) << "the CUDA run produced a tensor on " << actual[k].device();
    EXPECT_EQ(actual[k].dtype(), expected[k].dtype());
    ASSERT_EQ(actual[k].shape(), expected[k].shape());
    EXPECT_TRUE(all_close(actual[k], to_vector(expected[k]), op_case.tolerance.rtol,
                          op_case.tolerance.atol));
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, DeviceOpTest, ::testing::ValuesIn(device_op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

// The table itself is sound without a GPU: unique names, and every row runs on the CPU.
TEST(DeviceOpTable, RowsAreUniqueAndRunOnCpu) {
  std::set<std::string> names;
  for (const OpCase& op_case : device_op_cases()) {
    SCOPED_TRACE(op_case.name);
    EXPECT_TRUE(names.insert(op_case.name).second) << "duplicate row name";
    Inputs inputs;
    for (std::size_t i = 0; i < op_case.inputs.size(); ++i) {
      const InputSpec& spec = op_case.inputs[i];
      inputs.push_back(apply_layout(make_input_storage(spec, /*seed=*/1000 + i), spec));
      EXPECT_EQ(inputs.back().shape(), spec.shape);
      EXPECT_EQ(inputs.back().dtype(), spec.dtype);
    }
    Outputs outputs;
    ASSERT_NO_THROW(outputs = op_case.fn(inputs));
    EXPECT_FALSE(outputs.empty());
  }
}

// ---- Device queries (meaningful with and without a GPU) --------------------------------------

TEST(CudaRuntime, IsAvailableAgreesWithDeviceCount) {
  EXPECT_GE(cuda::device_count(), 0);
  EXPECT_EQ(cuda::is_available(), cuda::device_count() > 0);
}

TEST(CudaRuntime, WithoutDeviceCudaCallsThrowDeviceError) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(cuda::synchronize(), DeviceError);
  EXPECT_THROW(cuda::current_device(), DeviceError);
  EXPECT_THROW(cuda::Stream::create(), DeviceError);
  EXPECT_THROW(cuda::current_stream(), DeviceError);
  EXPECT_THROW(cuda::Event(), DeviceError);
}

TEST(CudaRuntime, AllowTf32IsAProcessWideSwitch) {
  const bool before = cuda::allow_tf32();
  EXPECT_FALSE(before) << "TF32 must be off by default";
  cuda::set_allow_tf32(true);
  EXPECT_TRUE(cuda::allow_tf32());
  bool seen_in_thread = false;
  std::thread([&] { seen_in_thread = cuda::allow_tf32(); }).join();
  EXPECT_TRUE(seen_in_thread);
  cuda::set_allow_tf32(before);
  EXPECT_EQ(cuda::allow_tf32(), before);
}

TEST(CudaRuntime, DeviceSelection) {
  SKIP_WITHOUT_CUDA();
  const int device = cuda::current_device();
  EXPECT_GE(device, 0);
  EXPECT_LT(device, cuda::device_count());
  EXPECT_NO_THROW(cuda::set_device(device));
  EXPECT_EQ(cuda::current_device(), device);
  EXPECT_THROW(cuda::set_device(cuda::device_count()), DeviceError);
  EXPECT_THROW(cuda::Stream::create(cuda::device_count()), DeviceError);
  EXPECT_NO_THROW(cuda::synchronize());
}

// ---- Streams and events ----------------------------------------------------------------------

TEST(CudaStreams, DefaultStreamIsCurrentUntilAGuardChangesIt) {
  SKIP_WITHOUT_CUDA();
  const cuda::Stream default_stream = cuda::Stream::default_stream();
  EXPECT_EQ(default_stream.id(), 0u);
  EXPECT_EQ(cuda::current_stream(), default_stream);

  const cuda::Stream stream = cuda::Stream::create();
  EXPECT_NE(stream.id(), 0u);
  EXPECT_EQ(stream.device(), cuda::current_device());
  {
    cuda::StreamGuard guard(stream);
    EXPECT_EQ(cuda::current_stream(), stream);
    {
      const cuda::Stream inner = cuda::Stream::create();
      cuda::StreamGuard inner_guard(inner);
      EXPECT_EQ(cuda::current_stream(), inner);
    }
    EXPECT_EQ(cuda::current_stream(), stream);  // nested guards restore in order
    // The current stream is per thread: another thread still sees the default stream.
    cuda::Stream seen_in_thread = stream;
    std::thread([&] { seen_in_thread = cuda::current_stream(); }).join();
    EXPECT_EQ(seen_in_thread, default_stream);
  }
  EXPECT_EQ(cuda::current_stream(), default_stream);
}

TEST(CudaStreams, StreamCopiesShareOneStream) {
  SKIP_WITHOUT_CUDA();
  cuda::Stream copy;
  {
    const cuda::Stream original = cuda::Stream::create();
    copy = original;
    EXPECT_EQ(copy, original);
  }
  // The original handle is gone; the copy keeps the stream alive.
  EXPECT_NO_THROW(copy.synchronize());
  EXPECT_TRUE(copy.query());
}

TEST(CudaStreams, KernelsRunOnTheCurrentStreamAndEventsTimeThem) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = rand({1 << 20}, TensorOptions(kFloat32).device(Device::cuda()));
  // The new stream does not synchronize with the default one, where rand ran.
  cuda::synchronize();

  const cuda::Stream stream = cuda::Stream::create();
  cuda::Event start;
  cuda::Event end;
  Tensor y;
  {
    cuda::StreamGuard guard(stream);
    start.record();
    y = x * 2.0 + 1.0;
    end.record();
  }
  // The default stream waits for the side stream's work before reading y.
  cuda::current_stream().wait(end);
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_TRUE(start.query());
  EXPECT_TRUE(stream.query());
  EXPECT_GE(start.elapsed_ms(end), 0.0f);

  const Tensor expected = x.cpu() * 2.0 + 1.0;
  EXPECT_TRUE(all_close(y, to_vector(expected), 0.0, 0.0));
}

// The allocator keys blocks by stream id, not cudaStream_t: a stream created after another was
// destroyed (the driver often hands it the same handle) gets none of the old stream's blocks,
// and the ids are never reused.
TEST(CudaStreams, ANewStreamGetsNoBlockOfADestroyedOne) {
  SKIP_WITHOUT_CUDA();
  if (!memory::caching_enabled()) GTEST_SKIP() << "caching:0: freed blocks are not kept";
  const auto options = TensorOptions(kFloat32).device(Device::cuda());
  void* old_block = nullptr;
  std::uint64_t old_id = 0;
  {
    const cuda::Stream old_stream = cuda::Stream::create();
    old_id = old_stream.id();
    cuda::StreamGuard guard(old_stream);
    Tensor t = empty({4096}, options);
    old_block = t.data_ptr();
    cuda::synchronize();
  }  // the tensor's block is free (cached) and the stream destroyed
  const cuda::Stream new_stream = cuda::Stream::create();
  EXPECT_NE(new_stream.id(), old_id);
  cuda::StreamGuard guard(new_stream);
  const Tensor t = empty({4096}, options);
  EXPECT_NE(t.data_ptr(), old_block);
}

// A block freed while another stream still uses it waits for an event; the allocator polls that
// event at the next allocation. "Not ready" must not stay behind as the runtime's last error:
// the next kernel launch's check would report it (issue pytorch/pytorch#18584).
TEST(CudaStreams, PollingAPendingEventLeavesNoErrorForTheNextLaunch) {
  SKIP_WITHOUT_CUDA();
  const auto options = TensorOptions(kFloat32).device(Device::cuda());
  const Tensor a = rand({2048, 2048}, options);
  const cuda::Stream side = cuda::Stream::create();
  {
    Tensor used_on_side = rand({1 << 20}, options);
    cuda::synchronize();
    cuda::StreamGuard guard(side);
    Tensor busy = a;
    for (int i = 0; i < 20; ++i)
      busy = matmul(busy, a) * 1e-3;  // keeps the side stream busy for a while
    used_on_side.record_stream(side);
  }  // freed while the side stream may still run: an event is pending
  EXPECT_NO_THROW({
    const Tensor polled = empty({1 << 20}, options);  // polls the pending event
    const Tensor y = a * 2.0;                         // a launch right after the poll
    cuda::synchronize();
  });
  side.synchronize();
}

TEST(CudaEvents, MoveTransfersTheEvent) {
  SKIP_WITHOUT_CUDA();
  cuda::Event a(/*enable_timing=*/false);
  void* const handle = a.handle();
  ASSERT_NE(handle, nullptr);
  cuda::Event b(std::move(a));
  EXPECT_EQ(b.handle(), handle);
  EXPECT_EQ(a.handle(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  b.record();
  b.synchronize();
  EXPECT_TRUE(b.query());

  cuda::Event c;
  c = std::move(b);
  EXPECT_EQ(c.handle(), handle);
  EXPECT_THROW(b.record(), Error);  // NOLINT(bugprone-use-after-move)
}

TEST(CudaEvents, ElapsedTimeNeedsTimingEvents) {
  SKIP_WITHOUT_CUDA();
  cuda::Event start(/*enable_timing=*/false);
  cuda::Event end(/*enable_timing=*/false);
  start.record();
  end.record();
  end.synchronize();
  EXPECT_THROW(start.elapsed_ms(end), Error);
}

// ---- Copies ----------------------------------------------------------------------------------

TEST(CudaCopies, PinnedNonBlockingRoundTrip) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = randn({(1 << 20) + 5});
  const Tensor pinned = x.pin_memory();
  ASSERT_TRUE(pinned.is_pinned());

  const Tensor on_device = pinned.to(Device::cuda(), /*non_blocking=*/true);
  Tensor back = zeros(x.shape()).pin_memory();
  ASSERT_TRUE(back.is_pinned());
  back.copy_(on_device, /*non_blocking=*/true);
  cuda::current_stream().synchronize();  // the copy may still be in flight until here

  EXPECT_TRUE(all_close(back, to_vector(x), 0.0, 0.0));
}

TEST(CudaCopies, PageableRoundTripIsSynchronous) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = rand({1000, 3}, TensorOptions(kFloat64));
  const Tensor back = x.to(Device::cuda()).cpu();  // no synchronize needed
  EXPECT_TRUE(all_close(back, to_vector(x), 0.0, 0.0));
}

TEST(CudaCopies, EmptyTensorsCrossDevices) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = zeros({0, 4});
  const Tensor back = x.to(Device::cuda()).cpu();
  EXPECT_EQ(back.shape(), x.shape());
}

}  // namespace
}  // namespace leangrad::test
