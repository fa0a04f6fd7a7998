// Misuse of the data layer: DataLoader options out of range or contradicting each other,
// datasets and samplers that do not fit together, iterators used past their end, safetensors
// checkpoints written with bad names or to paths that cannot be written, read from paths that are
// not checkpoint files. (Hostile checkpoint contents are the fuzzers' and test_safetensors.cpp's.)
// Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/data/data.h>
#include <leangrad/kernels/creation.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

data::TensorDataset ten_examples() {
  return data::TensorDataset(arange(10).reshape({10, 1}), arange(10, kInt64));
}

void make_loader(const data::DataLoaderOptions& options) {
  data::DataLoader loader(ten_examples(), options);
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/misuse_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<MisuseCase> loader_cases() {
  MisuseTable t;
  t.add("zero_batch_size", Raises::Error, {"DataLoader", "batch_size", "0"},
        [] { make_loader(data::DataLoaderOptions().batch_size(0)); });
  t.add("negative_batch_size", Raises::Error, {"DataLoader", "batch_size", "-64"},
        [] { make_loader(data::DataLoaderOptions().batch_size(-64)); });
  t.add("negative_num_workers", Raises::Error, {"DataLoader", "num_workers", "-1"},
        [] { make_loader(data::DataLoaderOptions().num_workers(-1)); });
  t.add("zero_prefetch_factor", Raises::Error, {"DataLoader", "prefetch_factor", "0"},
        [] { make_loader(data::DataLoaderOptions().prefetch_factor(0)); });
  t.add("shuffle_with_sampler", Raises::Error, {"DataLoader", "shuffle", "sampler"}, [] {
    make_loader(
        data::DataLoaderOptions().shuffle(true).sampler(data::DistributedSampler(10, 0, 2)));
  });
  t.add("sampler_larger_than_dataset", Raises::Error,
        {"DataLoader", "a dataset of 20 examples", "has 10"}, [] {
          make_loader(data::DataLoaderOptions().sampler(
              data::DistributedSampler(20, 1, 2, /*shuffle=*/false)));
        });
  t.add("null_dataset", Raises::Error, {"DataLoader", "null"}, [] {
    data::DataLoader(std::shared_ptr<const data::Dataset>(), data::DataLoaderOptions());
  });
  t.add("iterator_past_the_end", Raises::Error, {"DataLoader", "past the end"}, [] {
    data::DataLoader loader(ten_examples(), data::DataLoaderOptions().batch_size(10));
    auto it = loader.begin();
    ++it;
    ++it;
  });
  t.add("examples_of_different_shapes", Raises::ShapeError, {"DataLoader", "[1]", "[2]"}, [] {
    struct Ragged : data::Dataset {
      std::int64_t size() const override { return 2; }
      data::Example get(std::int64_t i) const override { return {ones({i + 1}), Tensor()}; }
    };
    data::DataLoader loader(Ragged(), data::DataLoaderOptions().batch_size(2));
    (void)*loader.begin();  // reading the failed batch throws
  });
  t.add("dataset_data_undefined", Raises::Error, {"TensorDataset", "defined"},
        [] { data::TensorDataset(Tensor(), Tensor()); });
  t.add("dataset_data_0d", Raises::ShapeError, {"TensorDataset", "[]"},
        [] { data::TensorDataset(full({}, 1.0), Tensor()); });
  t.add("dataset_sizes_differ", Raises::ShapeError, {"TensorDataset", "[10, 2]", "[9]"}, [] {
    data::TensorDataset(ones({10, 2}), ones({9}));
  });
  t.add("dataset_index_out_of_range", Raises::Error, {"TensorDataset", "index 10", "10 examples"},
        [] { ten_examples().get(10); });
  t.add("dataset_negative_index", Raises::Error, {"TensorDataset", "index -1"},
        [] { ten_examples().get(-1); });
  t.add("sampler_zero_world_size", Raises::Error, {"DistributedSampler", "world_size", "0"},
        [] { data::DistributedSampler(10, 0, 0); });
  t.add("sampler_rank_out_of_range", Raises::Error, {"DistributedSampler", "rank 2", "[0, 1]"},
        [] { data::DistributedSampler(10, 2, 2); });
  t.add("sampler_negative_size", Raises::Error, {"DistributedSampler", "-1"},
        [] { data::DistributedSampler(-1, 0, 1); });
  t.add("sampler_padding_past_int64", Raises::Error,
        {"DistributedSampler", "9223372036854775807", "2 ranks"},
        [] { data::DistributedSampler(INT64_MAX, 0, 2); });
  t.add("permutation_of_negative_size", Raises::Error, {"random_permutation", "-5"},
        [] { data::random_permutation(-5, 0, 0); });

  return t.cases();
}
LG_MISUSE_SUITE(DataLoader, loader_cases());

std::vector<MisuseCase> safetensors_cases() {
  MisuseTable t;
  t.add("save_empty_name", Raises::Error, {"save_safetensors", "name"}, [] {
    save_safetensors(temp_path("a.safetensors"), {{"", ones({1})}});
  });
  t.add("save_duplicate_names", Raises::Error, {"save_safetensors", "'w'"}, [] {
    save_safetensors(temp_path("b.safetensors"), {{"w", ones({1})}, {"w", ones({2})}});
  });
  t.add("save_undefined_tensor", Raises::Error, {"save_safetensors", "'w'", "undefined"}, [] {
    save_safetensors(temp_path("c.safetensors"), {{"w", Tensor()}});
  });
  // Issue 14 item 7: names go into the JSON header, which must be UTF-8.
  t.add("save_non_utf8_name", Raises::Error, {"save_safetensors", "UTF-8"}, [] {
    save_safetensors(temp_path("d.safetensors"), {{"w\xff", ones({1})}});
  });
  t.add("save_non_utf8_metadata", Raises::Error, {"save_safetensors", "UTF-8"}, [] {
    save_safetensors(temp_path("e.safetensors"), {{"w", ones({1})}}, {{"k", "\xc3"}});
  });
  t.add("save_into_missing_folder", Raises::Error, {"/nonexistent/leangrad/x.safetensors"}, [] {
    save_safetensors("/nonexistent/leangrad/x.safetensors", {{"w", ones({1})}});
  });
  t.add("load_missing_file", Raises::Error, {"/nonexistent/leangrad/x.safetensors"},
        [] { load_safetensors("/nonexistent/leangrad/x.safetensors"); });
  // Issue 14 item 6: a directory gave std::bad_alloc.
  t.add("load_a_directory", Raises::Error, {"regular file"},
        [] { load_safetensors(::testing::TempDir()); });
  t.add("load_metadata_of_missing_file", Raises::Error, {"/nonexistent/leangrad/x.safetensors"},
        [] { load_safetensors_metadata("/nonexistent/leangrad/x.safetensors"); });
  return t.cases();
}
LG_MISUSE_SUITE(Safetensors, safetensors_cases());

}  // namespace
}  // namespace leangrad::test
