// TensorDataset and DataLoader (data/dataset.h, data/dataloader.h): gathered batches
// (Dataset::get_batch) equal to stacked examples, batch order independent of num_workers, partial
// and dropped last batches, seeded shuffles per epoch, pinned batches, the prefetch bound, random
// draws in Dataset::get, worker exceptions (and going on after them) and early destruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/data/dataloader.h>
#include <leangrad/kernels/creation.h>
#include "data_loading/data_testing.h"
#include "testing/tensor_testing.h"

namespace leangrad::data {
namespace {

using test::tensor_bytes;

constexpr std::int64_t kExamples = 103;

// (103, 3, 2) float32 data and targets 0..102.
TensorDataset make_dataset() {
  manual_seed(3);
  return TensorDataset(randn({kExamples, 3, 2}), arange(kExamples, kInt64));
}

std::vector<Batch> collect(DataLoader& loader) {
  std::vector<Batch> batches;
  for (const auto& batch : loader)
    batches.push_back(batch);
  return batches;
}

// Both lists hold the same batches, bit for bit.
void expect_same_batches(const std::vector<Batch>& got, const std::vector<Batch>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t b = 0; b < expected.size(); ++b) {
    EXPECT_EQ(got[b].data.shape(), expected[b].data.shape()) << "batch " << b;
    EXPECT_EQ(tensor_bytes(got[b].data), tensor_bytes(expected[b].data)) << "batch " << b;
    EXPECT_EQ(tensor_bytes(got[b].target), tensor_bytes(expected[b].target)) << "batch " << b;
  }
}

std::vector<std::int64_t> targets_of(const std::vector<Batch>& batches) {
  std::vector<std::int64_t> out;
  for (const Batch& b : batches) {
    const std::int64_t* p = b.target.data_ptr<std::int64_t>();
    out.insert(out.end(), p, p + b.target.numel());
  }
  return out;
}

TEST(Dataset, TensorDatasetSlicesAlongDimZero) {
  const TensorDataset ds = make_dataset();
  EXPECT_EQ(ds.size(), kExamples);
  const Example e = ds.get(7);
  EXPECT_EQ(e.data.shape(), (Shape{3, 2}));
  EXPECT_EQ(e.target.item<std::int64_t>(), 7);
  EXPECT_EQ(tensor_bytes(e.data), tensor_bytes(ds.data().select(0, 7)));
  EXPECT_THROW(ds.get(kExamples), Error);
  EXPECT_THROW(TensorDataset(zeros({4, 2}), zeros({5})), ShapeError);
  EXPECT_THROW(TensorDataset(zeros({}), Tensor()), ShapeError);
  const TensorDataset unlabeled(zeros({4, 2}), Tensor());
  EXPECT_FALSE(unlabeled.get(0).target.defined());
}

// get_batch gives what stacking get()'s examples gives, bit for bit, in pinned memory when asked;
// declines non-contiguous data; names an index out of range.
TEST(Dataset, TensorDatasetGathersBatchesAsTheExamplesStack) {
  const TensorDataset ds = make_dataset();
  const std::vector<std::int64_t> picks = {5, 0, 102, 5};
  for (const bool pinned : {false, true}) {
    const std::optional<Batch> batch = ds.get_batch(picks, pinned);
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(batch->data.shape(), (Shape{4, 3, 2}));
    EXPECT_EQ(batch->target.shape(), (Shape{4}));
    EXPECT_EQ(batch->data.is_pinned(), pinned);
    for (std::size_t i = 0; i < picks.size(); ++i) {
      const Example e = ds.get(picks[i]);
      const auto at = static_cast<std::int64_t>(i);
      EXPECT_EQ(tensor_bytes(batch->data.select(0, at)), tensor_bytes(e.data));
      EXPECT_EQ(batch->target.select(0, at).item<std::int64_t>(), e.target.item<std::int64_t>());
    }
  }
  const TensorDataset unlabeled(ds.data(), Tensor());
  EXPECT_FALSE(unlabeled.get_batch(picks, false)->target.defined());
  // A transposed view is not rows in memory: the loader stacks its examples instead.
  const TensorDataset strided(ds.data().transpose(1, 2), ds.targets());
  EXPECT_FALSE(strided.get_batch(picks, false).has_value());
  const std::vector<std::int64_t> outside = {3, kExamples};
  try {
    (void)ds.get_batch(outside, false);
    ADD_FAILURE() << "no error for an index out of range";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TensorDataset: index 103 out of range for a dataset of "
                                         "103 examples"),
              std::string::npos)
        << e.what();
  }
  const std::vector<std::int64_t> negative = {-1};
  EXPECT_THROW((void)ds.get_batch(negative, false), Error);
}

