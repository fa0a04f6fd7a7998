// DataLoader throughput: one iteration is one full epoch of Fashion-MNIST's training set
// (60000 examples, (1, 28, 28) float32) in shuffled batches of 64; the batches/s counter is the
// rate the loader hands batches to a consumer that does nothing with them. Arguments:
// num_workers (0, 1, 2) and pin_memory (0, 1). Uses the Debian files in
// /usr/share/datasets/fashion-mnist when present, else a synthetic dataset of the same shape.
// Also: decoding the gzipped IDX files (FashionMNIST construction) and a safetensors round trip.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>

#include <leangrad/core/generator.h>
#include <leangrad/data/data.h>
#include <leangrad/kernels/creation.h>

namespace {

using namespace leangrad;

constexpr const char* kRoot = "/usr/share/datasets/fashion-mnist";
constexpr std::int64_t kBatchSize = 64;

bool have_fashion_mnist() {
  return std::filesystem::exists(std::string(kRoot) + "/train-images-idx3-ubyte.gz");
}

// Loaded once for every benchmark.
std::shared_ptr<const data::Dataset> training_set() {
  static const std::shared_ptr<const data::Dataset> dataset =
      []() -> std::shared_ptr<const data::Dataset> {
    if (have_fashion_mnist())
      return std::make_shared<data::FashionMNIST>(kRoot, data::Split::Train);
    manual_seed(0);
    return std::make_shared<data::TensorDataset>(rand({60000, 1, 28, 28}), zeros({60000}, kInt64));
  }();
  return dataset;
}

void BM_DataLoaderEpoch(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  const bool pinned = state.range(1) != 0;
  data::DataLoader loader(training_set(), data::DataLoaderOptions()
                                              .batch_size(kBatchSize)
                                              .shuffle(true)
                                              .num_workers(workers)
                                              .pin_memory(pinned)
                                              .prefetch_factor(2));
  std::int64_t batches = 0;
  for (auto _ : state) {
    for (const auto& batch : loader) {
      benchmark::DoNotOptimize(batch.data.data_ptr());
      ++batches;
    }
  }
  state.counters["batches/s"] =
      benchmark::Counter(static_cast<double>(batches), benchmark::Counter::kIsRate);
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(batches * kBatchSize), benchmark::Counter::kIsRate);
  state.SetLabel(have_fashion_mnist() ? "fashion-mnist" : "synthetic");
}
BENCHMARK(BM_DataLoaderEpoch)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"workers", "pin"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_FashionMnistDecode(benchmark::State& state) {
  if (!have_fashion_mnist()) {
    state.SkipWithError("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)");
    return;
  }
  for (auto _ : state) {
    data::FashionMNIST train(kRoot, data::Split::Train);
    benchmark::DoNotOptimize(train.images().data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 60000 * (28 * 28 + 1));  // decoded IDX bytes
}
BENCHMARK(BM_FashionMnistDecode)->Unit(benchmark::kMillisecond);

// Save + load of 64 MiB of float32 (fsync included: the atomic write's cost).
void BM_SafetensorsRoundTrip(benchmark::State& state) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "leangrad_bench_data.safetensors").string();
  const NamedTensors tensors = {{"w", zeros({16, 1024, 1024})}};
  for (auto _ : state) {
    save_safetensors(path, tensors);
    benchmark::DoNotOptimize(load_safetensors(path).front().second.data_ptr());
  }
  std::filesystem::remove(path);
  state.SetBytesProcessed(state.iterations() * 2 * tensors[0].second.nbytes());
}
BENCHMARK(BM_SafetensorsRoundTrip)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
