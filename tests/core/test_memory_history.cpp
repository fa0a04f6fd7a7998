// The allocator's history (core/memory_history.h): between start_history and stop_history the
// device's allocator records each allocation and free with its rounded size and address, in
// order, with the marks between them; nothing outside that window, nothing of the pinned pool;
// one history at a time.
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include <leangrad/core/memory_history.h>

#include <vector>

namespace {

using namespace leangrad;

TEST(MemoryHistory, RecordsAllocationsFreesAndMarksInOrder) {
  EXPECT_FALSE(memory::recording_history());
  memory::mark_history("ignored");  // no history: nothing to add to
  Tensor before = empty({10}, TensorOptions(kFloat32));
  memory::start_history(Device::cpu());
  EXPECT_TRUE(memory::recording_history());
  EXPECT_THROW(memory::start_history(Device::cpu()), Error);
  std::uintptr_t address = 0;
  {
    const Tensor t = empty({1000}, TensorOptions(kFloat32));  // 4000 bytes: a 4096-byte block
    address = reinterpret_cast<std::uintptr_t>(t.storage()->data());
    memory::mark_history("made");
    const Tensor pinned = empty({1000}, TensorOptions(kFloat32).pinned_memory(true));
  }
  before = Tensor();  // a block from before the history: its free is recorded
  const std::vector<memory::MemoryEvent> events = memory::stop_history();
  EXPECT_FALSE(memory::recording_history());
  const Tensor after = empty({1000}, TensorOptions(kFloat32));  // not recorded

  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].bytes, 4096);
  EXPECT_EQ(events[0].address, address);
  EXPECT_EQ(events[0].stream, 0u);
  EXPECT_EQ(events[1].mark, "made");
  EXPECT_EQ(events[1].bytes, 0);
  EXPECT_EQ(events[2].bytes, -4096);
  EXPECT_EQ(events[2].address, address);
  EXPECT_EQ(events[3].bytes, -512);  // 40 bytes round up to the 512-byte granularity
  for (std::size_t i = 1; i < events.size(); ++i)
    EXPECT_LE(events[i - 1].time_ns, events[i].time_ns);

  // A new history starts empty.
  memory::start_history(Device::cpu());
  EXPECT_TRUE(memory::stop_history().empty());
}

}  // namespace