// The loader's batches from get_batch equal those it stacks from get() (the same dataset behind
// a transform that changes nothing, which has no get_batch), shuffled, with workers, pinned.
TEST(DataLoader, GatheredBatchesEqualStackedExamples) {
  const TensorDataset ds = make_dataset();
  const MapDataset per_example = ds.map([](Example e) { return e; });
  ASSERT_FALSE(per_example.get_batch(std::vector<std::int64_t>{0}, false).has_value());
  for (const int workers : {0, 2}) {
    for (const bool pinned : {false, true}) {
      SCOPED_TRACE(::testing::Message() << workers << " workers, pinned " << pinned);
      const DataLoaderOptions options =
          DataLoaderOptions().batch_size(10).shuffle(true).seed(4).num_workers(workers).pin_memory(
              pinned);
      DataLoader gathered(ds, options);
      DataLoader stacked(per_example, options);
      expect_same_batches(collect(gathered), collect(stacked));
    }
  }
}

// A TensorDataset whose get() adds 1 to the data: the loader's batches come from that get(), not
// from TensorDataset's gathered rows.
class ShiftedDataset : public TensorDataset {
 public:
  using TensorDataset::TensorDataset;
  Example get(std::int64_t index) const override {
    Example e = TensorDataset::get(index);
    return {add(e.data, 1.0), e.target};
  }
};

TEST(DataLoader, ASubclassOverridingGetIsNotBypassed) {
  const TensorDataset plain = make_dataset();
  const ShiftedDataset shifted(plain.data(), plain.targets());
  const std::vector<std::int64_t> picks = {0, 1};
  EXPECT_FALSE(shifted.get_batch(picks, false).has_value());
  DataLoader loader(shifted, DataLoaderOptions().batch_size(8));
  const std::vector<Batch> batches = collect(loader);
  ASSERT_FALSE(batches.empty());
  const std::vector<double> got = test::to_vector(batches[0].data);
  const std::vector<double> want = test::to_vector(add(plain.data().narrow(0, 0, 8), 1.0));
  EXPECT_EQ(got, want);
}

// A dataset whose get_batch fails: the loader re-throws its Error as the same type, the batch
// named in front.
class FailingBatchDataset : public Dataset {
 public:
  std::int64_t size() const override { return 20; }
  Example get(std::int64_t index) const override {
    return {full({2}, static_cast<double>(index)), Tensor()};
  }
  std::optional<Batch> get_batch(std::span<const std::int64_t> indices, bool) const override {
    LG_CHECK_SHAPE(indices.front() != 10, "FailingBatchDataset: batch from 10 is broken");
    return std::nullopt;
  }
};

TEST(DataLoader, BatchErrorsNameTheBatchAndKeepTheirType) {
  for (const int workers : {0, 2}) {
    DataLoader loader(FailingBatchDataset(),
                      DataLoaderOptions().batch_size(5).num_workers(workers));
    std::int64_t batches = 0;
    try {
      for (const auto& batch : loader) {
        (void)batch;
        ++batches;
      }
      ADD_FAILURE() << "no error";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "DataLoader: batch 2: FailingBatchDataset: batch from 10 is broken"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(batches, 2);
  }
}

TEST(DataLoader, BatchesAreBitwiseIdenticalFor0And1And4Workers) {
  std::vector<std::vector<Batch>> runs;
  for (const int workers : {0, 1, 4}) {
    for (const int prefetch : {1, 3}) {
      DataLoader loader(make_dataset(), DataLoaderOptions()
                                            .batch_size(8)
                                            .shuffle(true)
                                            .seed(11)
                                            .num_workers(workers)
                                            .prefetch_factor(prefetch));
      runs.push_back(collect(loader));
    }
  }
  for (std::size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (std::size_t b = 0; b < runs[0].size(); ++b) {
      EXPECT_EQ(runs[r][b].data.shape(), runs[0][b].data.shape());
      EXPECT_EQ(tensor_bytes(runs[r][b].data), tensor_bytes(runs[0][b].data)) << "batch " << b;
      EXPECT_EQ(tensor_bytes(runs[r][b].target), tensor_bytes(runs[0][b].target));
    }
  }
}

TEST(DataLoader, InOrderWithALastPartialBatch) {
  const TensorDataset ds = make_dataset();
  DataLoader loader(ds, DataLoaderOptions().batch_size(8).num_workers(2));
  EXPECT_EQ(loader.size(), 13);
  const std::vector<Batch> batches = collect(loader);
  ASSERT_EQ(batches.size(), 13u);
  EXPECT_EQ(batches[0].data.shape(), (Shape{8, 3, 2}));
  EXPECT_EQ(batches.back().data.shape(), (Shape{7, 3, 2}));  // 103 = 12 * 8 + 7
  std::vector<std::int64_t> expected(kExamples);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(targets_of(batches), expected);
  EXPECT_EQ(tensor_bytes(batches[1].data), tensor_bytes(ds.data().slice(0, 8, 16)));
}

TEST(DataLoader, DropLastDropsThePartialBatch) {
  DataLoader loader(make_dataset(), DataLoaderOptions().batch_size(8).drop_last(true));
  EXPECT_EQ(loader.size(), 12);
  const std::vector<Batch> batches = collect(loader);
  ASSERT_EQ(batches.size(), 12u);
  for (const Batch& b : batches)
    EXPECT_EQ(b.data.size(0), 8);
  DataLoader exact(make_dataset(), DataLoaderOptions().batch_size(103).drop_last(true));
  EXPECT_EQ(collect(exact).size(), 1u);
  DataLoader too_big(make_dataset(), DataLoaderOptions().batch_size(200).drop_last(true));
  EXPECT_TRUE(collect(too_big).empty());
}

TEST(DataLoader, SeededShuffleDependsOnSeedAndEpoch) {
  DataLoader loader(make_dataset(),
                    DataLoaderOptions().batch_size(10).shuffle(true).seed(4).num_workers(2));
  const auto epoch0 = targets_of(collect(loader));
  const auto epoch1 = targets_of(collect(loader));  // begin() advances the epoch
  loader.set_epoch(0);
  const auto epoch0_again = targets_of(collect(loader));
  loader.set_epoch(1);
  const auto epoch1_again = targets_of(collect(loader));
  EXPECT_EQ(epoch0, epoch0_again);
  EXPECT_EQ(epoch1, epoch1_again);
  EXPECT_NE(epoch0, epoch1);
  std::vector<std::int64_t> sorted = epoch0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> all(kExamples);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);  // a permutation: every example once
  // The order is random_permutation(size, seed, epoch).
  EXPECT_EQ(epoch0, random_permutation(kExamples, 4, 0));
  DataLoader other_seed(make_dataset(), DataLoaderOptions().batch_size(10).shuffle(true).seed(5));
  EXPECT_NE(targets_of(collect(other_seed)), epoch0);
}

// Adds noise drawn from the default generators to the example, as a random augmentation does:
// data (4,) = randn (2,) then rand (2,), target = the index. The noise does not depend on the
// index, so batches seeded alike would hold equal rows. Throws an Error at one index (after its
// draws).
class NoisyDataset : public Dataset {
 public:
  explicit NoisyDataset(std::int64_t size, std::int64_t throw_at = -1)
      : size_(size), throw_at_(throw_at) {}
  std::int64_t size() const override { return size_; }
  Example get(std::int64_t index) const override {
    Tensor data = cat({randn({2}), rand({2})});
    LG_CHECK(index != throw_at_, "NoisyDataset: example ", index, " is broken");
    return {data, full({}, static_cast<double>(index), kInt64)};
  }

 private:
  std::int64_t size_, throw_at_;
};

std::vector<Batch> collect_epochs(DataLoader& loader, int epochs) {
  std::vector<Batch> batches;
  for (int e = 0; e < epochs; ++e) {
    const std::vector<Batch> epoch = collect(loader);
    batches.insert(batches.end(), epoch.begin(), epoch.end());
  }
  return batches;
}

// Draws from the default generator in Dataset::get came in whatever order the worker threads
// reached it, so with workers the batches changed from run to run. Each batch is now assembled
// under generators seeded from (seed, epoch, batch): the same draws for any num_workers, on every
// run, and again when an epoch is replayed.
TEST(DataLoader, RandomDrawsInGetAreTheSameForAnyNumberOfWorkers) {
  constexpr int kEpochs = 2;
  auto options = [](int workers) {
    return DataLoaderOptions().batch_size(4).shuffle(true).seed(7).num_workers(workers);
  };
  DataLoader reference_loader(NoisyDataset(30), options(0));
  const std::vector<Batch> reference = collect_epochs(reference_loader, kEpochs);
  ASSERT_EQ(reference.size(), 16u);  // 8 batches (7 of 4, one of 2) per epoch
  for (const int workers : {0, 1, 4}) {
    for (int run = 0; run < 2; ++run) {
      SCOPED_TRACE(testing::Message() << workers << " workers, run " << run);
      DataLoader loader(NoisyDataset(30), options(workers));
      expect_same_batches(collect_epochs(loader, kEpochs), reference);
    }
    // A resumed run: epoch 1 alone draws what epoch 1 drew after epoch 0.
    DataLoader resumed(NoisyDataset(30), options(workers));
    resumed.set_epoch(1);
    expect_same_batches(collect(resumed),
                        std::vector<Batch>(reference.begin() + 8, reference.end()));
  }
  // Every example of every batch of both epochs drew different numbers: the seed changes with
  // the batch and the epoch (the noise does not depend on the index).
  std::set<std::string> rows;
  std::int64_t examples = 0;
  for (const Batch& batch : reference) {
    for (std::int64_t i = 0; i < batch.data.size(0); ++i, ++examples)
      rows.insert(tensor_bytes(batch.data.select(0, i)));
  }
  EXPECT_EQ(static_cast<std::int64_t>(rows.size()), examples);
  // Unshuffled, epochs 0 and 1 hold the same examples in the same batches, and draw differently.
  DataLoader in_order(NoisyDataset(30), DataLoaderOptions().batch_size(4).num_workers(2));
  const std::vector<Batch> epoch0 = collect(in_order), epoch1 = collect(in_order);
  EXPECT_EQ(targets_of(epoch0), targets_of(epoch1));
  EXPECT_NE(tensor_bytes(epoch0[0].data), tensor_bytes(epoch1[0].data));
  // The loader's seed chooses the draws, as it chooses the order.
  DataLoader other_seed(NoisyDataset(30), DataLoaderOptions().batch_size(4).seed(8));
  DataLoader same_seed(NoisyDataset(30), DataLoaderOptions().batch_size(4).seed(7));
  EXPECT_NE(tensor_bytes((*other_seed.begin()).data), tensor_bytes((*same_seed.begin()).data));
}

// The training thread's own stream (dropout, initialisation) used to move by the dataset's
// draws: with workers by a timing-dependent amount, without them by every draw. Now the loop's
// own draws and the generator's state after the epoch are those of a loop without a loader.
TEST(DataLoader, RandomDrawsInGetLeaveTheTrainingThreadsGeneratorAlone) {
  manual_seed(17);
  std::vector<std::string> expected;
  for (int b = 0; b < 8; ++b)
    expected.push_back(tensor_bytes(randn({3})));
  const Generator::State expected_state = default_generator(Device::cpu()).state();
  for (const int workers : {0, 1, 4}) {
    SCOPED_TRACE(workers);
    DataLoader loader(NoisyDataset(30),
                      DataLoaderOptions().batch_size(4).shuffle(true).num_workers(workers));
    manual_seed(17);
    std::vector<std::string> drawn;
    for (const auto& batch : loader) {
      (void)batch;
      drawn.push_back(tensor_bytes(randn({3})));  // what dropout would draw in the step
    }
    EXPECT_EQ(drawn, expected);
    const Generator::State state = default_generator(Device::cpu()).state();
    EXPECT_EQ(state.seed, expected_state.seed);
    EXPECT_EQ(state.offset, expected_state.offset);
  }
}

// Each rank of a distributed run draws numbers of its own for its batches (its examples differ
// too); the same rank draws the same numbers again.
TEST(DataLoader, EachRankDrawsItsOwnNumbers) {
  auto first_batch = [](int rank) {
    DataLoader loader(NoisyDataset(30), DataLoaderOptions().batch_size(4).sampler(
                                            DistributedSampler(30, rank, 2, /*shuffle=*/false)));
    return tensor_bytes((*loader.begin()).data);
  };
  EXPECT_NE(first_batch(0), first_batch(1));
  EXPECT_EQ(first_batch(1), first_batch(1));
}

TEST(DataLoader, PinMemoryAssemblesBatchesInThePinnedPool) {
  for (const int workers : {0, 2}) {
    DataLoader loader(make_dataset(),
                      DataLoaderOptions().batch_size(16).pin_memory(true).num_workers(workers));
    for (const auto& [data, target] : loader) {
      EXPECT_TRUE(data.is_pinned());
      EXPECT_TRUE(target.is_pinned());
      EXPECT_FALSE(data.is_cuda());
    }
    DataLoader pageable(make_dataset(), DataLoaderOptions().batch_size(16).num_workers(workers));
    EXPECT_FALSE((*pageable.begin()).data.is_pinned());
  }
}

// Counts gets and remembers the largest index asked for; may throw at one index or sleep.
class ProbeDataset : public Dataset {
 public:
  explicit ProbeDataset(std::int64_t size, std::int64_t throw_at = -1, int sleep_ms = 0)
      : size_(size), throw_at_(throw_at), sleep_ms_(sleep_ms) {}
  std::int64_t size() const override { return size_; }
  Example get(std::int64_t index) const override {
    if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    gets->fetch_add(1);
    std::int64_t seen = largest->load();
    while (index > seen && !largest->compare_exchange_weak(seen, index)) {
    }
    LG_CHECK(index != throw_at_, "ProbeDataset: example ", index, " is broken");
    return {full({2}, static_cast<double>(index)), full({}, static_cast<double>(index), kInt64)};
  }
  std::shared_ptr<std::atomic<std::int64_t>> gets = std::make_shared<std::atomic<std::int64_t>>(0);
  std::shared_ptr<std::atomic<std::int64_t>> largest =
      std::make_shared<std::atomic<std::int64_t>>(-1);

 private:
  std::int64_t size_, throw_at_;
  int sleep_ms_;
};

TEST(DataLoader, WorkerExceptionIsRethrownAtItsBatch) {
  for (const int workers : {0, 1, 3}) {
    SCOPED_TRACE(workers);
    DataLoader loader(ProbeDataset(100, /*throw_at=*/37),
                      DataLoaderOptions().batch_size(4).num_workers(workers));
    std::int64_t delivered = 0;
    try {
      for (const auto& batch : loader) {
        EXPECT_EQ(batch.target.data_ptr<std::int64_t>()[0], delivered * 4);
        ++delivered;
      }
      ADD_FAILURE() << "the broken example did not raise";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("example 37 is broken"), std::string::npos) << e.what();
    }
    EXPECT_EQ(delivered, 9);  // batches 0..8 hold examples 0..35; batch 9 holds 37
    // The loader is usable again after the error.
    loader.set_epoch(0);
    EXPECT_EQ((*loader.begin()).target.data_ptr<std::int64_t>()[0], 0);
  }
}

// Throws at one index: a ShapeError, a subclass of Error of its own, or a std::out_of_range.
class ThrowingDataset : public Dataset {
 public:
  class OwnError : public Error {
    using Error::Error;
  };
  enum class Kind { Shape, Own, Standard };
  ThrowingDataset(std::int64_t throw_at, Kind kind) : throw_at_(throw_at), kind_(kind) {}
  std::int64_t size() const override { return 10; }
  Example get(std::int64_t index) const override {
    if (index == throw_at_) {
      if (kind_ == Kind::Shape) LG_THROW(ShapeError, "cannot decode the image");
      if (kind_ == Kind::Own) LG_THROW(OwnError, "own error");
      throw std::out_of_range("standard error");
    }
    return {zeros({1}), Tensor()};
  }

 private:
  std::int64_t throw_at_;
  Kind kind_;
};

// An error from Dataset::get reached the consumer with only its own message, which need not say
// which example failed; PyTorch's loader says where it was caught. leangrad's errors now name
// the example and batch and keep their type, file and line; other exceptions arrive unchanged.
TEST(DataLoader, WorkerErrorsNameTheExampleAndKeepTheirType) {
  using Kind = ThrowingDataset::Kind;
  for (const int workers : {0, 2}) {
    SCOPED_TRACE(workers);
    const DataLoaderOptions options = DataLoaderOptions().batch_size(4).num_workers(workers);
    DataLoader shape_error(ThrowingDataset(6, Kind::Shape), options);
    try {
      for (const auto& batch : shape_error)
        (void)batch;
      ADD_FAILURE() << "example 6 did not raise";
    } catch (const ShapeError& e) {
      EXPECT_EQ(e.message(), "DataLoader: example 6 (batch 1): cannot decode the image");
      EXPECT_NE(std::string(e.file()).find("test_dataloader.cpp"), std::string::npos) << e.file();
    }
    DataLoader own_error(ThrowingDataset(0, Kind::Own), options);
    try {
      (void)*own_error.begin();
      ADD_FAILURE() << "example 0 did not raise";
    } catch (const ThrowingDataset::OwnError& e) {
      EXPECT_EQ(e.message(), "own error");
    }
    DataLoader standard_error(ThrowingDataset(9, Kind::Standard), options);
    try {
      for (const auto& batch : standard_error)
        (void)batch;
      ADD_FAILURE() << "example 9 did not raise";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "standard error");
    }
  }
}

// PyTorch's iterator raises a worker's exception from next() and then yields the following
// batch; leangrad's ended the epoch instead. Now *it throws the failed batch's error (its type
// and message kept) and ++it goes on: the other batches are exactly those of an error-free run,
// random draws included, and a loop to the end still ends.
TEST(DataLoader, AfterAFailedBatchTheIteratorGoesOnWithTheNext) {
  const DataLoaderOptions options = DataLoaderOptions().batch_size(4).shuffle(true).seed(2);
  DataLoader error_free(NoisyDataset(30), options);
  const std::vector<Batch> all = collect(error_free);
  // An example in a middle batch, the first batch, the last (partial) batch.
  const std::vector<std::int64_t> shuffled = random_permutation(30, 2, 0);
  for (const std::int64_t broken : {std::int64_t{13}, shuffled.front(), shuffled.back()}) {
    // Only the batch that holds the broken example fails: the others are expected.
    const std::vector<std::int64_t> order = targets_of(all);
    const auto failed = static_cast<std::size_t>(
        (std::find(order.begin(), order.end(), broken) - order.begin()) / 4);
    std::vector<Batch> expected = all;
    expected.erase(expected.begin() + static_cast<std::ptrdiff_t>(failed));
    for (const int workers : {0, 1, 4}) {
      SCOPED_TRACE(testing::Message() << "example " << broken << ", " << workers << " workers");
      DataLoader loader(NoisyDataset(30, broken), DataLoaderOptions(options).num_workers(workers));
      std::vector<Batch> got;
      std::vector<std::size_t> failed_at;
      for (auto it = loader.begin(); it != loader.end(); ++it) {
        try {
          got.push_back(*it);
        } catch (const Error& e) {
          failed_at.push_back(got.size() + failed_at.size());
          EXPECT_EQ(e.message(), "DataLoader: example " + std::to_string(broken) + " (batch " +
                                     std::to_string(failed) + "): NoisyDataset: example " +
                                     std::to_string(broken) + " is broken");
          EXPECT_THROW((void)it->data, Error);  // reading it again throws again
        }
      }
      EXPECT_EQ(failed_at, std::vector<std::size_t>{failed});
      expect_same_batches(got, expected);
    }
  }
}

// The exception's type goes through unchanged when the iterator goes on: a subclass of Error,
// one the program defines, a standard one. A range-for loop still leaves at it.
TEST(DataLoader, GoingOnAfterAFailedBatchKeepsTheExceptionsType) {
  using Kind = ThrowingDataset::Kind;
  for (const int workers : {0, 2}) {
    SCOPED_TRACE(workers);
    const DataLoaderOptions options = DataLoaderOptions().batch_size(4).num_workers(workers);
    int caught = 0, batches = 0;
    DataLoader shape_error(ThrowingDataset(0, Kind::Shape), options);  // the first batch fails
    auto it = shape_error.begin();
    EXPECT_THROW((void)*it, ShapeError);
    for (++it; it != shape_error.end(); ++it) {
      (void)*it;
      ++batches;
    }
    EXPECT_EQ(batches, 2);  // batches 1 and 2 (examples 4..9)
    DataLoader own_error(ThrowingDataset(5, Kind::Own), options);
    for (it = own_error.begin(); it != own_error.end(); ++it) {
      try {
        EXPECT_EQ((*it).data.size(0), 4 - 2 * caught);  // batch 0, then batch 2 of 2
      } catch (const ThrowingDataset::OwnError& e) {
        EXPECT_EQ(e.message(), "own error");
        ++caught;
      }
    }
    DataLoader standard_error(ThrowingDataset(9, Kind::Standard), options);  // the last batch
    for (it = standard_error.begin(); it != standard_error.end(); ++it) {
      try {
        (void)*it;
      } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "standard error");
        ++caught;
      }
    }
    EXPECT_EQ(caught, 2);
    int taken = 0;
    try {
      for (const auto& batch : own_error) {
        (void)batch;
        ++taken;
      }
      ADD_FAILURE() << "example 5 did not raise";
    } catch (const ThrowingDataset::OwnError&) {
    }
    EXPECT_EQ(taken, 1);
  }
}

TEST(DataLoader, MismatchedExamplesAreAnError) {
  class Ragged : public Dataset {
   public:
    std::int64_t size() const override { return 4; }
    Example get(std::int64_t i) const override { return {zeros({i + 1}), Tensor()}; }
  };
  DataLoader loader(Ragged(), DataLoaderOptions().batch_size(2).num_workers(1));
  EXPECT_THROW(*loader.begin(), ShapeError);
  DataLoader singles(Ragged(), DataLoaderOptions().batch_size(1));
  std::int64_t n = 0;
  for (const auto& [data, target] : singles) {
    EXPECT_EQ(data.shape(), (Shape{1, n + 1}));
    EXPECT_FALSE(target.defined());
    ++n;
  }
  EXPECT_EQ(n, 4);
}

TEST(DataLoader, PrefetchIsBoundedByWorkersTimesFactor) {
  ProbeDataset ds(1000);
  DataLoader loader(ds, DataLoaderOptions().batch_size(1).num_workers(2).prefetch_factor(2));
  auto it = loader.begin();  // batch 0 taken: batches 1..4 may be claimed, not 5
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(ds.largest->load(), 4);
  ++it;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(ds.largest->load(), 5);
}

TEST(DataLoader, DestroyedMidEpochJoinsCleanly) {
  ProbeDataset ds(10000, -1, /*sleep_ms=*/1);
  const auto start = std::chrono::steady_clock::now();
  {
    DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(4).prefetch_factor(4));
    int taken = 0;
    for (const auto& batch : loader) {
      (void)batch;
      if (++taken == 3) break;
    }
    // A second begin() while the first epoch's workers run stops them first.
    EXPECT_EQ((*loader.begin()).data.size(0), 4);
  }
  { DataLoader never_iterated(ds, DataLoaderOptions().num_workers(2)); }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_LT(ds.gets->load(), 1000);  // far from the 10000 a full epoch would read
}

// After a failed batch the epoch's workers go on; destroying the loader (or starting another
// epoch) there, or after going on past the error, still stops and joins them promptly.
TEST(DataLoader, DestroyedAfterAFailedBatchJoinsCleanly) {
  ProbeDataset ds(10000, /*throw_at=*/6, /*sleep_ms=*/1);
  const auto start = std::chrono::steady_clock::now();
  for (const int workers : {0, 4}) {
    {
      DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(workers));
      auto it = loader.begin();
      ++it;  // batch 1 holds example 6
      EXPECT_THROW((void)*it, Error);
    }
    {
      DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(workers));
      auto it = loader.begin();
      ++it;
      ++it;  // past the error
      EXPECT_EQ(it->target.data_ptr<std::int64_t>()[0], 8);
      EXPECT_EQ((*loader.begin()).data.size(0), 4);  // a new epoch stops this one first
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_LT(ds.gets->load(), 1000);
}

TEST(DataLoader, UsesADistributedSamplersShare) {
  const DistributedSampler sampler(kExamples, /*rank=*/1, /*world_size=*/4, /*shuffle=*/true, 9);
  DataLoader loader(make_dataset(),
                    DataLoaderOptions().batch_size(5).num_workers(2).sampler(sampler));
  EXPECT_EQ(loader.size(), 6);  // 26 indices per rank
  loader.set_epoch(3);
  DistributedSampler expected = sampler;
  expected.set_epoch(3);
  EXPECT_EQ(targets_of(collect(loader)), expected.indices());
}

// PyTorch's idiom: sampler.set_epoch(e) before iterating. The options keep a copy of the
// sampler, and the loader used to start at epoch 0 whatever epoch that copy had been set to.
TEST(DataLoader, StartsAtTheEpochTheSamplerWasSetTo) {
  DistributedSampler sampler(kExamples, /*rank=*/0, /*world_size=*/2, /*shuffle=*/true, 5);
  sampler.set_epoch(3);
  DataLoader loader(make_dataset(), DataLoaderOptions().batch_size(kExamples).sampler(sampler));
  EXPECT_EQ(loader.next_epoch(), 3u);
  EXPECT_EQ(targets_of(collect(loader)), sampler.indices());
  sampler.set_epoch(4);
  EXPECT_EQ(targets_of(collect(loader)), sampler.indices());  // begin() advanced to epoch 4
}

TEST(DataLoader, RejectsInvalidOptions) {
  EXPECT_THROW(DataLoader(make_dataset(), DataLoaderOptions().batch_size(0)), Error);
  EXPECT_THROW(DataLoader(make_dataset(), DataLoaderOptions().num_workers(-1)), Error);
  EXPECT_THROW(DataLoader(make_dataset(), DataLoaderOptions().num_workers(1).prefetch_factor(0)),
               Error);
  EXPECT_THROW(DataLoader(make_dataset(), DataLoaderOptions().shuffle(true).sampler(
                                              DistributedSampler(kExamples, 0, 2))),
               Error);
  EXPECT_THROW(
      DataLoader(make_dataset(), DataLoaderOptions().sampler(DistributedSampler(500, 0, 2))),
      Error);
  // One example more than the dataset: this epoch's share of rank 0 may not reach it, another
  // epoch's shuffle would.
  EXPECT_THROW(DataLoader(make_dataset(), DataLoaderOptions().sampler(
                                              DistributedSampler(kExamples + 1, 0, 2, true))),
               Error);
  if (!cuda::is_available()) {
    EXPECT_THROW(DataLoader(make_dataset(), DataLoaderOptions().device(Device::cuda())),
                 DeviceError);
  }
}

// A user's Dataset whose size() is negative, from the start or later: an Error naming it (it
// threw std::length_error from a vector's resize), shuffled or not.
class SizedDataset : public Dataset {
 public:
  explicit SizedDataset(std::int64_t size) : size_(size) {}
  std::int64_t size() const override { return size_; }
  Example get(std::int64_t index) const override {
    return {full({1}, static_cast<double>(index)), Tensor()};
  }
  std::int64_t size_;
};

TEST(DataLoader, ANegativeDatasetSizeIsAnError) {
  const auto expect_refused = [](const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "a negative dataset size was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the dataset's size() is -1 (expected >= 0)"),
                std::string::npos)
          << e.what();
    }
  };
  expect_refused([] { DataLoader(std::make_shared<SizedDataset>(-1), DataLoaderOptions()); });
  for (const bool shuffle : {false, true}) {
    auto dataset = std::make_shared<SizedDataset>(4);
    DataLoader loader(dataset, DataLoaderOptions().batch_size(2).shuffle(shuffle));
    EXPECT_EQ(collect(loader).size(), 2u);
    dataset->size_ = -1;
    expect_refused([&] { collect(loader); });
  }
  DataLoader empty(std::make_shared<SizedDataset>(0), DataLoaderOptions().num_workers(2));
  EXPECT_TRUE(collect(empty).empty());
}

TEST(DataLoader, DeviceBatchesMatchHostBatches) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (const bool pinned : {false, true}) {
    for (const int workers : {0, 2}) {
      DataLoader host(make_dataset(), DataLoaderOptions().batch_size(8).shuffle(true));
      DataLoader device(make_dataset(), DataLoaderOptions()
                                            .batch_size(8)
                                            .shuffle(true)
                                            .num_workers(workers)
                                            .pin_memory(pinned)
                                            .device(Device::cuda()));
      const std::vector<Batch> expected = collect(host);
      std::size_t b = 0;
      for (const auto& [data, target] : device) {
        ASSERT_TRUE(data.is_cuda());
        ASSERT_TRUE(target.is_cuda());
        // Work on the consumer's stream sees the copied data (it waited on the copy's event).
        EXPECT_EQ(tensor_bytes((data * 1.0).cpu()), tensor_bytes(expected[b].data));
        EXPECT_EQ(tensor_bytes(target.cpu()), tensor_bytes(expected[b].target));
        ++b;
      }
      EXPECT_EQ(b, expected.size());
    }
  }
}

// Batches for the second GPU while the first is current, as on rank 1 of leangrad-train over
// NCCL (device cuda:1, never made current): the copy's event must be made on cuda:1, where the
// copy stream is. Without workers the training thread assembles the batches, and its current
// device made the event on cuda:0, whose record on cuda:1's stream threw. Needs two GPUs.
TEST(DataLoader, DeviceBatchesOnAGpuThatIsNotCurrent) {
  if (cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  ASSERT_EQ(cuda::current_device(), 0);
  for (const bool pinned : {false, true}) {
    for (const int workers : {0, 2}) {
      DataLoader host(make_dataset(), DataLoaderOptions().batch_size(8));
      DataLoader device(
          make_dataset(),
          DataLoaderOptions().batch_size(8).num_workers(workers).pin_memory(pinned).device(
              Device::cuda(1)));
      const std::vector<Batch> expected = collect(host);
      std::size_t b = 0;
      for (const auto& [data, target] : device) {
        ASSERT_EQ(data.device(), Device::cuda(1));
        EXPECT_EQ(tensor_bytes((data * 1.0).cpu()), tensor_bytes(expected[b].data));
        EXPECT_EQ(tensor_bytes(target.cpu()), tensor_bytes(expected[b].target));
        ++b;
      }
      EXPECT_EQ(b, expected.size());
      EXPECT_EQ(cuda::current_device(), 0);  // the loader leaves the caller's device as it was
    }
  }
}

}  // namespace
}  // namespace leangrad::data
